//! The drain at shutdown, over real sockets on 127.0.0.1: a kept-alive connection is not closed
//! under a peer that may be sending on it. A request that arrives on one during the drain is
//! answered with `Connection: close`; idle connections close once the server is quiet.

use mcp::http::{EndpointConfig, ServeConfig};
use mcp::server::{Server, Tool};
use mcp_test_support::*;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// `serve` of the everything server on a free port with `config`, shut down by the sender.
async fn start(config: ServeConfig) -> (TestServer, tokio::sync::oneshot::Sender<()>) {
    start_serving(mcp_everything::server(), config).await
}

/// `serve` of `server` on a free port with `config`, shut down by the sender.
async fn start_serving(server: Server, config: ServeConfig) -> (TestServer, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, signal) = tokio::sync::oneshot::channel::<()>();
    let serving = mcp::http::serve(server.clone(), listener, EndpointConfig::default())
        .config(config)
        .with_graceful_shutdown(async move { drop(signal.await) });
    (TestServer { addr, server, task: tokio::spawn(serving) }, stop)
}

/// A peer sends on its kept-alive connection as the drain starts (here: just after, which a
/// peer cannot tell apart): the request is answered, the answer says `Connection: close`, and
/// the server closes the connection after it.
#[tokio::test]
async fn a_request_on_a_kept_alive_connection_during_the_drain_is_answered() {
    // The quiet end of the drain is far away: only the answer can close the connection.
    let hour = Duration::from_secs(3600);
    let (s, stop) = start(ServeConfig::default().drain_timeout(hour).drain_idle_grace(hour)).await;
    let mut conn = KeepAlive::open(s.addr).await;
    let before = conn.post(&tcall(1, "echo", json!({"text": "before"}))).await;
    assert_eq!(before.status, 200, "{}", before.head);
    assert_eq!(before.header("connection"), "", "kept alive before the drain: {}", before.head);
    assert_eq!(first_text(&result_of(&before.json(), &json!(1))), "before");

    stop.send(()).unwrap();
    // The drain has started once the listener is closed.
    refused_soon(s.addr).await;
    let during = conn.post(&tcall(2, "echo", json!({"text": "during"}))).await;
    assert_eq!(during.status, 200, "{}", during.head);
    assert_eq!(during.header("connection").to_ascii_lowercase(), "close", "{}", during.head);
    assert_eq!(first_text(&result_of(&during.json(), &json!(2))), "during");
    assert!(conn.closed().await.is_empty(), "nothing after the last answer");
    within("serve() to return once no connection is left", s.task).await.expect("join").expect("serve");
}

/// Kept-alive connections left idle close at the drain's quiet end (here 50 ms without a
/// request), long before its bound, and `serve` returns.
#[tokio::test]
async fn idle_connections_close_once_the_draining_server_is_quiet() {
    let config =
        ServeConfig::default().drain_timeout(Duration::from_secs(3600)).drain_idle_grace(Duration::from_millis(50));
    let (s, stop) = start(config).await;
    let mut conns = Vec::new();
    for i in 0..3 {
        let mut conn = KeepAlive::open(s.addr).await;
        assert_eq!(conn.post(&tcall(i, "echo", json!({"text": "x"}))).await.status, 200);
        conns.push(conn);
    }
    stop.send(()).unwrap();
    for conn in &mut conns {
        assert!(conn.closed().await.is_empty(), "closed without a word");
    }
    within("serve() to return", s.task).await.expect("join").expect("serve");
}

/// A request in flight when the drain starts is answered; its answer says `Connection: close`
/// (so the peer sends nothing more on that connection), and the connection closes after it.
#[tokio::test]
async fn a_request_in_flight_as_the_drain_starts_is_answered_with_connection_close() {
    // `gate` says it started, then waits for the test's release.
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (s2, r2) = (started.clone(), release.clone());
    let gate = Tool::new("gate").handler(move || {
        let (started, release) = (s2.clone(), r2.clone());
        async move {
            started.notify_one();
            release.notified().await;
            "released"
        }
    });
    let server = Server::builder("gated", "1").tool(gate).build().expect("server");
    let hour = Duration::from_secs(3600);
    let (s, stop) = start_serving(server, ServeConfig::default().drain_timeout(hour).drain_idle_grace(hour)).await;
    let mut conn = KeepAlive::open(s.addr).await;
    let call = tokio::spawn(async move {
        let answer = conn.post(&tcall(1, "gate", json!({}))).await;
        (answer, conn)
    });
    within("the call to start", started.notified()).await;
    stop.send(()).unwrap();
    refused_soon(s.addr).await;
    release.notify_one();
    let (answer, mut conn) = within("the answer", call).await.expect("join");
    assert_eq!(answer.status, 200, "{}", answer.head);
    assert_eq!(answer.header("connection").to_ascii_lowercase(), "close", "{}", answer.head);
    assert_eq!(first_text(&result_of(&answer.json(), &json!(1))), "released");
    assert!(conn.closed().await.is_empty(), "nothing after the answer");
    within("serve() to return", s.task).await.expect("join").expect("serve");
}
