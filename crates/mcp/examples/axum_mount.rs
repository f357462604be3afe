//! The MCP endpoint mounted in an axum `Router`, next to the application's own routes.
//!
//! Run: `cargo run -p mcp-stack --features http --example axum_mount`, then
//! `curl http://127.0.0.1:3001/health` and `mcp tools call http://127.0.0.1:3001/mcp hello --arg name=Ada`.

use axum::{routing::get, Router};
use mcp::http::{HttpConfig, McpService};
use mcp::prelude::*;

/// Says hello.
#[tool(read_only)]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("axum-demo", "1.0.0").tool(hello::tool()).build()?;
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route_service("/mcp", McpService::new(server, HttpConfig::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3001").await?;
    axum::serve(listener, app).await?;
    Ok(())
}
