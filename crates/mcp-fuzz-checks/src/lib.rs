//! The properties the fuzz targets check, as plain functions: `fuzz/fuzz_targets/NAME.rs` runs
//! `NAME::check` under libFuzzer, and `cargo test` replays every input in
//! `fuzz/regressions/NAME/` through the same function (tests/regressions.rs), so a bug a fuzzer
//! once found stays found on every test run.
//!
//! Each module's docs say what it checks.

pub mod apps_meta;
pub mod client_response;
pub mod headers;
pub mod http_pipeline;
pub mod icon_image;
pub mod jsonrpc;
pub mod request_state;
pub mod server_dispatch;
pub mod shared_state;
pub mod skills;
pub mod sse;
pub mod stdio_framer;
pub mod types;
pub mod uri_template;
pub mod www_authenticate;

/// A property over one input: panics when the input breaks it.
pub type Check = fn(&[u8]);

/// Every check by target name.
pub const TARGETS: &[(&str, Check)] = &[
    ("apps_meta", apps_meta::check),
    ("client_response", client_response::check),
    ("headers", headers::check),
    ("http_pipeline", http_pipeline::check),
    ("icon_image", icon_image::check),
    ("jsonrpc", jsonrpc::check),
    ("request_state", request_state::check),
    ("server_dispatch", server_dispatch::check),
    ("shared_state", shared_state::check),
    ("skills", skills::check),
    ("sse", sse::check),
    ("stdio_framer", stdio_framer::check),
    ("types", types::check),
    ("uri_template", uri_template::check),
    ("www_authenticate", www_authenticate::check),
];
