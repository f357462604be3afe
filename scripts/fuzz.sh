#!/usr/bin/env bash
# Runs every fuzz target in fuzz/fuzz_targets for SECONDS each (default 30) with cargo-fuzz
# (libFuzzer), starting from the target's corpus and its named regression inputs
# (fuzz/regressions/TARGET/*, each file named after the bug it caught). Prints executions per
# target. cargo-fuzz needs nightly flags; on a stable toolchain RUSTC_BOOTSTRAP=1 enables them.
#   cargo install cargo-fuzz --locked   # once
#   scripts/fuzz.sh 60
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-30}"
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo fuzz build -O
for f in fuzz_targets/*.rs; do
  t=$(basename "$f" .rs)
  mkdir -p "corpus/$t"
  dirs=("corpus/$t")
  [ -d "regressions/$t" ] && dirs+=("regressions/$t")
  # Regression inputs first: each must run clean.
  if [ -d "regressions/$t" ]; then
    cargo fuzz run -O "$t" regressions/$t/* -- -runs=0 >/dev/null 2>&1 || { echo "== $t: a regression input fails"; exit 1; }
  fi
  log=$(mktemp)
  if ! cargo fuzz run -O "$t" "${dirs[@]}" -- -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log"; echo "== $t: FAILED"; exit 1
  fi
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  echo "== $t: ${execs:-?} executions in ${secs}s, clean"
  rm -f "$log"
done
