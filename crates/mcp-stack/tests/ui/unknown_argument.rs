use mcp::prelude::*;

/// Misspelled.
#[tool(descripton = "typo")]
async fn echo(text: String) -> String {
    text
}

fn main() {}
