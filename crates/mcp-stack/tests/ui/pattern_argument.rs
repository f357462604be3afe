use mcp::prelude::*;

/// Destructures.
#[tool]
async fn pair((a, b): (i64, i64)) -> String {
    format!("{a}{b}")
}

fn main() {}
