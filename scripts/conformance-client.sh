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
# Authorization (docs/conformance.md): the scored auth scenarios of each revision,
# then the extension scenarios, which need --force (otherwise the suite skips them).
auth_both=(metadata-default metadata-var1 metadata-var2 metadata-var3 basic-cimd scope-from-www-authenticate
  scope-from-scopes-supported scope-omitted-when-undefined scope-step-up scope-retry-limit
  token-endpoint-auth-basic token-endpoint-auth-post token-endpoint-auth-none pre-registration)
auth_2026=(resource-mismatch offline-access-scope offline-access-not-supported authorization-server-migration
  iss-supported iss-not-advertised iss-supported-missing iss-wrong-issuer iss-unexpected iss-normalized
  metadata-issuer-mismatch)
auth_ext=(client-credentials-jwt client-credentials-basic enterprise-managed-authorization dpop dpop-nonce wif-jwt-bearer)
for s in "${auth_both[@]}" "${auth_2026[@]}"; do pairs+=("2026-07-28 auth/$s"); done
for s in "${auth_both[@]}"; do pairs+=("2025-11-25 auth/$s"); done
for s in "${auth_ext[@]}"; do pairs+=("2026-07-28 auth/$s force" "2025-11-25 auth/$s force"); done
# The skills extension (SEP-2640): a host that never prefetches and refuses unverified content.
for s in no-prefetch verify-digest verify-size verify-frontmatter; do pairs+=("2026-07-28 sep-2640-client-$s force"); done
isolate=()
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
  isolate=(unshare -n bash -c 'ip link set lo up && exec "$@"' isolate)
fi
passed=0; failed=0
for pair in "${pairs[@]}"; do
  read -r version scenario force <<<"$pair"
  name="$version-${scenario//\//_}"
  log="$out/$name.txt"
  extra=()
  [ -n "${force:-}" ] && extra=(--force)
  "${isolate[@]}" "$conf" client --command "$client" --scenario "$scenario" --spec-version "$version" "${extra[@]}" \
    -o "$out/$name" >"$log" 2>&1
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
