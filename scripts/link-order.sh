#!/usr/bin/env bash
# Regenerates crates/mcp-stack-cli/link-order.txt: the functions `mcp serve everything` runs while it starts
# and serves its first requests (HTTP and stdio), in the order callgrind first saw them. The `mcp`
# binary is linked with `--symbol-ordering-file` (crates/mcp-stack-cli/build.rs), so that code sits together
# at the start of .text instead of being scattered over 10 MB: the kernel maps file pages 64 KiB at a
# time around each fault, so scattered startup code costs resident memory out of all proportion.
#
# Within that, the functions every request runs (an echo `tools/call` on one keep-alive HTTP
# connection and on stdio, in steady state) form one block right after the start-up-only code: a
# request then touches about 80 pages of code instead of about 120, which a core that went idle
# between two requests pays for in instruction-TLB and cache misses (docs/perf/http-and-stdio.md).
#
# The file only affects layout, never behaviour: a stale entry (a renamed function) is ignored by the
# linker. Re-run after large changes to the server's startup path:  scripts/link-order.sh
# Needs valgrind. Only loopback traffic.
#
#   scripts/link-order.sh --check   # exit 1 if a Rust function listed is missing from target/release/mcp
#                                   # (the list is stale: some start-up code is no longer grouped)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=crates/mcp-stack-cli/link-order.txt
if [ "${1:-}" = "--check" ]; then
  missing=$(comm -23 <(grep -E '^(_ZN|_R)' "$OUT" | sort -u) \
    <(nm --defined-only target/release/mcp | awk '{print $3}' | sort -u) | wc -l)
  echo "link-order: $missing listed Rust functions are not in target/release/mcp"
  [ "$missing" = 0 ]
  exit
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Build without the ordering (an empty file) so the profile is not shaped by an older one.
: >"$WORK/empty.txt"
MCP_LINK_ORDER="$WORK/empty.txt" cargo build --release -q -p mcp-stack-cli --bin mcp -p mcp-bench --bin mcp-load
MCP=target/release/mcp
LOAD=target/release/mcp-load
VG=(valgrind --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no)

# Starts `mcp serve everything --http` under callgrind (profile $1); sets SERVER and URL.
start_http() {
  "${VG[@]}" --callgrind-out-file="$WORK/$1.cg" "$MCP" serve everything --http 127.0.0.1:0 \
    >"$WORK/$1.out" 2>"$WORK/$1.err" &
  SERVER=$! URL=
  for _ in $(seq 1 300); do
    URL=$(grep -h -o 'http://127.0.0.1:[0-9]*/mcp' "$WORK/$1.out" "$WORK/$1.err" 2>/dev/null | head -1) || true
    [ -n "$URL" ] && break
    sleep 0.1
  done
  [ -n "$URL" ] || { echo "server did not start" >&2; cat "$WORK/$1.err" >&2; exit 1; }
}
# Ctrl-C: the graceful exit writes the profile. Background jobs start with SIGINT ignored until the
# server installs its handler, so repeat until it is gone.
stop_http() {
  while kill -INT "$SERVER" 2>/dev/null; do sleep 0.5; done
  wait "$SERVER" || true
}

# The client takes a URL before the command's own arguments, or a stdio command after `--`.
client_calls() {
  "$MCP" discover "${PRE[@]}" "${POST[@]}" >/dev/null
  "$MCP" tools list "${PRE[@]}" "${POST[@]}" >/dev/null
  for _ in 1 2 3; do "$MCP" tools call "${PRE[@]}" echo '{"text":"hi"}' "${POST[@]}" >/dev/null; done
  "$MCP" resources read "${PRE[@]}" test://static-text "${POST[@]}" >/dev/null
  "$MCP" prompts get "${PRE[@]}" test_simple_prompt "${POST[@]}" >/dev/null
}

# 1. Start-up only (what an idle server has run after a few seconds): HTTP, then stdio.
start_http idle-http
sleep 2
stop_http
sleep 4 | "${VG[@]}" --callgrind-out-file="$WORK/idle-stdio.cg" "$MCP" serve everything --stdio >/dev/null 2>&1
# 2. Serving requests: HTTP, then stdio (the client spawns the server; it exits on EOF).
start_http busy-http
PRE=("$URL") POST=()
client_calls
stop_http
PRE=() POST=(-- "${VG[@]}" --callgrind-out-file="$WORK/busy-stdio.%p.cg" "$MCP" serve everything --stdio)
client_calls

# 3. Steady state: one request at a time for a few seconds, HTTP then stdio, counted per
# instruction; the functions run on every request are the hot block.
VG=(valgrind -q --tool=callgrind --demangle=no --dump-instr=yes --compress-pos=no --compress-strings=no)
start_http steady-http
HTTP_REQS=$("$LOAD" http --url "$URL" --connections 1 --duration 4s --json | sed -E 's/.*"requests":([0-9]+).*/\1/')
stop_http
STDIO_REQS=$("$LOAD" stdio --in-flight 1 --duration 4s --settle 2s --json \
  --command "${VG[*]} --callgrind-out-file=$WORK/steady-stdio.cg $MCP serve everything --stdio" |
  sed -E 's/.*"requests":([0-9]+).*/\1/')
sleep 2 # the stdio server writes its profile once its input closes

# Function names only: callgrind's names for code without a symbol are left out.
functions() { grep -v -E '^(0x|\(below main\))'; }

# The functions of FILE with an instruction that ran at least REQUESTS / 2 times, in the order
# callgrind lists them.
hot() {
  awk -v min="$(($2 / 2))" '
    /^fn=/ { fn = substr($0, 4); sub(/\047[0-9]+$/, "", fn); next }
    /^calls=/ { skip = 1; next }
    /^0x/ { if (skip) { skip = 0; next } if ($3 >= min && !(fn in seen)) { seen[fn] = 1; print fn } }
  ' "$1"
}
{ hot "$WORK/steady-http.cg" "$HTTP_REQS"; hot "$WORK/steady-stdio.cg" "$STDIO_REQS"; } |
  functions | awk '!seen[$0]++' >"$WORK/hot.txt"

# Every function callgrind saw (as caller or callee): start-up ones first, then the rest.
names() {
  sed -n -E "s/^c?fn=(\([0-9]+\) )?(.+)$/\2/p" "$@" | sed -E "s/'[0-9]+$//" | functions
}
# Valgrind's CPU has no SHA extensions, so the SHA-NI block function (the key ring's key id at
# start-up) never shows up in a profile; add it by name.
sha_ni() { nm --defined-only "$MCP" | awk '{print $3}' | grep -E '^_ZN4sha26sha2563x86' || true; }
{ names "$WORK"/idle-*.cg; sha_ni; } | awk '!seen[$0]++' >"$WORK/start.txt"
# Start-up code that requests do not run, then the start-up code they do run and the rest of
# their code (one block), then everything else the busy runs saw.
{
  grep -v -x -F -f "$WORK/hot.txt" "$WORK/start.txt" || true
  grep -x -F -f "$WORK/hot.txt" "$WORK/start.txt" || true
  cat "$WORK/hot.txt"
  names "$WORK"/busy-*.cg
} | awk '!seen[$0]++' >"$OUT"
echo "$(wc -l <"$OUT") symbols ($(wc -l <"$WORK/hot.txt") run by every request) -> $OUT"
