#![no_main]
//! Fuzz target `http_pipeline`: the property is `mcp_fuzz_checks::http_pipeline::check` (also replayed on the
//! regression inputs by `cargo test -p mcp-fuzz-checks`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_fuzz_checks::http_pipeline::check(data));
