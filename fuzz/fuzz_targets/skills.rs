#![no_main]
//! Fuzz target `skills`: the property is `mcp_fuzz_checks::skills::check` (also replayed on the
//! regression inputs by `cargo test -p mcp-fuzz-checks`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_fuzz_checks::skills::check(data));
