#!/usr/bin/env bash
# The servers as users get them, side by side, in one interleaved run:
#
#   scripts/bench.sh                      # 3 rounds, 10 s per point (+2 s warm-up): about 25 min
#                                         # of measuring (30 with BASELINE), after the release
#                                         # builds (fat LTO: expect 30-40 min the first time)
#   scripts/bench.sh --write-docs         # the same, then rewrites docs/perf/servers.md
#   BASELINE=f4d2bc7 scripts/bench.sh     # also `mcp serve everything` built at that commit (A/B)
#   BENCH_SECS=2 BENCH_WARMUP=1 BENCH_ROUNDS=1 scripts/bench.sh   # a quick check of the machinery
#
# Targets (each started fresh for every point, on BENCH_SERVER_CPU; the load on BENCH_LOAD_CPU):
#   ceiling      hyper + serde_json answering the same request (crates/mcp-bench), no MCP at all;
#   user         the README's echo server as its own crate (bench/user-server, outside the
#                workspace), built with the release profile the README recommends, served with
#                `mcp::http::serve` and `mcp::stdio::serve_stdio`;
#   user-default the same server built with Cargo's default release profile (no cross-crate LTO,
#                16 codegen units), for what the recommended profile buys;
#   user-prod    the same with a bearer JWT validated against a JWKS on 127.0.0.1 (mcp-jwks) and
#                one pass-through operation layer (HTTP only);
#   rmcp         the same echo tool on rmcp from crates.io (bench/rmcp-server), same profile;
#   rmcp-prod    rmcp with the same token check and one pass-through layer, as a user writes
#                them (axum middleware, jsonwebtoken; HTTP only);
#   everything   `mcp serve everything` (crates/mcp-stack-cli, the workspace's release profile);
#   baseline     with BASELINE=COMMIT: `mcp serve everything` built at COMMIT in a git worktree
#                under target/baseline/.
# Points: HTTP with 1, 16 and 64 keep-alive connections (one request in flight each), stdio with
# a window of 1 and 64 requests in flight. Every load loop is bounded by its duration; all traffic
# is on 127.0.0.1; every process started here is stopped on exit.
#
# The table gives req/s (mean over rounds), p50/p99 latency, and ratios to the ceiling and to
# rmcp in the same shape (summed over rounds) with the spread of the per-round ratio; then the issue's targets and
# the budgets with PASS/FAIL. Raw results: $OUT/results.jsonl (one JSON line per run).
#
# Needs: a Rust toolchain, taskset (util-linux), jq, openssl (an RS256 key; ES256 without it),
# git (BASELINE), and crates.io reachable for the first build of bench/ (rmcp and its
# dependencies).
#
# Env: BENCH_SECS (10), BENCH_WARMUP (2), BENCH_ROUNDS (3), BENCH_SERVER_CPU (0),
#      BENCH_LOAD_CPU (1), BENCH_SKIP_BUILD=1 (use what is built), BASELINE=COMMIT,
#      BENCH_TARGETS (default: all of the above that apply), CARGO_TARGET_DIR (default target).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

WRITE_DOCS=0
for arg in "$@"; do
  case "$arg" in
    --write-docs) WRITE_DOCS=1 ;;
    -h | --help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "bench: unknown argument $arg (try --help)" >&2; exit 2 ;;
  esac
done

SECS="${BENCH_SECS:-10}"
WARMUP="${BENCH_WARMUP:-2}"
ROUNDS="${BENCH_ROUNDS:-3}"
SERVER_CPU="${BENCH_SERVER_CPU:-0}"
LOAD_CPU="${BENCH_LOAD_CPU:-1}"
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
BIN="$TARGET_DIR/release"
UBIN="$TARGET_DIR/bench-user/release"
UDBIN="$TARGET_DIR/bench-user/default-release"
OUT="$TARGET_DIR/bench"
mkdir -p "$OUT"
RESULTS="$OUT/results.jsonl"
: >"$RESULTS"
AUDIENCE="http://127.0.0.1/mcp"

for tool in taskset jq; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }
done

# The README's production profile and bench/Cargo.toml's must be the same profile.
profile_of() { # FILE: the lines of its first [profile.release] block, without comments
  awk '/^\[profile\.release\]/ {on = 1; next} on && (/^\[/ || /^```/ || /^$/) {exit} on && !/^#/ {print}' "$1"
}
if [ "$(profile_of README.md)" != "$(profile_of bench/Cargo.toml)" ]; then
  echo "bench: the [profile.release] of README.md and bench/Cargo.toml differ:" >&2
  diff <(profile_of README.md) <(profile_of bench/Cargo.toml) >&2 || true
  exit 1
fi

BASE_BIN=""
if [ -n "${BASELINE:-}" ]; then
  BASE_COMMIT=$(git rev-parse --verify "$BASELINE^{commit}")
  BASE_TREE="$ROOT/target/baseline/${BASE_COMMIT:0:12}"
  BASE_BIN="$BASE_TREE/target/release"
fi

if [ "${BENCH_SKIP_BUILD:-0}" = "1" ]; then
  echo "== build skipped (BENCH_SKIP_BUILD=1)"
else
  echo "== build: workspace (mcp, mcp-bench), release"
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release -p mcp-stack-cli --bin mcp \
    -p mcp-bench --bin mcp-load --bin mcp-ceiling-http --bin mcp-ceiling-stdio --bin mcp-jwks
  echo "== build: bench/ (user-server, rmcp-server), the README's release profile"
  CARGO_TARGET_DIR="$TARGET_DIR/bench-user" cargo build --release --manifest-path bench/Cargo.toml
  CARGO_TARGET_DIR="$TARGET_DIR/bench-user" cargo build --profile default-release --manifest-path bench/Cargo.toml -p user-server
  if [ -n "$BASE_BIN" ]; then
    [ -d "$BASE_TREE" ] || git worktree add --detach "$BASE_TREE" "$BASE_COMMIT"
    echo "== build: baseline ${BASE_COMMIT:0:12}: mcp, its own release profile"
    (cd "$BASE_TREE" && CARGO_TARGET_DIR="$BASE_TREE/target" cargo build --release -p mcp-stack-cli --bin mcp)
  fi
fi
for b in "$BIN/mcp" "$BIN/mcp-load" "$BIN/mcp-ceiling-http" "$BIN/mcp-ceiling-stdio" "$BIN/mcp-jwks" \
  "$UBIN/user-server" "$UDBIN/user-server" "$UBIN/rmcp-server" ${BASE_BIN:+"$BASE_BIN/mcp"}; do
  [ -x "$b" ] || { echo "bench: $b is missing (build without BENCH_SKIP_BUILD=1)" >&2; exit 1; }
done

# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

# The JWKS and a token for the production shapes: RS256, as most identity providers sign (an
# RSA key from openssl), or ES256 without openssl.
JWT_KEY=()
if command -v openssl >/dev/null && openssl genrsa -traditional -out "$OUT/jwt-rsa.pem" 2048 2>/dev/null; then
  JWT_KEY=(--rsa-key "$OUT/jwt-rsa.pem")
fi
"$BIN/mcp-jwks" --audience "$AUDIENCE" "${JWT_KEY[@]}" --exit-after 240m >"$OUT/jwks.txt" 2>"$OUT/jwks.stderr" &
PIDS+=("$!")
for _ in $(seq 1 100); do grep -q '^token=' "$OUT/jwks.txt" 2>/dev/null && break; sleep 0.1; done
jwks_field() { sed -n "s/^$1=//p" "$OUT/jwks.txt"; }
TOKEN=$(jwks_field token)
[ -n "$TOKEN" ] || { echo "bench: mcp-jwks did not start: $(cat "$OUT/jwks.stderr")" >&2; exit 1; }
PROD_ARGS=(--jwks "$(jwks_field jwks)" --issuer "$(jwks_field issuer)" --audience "$AUDIENCE")

# target_cmd TARGET TRANSPORT: the server's command line (empty: the target has no such transport).
target_cmd() {
  local t=$1 tr=$2 addr="--http 127.0.0.1:0"
  case "$t/$tr" in
    ceiling/http) echo "$BIN/mcp-ceiling-http --addr 127.0.0.1:0" ;;
    ceiling/stdio) echo "$BIN/mcp-ceiling-stdio" ;;
    user/http) echo "$UBIN/user-server $addr" ;;
    user/stdio) echo "$UBIN/user-server --stdio" ;;
    user-default/http) echo "$UDBIN/user-server $addr" ;;
    user-default/stdio) echo "$UDBIN/user-server --stdio" ;;
    user-prod/http) echo "$UBIN/user-server $addr ${PROD_ARGS[*]}" ;;
    rmcp/http) echo "$UBIN/rmcp-server $addr" ;;
    rmcp/stdio) echo "$UBIN/rmcp-server --stdio" ;;
    rmcp-prod/http) echo "$UBIN/rmcp-server $addr ${PROD_ARGS[*]}" ;;
    everything/http) echo "$BIN/mcp serve everything --http 127.0.0.1:0" ;;
    everything/stdio) echo "$BIN/mcp serve everything --stdio" ;;
    baseline/http) echo "$BASE_BIN/mcp serve everything --http 127.0.0.1:0" ;;
    baseline/stdio) echo "$BASE_BIN/mcp serve everything --stdio" ;;
  esac
}
bearer_of() { case "$1" in *-prod) echo "--bearer $TOKEN" ;; esac; }

TARGETS="${BENCH_TARGETS:-ceiling user user-default user-prod rmcp rmcp-prod everything${BASE_BIN:+ baseline}}"
POINTS="http:1 http:16 http:64 stdio:1 stdio:64"

# run_point TARGET TRANSPORT N ROUND: one measured run, appended to RESULTS.
run_point() {
  local t=$1 tr=$2 n=$3 r=$4 cmd label
  cmd=$(target_cmd "$t" "$tr")
  [ -n "$cmd" ] || return 0
  label="$t/$tr/$n/$r"
  echo "-- round $r: $t $tr $([ "$tr" = http ] && echo "c=$n" || echo "window $n")" >&2
  if [ "$tr" = http ]; then
    # shellcheck disable=SC2086 # a command line
    start_http "$t" $cmd
    # shellcheck disable=SC2046 # the bearer option is two words or none
    taskset -c "$LOAD_CPU" "$BIN/mcp-load" http --url "$SERVER_URL" --connections "$n" $(bearer_of "$t") \
      --duration "${SECS}s" --warmup "${WARMUP}s" --server-pid "$SERVER_PID" --label "$label" --json \
      >>"$RESULTS" || echo "bench: $label failed" >&2
    stop_server
  else
    taskset -c "$LOAD_CPU" "$BIN/mcp-load" stdio --command "taskset -c $SERVER_CPU $cmd" --in-flight "$n" \
      --duration "${SECS}s" --warmup "${WARMUP}s" --settle 0.5s --label "$label" --json \
      >>"$RESULTS" || echo "bench: $label failed" >&2
  fi
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$(date -u +%Y-%m-%dT%H:%MZ)
echo "== $(nproc) CPUs; servers on CPU $SERVER_CPU, load on CPU $LOAD_CPU; load average $LOAD_START"
echo "== targets: $TARGETS; $ROUNDS rounds of ${SECS}s per point (+${WARMUP}s warm-up)"

# Idle memory of each HTTP server (start, wait 1 s, read /proc): the budgets below.
idle() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }
for t in $TARGETS; do
  cmd=$(target_cmd "$t" http)
  [ -n "$cmd" ] || continue
  # shellcheck disable=SC2086 # a command line
  start_http "$t-idle" $cmd
  sleep 1
  jq -cn --arg l "idle/$t" --argjson rss "$(idle "$SERVER_PID" VmRSS)" --argjson anon "$(idle "$SERVER_PID" RssAnon)" \
    '{label: $l, idle_rss_kib: $rss, idle_anon_kib: $anon}' >>"$RESULTS"
  stop_server
done

# Interleaved: every round runs every point of every target; the order of the targets turns by
# one each round, so no target always runs first or right after the same neighbour.
read -r -a TLIST <<<"$TARGETS"
for r in $(seq 1 "$ROUNDS"); do
  for p in $POINTS; do
    for i in "${!TLIST[@]}"; do
      t=${TLIST[$(((i + r - 1) % ${#TLIST[@]}))]}
      run_point "$t" "${p%%:*}" "${p##*:}" "$r"
    done
  done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ----------------------------------------------------------------------------------
# stat TARGET TRANSPORT N FIELD: the field's mean over rounds ("" when not measured).
stat() {
  jq -rs --arg p "$1/$2/$3/" --arg f "$4" \
    '[.[] | select(.label | startswith($p)) | .[$f] | numbers] | if length == 0 then "" else add / length end' "$RESULTS"
}
# ratio A B TRANSPORT N: sum of A's req/s over rounds / B's, and the min-max of per-round ratios.
ratio() {
  jq -rs --arg a "$1/$3/$4/" --arg b "$2/$3/$4/" '
    def runs($p): [.[] | select(.label | startswith($p)) | {r: (.label | split("/")[3]), rps}];
    def f2: (. * 100 | round) as $c | "\($c / 100 | floor).\($c % 100 | tostring | if length < 2 then "0" + . else . end)";
    (runs($a)) as $x | (runs($b)) as $y
    | [$x[] as $i | $y[] | select(.r == $i.r and .rps > 0) | $i.rps / .rps] as $per
    | if ($x | length) == 0 or ($y | length) == 0 or ($y | map(.rps) | add) == 0 then ""
      else (($x | map(.rps) | add) / ($y | map(.rps) | add) | f2)
        + (if ($per | length) > 1 then " (\($per | min | f2)-\($per | max | f2))" else "" end)
      end' "$RESULTS"
}
num() { awk -v v="$1" -v d="$2" -v s="${3:-1}" 'BEGIN { if (v == "") print "-"; else printf "%." d "f", v / s }'; }

TABLE="$OUT/table.md"
{
  echo "| target | point | req/s | p50 ms | p99 ms | server CPU µs/req | / ceiling | / rmcp |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|"
  for p in $POINTS; do
    tr=${p%%:*} n=${p##*:}
    name=$([ "$tr" = http ] && echo "HTTP c=$n" || echo "stdio window $n")
    for t in $TARGETS; do
      rps=$(stat "$t" "$tr" "$n" rps)
      [ -n "$rps" ] || continue
      vs_ceiling=$([ "$t" = ceiling ] && echo "-" || ratio "$t" ceiling "$tr" "$n")
      vs_rmcp=$(case "$t" in ceiling | rmcp*) echo "-" ;; *-prod) ratio "$t" rmcp-prod "$tr" "$n" ;; *) ratio "$t" rmcp "$tr" "$n" ;; esac)
      printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$name" "$(num "$rps" 0)" \
        "$(num "$(stat "$t" "$tr" "$n" p50_us)" 3 1000)" "$(num "$(stat "$t" "$tr" "$n" p99_us)" 3 1000)" \
        "$(num "$(stat "$t" "$tr" "$n" server_cpu_us_per_req)" 1)" "${vs_ceiling:--}" "${vs_rmcp:--}"
    done
  done
} >"$TABLE"
IDLE="$OUT/idle.md"
{
  echo "| target | idle RSS | idle anonymous (RssAnon) |"
  echo "|---|---:|---:|"
  jq -r 'select(.label | startswith("idle/")) | "| \(.label[5:]) | \(.idle_rss_kib / 1024 * 10 | round / 10) MiB | \(.idle_anon_kib / 1024 * 100 | round / 100) MiB |"' "$RESULTS"
} >"$IDLE"

echo
echo "== results: $ROUNDS rounds, ${SECS}s per point after ${WARMUP}s warm-up (ratios: summed req/s over rounds, per-round spread in brackets)"
cat "$TABLE"
echo
cat "$IDLE"
echo "load average at start $LOAD_START, at end $LOAD_END (other work on the machine skews the figures)"

CHECKS="$OUT/checks.txt"
: >"$CHECKS"
FAILED=0
check() { # NAME VALUE OP LIMIT (VALUE may carry a bracketed spread)
  local v=${2%% *} ok
  if [ -z "$v" ]; then
    printf 'SKIP %s: not measured\n' "$1" | tee -a "$CHECKS"
    return
  fi
  ok=$(awk -v v="$v" -v l="$4" -v op="$3" 'BEGIN { r = (op == ">=") ? (v >= l) : (v <= l); print r ? "PASS" : "FAIL" }')
  [ "$ok" = PASS ] || FAILED=$((FAILED + 1))
  printf '%s %s: %s (target %s %s)\n' "$ok" "$1" "$2" "$3" "$4" | tee -a "$CHECKS"
}
echo
echo "== targets of the user-built server (issue 43) and budgets"
check "user HTTP c=1 / ceiling" "$(ratio user ceiling http 1)" ">=" 0.85
check "user HTTP c=16 / ceiling" "$(ratio user ceiling http 16)" ">=" 0.80
check "user HTTP c=64 / ceiling" "$(ratio user ceiling http 64)" ">=" 0.80
check "user HTTP c=16 / rmcp" "$(ratio user rmcp http 16)" ">=" 2
check "user HTTP c=64 / rmcp" "$(ratio user rmcp http 64)" ">=" 2
check "user stdio window 1 / ceiling" "$(ratio user ceiling stdio 1)" ">=" 0.90
check "user stdio window 64 / ceiling" "$(ratio user ceiling stdio 64)" ">=" 0.85
for n in 1 16 64; do
  check "user-prod / user, HTTP c=$n" "$(ratio user-prod user http "$n")" ">=" 0.90
done
if [[ " $TARGETS " == *" baseline "* ]]; then
  for p in $POINTS; do
    check "everything / baseline ${BASE_COMMIT:0:12}, ${p/:/ }" "$(ratio everything baseline "${p%%:*}" "${p##*:}")" ">=" 0.95
  done
fi
# Budgets (a tolerance over what the code needs today, not a target to tune for): the anonymous
# memory an idle server holds (heap, stacks), what its memory grows by under 64 connections
# (buffers and state per request in flight), and requests that fail.
anon_mib() { jq -r --arg l "idle/$1" 'select(.label == $l) | .idle_anon_kib / 1024 * 100 | round / 100' "$RESULTS"; }
check "idle anonymous memory of mcp serve everything, MiB (1.0 today, +100%)" "$(anon_mib everything)" "<=" 2
check "idle anonymous memory of the user server, MiB (1.0 today, +100%)" "$(anon_mib user)" "<=" 2
growth_mib() { # TARGET: peak minus idle RSS under HTTP c=64, the mean over rounds, in MiB
  jq -rs --arg p "$1/http/64/" '[.[] | select(.label | startswith($p)) | select(.peak_rss_kib and .idle_rss_kib)
    | .peak_rss_kib - .idle_rss_kib] | if length == 0 then "" else add / length / 1024 * 10 | round / 10 end' "$RESULTS"
}
check "memory growth under HTTP c=64 of mcp serve everything (peak - idle RSS), MiB (3.5 today, +100%)" "$(growth_mib everything)" "<=" 7
check "memory growth under HTTP c=64 of the user server (peak - idle RSS), MiB (4 today, +100%)" "$(growth_mib user)" "<=" 8
errors=$(jq -s '[.[] | .errors // 0] | add' "$RESULTS")
check "failed requests, all runs" "$errors" "<=" 0

if [ "$WRITE_DOCS" = 1 ]; then
  DOC=docs/perf/servers.md
  {
    echo "# Servers as users get them"
    echo
    echo "Generated by \`scripts/bench.sh --write-docs\`; what each target is and how to read the"
    echo "table: [README.md](README.md)."
    echo
    echo "- run: $STARTED, commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- crates bench || echo ' (with local changes)')"
    echo "- command: \`$(env | grep -E '^(BENCH_[A-Z_]+|BASELINE|CARGO_PROFILE_[A-Z_]+)=' | sort | tr '\n' ' ')scripts/bench.sh --write-docs\`"
    echo "- production shapes: bearer JWT $(if [ ${#JWT_KEY[@]} -gt 0 ]; then echo RS256; else echo ES256; fi) against a JWKS on 127.0.0.1, one pass-through layer"
    echo "- rounds: $ROUNDS, ${SECS} s per point after ${WARMUP} s warm-up; servers on CPU $SERVER_CPU, load on CPU $LOAD_CPU of $(nproc); load average $LOAD_START at start, $LOAD_END at end"
    echo "- rmcp $(sed -n '/^name = "rmcp"$/{n;s/^version = "\(.*\)"/\1/p}' bench/Cargo.lock 2>/dev/null | head -n1); rustc $(rustc -V | cut -d' ' -f2)"
    echo
    cat "$TABLE"
    echo
    echo "Ratios are summed req/s over the rounds; in brackets, the lowest and highest ratio of a single round."
    echo
    cat "$IDLE"
    echo
    echo "## Checks"
    echo
    sed 's/^/    /' "$CHECKS"
  } >"$DOC"
  echo "== wrote $DOC"
fi
if [ "$FAILED" != 0 ]; then
  echo "== $FAILED check(s) failed"
  exit 1
fi
