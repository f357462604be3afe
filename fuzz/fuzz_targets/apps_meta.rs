#![no_main]
//! Fuzz target `apps_meta`: the property is `mcp_fuzz_checks::apps_meta::check` (also replayed on the
//! regression inputs by `cargo test -p mcp-fuzz-checks`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_fuzz_checks::apps_meta::check(data));
