# Sourced by scripts/bench.sh and scripts/bench-extras.sh: starting and stopping the servers they
# measure. Needs OUT (a folder for the servers' stderr) and SERVER_CPU; every process whose pid is
# added to PIDS is stopped on exit.
PIDS=()
bench_cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# start_http NAME CMD...: starts an HTTP server on SERVER_CPU and waits (at most 10 s) for the
# http://127.0.0.1:PORT/mcp URL it prints on stderr; sets SERVER_PID and SERVER_URL.
start_http() {
  local log="$OUT/$1.stderr"
  shift
  : >"$log"
  taskset -c "$SERVER_CPU" "$@" 2>>"$log" &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  SERVER_URL=""
  for _ in $(seq 1 100); do
    SERVER_URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n1 || true)
    [ -n "$SERVER_URL" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "bench: $* did not start; its stderr:" >&2
  cat "$log" >&2
  exit 1
}

stop_server() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
}
