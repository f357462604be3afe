#![no_main]
//! Fuzz target `icon_image`: the property is `mcp_fuzz_checks::icon_image::check` (also replayed on the
//! regression inputs by `cargo test -p mcp-fuzz-checks`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_fuzz_checks::icon_image::check(data));
