//! The `everything` demo server: every fixture the official conformance suite's server
//! scenarios call, plus demo tools. Written with the public `mcp` API, as a user would.

pub mod apps;
mod content;
mod demo;
mod fixtures;
mod legacy;
mod policy;
pub mod skills;
mod tasks;

use mcp::prelude::*;

/// The `everything` server's name (also its namespace in a shared Redis).
pub const NAME: &str = "mcp-rs-everything";

/// Builds the `everything` server (with the demo skills).
pub fn server() -> Server {
    builder().skills(skills::demo()).build().expect("everything server definitions are valid")
}

/// Builds the `everything` server serving the skills in `dir` instead of the demo ones.
pub fn server_with_skills(dir: &std::path::Path) -> Result<Server, mcp::server::BuildError> {
    builder().skills_dir(dir).build()
}

/// The `everything` server's definitions, without skills (add them, or other settings, then build).
pub fn builder() -> mcp::server::ServerBuilder {
    let b = Server::builder(NAME, env!("CARGO_PKG_VERSION"))
        .title("mcp-rs everything server")
        .instructions("Demo server exposing every conformance fixture plus echo, add, progress, elicitation, sampling and list-change demo tools.");
    let b = fixtures::register(b);
    let b = content::register(b);
    let b = demo::register(b);
    let b = legacy::register(b);
    let b = policy::register(b);
    let b = apps::register(b);
    tasks::register(b)
}
