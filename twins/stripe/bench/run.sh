#!/usr/bin/env bash
# Loopback load on the Stripe twin: retrieve a customer, create a customer (durable: LMDB,
# answered after the group commit), list customers (limit 10) — each as a ratio of a bare uWS
# hello world measured in the same round. Server on core 0, wrk on core 1.
#
#   twins/stripe/bench/run.sh            # 3 rounds, 50 connections, 5 s per row
#   ROUNDS=5 DURATION=10s twins/stripe/bench/run.sh
#
# Needs wrk and taskset. Run from the repository root. The table comes from bench/http/table.mjs.
set -euo pipefail
cd "$(dirname "$0")/../../.."

DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-50}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
TOKEN=tok_bench-0123456789abcdefghijklmnopqrstuvwxyzABCDE
KEY=sk_test_benchKey0000000001
OUT=twins/stripe/bench/.out
mkdir -p "$OUT"

command -v wrk >/dev/null || { echo "wrk is not installed" >&2; exit 1; }
npx esbuild twins/stripe/bench/server.ts --bundle --platform=node --format=esm --packages=external \
  --outfile="$OUT/server.mjs" --log-level=warning

SERVER_PID=
stop_server() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=; fi
}
trap stop_server EXIT

start_server() { # mode -> sets PORT, CUSTOMER
  local log="$OUT/server.$RANDOM$RANDOM.log"
  rm -f "$OUT"/server.*.log
  taskset -c "$SERVER_CPU" node "$OUT/server.mjs" "$1" 0 "$TOKEN" >"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 400); do
    if grep -qs '^ready ' "$log"; then
      PORT=$(awk '/^ready /{print $2}' "$log"); CUSTOMER=$(awk '/^ready /{print $3}' "$log"); return
    fi
    sleep 0.05
  done
  echo "server ($1) did not start:" >&2; cat "$log" >&2; exit 1
}

RESULTS="$OUT/results.tsv"
: >"$RESULTS"
run_row() { # name mode path [lua script]
  local name=$1 mode=$2 path=$3 script=${4:-}
  start_server "$mode"
  path=${path//CUSTOMER/$CUSTOMER}
  local url="http://127.0.0.1:$PORT$path"
  local -a args=(-H "Authorization: Bearer $KEY" -H "x-twins-key: $TOKEN")
  local -a check=(-s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" -H "x-twins-key: $TOKEN")
  if [[ -n "$script" ]]; then
    args+=(-s "$script")
    check+=(-X POST --data 'email=check%40example.com' -H 'content-type: application/x-www-form-urlencoded')
  fi
  local status
  status=$(curl "${check[@]}" "$url" || true)
  if [[ "$status" != 200 ]]; then echo "$name: $url answered $status" >&2; exit 1; fi
  taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d2s "${args[@]}" "$url" >/dev/null   # warm-up (JIT)
  local report
  report=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency "${args[@]}" "$url")
  stop_server
  local errors
  errors=$(grep -E 'Non-2xx|Socket errors' <<<"$report" || true)
  [[ -n "$errors" ]] && echo "$name: $errors" >&2
  printf '%s\t%s\t%s\t%s\t%s\n' "$ROUND" "$name" \
    "$(awk '/^Requests\/sec:/{print $2}' <<<"$report")" \
    "$(awk '$1=="50%"{print $2}' <<<"$report")" \
    "$(awk '$1=="99%"{print $2}' <<<"$report")" >>"$RESULTS"
}

for ROUND in $(seq 1 "$ROUNDS"); do
  echo "round $ROUND/$ROUNDS" >&2
  run_row "uWS hello world (baseline)" uws /
  run_row "stripe: retrieve a customer" stripe /local/bench/stripe/v1/customers/CUSTOMER
  run_row "stripe: create a customer (durable)" stripe /local/bench/stripe/v1/customers twins/stripe/bench/create.lua
  run_row "stripe: list customers (limit 10)" stripe "/local/bench/stripe/v1/customers?limit=10"
done

echo
echo "wrk: $CONNECTIONS connections, 1 thread, $DURATION per row, $ROUNDS rounds; server on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU; node $(node --version)"
echo
node bench/http/table.mjs "$RESULTS"
