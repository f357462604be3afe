#!/usr/bin/env bash
# Runs the official conformance suite's server scenarios against `mcp serve everything --http`.
# Usage: scripts/conformance-server.sh CONFORMANCE_BIN MCP_BIN|URL [OUTDIR]
# (given a URL, the server there is tested instead: e.g. the nginx proxy of `mcp-cluster`)
# Fails unless every scored 2026-07-28 scenario, the listed pending scenarios, and every scored
# 2025-11-25 scenario (legacy clients on the same endpoint) pass
# (and each of them ran at least one check).
set -euo pipefail
conf="$1"; mcp="$2"; out="${3:-$(mktemp -d)}"
mkdir -p "$out"
case "$mcp" in
  http://*) url="$mcp" ;;
  *)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "$mcp" serve everything --http "127.0.0.1:$port" >"$out/server.log" 2>&1 &
    srv=$!
    trap 'kill $srv 2>/dev/null || true' EXIT
    for _ in $(seq 1 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.1
    done
    url="http://127.0.0.1:$port/mcp"
    ;;
esac
status=0

# Runs the scored scenarios of one spec version; fails unless each passes with >= 1 check.
scored() {
  local version="$1" flag="$2" name="$3"
  echo "== conformance server $flag $version"
  "$conf" server --url "$url" "$flag" "$version" -o "$out/$name" >"$out/$name.txt" 2>&1 || true
  sed -n '/=== SUMMARY ===/,$p' "$out/$name.txt"
  python3 - "$out/$name.txt" <<'PY' || status=1
import re, sys
text = open(sys.argv[1]).read()
summary = text.split("=== SUMMARY ===")[-1]
unscored = set()
if "Not scored" in summary:
    for line in summary.split("Not scored")[1].splitlines():
        m = re.match(r"\s*[✓✗]\s+(\S+)", line)
        if m:
            unscored.add(m.group(1))
scored = []
for m in re.finditer(r"^([✓✗])\s+(\S+):\s+(\d+) passed,\s+(\d+) failed", summary, re.M):
    mark, name, p, f = m.groups()
    if name in unscored:
        continue
    scored.append((name, int(p), int(f)))
bad = [s for s in scored if s[2] > 0 or s[1] == 0]
print(f"scored scenarios: {len(scored)}, passing: {len(scored) - len(bad)}")
for b in bad:
    print("FAILED:", b)
open(sys.argv[1] + ".count", "w").write(f"{len(scored) - len(bad)} {len(bad) + (0 if scored else 1)}\n")
sys.exit(1 if bad or not scored else 0)
PY
}

# The modern revision (every scored scenario), then the same endpoint serving legacy
# (initialize-based) clients: the 2025-11-25 scenarios run with sessions.
scored 2026-07-28 --requirements scored
scored 2025-11-25 --spec-version legacy

# Runs one scenario (NAME, then the suite's arguments) into $out/NAME.txt; sets `line` to its
# "Passed: ..." summary.
one() {
  local name="$1"; shift
  "$conf" server --url "$url" "$@" -o "$out/$name" >"$out/$name.txt" 2>&1 || true
  line=$(grep -E "^Passed: [0-9]+/[0-9]+" "$out/$name.txt" | tail -1 || true)
  echo "$name: $line"
}

pending_pass=0
pending="json-schema-2020-12@2026-07-28 http-header-validation@2026-07-28 http-custom-header-server-validation@2026-07-28
         json-schema-2020-12@2025-11-25 server-sse-polling@2025-11-25"
for item in $pending; do
  scenario=${item%@*} version=${item#*@}
  echo "== conformance server --scenario $scenario --spec-version $version"
  one "$item" --scenario "$scenario" --spec-version "$version"
  if echo "$line" | grep -qE "^Passed: ([1-9][0-9]*)/\1, 0 failed"; then
    pending_pass=$((pending_pass + 1))
  else
    echo "FAILED: $item"; tail -30 "$out/$item.txt"; status=1
  fi
done
pending_count=$(echo $pending | wc -w)

# Extension scenarios (tasks, skills) run without --spec-version (with it they are skipped).
# Each must pass every check with at least one check run, except tasks-status-notifications,
# which the suite itself always skips.
ext_pass=0
extensions="tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
            tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-required-task-error
            tasks-mrtr-composition sep-2640-skills-directory sep-2640-skills-enumeration sep-2640-skills-manifest"
for scenario in $extensions tasks-status-notifications; do
  one "$scenario" --scenario "$scenario"
  if [ "$scenario" = tasks-status-notifications ]; then
    grep -q "SKIPPED" "$out/$scenario.txt" || { echo "FAILED: $scenario no longer skips: check it"; status=1; }
  elif echo "$line" | grep -qE "^Passed: ([1-9][0-9]*)/\1, 0 failed, 0 warnings"; then
    ext_pass=$((ext_pass + 1))
  else
    echo "FAILED: $scenario"; tail -30 "$out/$scenario.txt"; status=1
  fi
done
ext_count=$(echo $extensions | wc -w)
read -r scored_pass scored_fail < "$out/scored.txt.count" || { scored_pass=0; scored_fail=1; }
read -r legacy_pass legacy_fail < "$out/legacy.txt.count" || { legacy_pass=0; legacy_fail=1; }
echo "conformance (server): scored 2026-07-28 $scored_pass passed, $scored_fail failed;" \
  "scored 2025-11-25 (legacy clients) $legacy_pass passed, $legacy_fail failed;" \
  "pending $pending_pass passed, $((pending_count - pending_pass)) failed;" \
  "extensions $ext_pass passed, $((ext_count - ext_pass)) failed"
exit $status
