use mcp::prelude::*;

/// A user.
#[resource("users://{id}")]
async fn user(name: String) -> String {
    name
}

fn main() {}
