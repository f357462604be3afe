//! The client library against our server over real HTTP: a modern session end to end, and a
//! server killed in the middle of a request.

use mcp_client::transport::http::HttpTransport;
use mcp_client::types::{ElicitAction, ElicitResult, ElicitValue};
use mcp_client::{CallOptions, ClientBuilder, ClientError, ElicitationModes, ServerEra};
use mcp_test_support::child::HttpChild as Server;
use serde_json::{json, Value};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

pub(crate) async fn modern_server_over_http() {
    let server = Server::start();
    let client = ClientBuilder::new("t", "1")
        .on_elicitation(ElicitationModes::FORM, |_p| async move {
            let content = [("name".to_owned(), ElicitValue::String("Ada".into()))].into();
            Ok(ElicitResult { content: Some(content), ..ElicitResult::new(ElicitAction::Accept) })
        })
        .connect(HttpTransport::new(&server.url).unwrap())
        .await
        .unwrap();
    assert!(matches!(client.era(), Some(ServerEra::Modern { .. })));
    // x-mcp-header mirroring: the server checks Mcp-Param-Region against the body.
    let r = client.call_tool("test_x_mcp_header", json!({"region": "Hello, 世界"})).await.unwrap();
    assert_eq!(r.text(), "region=Hello, 世界");
    let r = client.call_tool("greet_user", json!({})).await.unwrap();
    assert_eq!(r.text(), "Hello, Ada!");
    let progress = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let p2 = progress.clone();
    let opts = CallOptions {
        on_progress: Some(std::sync::Arc::new(move |_p: &Value| {
            p2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })),
        ..CallOptions::default()
    };
    client.call_tool("count_with_progress", json!({"steps": 3, "delay_ms": 5})).options(opts.clone()).await.unwrap();
    assert_eq!(progress.load(std::sync::atomic::Ordering::SeqCst), 3);
    assert!(matches!(client.read_resource("test://missing").await, Err(ClientError::ResourceNotFound { .. })));
    client.close().await;
}

pub(crate) async fn killed_http_server_fails_pending_calls_promptly() {
    let mut server = Server::start();
    let client = ClientBuilder::new("t", "1").connect(HttpTransport::new(&server.url).unwrap()).await.unwrap();
    let pending = crate::in_flight::slow_call_in_flight(&client).await;
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let r = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("the pending call must fail promptly")
        .unwrap();
    assert!(matches!(r, Err(ClientError::Transport(_))), "{r:?}");
    // Later calls fail with a clear connection error rather than hanging.
    let e = tokio::time::timeout(T, client.call_tool("echo", json!({"text": "x"}))).await.unwrap().unwrap_err();
    assert!(e.to_string().contains("connect") || e.to_string().contains("connection"), "{e}");
}
