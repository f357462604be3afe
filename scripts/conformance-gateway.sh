#!/usr/bin/env bash
# Runs the conformance server suite (2026-07-28 requirements) against `mcp proxy --config` serving
# three upstreams as one, without prefixes: the everything server over stdio, the legacy python
# fixture over stdio, and the everything server over Streamable HTTP.
# Usage: scripts/conformance-gateway.sh CONFORMANCE_BIN MCP_BIN [OUTDIR]
#
# Every scenario must pass except those a proxy cannot pass by design, listed in PROXY_LIMITS:
# the input request keys of an upstream's MRTR round are the proxy's own (input-N) through a
# proxy (the suite pins the fixture's key names), and the front cannot check the Mcp-Param
# headers of tools it does not define itself.
set -euo pipefail
conf="$1"; mcp="$2"; out="${3:-$(mktemp -d)}"
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
mcp=$(cd "$(dirname "$mcp")" && pwd)/$(basename "$mcp")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "nothing listens on 127.0.0.1:$1"; return 1
}
web=$(free_port); front=$(free_port)
"$mcp" serve everything --http "127.0.0.1:$web" >"$out/web.log" 2>&1 &
pids=$!
trap 'kill $pids 2>/dev/null || true' EXIT
wait_port "$web"
cat >"$out/servers.json" <<EOF
{"mcpServers": {
  "ev": {"command": "$mcp", "args": ["serve", "everything", "--stdio"]},
  "legacy": {"command": "python3", "args": ["$root/crates/mcp-stack-cli/tests/it/fixtures/legacy_server.py"]},
  "web": {"url": "http://127.0.0.1:$web/mcp"}
}}
EOF
"$mcp" proxy --http "127.0.0.1:$front" --no-auth --no-prefix --config "$out/servers.json" >"$out/gateway.log" 2>&1 &
pids="$pids $!"
wait_port "$front"
echo "== conformance server --requirements 2026-07-28 through the gateway (3 upstreams)"
"$conf" server --url "http://127.0.0.1:$front/mcp" --requirements 2026-07-28 -o "$out/results" >"$out/gateway.txt" 2>&1 || true
sed -n '/=== SUMMARY ===/,$p' "$out/gateway.txt"
python3 - "$out/gateway.txt" <<'PY'
import re, sys
PROXY_LIMITS = {
    "input-required-result-basic-elicitation",
    "input-required-result-multiple-input-requests",
    "http-custom-header-server-validation",
}
summary = open(sys.argv[1]).read().split("=== SUMMARY ===")[-1].split("Not scored")[0]
results = re.findall(r"^([✓✗])\s+(\S+):\s+(\d+) passed,\s+(\d+) failed", summary, re.M)
bad = [(n, p, f) for _, n, p, f in results if n not in PROXY_LIMITS and (int(f) > 0 or int(p) == 0)]
bad = [b for b in bad if b[0] != "tasks-status-notifications"]  # all checks skipped on one instance too
print(f"gateway: {len(results)} scenarios, {len(results) - len(bad)} as required")
for b in bad:
    print("FAILED:", b)
sys.exit(1 if bad or len(results) < 40 else 0)
PY
