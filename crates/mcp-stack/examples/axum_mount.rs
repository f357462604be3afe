//! The MCP endpoint mounted in an axum `Router` at `/api/mcp`, next to the application's own
//! routes, with optional OAuth protection: `mcp::http::router` wires the endpoint, the RFC 9728
//! metadata and the bearer-token check from the one path.
//!
//! Run: `cargo run -p mcp-stack --features axum,auth --example axum_mount`, then
//! `curl http://127.0.0.1:3001/health` and `mcp tools call http://127.0.0.1:3001/api/mcp hello --arg name=Ada`.
//! With `MCP_AUTH_ISSUER=https://as.example` every MCP request needs a bearer token (a JWT from
//! that issuer, audience `http://127.0.0.1:3001/api/mcp`); the RFC 9728 metadata is served at
//! `/.well-known/oauth-protected-resource/api/mcp`. Ctrl-C or SIGTERM stops it gracefully.

use axum::{routing::get, Router};
use mcp::auth::{AuthConfig, JwksOptions, JwtConfig, JwtValidator};
use mcp::http::EndpointConfig;
use mcp::prelude::*;
use std::sync::Arc;

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
    let mut config = EndpointConfig::default();
    if let Ok(issuer) = std::env::var("MCP_AUTH_ISSUER") {
        let audience = "http://127.0.0.1:3001/api/mcp";
        let validator = JwtValidator::discover(JwtConfig::new(&issuer, audience), JwksOptions::default()).await?;
        let auth = AuthConfig::builder(audience, Arc::new(validator)).authorization_server(issuer).build()?;
        config = config.auth(Arc::new(auth));
    }
    let app = Router::new().route("/health", get(|| async { "ok" })).merge(mcp::http::router(
        server.clone(),
        "/api/mcp",
        config,
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3001").await?;
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            mcp::http::shutdown_signal().await;
            // Listen streams end with their closing response.
            server.shutdown();
        })
        .await?;
    Ok(())
}
