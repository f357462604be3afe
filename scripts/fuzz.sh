#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 30) with cargo-fuzz (libFuzzer).
# cargo-fuzz needs nightly flags; on a stable toolchain RUSTC_BOOTSTRAP=1 enables them.
#   cargo install cargo-fuzz --locked   # once
#   scripts/fuzz.sh 60
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-30}"
export RUSTC_BOOTSTRAP=1
for t in jsonrpc headers uri_template request_state types skills shared_state; do
  echo "== $t ($secs s)"
  cargo fuzz run -O "$t" -- -max_total_time="$secs" -rss_limit_mb=2048
done
