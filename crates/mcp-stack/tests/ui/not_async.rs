use mcp::prelude::*;

/// Not async.
#[tool]
fn echo(text: String) -> String {
    text
}

fn main() {}
