#![no_main]
//! Fuzz target `jsonrpc`: the property is `mcp_fuzz_checks::jsonrpc::check` (also replayed on the
//! regression inputs by `cargo test -p mcp-fuzz-checks`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_fuzz_checks::jsonrpc::check(data));
