#!/usr/bin/env bash
# Runs the conformance server suite (scripts/conformance-server.sh) through nginx round-robin in
# front of three `mcp serve everything --redis` instances sharing one redis-server (the
# `mcp-cluster` harness). Usage: scripts/conformance-cluster.sh CONFORMANCE_BIN RELEASE_DIR [OUTDIR]
set -euo pipefail
conf="$1"; bin="$2"; out="${3:-$(mktemp -d)}"
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
bash "$(dirname "$0")/conformance-server.sh" "$conf" "$url" "$out"
