use mcp::prelude::*;

/// A tool exists only with its handler.
fn main() {
    let _ = Server::builder("s", "1").tool(Tool::new("no handler")).build();
}
