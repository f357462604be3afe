use mcp::prelude::*;

/// Returns something that is not a tool result.
#[tool]
async fn number() -> u64 {
    42
}

fn main() {
    let _ = number::tool();
}
