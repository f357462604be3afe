//! The MCP endpoint mounted in an axum `Router`, next to the application's own routes, with
//! optional OAuth protection as a tower layer.
//!
//! Run: `cargo run -p mcp-stack --features http,auth --example axum_mount`, then
//! `curl http://127.0.0.1:3001/health` and `mcp tools call http://127.0.0.1:3001/mcp hello --arg name=Ada`.
//! With `MCP_AUTH_ISSUER=https://as.example` every MCP request needs a bearer token (a JWT from
//! that issuer, audience `http://127.0.0.1:3001/mcp`); the RFC 9728 metadata is served at
//! `/.well-known/oauth-protected-resource/mcp`.

use axum::{routing::get, Router};
use mcp::auth::{AuthConfig, JwksOptions, JwtConfig, JwtValidator};
use mcp::http::{AuthLayer, HttpConfig, McpService};
use mcp::prelude::*;
use std::sync::Arc;
use tower::Layer;

/// Says hello (to the token's subject, when there is one).
#[tool(read_only)]
async fn hello(ctx: Context, name: String) -> String {
    match ctx.principal() {
        Some(subject) => format!("Hello, {name}! (asked by {subject})"),
        None => format!("Hello, {name}!"),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("axum-demo", "1.0.0").tool(hello::tool()).build()?;
    let mcp = McpService::new(server, HttpConfig::default());
    let mut app = Router::new().route("/health", get(|| async { "ok" }));
    app = match std::env::var("MCP_AUTH_ISSUER") {
        Err(_) => app.route_service("/mcp", mcp),
        Ok(issuer) => {
            let audience = "http://127.0.0.1:3001/mcp";
            let validator = JwtValidator::discover(JwtConfig::new(&issuer, audience), JwksOptions::default()).await?;
            let auth = AuthConfig::builder(audience, Arc::new(validator)).authorization_server(issuer).build()?;
            let protected = AuthLayer::new(Arc::new(auth), "/mcp").layer(mcp);
            app.route_service("/mcp", protected.clone())
                .route_service("/.well-known/oauth-protected-resource/mcp", protected)
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3001").await?;
    axum::serve(listener, app).await?;
    Ok(())
}
