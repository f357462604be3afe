#!/usr/bin/env bash
# Soak test: millions of requests against `mcp serve everything` (HTTP, then stdio), sampling the
# server's RSS and open file descriptors after every round; fails when either keeps growing or
# any request fails. Loopback only; bounded by ROUNDS x SECS per transport.
#   scripts/soak.sh [ROUNDS] [SECS]      (default 8 rounds of 10 s: ~5M HTTP requests here)
# Needs release builds:  cargo build --release -p mcp-stack-cli -p mcp-bench
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-8}"; secs="${2:-10}"
MCP=target/release/mcp; LOAD=target/release/mcp-load
[ -x "$MCP" ] && [ -x "$LOAD" ] || { echo "build first: cargo build --release -p mcp-stack-cli -p mcp-bench"; exit 2; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
fds() { ls "/proc/$1/fd" | wc -l; }
field() { python3 -c "import json,sys; print(json.loads(sys.stdin.read())['$1'])"; }
fail=0
check_growth() { # name first_rss last_rss first_fds last_fds
  local grow=$(( $3 - $2 )) fgrow=$(( $5 - $4 ))
  echo "$1: RSS after round 1 ${2} KiB, after the last ${3} KiB (growth ${grow} KiB); fds ${4} -> ${5}"
  # A leak of even one allocation per request would grow far more than this over millions.
  if [ "$grow" -gt 8192 ] || [ "$fgrow" -gt 8 ]; then echo "$1: FAIL (growth)"; fail=1; fi
}

log=$(mktemp); trap 'rm -f "$log"; kill $pid 2>/dev/null || true' EXIT
"$MCP" serve everything --http 127.0.0.1:0 2>"$log" & pid=$!
for _ in $(seq 50); do grep -q "serving on" "$log" && break; sleep 0.1; done
url=$(sed -n 's/^mcp: serving on //p' "$log")
total=0
for r in $(seq "$rounds"); do
  out=$("$LOAD" http --url "$url" --connections 32 --duration "${secs}s" --json)
  n=$(echo "$out" | field requests); e=$(echo "$out" | field errors)
  total=$(( total + n )); [ "$e" = 0 ] || { echo "http round $r: $e errors"; fail=1; }
  r_rss=$(rss $pid); r_fds=$(fds $pid)
  [ "$r" = 1 ] && { first_rss=$r_rss; first_fds=$r_fds; }
  echo "http round $r: $n requests, RSS $r_rss KiB, fds $r_fds"
done
check_growth "http ($total requests)" "$first_rss" "$r_rss" "$first_fds" "$r_fds"
kill $pid; wait $pid 2>/dev/null || true

# stdio: one long-lived server process per round would hide leaks; mcp-load spawns one per
# run, so each round is one process and growth is judged from its own peak report.
for r in $(seq 2); do
  out=$("$LOAD" stdio --command "$MCP serve everything --stdio" --in-flight 64 --duration "$(( secs * rounds / 2 ))s" --json)
  n=$(echo "$out" | field requests); e=$(echo "$out" | field errors)
  echo "stdio run $r: $n requests, errors $e, $(echo "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); print('idle RSS', d.get('idle_rss_kib'), 'KiB, peak', d.get('peak_rss_kib'), 'KiB')")"
  [ "$e" = 0 ] || fail=1
done
[ "$fail" = 0 ] && echo "soak: OK" || { echo "soak: FAILED"; exit 1; }
