//! `mcp proxy --http --auth-issuer .. URL`: the front checks the downstream's bearer token and
//! the upstream only ever sees the proxy's own credentials (no confused deputy).

use crate::support::proxy as proxy_support;
use crate::support::token_issuer;

use crate::common::*;
use mcp::server::{HttpRequest, Server, Tool};
use mcp_client::transport::http::HttpTransport;
use mcp_client::{ClientBuilder, ClientError};
use proxy_support::{legacy_upstream, slow_post, Proxy};
use serde_json::{json, Value};
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
    TestServer::start(server, mcp::http::EndpointConfig::default()).await
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_front_needs_downstream_auth_or_no_auth() {
    // Refused before the upstream is even reached (nothing listens on port 9).
    let refused = tokio::task::spawn_blocking(|| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["proxy", "--http", "127.0.0.1:0", "--header", "Authorization: Bearer proxy-own"])
            .arg("http://127.0.0.1:9/mcp")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    });
    let out = within("the refusal", refused).await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("without downstream auth") && stderr.contains("--no-auth"), "{stderr}");
    assert!(!stderr.contains("proxy-own"), "{stderr}");
    // With --no-auth it serves, and says what that means.
    let up = upstream().await;
    let up_url = format!("http://{}/mcp", up.addr);
    let front = tokio::task::spawn_blocking(move || {
        Proxy::http(&["--no-auth", "--header", "Authorization: Bearer proxy-own"], &[up_url])
    })
    .await
    .unwrap();
    assert!(front.stderr().contains("WARNING: --no-auth"), "{}", front.stderr());
    assert_eq!(seen_by_upstream(&front.url, "anyone").await.unwrap(), "Bearer proxy-own");
}

/// `tools/call NAME` as `token`'s bearer, declaring client capabilities `caps`: the response.
async fn call_as(front: &Proxy, token: &str, id: i64, name: &str, caps: Value) -> Resp {
    let body = req(id, "tools/call", json!({ "name": name, "arguments": { "text": "t" }, "_meta": { K_CAPS: caps } }));
    let mut headers = std_headers(&body);
    headers.push(("authorization".into(), format!("Bearer {token}")));
    within(name, post(front.addr(), &headers, body.to_string())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_caller_cannot_park_more_calls_than_its_share() {
    let issuer = TokenIssuer::start(FRONT_AUDIENCE, "unused").await;
    let iss = issuer.issuer.clone();
    let front = tokio::task::spawn_blocking(move || {
        let flags = ["--auth-issuer", &iss, "--auth-audience", FRONT_AUDIENCE, "--max-waiting-per-caller", "2"];
        Proxy::http(&flags, &legacy_upstream())
    })
    .await
    .unwrap();
    let (alice, bob, carol) = (issuer.token("alice"), issuer.token("bob"), issuer.token("carol"));
    let asks = json!({ "elicitation": {} });
    for id in 1..=2 {
        let r = call_as(&front, &alice, id, "ask", asks.clone()).await;
        assert_eq!(result_of(&r.message(), &json!(id))["resultType"], "input_required");
    }
    let third = call_as(&front, &alice, 3, "ask", asks.clone()).await;
    let e = expect_err("alice's third waiting call", &third, 503, -32603, Some(&json!(3)));
    assert!(e["error"]["message"].as_str().unwrap().contains("already waiting for input"), "{e}");
    // The bound is alice's own: bob may still be asked, and carol's plain call goes through.
    let r = call_as(&front, &bob, 4, "ask", asks).await;
    assert_eq!(result_of(&r.message(), &json!(4))["resultType"], "input_required");
    let r = call_as(&front, &carol, 5, "echo", json!({})).await;
    assert_eq!(first_text(&result_of(&r.message(), &json!(5))), "t");
    assert!(front.stderr().contains("another one refused"), "{}", front.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_caller_cannot_hold_every_legacy_session() {
    // 5 sessions: 4 may be asked, 2 of them at most by one caller (each waiting call of a
    // legacy upstream holds its session).
    let issuer = TokenIssuer::start(FRONT_AUDIENCE, "unused").await;
    let iss = issuer.issuer.clone();
    let front = tokio::task::spawn_blocking(move || {
        let flags = ["--auth-issuer", &iss, "--auth-audience", FRONT_AUDIENCE, "--max-sessions", "5"];
        Proxy::http(&flags, &legacy_upstream())
    })
    .await
    .unwrap();
    let (alice, bob) = (issuer.token("alice"), issuer.token("bob"));
    let asks = json!({ "elicitation": {} });
    for id in 1..=2 {
        let r = call_as(&front, &alice, id, "ask", asks.clone()).await;
        assert_eq!(result_of(&r.message(), &json!(id))["resultType"], "input_required");
    }
    // Alice's third waits for one of her own sessions (the pool's bounded wait), then 503.
    let body = req(3, "tools/call", json!({ "name": "ask", "arguments": {}, "_meta": { K_CAPS: asks } }));
    let mut headers = std_headers(&body);
    headers.push(("authorization".into(), format!("Bearer {alice}")));
    let third = slow_post(front.addr(), &headers, &body.to_string()).await;
    assert!(third.starts_with("HTTP/1.1 503") && third.contains("-32603"), "{third}");
    // Bob still gets sessions of his own.
    for id in 4..=5 {
        let r = call_as(&front, &bob, id, "ask", asks.clone()).await;
        assert_eq!(result_of(&r.message(), &json!(id))["resultType"], "input_required");
    }
}
