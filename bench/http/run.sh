#!/usr/bin/env bash
# Loopback HTTP load: a bare uWS hello world vs the single-world server answering through a
# trivial WorldHandle. Server on core 0, wrk on core 1, fixed connections and duration.
# Every row is reported as a ratio of the uWS hello world measured in the same run.
#
#   bench/http/run.sh                 # defaults: 3 rounds, 50 connections, 5 s per row, 1 wrk thread
#   ROUNDS=5 DURATION=10s CONNECTIONS=100 bench/http/run.sh
#
# Each round runs every row once, the baseline first; a row's ratio is taken against the
# baseline of its own round, and the table shows the median over the rounds (the machine
# is shared, so a single run can be far off). Beside throughput, the server's own CPU time
# per request (from /proc/<pid>/stat over the measured run) is the steadier figure on a
# busy machine: it does not count the time the server waited for a core.
#
# Needs wrk (apt-get install -y wrk) and taskset. Run from the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-50}
THREADS=${THREADS:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
TOKEN=tok_bench-0123456789abcdefghijklmnopqrstuvwxyzABCDE
OUT=bench/http/.out
mkdir -p "$OUT"

command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install -y wrk)" >&2; exit 1; }
npx esbuild bench/http/server.ts --bundle --platform=node --format=esm --packages=external \
  --outfile="$OUT/server.mjs" --log-level=warning

HZ=$(getconf CLK_TCK)
cpu_ticks() { # pid -> user + system clock ticks so far
  awk '{print $14 + $15}' "/proc/$1/stat"
}

SERVER_PID=
stop_server() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=; fi
}
trap stop_server EXIT

start_server() { # mode [token] -> sets PORT
  # A fresh file per start: the background redirect may truncate after the first poll,
  # which would then read the previous server's port.
  local log="$OUT/server.$RANDOM$RANDOM.log"
  rm -f "$OUT"/server.*.log
  taskset -c "$SERVER_CPU" node "$OUT/server.mjs" "$1" 0 ${2:-} >"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    if grep -qs '^ready ' "$log"; then PORT=$(awk '/^ready /{print $2}' "$log"); return; fi
    sleep 0.05
  done
  echo "server ($1) did not start:" >&2; cat "$log" >&2; exit 1
}

RESULTS="$OUT/results.tsv"
: >"$RESULTS"
ROUND=0
run_row() { # name mode path header [lua script] [expected status]
  local name=$1 mode=$2 path=$3 header=$4 script=${5:-} expect=${6:-200}
  start_server "$mode" "$TOKEN"
  local url="http://127.0.0.1:$PORT$path"
  local -a args=()
  [[ -n "$header" ]] && args+=(-H "$header")
  # Check the answer before loading it: a row of 401s or 404s would measure the wrong thing.
  local -a check=(-s -o /dev/null -w '%{http_code}')
  [[ -n "$header" ]] && check+=(-H "$header")
  [[ -n "$script" ]] && check+=(-X POST --data-binary '{"data":"x"}' -H 'content-type: application/json')
  local status
  status=$(curl "${check[@]}" "$url" || true)
  if [[ "$status" != "$expect" ]]; then echo "$name: $url answered $status" >&2; exit 1; fi
  [[ -n "$script" ]] && args+=(-s "$script")
  taskset -c "$CLIENT_CPU" wrk -t"$THREADS" -c"$CONNECTIONS" -d2s "${args[@]}" "$url" >/dev/null   # warm-up (JIT)
  local report cpu0 cpu1
  cpu0=$(cpu_ticks "$SERVER_PID")
  report=$(taskset -c "$CLIENT_CPU" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "${args[@]}" "$url")
  cpu1=$(cpu_ticks "$SERVER_PID")
  stop_server
  local errors
  errors=$(grep -E 'Non-2xx|Socket errors' <<<"$report" || true)
  if [[ -n "$errors" && "$expect" == 200 ]]; then echo "$name: $errors" >&2; fi
  # Server CPU per request: what the server spent, whatever else the machine was doing.
  local requests cpu_us
  requests=$(awk '/requests in/{print $1}' <<<"$report")
  cpu_us=$(awk -v t="$((cpu1 - cpu0))" -v hz="$HZ" -v n="$requests" 'BEGIN{printf "%.3f", t * 1e6 / hz / n}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$ROUND" "$name" \
    "$(awk '/^Requests\/sec:/{print $2}' <<<"$report")" \
    "$(awk '$1=="50%"{print $2}' <<<"$report")" \
    "$(awk '$1=="99%"{print $2}' <<<"$report")" "$cpu_us" >>"$RESULTS"
}

for ROUND in $(seq 1 "$ROUNDS"); do
  echo "round $ROUND/$ROUNDS" >&2
  run_row "uWS hello world (baseline)" uws / ""
  run_row "uWS hello world, answered after a promise" uws-async / ""
  run_row "host: GET vendor wire, x-kit-token" host /local/bench/hello/v1/things/1 "x-kit-token: $TOKEN"
  run_row "host: GET vendor wire, Bearer" host /local/bench/hello/v1/things/1 "Authorization: Bearer $TOKEN"
  run_row "host: POST 1 KB body, x-kit-token" host /local/bench/hello/v1/things "x-kit-token: $TOKEN" bench/http/post.lua
  run_row "host: GET world API, x-kit-token" host /-/local/bench/clock "x-kit-token: $TOKEN"
  run_row "host: 401, no credential" host /local/bench/hello/v1/things/1 "" "" 401
done

echo
echo "wrk: $CONNECTIONS connections, $THREADS thread, $DURATION per row, $ROUNDS rounds; server on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU; node $(node --version)"
echo
node bench/http/table.mjs "$RESULTS"
