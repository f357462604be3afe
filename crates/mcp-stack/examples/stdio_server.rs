//! A minimal MCP server on stdio with one tool.
//!
//! Run: `cargo run -p mcp-stack --example stdio_server`, or drive it with the CLI:
//! `mcp tools call shout --arg text=hi -- cargo run -q -p mcp-stack --example stdio_server`.

use mcp::prelude::*;

/// Upper-cases the text.
#[tool(read_only)]
async fn shout(#[arg(description = "What to shout")] text: String) -> String {
    text.to_uppercase()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("shouter", "1.0.0").tool(shout::tool()).build()?;
    Ok(mcp::stdio::serve_stdio(server).await?)
}
