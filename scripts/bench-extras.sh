#!/usr/bin/env bash
# What `mcp serve everything` costs beyond the plain request path (scripts/bench.sh measures that):
#
#   scripts/bench-extras.sh                # about 6 min with the defaults
#   scripts/bench-extras.sh --write-docs   # the same, then rewrites docs/perf/extras.md
#
#   - shared state on Redis: HTTP c=16 with `--redis` against in-process, interleaved twice;
#   - operation layers (`mcp-layered`, c=16): none, one pass-through layer, rate limits, the
#     access log + limits + access rules, and the same with the log through `tracing`, twice;
#   - three instances on Redis (`mcp-cluster`, `mcp-crossing`): change-notification and task
#     latencies across instances;
#   - cold start (`mcp-coldstart`): spawn to first answer on stdio against the stdio ceiling;
#   - our client library (`mcp-client-bench`) against raw hyper / NDJSON loops;
#   - hostile clients (`mcp-hostile`: trickled and stalled bodies, a full connection table, floods,
#     unread stdout, ...): what the limits hold;
#   - memory after a burst (`mcp-hostile --only burst`: 300 concurrent echoes of 1.9 MiB), with
#     the allocator tuning of `mcp serve` and without it (`MCP_MALLOC_TRIM=0`).
# Servers on BENCH_SERVER_CPU, load on BENCH_LOAD_CPU; loopback only; every run bounded.
# Needs what scripts/bench.sh needs, plus redis-server and nginx for the Redis and crossing cases
# (skipped without them).
#
# Env: BENCH_SECS (10), BENCH_WARMUP (2), BENCH_SERVER_CPU (0), BENCH_LOAD_CPU (1),
#      BENCH_SKIP_BUILD=1, CARGO_TARGET_DIR (default target).
set -euo pipefail
cd "$(dirname "$0")/.."
WRITE_DOCS=0
[ "${1:-}" = --write-docs ] && WRITE_DOCS=1

SECS="${BENCH_SECS:-10}"
WARMUP="${BENCH_WARMUP:-2}"
SERVER_CPU="${BENCH_SERVER_CPU:-0}"
LOAD_CPU="${BENCH_LOAD_CPU:-1}"
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
BIN="$TARGET_DIR/release"
OUT="$TARGET_DIR/bench-extras"
mkdir -p "$OUT"
RESULTS="$OUT/results.jsonl"
: >"$RESULTS"
for tool in taskset jq python3; do
  command -v "$tool" >/dev/null || { echo "bench-extras: $tool is required" >&2; exit 1; }
done

if [ "${BENCH_SKIP_BUILD:-0}" != "1" ]; then
  echo "== build (release: mcp, mcp-bench, mcp-cluster)"
  cargo build --release -p mcp-bench -p mcp-stack-cli -p mcp-cluster
fi

# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

load_http() { # LABEL CONNECTIONS
  echo "-- $1" >&2
  taskset -c "$LOAD_CPU" "$BIN/mcp-load" http --url "$SERVER_URL" --connections "$2" --duration "${SECS}s" \
    --warmup "${WARMUP}s" --server-pid "$SERVER_PID" --label "$1" --json >>"$RESULTS"
}
field() { jq -r --arg l "$1" "select(.label == \$l) | .$2 // \"\"" "$RESULTS"; }
sum2() { awk -v a="$(field "$1-1" rps)" -v b="$(field "$1-2" rps)" 'BEGIN { print a + b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "" }'; }
STARTED=$(date -u +%Y-%m-%dT%H:%MZ)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# Shared state on Redis (redis-server on the load CPU), interleaved with in-process runs.
if command -v redis-server >/dev/null; then
  REDIS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  taskset -c "$LOAD_CPU" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
    >"$OUT/redis.log" 2>&1 &
  PIDS+=("$!")
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT") 2>/dev/null && break; sleep 0.1; done
  head -c 32 /dev/urandom | base64 >"$OUT/state-secrets"
  for run in 1 2; do
    start_http mcp "$BIN/mcp" serve everything --http 127.0.0.1:0
    load_http "in-process-$run" 16
    stop_server
    start_http mcp-redis "$BIN/mcp" serve everything --http 127.0.0.1:0 \
      --redis "redis://127.0.0.1:$REDIS_PORT" --state-secret-file "$OUT/state-secrets"
    load_http "redis-$run" 16
    stop_server
  done
fi

# Operation layers.
STACKS="none noop limits policy policy-tracing"
for run in 1 2; do
  for stack in $STACKS; do
    start_http "layered-$stack" "$BIN/mcp-layered" --layers "$stack"
    load_http "layers-$stack-$run" 16
    stop_server
  done
done

# Crossing instances: three instances on one Redis, measured with the client (bounded: 120 s).
if command -v redis-server >/dev/null && { command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; }; then
  echo "-- crossing: 3 instances on Redis" >&2
  "$BIN/mcp-cluster" --mcp "$BIN/mcp" --instances 3 >"$OUT/cluster.txt" 2>&1 &
  CLUSTER_PID=$!
  PIDS+=("$CLUSTER_PID")
  for _ in $(seq 1 300); do grep -q '^dir=' "$OUT/cluster.txt" 2>/dev/null && break; sleep 0.1; done
  inst() { sed -n "s/^instance$1=//p" "$OUT/cluster.txt"; }
  if timeout 120 "$BIN/mcp-crossing" --a "$(inst 0)" --b "$(inst 1)" --c "$(inst 2)" --samples 500 \
    >"$OUT/crossing.json" 2>"$OUT/crossing.err"; then
    jq -c '. + {label: "crossing"}' "$OUT/crossing.json" >>"$RESULTS"
  else
    echo "-- crossing FAILED: $(tail -c 400 "$OUT/crossing.err")" >&2
  fi
  kill "$CLUSTER_PID" 2>/dev/null || true
  wait "$CLUSTER_PID" 2>/dev/null || true
fi

# Cold start, interleaved.
for run in 1 2; do
  taskset -c "$SERVER_CPU" "$BIN/mcp-coldstart" --command "$BIN/mcp-ceiling-stdio" --runs 30 --label "cold-ceiling-$run" >>"$RESULTS"
  taskset -c "$SERVER_CPU" "$BIN/mcp-coldstart" --command "$BIN/mcp serve everything --stdio" --runs 30 --label "cold-mcp-$run" >>"$RESULTS"
done

# The client library against raw loops (client on the load CPU, ceilings on the server CPU).
CLIENT_OUT="$OUT/client.txt"
echo "-- client library" >&2
taskset -c "$LOAD_CPU" "$BIN/mcp-client-bench" --bin-dir "$BIN" --server-cpu "$SERVER_CPU" --secs "$SECS" \
  >"$CLIENT_OUT" 2>&1 || echo "-- client bench FAILED: $(tail -c 400 "$CLIENT_OUT")" >&2

# Hostile clients (each case bounded inside mcp-hostile; the whole at most 10 min).
HOSTILE_OUT="$OUT/hostile.txt"
echo "-- hostile clients" >&2
timeout 600 "$BIN/mcp-hostile" --mcp "$BIN/mcp" >"$HOSTILE_OUT" 2>&1 || echo "-- mcp-hostile FAILED: $(tail -c 400 "$HOSTILE_OUT")" >&2

# Memory after a burst, with and without the allocator tuning.
for trim in 1 0; do
  echo "-- burst, MCP_MALLOC_TRIM=$trim" >&2
  MCP_MALLOC_TRIM=$trim timeout 300 "$BIN/mcp-hostile" --mcp "$BIN/mcp" --only burst --json \
    | jq -c --arg l "burst-trim-$trim" '.burst + {label: $l}' >>"$RESULTS" || echo "-- burst FAILED" >&2
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ----------------------------------------------------------------------------------
REPORT="$OUT/report.md"
CHECKS="$OUT/checks.txt"
: >"$CHECKS"
check() { # NAME VALUE OP LIMIT
  [ -n "$2" ] || { echo "SKIP $1: not measured" >>"$CHECKS"; return; }
  local ok
  ok=$(awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN { r = (op == ">=") ? (v >= l) : (v < l); print r ? "PASS" : "FAIL" }')
  echo "$ok $1: $2 (target $3 $4)" >>"$CHECKS"
}
mib() { awk -v k="$1" 'BEGIN { if (k == "") print "-"; else printf "%.1f MiB", k / 1024 }'; }
{
  echo "| case | req/s (2 runs) | ratio |"
  echo "|---|---:|---:|"
  if grep -q '"redis-1"' "$RESULTS"; then
    echo "| HTTP c=16 in-process | $(sum2 in-process | awk '{printf "%.0f", $1 / 2}') | - |"
    echo "| HTTP c=16 \`--redis\` | $(sum2 redis | awk '{printf "%.0f", $1 / 2}') | $(ratio "$(sum2 redis)" "$(sum2 in-process)") |"
  fi
  for stack in $STACKS; do
    echo "| layers c=16: $stack | $(sum2 "layers-$stack" | awk '{printf "%.0f", $1 / 2}') | $([ "$stack" = none ] && echo - || ratio "$(sum2 "layers-$stack")" "$(sum2 layers-none)") |"
  done
  echo
  if grep -q '"crossing"' "$RESULTS"; then
    xing() { jq -r "select(.label == \"crossing\") | .$1 | \"p50 \(.p50_us) µs, p99 \(.p99_us) µs (\(.samples) samples)\"" "$RESULTS"; }
    echo "- change notification within one instance: $(xing notification_local)"
    echo "- change notification from instance A to a listener on B: $(xing notification_crossing)"
    echo "- task created on A, visible on B: $(xing task_create_to_visible)"
    echo "- task updated on B, visible on C: $(xing task_update_to_visible)"
  fi
  ms() { awk -v v="$(field "$1" p50_ms)" 'BEGIN { if (v == "") print "-"; else printf "%.2f", v }'; }
  echo "- cold start, spawn to first answer (medians of 30, 2 runs): ceiling $(ms cold-ceiling-1) / $(ms cold-ceiling-2) ms, mcp $(ms cold-mcp-1) / $(ms cold-mcp-2) ms"
  for trim in 1 0; do
    l="burst-trim-$trim"
    echo "- burst (MCP_MALLOC_TRIM=$trim): peak $(mib "$(field "$l" peak_rss_kib)"), right after $(mib "$(field "$l" rss_right_after_kib)"), 2 s after $(mib "$(field "$l" rss_after_2s_kib)")"
  done
  if [ -s "$HOSTILE_OUT" ]; then
    echo "- hostile clients (\`mcp-hostile\`):"
    sed 's/^/  - /' "$HOSTILE_OUT"
  fi
  if [ -s "$CLIENT_OUT" ]; then
    echo "- client library (ratio = ours / raw loop):"
    sed 's/^/  - /' "$CLIENT_OUT"
  fi
} >"$REPORT"
check "HTTP c=16 --redis / in-process (2 runs each)" "$(ratio "$(sum2 redis)" "$(sum2 in-process)")" ">=" 0.95
check "HTTP c=16 one pass-through layer / none" "$(ratio "$(sum2 layers-noop)" "$(sum2 layers-none)")" ">=" 0.97
check "HTTP c=16 rate limits / none" "$(ratio "$(sum2 layers-limits)" "$(sum2 layers-none)")" ">=" 0.95
check "HTTP c=16 access log + limits + access rules / none" "$(ratio "$(sum2 layers-policy)" "$(sum2 layers-none)")" ">=" 0.90
check "cold start, mcp - ceiling ms (medians, 2 runs)" "$(awk -v a="$(field cold-mcp-1 p50_ms)" -v b="$(field cold-mcp-2 p50_ms)" \
  -v c="$(field cold-ceiling-1 p50_ms)" -v d="$(field cold-ceiling-2 p50_ms)" 'BEGIN { printf "%.2f", (a + b - c - d) / 2 }')" "<" 3
check "RSS 2 s after the burst, MiB (tuned; a budget: 16 today, +50%)" "$(awk -v k="$(field burst-trim-1 rss_after_2s_kib)" 'BEGIN { if (k != "") printf "%.1f", k / 1024 }')" "<" 24
for case in "http w=1" "http c=64" "stdio w=1" "stdio c=64"; do
  check "client $case ours/raw req/s" "$(sed -n "s/^client $case: .*ratio \([0-9.]*\).*/\1/p" "$CLIENT_OUT")" ">=" 0.8
done
cat "$REPORT"
echo
cat "$CHECKS"
echo "load average at start $LOAD_START, at end $LOAD_END"

if [ "$WRITE_DOCS" = 1 ]; then
  {
    echo "# Beyond the request path"
    echo
    echo "Generated by \`scripts/bench-extras.sh --write-docs\`; what each case measures: [README.md](README.md)."
    echo
    echo "- run: $STARTED, commit $(git rev-parse --short=12 HEAD); ${SECS} s per load run after ${WARMUP} s warm-up; load average $LOAD_START at start, $LOAD_END at end"
    echo "- command: \`$(env | grep -E '^(BENCH_[A-Z_]+|CARGO_PROFILE_[A-Z_]+)=' | sort | tr '\n' ' ')scripts/bench-extras.sh --write-docs\`"
    echo
    cat "$REPORT"
    echo
    echo "## Checks"
    echo
    sed 's/^/    /' "$CHECKS"
  } >docs/perf/extras.md
  echo "== wrote docs/perf/extras.md"
fi
