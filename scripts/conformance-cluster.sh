#!/usr/bin/env bash
# Runs the conformance server suite (scripts/conformance-server.sh) through nginx round-robin in
# front of three `mcp serve everything --redis` instances sharing one redis-server (the
# `mcp-cluster` harness). Usage: scripts/conformance-cluster.sh CONFORMANCE_BIN BIN_DIR [OUTDIR [SINGLE]]
# (BIN_DIR holds `mcp` and `mcp-cluster`: target/debug or target/release)
# With SINGLE (the output folder of scripts/conformance-server.sh against one instance), every
# scenario must also end exactly as it did against the single instance: same checks passed,
# failed and warned about.
set -euo pipefail
conf="$1"; bin="$2"; out="${3:-$(mktemp -d)}"; single="${4:-}"
mkdir -p "$out"
"$bin/mcp-cluster" --mcp "$bin/mcp" --instances 3 >"$out/cluster.txt" 2>&1 &
cluster=$!
trap 'kill $cluster 2>/dev/null || true; wait $cluster 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  grep -q '^dir=' "$out/cluster.txt" 2>/dev/null && break
  kill -0 $cluster 2>/dev/null || { cat "$out/cluster.txt"; exit 1; }
  sleep 0.1
done
url=$(sed -n 's/^url=//p' "$out/cluster.txt")
[ -n "$url" ] || { echo "the cluster did not start"; cat "$out/cluster.txt"; exit 1; }
echo "proxy: $url"
status=0
bash "$(dirname "$0")/conformance-server.sh" "$conf" "$url" "$out" || status=1
if [ -n "$single" ]; then
  # Each scenario's result lines (per-scenario checks passed and failed; "Passed: n/m, f failed,
  # w warnings" of the single-scenario runs), against one instance and through the proxy.
  results() { grep -hE '^([✓✗] [^ ]+: [0-9]+ passed, [0-9]+ failed|Passed: [0-9]+/[0-9]+.*)$' "$1" | sort || true; }
  for f in "$single"/*.txt; do
    name=$(basename "$f")
    [ "$(results "$f")" = "$(results "$out/$name" 2>/dev/null)" ] && continue
    echo "DIFFERENT through the proxy: $name"
    diff <(results "$f") <(results "$out/$name" 2>/dev/null) || true
    status=1
  done
  [ "$status" = 0 ] && echo "through the proxy: every scenario ended exactly as against one instance"
fi
exit $status
