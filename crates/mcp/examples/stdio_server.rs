//! A minimal MCP server on stdio with one typed tool.
//!
//! Run: `cargo run -p mcp --example stdio_server`, then type
//! `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"shout","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

use mcp::prelude::*;

/// Arguments of `shout`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Shout {
    /// What to shout.
    text: String,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = Server::builder("shouter", "1.0.0")
        .tool(json!({"name": "shout", "description": "Upper-cases the text"}), |_ctx: Context, a: Shout| async move {
            Ok(CallToolResult::text(a.text.to_uppercase()))
        })
        .build()
        .expect("valid definitions");
    mcp::stdio::serve_stdio(server).await
}
