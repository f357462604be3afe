//! The `everything` demo server: every fixture the official conformance suite's server
//! scenarios call, plus demo tools. Written with the public `mcp` API, as a user would.

mod content;
mod demo;
mod fixtures;
mod legacy;
mod tasks;

use mcp::prelude::*;

/// Builds the `everything` server.
pub fn server() -> Server {
    let b = Server::builder("mcp-rs-everything", env!("CARGO_PKG_VERSION"))
        .title("mcp-rs everything server")
        .instructions("Demo server exposing every conformance fixture plus echo, add, progress, elicitation, sampling and list-change demo tools.");
    let b = fixtures::register(b);
    let b = content::register(b);
    let b = demo::register(b);
    let b = legacy::register(b);
    let b = tasks::register(b);
    b.build().expect("everything server definitions are valid")
}
