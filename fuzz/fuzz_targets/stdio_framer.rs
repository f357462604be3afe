#![no_main]
//! Fuzz target `stdio_framer`: the property is `mcp_fuzz_checks::stdio_framer::check` (also replayed on the
//! regression inputs by `cargo test -p mcp-fuzz-checks`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_fuzz_checks::stdio_framer::check(data));
