//! `mcp serve` stopped as an operator stops it: SIGTERM (what systemd, Docker and Kubernetes
//! send) to the real binary, over HTTP and over stdio. What `serve` itself does at a shutdown
//! signal is tested in mcp-stack-http and mcp-stack-stdio.
#![cfg(unix)]

use crate::common::*;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

/// `mcp serve` (the real binary) on SIGTERM: the 2-second call in flight gets its full answer,
/// a new connection is refused, and the process exits 0.
#[tokio::test]
async fn mcp_serve_drains_on_sigterm_and_exits_zero() {
    let (mut child, addr) = spawn_http_everything(&["--drain-timeout", "30"]).await;
    // A call taking 2 s that notifies at once: its first event says it is in flight.
    let args = json!({"steps": 2, "delay_ms": 1000});
    let p = with_meta_kv(call("count_with_progress", args), &[("progressToken", json!("t"))]);
    let body = req(1, "tools/call", p);
    let mut counting = open(addr, "POST", "/mcp", &std_headers(&body), full(body.to_string())).await;
    assert_eq!(counting.next().await.expect("progress")["method"], "notifications/progress");
    sigterm(child.id().expect("pid"));
    refused_soon(addr).await;
    let last = counting.response().await;
    assert_eq!(first_text(&result_of(&last, &json!(1))), "counted to 2");
    let status = within("mcp serve to exit", child.wait()).await.expect("wait");
    assert!(status.success(), "exit status {status}");
}

/// A kept-alive connection at SIGTERM (`mcp serve`, the real binary): the request a peer sends
/// on it after the signal, not knowing of it yet (as a proxy does), is answered with
/// `Connection: close`; then the connection closes and the process exits 0.
#[tokio::test]
async fn mcp_serve_answers_on_a_kept_alive_connection_after_sigterm() {
    // The drain's quiet end is far away: only the answer can close the connection.
    let (mut child, addr) = spawn_http_everything(&["--drain-timeout", "60", "--drain-idle-grace", "60"]).await;
    let mut conn = KeepAlive::open(addr).await;
    let before = conn.post(&tcall(1, "echo", json!({"text": "before"}))).await;
    assert_eq!((before.status, before.header("connection")), (200, ""), "{}", before.head);
    sigterm(child.id().expect("pid"));
    // The drain has started once new connections are refused.
    refused_soon(addr).await;
    let during = conn.post(&tcall(2, "echo", json!({"text": "during"}))).await;
    assert_eq!(during.status, 200, "{}", during.head);
    assert_eq!(during.header("connection").to_ascii_lowercase(), "close", "{}", during.head);
    assert_eq!(first_text(&result_of(&during.json(), &json!(2))), "during");
    assert!(conn.closed().await.is_empty(), "nothing after the last answer");
    let status = within("mcp serve to exit", child.wait()).await.expect("wait");
    assert!(status.success(), "exit status {status}");
}

/// `mcp serve --stdio` on SIGTERM (stdin still open): the call in flight gets its answer and
/// the process exits 0. (Here beside the HTTP one: both are the operator's stop.)
#[tokio::test]
async fn mcp_serve_stdio_finishes_its_calls_on_sigterm() {
    let (mut child, mut stdin, mut out) = spawn_stdio_everything();
    let args = json!({"steps": 2, "delay_ms": 500});
    let p = with_meta_kv(call("count_with_progress", args), &[("progressToken", json!("t"))]);
    stdin.write_all(format!("{}\n", req(1, "tools/call", p)).as_bytes()).await.expect("write");
    let mut next = async || -> Value {
        let line = within("a line on stdout", out.next_line()).await.expect("read").expect("a line");
        serde_json::from_str(&line).expect("JSON")
    };
    assert_eq!(next().await["method"], "notifications/progress", "the call is in flight");
    sigterm(child.id().expect("pid"));
    let last = loop {
        let v = next().await;
        if v.get("id").is_some() {
            break v;
        }
    };
    assert_eq!(first_text(&result_of(&last, &json!(1))), "counted to 2");
    let status = within("mcp serve --stdio to exit", child.wait()).await.expect("wait");
    assert!(status.success(), "exit status {status}");
    drop(stdin);
}
