//! `mcp proxy --http --auth-issuer .. URL`: the front checks the downstream's bearer token and
//! the upstream only ever sees the proxy's own credentials (no confused deputy).

mod common;
#[path = "support/proxy.rs"]
mod proxy_support;
#[path = "support/token_issuer.rs"]
mod token_issuer;

use common::*;
use mcp::server::{HttpRequest, Server, Tool};
use mcp_client::transport::http::HttpTransport;
use mcp_client::{ClientBuilder, ClientError};
use proxy_support::Proxy;
use serde_json::json;
use std::future::IntoFuture;
use token_issuer::TokenIssuer;

const FRONT_AUDIENCE: &str = "http://127.0.0.1/mcp";

/// An upstream whose one tool reports the `Authorization` header it received.
async fn upstream() -> TestServer {
    let tool = Tool::new("authorization").description("The Authorization header received").handler(
        |HttpRequest(parts): HttpRequest| async move {
            let header = parts.as_ref().and_then(|p| p.headers.get("authorization"));
            header.and_then(|v| v.to_str().ok()).unwrap_or("none").to_owned()
        },
    );
    let server = Server::builder("upstream", "1.0.0").tool(tool).build().unwrap();
    TestServer::start(server, mcp::http::HttpConfig::default()).await
}

async fn seen_by_upstream(url: &str, token: &str) -> Result<String, ClientError> {
    let t = HttpTransport::builder(url).header("Authorization", format!("Bearer {token}")).build().unwrap();
    let c = within("connect", ClientBuilder::new("t", "1").connect(t)).await?;
    Ok(within("call", c.call_tool("authorization", json!({})).into_future()).await?.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_front_checks_tokens_and_the_upstream_sees_only_the_proxys_own() {
    let issuer = TokenIssuer::start(FRONT_AUDIENCE, "unused").await;
    let up = upstream().await;
    let up_url = format!("http://{}/mcp", up.addr);
    let iss = issuer.issuer.clone();
    let front = tokio::task::spawn_blocking(move || {
        let auth = ["--auth-issuer", &iss, "--auth-audience", FRONT_AUDIENCE];
        Proxy::http(&[&auth[..], &["--header", "Authorization: Bearer proxy-own"]].concat(), &[up_url])
    })
    .await
    .unwrap();
    let alice = issuer.token("alice");
    assert_eq!(seen_by_upstream(&front.url, &alice).await.unwrap(), "Bearer proxy-own");
    // A token the front does not accept never gets anywhere.
    let refused = seen_by_upstream(&front.url, "not-a-jwt").await.unwrap_err();
    assert!(matches!(refused, ClientError::AuthRequired { status: 401, .. }), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_credentials_of_its_own_the_proxy_sends_none() {
    let up = upstream().await;
    let up_url = format!("http://{}/mcp", up.addr);
    let front = tokio::task::spawn_blocking(move || Proxy::http(&[], &[up_url])).await.unwrap();
    assert_eq!(seen_by_upstream(&front.url, "downstream-secret").await.unwrap(), "none");
}
