#!/usr/bin/env bash
# Side-by-side benchmark of the MCP server against minimal "ceiling" servers on the same stack.
#
#   scripts/bench.sh                 # 10 s per run, 2 s warm-up
#   BENCH_SECS=3 scripts/bench.sh    # shorter runs
#
# Builds release (`mcp-bench` and `mcp-cli` only), then on this 2-core machine pins every server
# to core 0 and the load generator to core 1 (`taskset -c`), and runs:
#   - HTTP: mcp-ceiling-http vs `mcp serve everything --http`, 16 and 64 keep-alive connections;
#   - stdio: mcp-ceiling-stdio vs `mcp serve everything --stdio`, 64 requests in flight;
#   - idle RSS of the mcp server (start it, wait 1 s, read VmRSS), HTTP and stdio;
#   - HTTP c=16 again with `--redis` (a real redis-server): stateless calls must not touch Redis;
#   - operation layers (`mcp-layered`): no layer, a pass-through layer, the access log + rate
#     limits + access rules (and with the log through `tracing`), at c=16;
#   - three instances on Redis (`mcp-cluster`, no proxy): change-notification latency across
#     instances (and within one, as the baseline), task create-to-visible and update-to-visible;
#   - our client library (`mcp-client-bench`, on the load CPU, ceilings on the server CPU):
#     `call_tool` one at a time and 64 at once over HTTP and stdio, against raw loops.
# Each run gets a fresh server (so peak RSS is per run). Prints a table with req/s, latencies,
# the mcp/ceiling ratios and peak RSS, then the issue's targets with PASS/FAIL.
# Servers listen on 127.0.0.1 on free ports (port 0, address read from their stderr); every
# process started here is killed on exit. Raw JSON results: target/bench/results.jsonl.
#
# Env: BENCH_SECS (default 10), BENCH_WARMUP (default 2), BENCH_SEQ_RUNS (interleaved runs of
#      the one-in-flight cases, default 4), BENCH_SERVER_CPU (default 0),
#      BENCH_LOAD_CPU (default 1), BENCH_SKIP_BUILD=1 (use the binaries already built),
#      BENCH_UNDER_TEST=DIR (take `mcp` and `mcp-client-bench` from DIR, e.g. another checkout's
#      target/release, while the load generators and ceilings stay this build's: before/after
#      runs of two builds measured with the same tools).
set -euo pipefail
cd "$(dirname "$0")/.."

SECS="${BENCH_SECS:-10}"
SEQ_RUNS="${BENCH_SEQ_RUNS:-4}"
WARMUP="${BENCH_WARMUP:-2}"
SERVER_CPU="${BENCH_SERVER_CPU:-0}"
LOAD_CPU="${BENCH_LOAD_CPU:-1}"
BIN=target/release
# The build being measured: `mcp` (server, cluster instances, cold start) and the client bench.
UT="${BENCH_UNDER_TEST:-$BIN}"
OUT=target/bench
mkdir -p "$OUT"
RESULTS="$OUT/results.jsonl"
: >"$RESULTS"

for tool in taskset jq; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }
done

if [ "${BENCH_SKIP_BUILD:-0}" = "1" ]; then
  echo "== build skipped (BENCH_SKIP_BUILD=1): using the binaries in $BIN"
else
  echo "== build (release: mcp-bench, mcp-cli, mcp-cluster)"
  cargo build --release -p mcp-bench -p mcp-stack-cli -p mcp-cluster
  # A stale start-up function list costs idle RSS (see scripts/link-order.sh): refresh it first.
  if ! scripts/link-order.sh --check && command -v valgrind >/dev/null; then
    echo "== link order is stale: regenerating crates/mcp-stack-cli/link-order.txt (commit it)"
    scripts/link-order.sh
    cargo build --release -p mcp-stack-cli
  fi
fi
for b in mcp mcp-load mcp-ceiling-http mcp-ceiling-stdio mcp-crossing mcp-cluster; do
  [ -x "$BIN/$b" ] || { echo "bench: $BIN/$b is missing" >&2; exit 1; }
done

PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && wait "$p" 2>/dev/null || true
  done
  [ -n "${FIFO_FD_OPEN:-}" ] && exec 3>&- || true
  rm -f "$OUT/stdio.fifo"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_http NAME CMD... : starts a server pinned to SERVER_CPU, sets SERVER_PID and SERVER_URL.
start_http() {
  local name=$1
  shift
  local log="$OUT/$name.stderr"
  # Truncated here, not by the background job's redirection: otherwise the loop below can read
  # the previous server's URL before the new process has opened the file.
  : >"$log"
  taskset -c "$SERVER_CPU" "$@" 2>>"$log" &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  SERVER_URL=""
  local i
  for i in $(seq 1 100); do
    SERVER_URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n1 || true)
    [ -n "$SERVER_URL" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "bench: $name did not start; its stderr:" >&2
  cat "$log" >&2
  exit 1
}

stop_server() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
anon_kib() { awk '/^RssAnon:/ {print $2}' "/proc/$1/status"; }

# load_http LABEL CONNECTIONS
load_http() {
  echo "-- $1: HTTP, $2 connections, ${SECS}s (+${WARMUP}s warm-up)" >&2
  taskset -c "$LOAD_CPU" "$BIN/mcp-load" http --url "$SERVER_URL" --connections "$2" \
    --duration "${SECS}s" --warmup "${WARMUP}s" --server-pid "$SERVER_PID" \
    --label "$1" --json | tee -a "$RESULTS" >/dev/null
}

# load_stdio LABEL IN_FLIGHT SERVER-COMMAND
load_stdio() {
  echo "-- $1: stdio, $2 in flight, ${SECS}s (+${WARMUP}s warm-up)" >&2
  taskset -c "$LOAD_CPU" "$BIN/mcp-load" stdio --command "taskset -c $SERVER_CPU $3" \
    --in-flight "$2" --duration "${SECS}s" --warmup "${WARMUP}s" --settle 1s \
    --label "$1" --json | tee -a "$RESULTS" >/dev/null
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== machine: $(nproc) CPUs; load average: $LOAD_START"
echo "== servers on CPU $SERVER_CPU, load generator on CPU $LOAD_CPU"

# Idle RSS of the mcp server: start, wait 1 s, read VmRSS.
start_http mcp-idle "$UT/mcp" serve everything --http 127.0.0.1:0
sleep 1
IDLE_HTTP_KIB=$(rss_kib "$SERVER_PID")
IDLE_HTTP_ANON_KIB=$(anon_kib "$SERVER_PID")
stop_server
mkfifo "$OUT/stdio.fifo"
taskset -c "$SERVER_CPU" "$UT/mcp" serve everything --stdio <"$OUT/stdio.fifo" >/dev/null &
SERVER_PID=$!
PIDS+=("$SERVER_PID")
exec 3>"$OUT/stdio.fifo"
FIFO_FD_OPEN=1
sleep 1
IDLE_STDIO_KIB=$(rss_kib "$SERVER_PID")
IDLE_STDIO_ANON_KIB=$(anon_kib "$SERVER_PID")
exec 3>&-
FIFO_FD_OPEN=
wait "$SERVER_PID" 2>/dev/null || true
rm -f "$OUT/stdio.fifo"

for conns in 16 64; do
  start_http ceiling-http "$BIN/mcp-ceiling-http" --addr 127.0.0.1:0
  load_http "ceiling-http-c$conns" "$conns"
  stop_server
  start_http mcp-http "$UT/mcp" serve everything --http 127.0.0.1:0
  load_http "mcp-http-c$conns" "$conns"
  stop_server
  if [ "$conns" = 16 ] && command -v redis-server >/dev/null; then
    # The same load with shared state on Redis (redis-server on the load generator's core),
    # interleaved with a second in-process run: redis, in-process, redis (the noise of this
    # machine is of the same order as the difference being measured).
    REDIS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    taskset -c "$LOAD_CPU" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
      >"$OUT/redis.log" 2>&1 &
    REDIS_PID=$!
    PIDS+=("$REDIS_PID")
    for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT") 2>/dev/null && break; sleep 0.1; done
    head -c 32 /dev/urandom | base64 >"$OUT/state-secrets"
    for run in 1 2; do
      start_http mcp-http-redis "$UT/mcp" serve everything --http 127.0.0.1:0 \
        --redis "redis://127.0.0.1:$REDIS_PORT" --state-secret-file "$OUT/state-secrets"
      load_http "mcp-http-redis-c16-$run" 16
      stop_server
      if [ "$run" = 1 ]; then
        start_http mcp-http "$UT/mcp" serve everything --http 127.0.0.1:0
        load_http "mcp-http-c16-again" 16
        stop_server
      fi
    done
    kill "$REDIS_PID" 2>/dev/null || true
  fi
done

# Operation layers: the everything server with no layer, one pass-through layer, rate limits,
# the policy stack (the access log, per-caller rate limits, access rules) and the same with the
# log written through `tracing`, interleaved twice
# at c=16.
if [ -x "$BIN/mcp-layered" ]; then
  for run in 1 2; do
    for stack in none noop limits policy policy-tracing; do
      start_http "layered-$stack" "$BIN/mcp-layered" --layers "$stack"
      load_http "layers-$stack-c16-$run" 16
      stop_server
    done
  done
fi

# Crossing instances: three instances on one Redis (mcp-cluster), measured with the client.
if command -v redis-server >/dev/null && { command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; }; then
  echo "-- crossing: 3 instances on Redis (notification and task latencies)" >&2
  "$BIN/mcp-cluster" --mcp "$UT/mcp" --instances 3 >"$OUT/cluster.txt" 2>&1 &
  CLUSTER_PID=$!
  PIDS+=("$CLUSTER_PID")
  for _ in $(seq 1 300); do grep -q '^dir=' "$OUT/cluster.txt" 2>/dev/null && break; sleep 0.1; done
  inst() { sed -n "s/^instance$1=//p" "$OUT/cluster.txt"; }
  # Bounded (each wait inside gives up after 5 s); a failure is reported, not fatal.
  if ! timeout 120 "$BIN/mcp-crossing" --a "$(inst 0)" --b "$(inst 1)" --c "$(inst 2)" --samples 500 \
    >"$OUT/crossing.json" 2>"$OUT/crossing.err"; then
    echo "-- crossing FAILED: $(tail -c 400 "$OUT/crossing.err")" >&2
  else
    jq -c '. + {label: "crossing"}' "$OUT/crossing.json" >>"$RESULTS"
  fi
  kill "$CLUSTER_PID" 2>/dev/null || true
  wait "$CLUSTER_PID" 2>/dev/null || true
fi

load_stdio "ceiling-stdio-f64" 64 "$BIN/mcp-ceiling-stdio"
load_stdio "mcp-stdio-f64" 64 "$UT/mcp serve everything --stdio"

# Sequential: one request in flight (stdio) and one connection (HTTP), interleaved SEQ_RUNS
# times: a round trip here is ~100 us, mostly two cross-core wake-ups, so a passing spike of
# load on either core moves one run by 20-30%; four interleaved pairs, summed, hold steady.
for run in $(seq 1 "$SEQ_RUNS"); do
  load_stdio "ceiling-stdio-f1-$run" 1 "$BIN/mcp-ceiling-stdio"
  load_stdio "mcp-stdio-f1-$run" 1 "$UT/mcp serve everything --stdio"
  start_http ceiling-http "$BIN/mcp-ceiling-http" --addr 127.0.0.1:0
  load_http "ceiling-http-c1-$run" 1
  stop_server
  start_http mcp-http "$UT/mcp" serve everything --http 127.0.0.1:0
  load_http "mcp-http-c1-$run" 1
  stop_server
done
# Cold start: spawn to first answer on stdio, 30 starts each, interleaved.
if [ -x "$BIN/mcp-coldstart" ]; then
  for run in 1 2; do
    taskset -c "$SERVER_CPU" "$BIN/mcp-coldstart" --command "$BIN/mcp-ceiling-stdio" --runs 30 --label "cold-ceiling-$run" >>"$RESULTS"
    taskset -c "$SERVER_CPU" "$BIN/mcp-coldstart" --command "$UT/mcp serve everything --stdio" --runs 30 --label "cold-mcp-$run" >>"$RESULTS"
  done
fi

# Our client library against raw loops on the ceiling servers (client on the load CPU, ceilings on
# the server CPU): prints its own lines, checked below.
CLIENT_OUT="$OUT/client.txt"
: >"$CLIENT_OUT"
if [ -x "$UT/mcp-client-bench" ]; then
  echo "-- client library: mcp-client-bench, ${SECS}s per side and case" >&2
  taskset -c "$LOAD_CPU" "$UT/mcp-client-bench" --bin-dir "$BIN" --server-cpu "$SERVER_CPU" --secs "$SECS" \
    >"$CLIENT_OUT" 2>&1 || echo "-- client bench FAILED: $(tail -c 400 "$CLIENT_OUT")" >&2
fi

# ---- report ----------------------------------------------------------------------------------
field() { jq -r --arg l "$1" "select(.label == \$l) | .$2 // \"\"" "$RESULTS"; }
mib() { awk -v k="$1" 'BEGIN { if (k == "") print "n/a"; else printf "%.1f MiB", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "== results (${SECS}s measured after ${WARMUP}s warm-up; servers on CPU $SERVER_CPU, load on CPU $LOAD_CPU)"
printf '%-14s %-8s %10s %9s %9s %9s %7s %9s %10s %10s %6s\n' \
  scenario server req/s p50_ms p99_ms max_ms errors srv_cpu% cpu_us/req peak_rss ratio
row() { # SCENARIO SERVER LABEL CEILING-LABEL
  local l=$3 c=$4
  printf '%-14s %-8s %10.0f %9.3f %9.3f %9.3f %7s %9.0f %10.1f %10s %6s\n' \
    "$1" "$2" "$(field "$l" rps)" \
    "$(awk -v v="$(field "$l" p50_us)" 'BEGIN{print v/1000}')" \
    "$(awk -v v="$(field "$l" p99_us)" 'BEGIN{print v/1000}')" \
    "$(awk -v v="$(field "$l" max_us)" 'BEGIN{print v/1000}')" \
    "$(field "$l" errors)" "$(field "$l" server_cpu_pct)" "$(field "$l" server_cpu_us_per_req)" \
    "$(mib "$(field "$l" peak_rss_kib)")" \
    "$(if [ "$l" = "$c" ]; then echo -; else ratio "$(field "$l" rps)" "$(field "$c" rps)"; fi)"
}
row "http c=16" ceiling ceiling-http-c16 ceiling-http-c16
row "http c=16" mcp mcp-http-c16 ceiling-http-c16
row "http c=16" mcp mcp-http-c16-again ceiling-http-c16
row "http c=16" redis mcp-http-redis-c16-1 mcp-http-c16
row "http c=16" redis mcp-http-redis-c16-2 mcp-http-c16-again
row "http c=64" ceiling ceiling-http-c64 ceiling-http-c64
row "http c=64" mcp mcp-http-c64 ceiling-http-c64
if grep -q '"layers-none-c16-1"' "$RESULTS"; then
  for run in 1 2; do
    row "layers c=16" none "layers-none-c16-$run" "layers-none-c16-$run"
    row "layers c=16" noop "layers-noop-c16-$run" "layers-none-c16-$run"
    row "layers c=16" limits "layers-limits-c16-$run" "layers-none-c16-$run"
    row "layers c=16" policy "layers-policy-c16-$run" "layers-none-c16-$run"
    row "layers c=16" policy-tracing "layers-policy-tracing-c16-$run" "layers-none-c16-$run"
  done
fi
row "stdio f=64" ceiling ceiling-stdio-f64 ceiling-stdio-f64
row "stdio f=64" mcp mcp-stdio-f64 ceiling-stdio-f64
for run in $(seq 1 "$SEQ_RUNS"); do
  row "stdio f=1" ceiling "ceiling-stdio-f1-$run" "ceiling-stdio-f1-$run"
  row "stdio f=1" mcp "mcp-stdio-f1-$run" "ceiling-stdio-f1-$run"
  row "http c=1" ceiling "ceiling-http-c1-$run" "ceiling-http-c1-$run"
  row "http c=1" mcp "mcp-http-c1-$run" "ceiling-http-c1-$run"
done
echo "(ratio = mcp req/s / ceiling req/s; redis rows: mcp --redis / the in-process run before it; srv_cpu% = server CPU in % of one core)"
xing() { jq -r "select(.label == \"crossing\") | .$1 | \"p50 \(.p50_us) us, p99 \(.p99_us) us (\(.samples) samples)\"" "$RESULTS"; }
if grep -q '"crossing"' "$RESULTS"; then
  echo "change notification, listen and trigger on one instance: $(xing notification_local)"
  echo "change notification, trigger on A, listen on B (Redis): $(xing notification_crossing)"
  echo "task create on A -> visible on B: $(xing task_create_to_visible); extra gets: $(jq -r 'select(.label == "crossing") | .task_create_extra_gets' "$RESULTS")"
  echo "task update on B -> visible on C: $(xing task_update_to_visible)"
fi
cold() { field "$1" p50_ms; }
if grep -q '"cold-mcp-1"' "$RESULTS"; then
  echo "cold start (spawn to first answer, median of 30): ceiling $(cold cold-ceiling-1) / $(cold cold-ceiling-2) ms, mcp $(cold cold-mcp-1) / $(cold cold-mcp-2) ms"
fi
if [ -s "$CLIENT_OUT" ]; then
  echo "client library (mcp-client-bench; ratio = ours / raw loop):"
  sed 's/^/  /' "$CLIENT_OUT"
fi
echo "idle RSS of mcp (start, wait 1 s, VmRSS): http $(mib "$IDLE_HTTP_KIB"), stdio $(mib "$IDLE_STDIO_KIB"); anonymous (RssAnon): http $(mib "$IDLE_HTTP_ANON_KIB"), stdio $(mib "$IDLE_STDIO_ANON_KIB")"
echo "load average at start: $LOAD_START; at end: $LOAD_END (other work on this machine skews results)"
echo "load generator CPU (% of core $LOAD_CPU): $(jq -r '"\(.label)=\(.load_cpu_pct // "n/a" | tostring | .[0:5])"' "$RESULTS" | tr '\n' ' ')"

echo
echo "== targets (mcp under test: $UT)"
check() { # NAME VALUE OP LIMIT
  local ok
  ok=$(awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN { r = (op == ">=") ? (v >= l) : (v < l); print r ? "PASS" : "FAIL" }')
  printf '%-4s %s: %s (target %s %s)\n' "$ok" "$1" "$2" "$3" "$4"
}
check "HTTP c=16 mcp/ceiling req/s" "$(ratio "$(field mcp-http-c16 rps)" "$(field ceiling-http-c16 rps)")" ">=" 0.85
check "HTTP c=64 mcp/ceiling req/s" "$(ratio "$(field mcp-http-c64 rps)" "$(field ceiling-http-c64 rps)")" ">=" 0.85
check "stdio f=64 mcp/ceiling req/s" "$(ratio "$(field mcp-stdio-f64 rps)" "$(field ceiling-stdio-f64 rps)")" ">=" 0.95
check "idle RSS (http) MiB" "$(awk -v k="$IDLE_HTTP_KIB" 'BEGIN{printf "%.1f", k/1024}')" "<" 5
check "idle anonymous memory (http RssAnon) MiB" "$(awk -v k="$IDLE_HTTP_ANON_KIB" 'BEGIN{printf "%.2f", k/1024}')" "<" 2.01
sum() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
[ -n "$(field mcp-http-redis-c16-1 rps)" ] && check "HTTP c=16 mcp --redis / in-process req/s (2 runs each)" \
  "$(ratio "$(sum "$(field mcp-http-redis-c16-1 rps)" "$(field mcp-http-redis-c16-2 rps)")" \
    "$(sum "$(field mcp-http-c16 rps)" "$(field mcp-http-c16-again rps)")")" ">=" 0.95
runs_sum() { # LABEL-PREFIX: req/s summed over the SEQ_RUNS runs
  local run total=0
  for run in $(seq 1 "$SEQ_RUNS"); do total=$(sum "$total" "$(field "$1-$run" rps)"); done
  echo "$total"
}
check "stdio f=1 mcp/ceiling req/s ($SEQ_RUNS runs each)" "$(ratio "$(runs_sum mcp-stdio-f1)" "$(runs_sum ceiling-stdio-f1)")" ">=" 0.9
check "HTTP c=1 mcp/ceiling req/s ($SEQ_RUNS runs each)" "$(ratio "$(runs_sum mcp-http-c1)" "$(runs_sum ceiling-http-c1)")" ">=" 0.95
if grep -q '"cold-mcp-1"' "$RESULTS"; then
  check "cold start mcp - ceiling ms (medians, 2 runs)" "$(awk -v a="$(cold cold-mcp-1)" -v b="$(cold cold-mcp-2)" \
    -v c="$(cold cold-ceiling-1)" -v d="$(cold cold-ceiling-2)" 'BEGIN { printf "%.2f", (a + b - c - d) / 2 }')" "<" 3
fi
if grep -q '"layers-none-c16-1"' "$RESULTS"; then
  layers_sum() { sum "$(field "layers-$1-c16-1" rps)" "$(field "layers-$1-c16-2" rps)"; }
  check "HTTP c=16 one pass-through layer / none req/s (2 runs each)" "$(ratio "$(layers_sum noop)" "$(layers_sum none)")" ">=" 0.97
  check "HTTP c=16 rate limits + access rules / none req/s" "$(ratio "$(layers_sum limits)" "$(layers_sum none)")" ">=" 0.95
  check "HTTP c=16 access log + limits + access rules / none req/s" "$(ratio "$(layers_sum policy)" "$(layers_sum none)")" ">=" 0.90
  echo "  (the same with the log through tracing-subscriber: $(ratio "$(layers_sum policy-tracing)" "$(layers_sum none)"))"
fi
check "HTTP c=64 mcp p99 ms" "$(awk -v v="$(field mcp-http-c64 p99_us)" 'BEGIN{printf "%.3f", v/1000}')" "<" 3
client_ratio() { sed -n "s/^client $1: .*ratio \([0-9.]*\).*/\1/p" "$CLIENT_OUT"; }
for case in "http w=1" "http c=64" "stdio w=1" "stdio c=64"; do
  r=$(client_ratio "$case")
  [ -n "$r" ] && check "client $case ours/raw req/s" "$r" ">=" 0.8
done
errors=$(jq -s 'map(.errors) | add' "$RESULTS")
[ "$errors" = "0" ] || echo "WARN $errors request errors in total (see $RESULTS)"
