#!/usr/bin/env bash
# Runs the official conformance suite's client scenarios against mcp-conformance-client, inside a
# loopback-only network namespace when possible (some scenarios hand out made-up URLs).
# Usage: scripts/conformance-client.sh CONFORMANCE_BIN CLIENT_BIN [OUTDIR]
# Fails unless every listed scenario passes with at least one check.
set -uo pipefail
conf="$1"; client="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; out="${3:-$(mktemp -d)}"
mkdir -p "$out"
pairs=(
  "2026-07-28 tools_call" "2026-07-28 request-metadata" "2026-07-28 sep-2322-client-request-state"
  "2026-07-28 http-standard-headers" "2026-07-28 http-custom-headers" "2026-07-28 http-invalid-tool-headers"
  "2026-07-28 json-schema-ref-no-deref" "2026-07-28 json-schema-2020-12-preservation"
  "2025-11-25 initialize" "2025-11-25 tools_call" "2025-11-25 elicitation-sep1034-client-defaults" "2025-11-25 sse-retry"
)
isolate=()
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
  isolate=(unshare -n bash -c 'ip link set lo up && exec "$@"' isolate)
fi
passed=0; failed=0
for pair in "${pairs[@]}"; do
  read -r version scenario <<<"$pair"
  log="$out/$version-$scenario.txt"
  "${isolate[@]}" "$conf" client --command "$client" --scenario "$scenario" --spec-version "$version" \
    -o "$out/$version-$scenario" >"$log" 2>&1
  rc=$?
  line=$(grep -E "^Passed: [0-9]+/[0-9]+" "$log" | tail -1)
  if [ $rc -eq 0 ] && echo "$line" | grep -qE "^Passed: ([1-9][0-9]*)/\1, 0 failed, 0 warnings"; then
    passed=$((passed + 1)); echo "PASS $version $scenario: $line"
  else
    failed=$((failed + 1)); echo "FAIL $version $scenario (exit $rc): $line"; tail -25 "$log"
  fi
done
echo "conformance (client): $passed passed, $failed failed"
[ "$failed" -eq 0 ]
