//! Log messages from a real stdio server (this binary serving the everything server) in both
//! eras: they reach the call in flight, or the client's log handler, and a legacy server is
//! told the client's level with `logging/setLevel`.

use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
use mcp_client::types::LoggingLevel;
use mcp_client::{CallOptions, Client, ClientBuilder, Direction};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

const T: Duration = Duration::from_secs(20);

/// The everything server over stdio, in the legacy era (`initialize`, 2025-11-25) if `legacy`.
async fn connect(builder: ClientBuilder, legacy: bool) -> Client {
    let builder = if legacy { builder.force_legacy("2025-11-25") } else { builder };
    let t = StdioTransport::spawn(mcp_test_support::child::stdio_command()).unwrap();
    let c = tokio::time::timeout(T, builder.connect(t)).await.unwrap().unwrap();
    assert_eq!(c.is_modern(), !legacy);
    c
}

/// The `data` of the log messages `count_with_progress` (3 steps) sends, as `opts` get them.
async fn count(c: &Client, opts: CallOptions) -> Vec<String> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let opts = CallOptions {
        on_log: Some(Arc::new(move |p: &Value| s.lock().push(p["data"].as_str().unwrap_or_default().to_owned()))),
        ..opts
    };
    let call = c.call_tool("count_with_progress", json!({"steps": 3, "delay_ms": 5})).options(opts);
    assert_eq!(tokio::time::timeout(T, call).await.unwrap().unwrap().text(), "counted to 3");
    // Every log message came before the response, on the same pipe: all are in.
    let seen = seen.lock().clone();
    seen
}

/// `count_with_progress` (3 steps) called with no `on_log` of its own.
async fn count_without_on_log(c: &Client) {
    let r = c.call_tool("count_with_progress", json!({"steps": 3, "delay_ms": 20})).await;
    assert_eq!(r.unwrap().text(), "counted to 3");
}

const REACHED: [&str; 3] = ["reached 1", "reached 2", "reached 3"];

/// Issue 42, item 17: a call's log messages reach it over stdio, modern and legacy, with or
/// without a progress token (the CLI sends one, a library caller need not).
pub(crate) async fn log_messages_reach_the_call_in_both_eras() {
    for legacy in [false, true] {
        let c = connect(ClientBuilder::new("logs", "1"), legacy).await;
        for progress in [false, true] {
            let on_progress = progress.then(|| Arc::new(|_: &Value| {}) as mcp_client::NotificationCallback);
            let opts = CallOptions { log_level: Some(LoggingLevel::Info), on_progress, ..CallOptions::default() };
            assert_eq!(count(&c, opts).await, REACHED, "legacy: {legacy}, progress: {progress}");
        }
        c.close().await;
    }
}

/// Log messages no call takes (two calls in flight over stdio: nothing says whose; or a call
/// made without `on_log`) reach the client's log handler, in both eras.
pub(crate) async fn log_messages_no_call_takes_reach_the_client_handler() {
    for legacy in [false, true] {
        let (tx, mut rx) = mpsc::channel(16);
        let b = ClientBuilder::new("logs", "1")
            .log_level(LoggingLevel::Info)
            .on_log(move |p: &Value| drop(tx.try_send(p["data"].as_str().unwrap_or_default().to_owned())));
        let c = connect(b, legacy).await;
        tokio::time::timeout(T, futures::future::join(count_without_on_log(&c), count_without_on_log(&c)))
            .await
            .unwrap();
        let mut got = Vec::new();
        while got.len() < 6 {
            let next = tokio::time::timeout(T, rx.recv()).await;
            got.push(next.expect("six log messages reach the handler").unwrap());
        }
        got.sort();
        assert_eq!(got, ["reached 1", "reached 1", "reached 2", "reached 2", "reached 3", "reached 3"], "{legacy}");
        c.close().await;
    }
}

/// Review B14: with `log_attribution(false)` (a client whose calls belong to different
/// callers) a log message that names no request reaches the client's log handler, not the one
/// call in flight, in both eras; by default it reaches the call.
pub(crate) async fn log_attribution_off_sends_logs_to_the_client_handler() {
    for legacy in [false, true] {
        let (tx, mut rx) = mpsc::channel(16);
        let b = ClientBuilder::new("logs", "1")
            .log_attribution(false)
            .on_log(move |p: &Value| drop(tx.try_send(p["data"].as_str().unwrap_or_default().to_owned())));
        let c = connect(b, legacy).await;
        let opts = CallOptions { log_level: Some(LoggingLevel::Info), ..CallOptions::default() };
        assert_eq!(count(&c, opts).await, Vec::<String>::new(), "the call took messages, legacy: {legacy}");
        let mut got = Vec::new();
        while got.len() < 3 {
            let next = tokio::time::timeout(T, rx.recv()).await;
            got.push(next.expect("three log messages reach the handler").unwrap());
        }
        assert_eq!(got, REACHED, "legacy: {legacy}");
        c.close().await;
    }
}

/// Issue 42, item 18: the builder's level reaches a legacy server as `logging/setLevel`
/// right after `initialize` (it declares `logging`), and the server honours it: at `error`
/// the tool's `info` messages are not sent, at `info` they are.
pub(crate) async fn the_log_level_is_sent_to_a_legacy_server() {
    for (level, expected) in [(LoggingLevel::Error, &[][..]), (LoggingLevel::Info, &REACHED[..])] {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let s = sent.clone();
        let b = ClientBuilder::new("logs", "1").log_level(level).on_traffic(move |d, m| {
            if d == Direction::Sent && m["method"] == "logging/setLevel" {
                s.lock().push(m["params"].clone());
            }
        });
        let c = connect(b, true).await;
        assert_eq!(*sent.lock(), [json!({"level": level.as_str()})]);
        assert_eq!(count(&c, CallOptions::default()).await, expected, "at {level}");
        c.close().await;
    }
}

/// A legacy server that declares no `logging` is sent no `logging/setLevel` (this one would
/// never answer it).
pub(crate) async fn no_set_level_without_the_logging_capability() {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let s = sent.clone();
    let b = ClientBuilder::new("logs", "1")
        .log_level(LoggingLevel::Debug)
        .on_traffic(move |d, m| {
            if d == Direction::Sent {
                s.lock().push(m["method"].as_str().unwrap_or_default().to_owned());
            }
        })
        .connect_timeout(T);
    let t =
        StdioTransport::spawn(StdioCommand::new("python3").args(["-u", "-c", crate::stdio::LEGACY_SERVER])).unwrap();
    let c = tokio::time::timeout(T, b.connect(t)).await.unwrap().unwrap();
    assert!(!c.is_modern());
    assert!(!sent.lock().iter().any(|m| m == "logging/setLevel"), "{:?}", sent.lock());
    c.close().await;
}
