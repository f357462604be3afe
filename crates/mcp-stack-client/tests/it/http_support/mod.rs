//! A tiny raw HTTP/1.1 server on 127.0.0.1 for transport tests: one request per connection.

#![allow(dead_code)]

use mcp_client::transport::OutgoingRequest;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// Every test is bounded.
pub(crate) async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f).await.expect("test timed out")
}

/// Waits for one item, bounded.
pub(crate) async fn recv<T>(rx: &mut mpsc::UnboundedReceiver<T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("timed out waiting").expect("channel closed")
}

/// Waits for one item of a bounded channel, bounded.
pub(crate) async fn recv_bounded<T>(rx: &mut mpsc::Receiver<T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("timed out waiting").expect("channel closed")
}

#[derive(Debug, Clone)]
pub(crate) struct Req {
    pub method: String,
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Req {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    pub(crate) fn rpc_method(&self) -> String {
        self.json()["method"].as_str().unwrap_or_default().to_owned()
    }
}

pub(crate) async fn read_request(s: &mut TcpStream) -> Option<Req> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = s.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = s.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    Some(Req { method, path, headers, body })
}

/// Serves one request per connection with `f`; returns the MCP endpoint URL.
pub(crate) async fn serve<F, Fut>(f: F) -> String
where
    F: Fn(Req, TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let f = Arc::new(f);
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let f = f.clone();
            tokio::spawn(async move {
                if let Some(req) = read_request(&mut s).await {
                    f(req, s).await;
                }
            });
        }
    });
    format!("http://{addr}/mcp")
}

pub(crate) async fn respond(mut s: TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut out = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let _ = s.write_all(out.as_bytes()).await;
    let _ = s.write_all(body).await;
    let _ = s.shutdown().await;
}

pub(crate) async fn respond_json(s: TcpStream, status: &str, headers: &[(&str, &str)], body: &Value) {
    let mut h = vec![("Content-Type", "application/json")];
    h.extend_from_slice(headers);
    respond(s, status, &h, body.to_string().as_bytes()).await;
}

/// Starts a close-delimited SSE body.
pub(crate) async fn start_sse(s: &mut TcpStream, headers: &[(&str, &str)]) {
    let mut out =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n"
            .to_owned();
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    s.write_all(out.as_bytes()).await.unwrap();
}

pub(crate) async fn event(s: &mut TcpStream, text: &str) {
    let _ = s.write_all(text.as_bytes()).await;
    let _ = s.flush().await;
}

pub(crate) fn data(m: &Value) -> String {
    format!("event: message\ndata: {m}\n\n")
}

/// Reads until the peer closes the connection.
pub(crate) async fn wait_closed(s: &mut TcpStream) {
    let mut tmp = [0u8; 1024];
    while let Ok(n) = s.read(&mut tmp).await {
        if n == 0 {
            return;
        }
    }
}

pub(crate) fn request(id: i64, method: &str) -> OutgoingRequest<'static> {
    OutgoingRequest::new(
        json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": {} }),
        vec![("mcp-method".into(), method.into()), ("mcp-protocol-version".into(), "2026-07-28".into())],
    )
    .expect("a request with an integer id")
}

pub(crate) fn response(id: i64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": { "ok": id } })
}

pub(crate) type Log = Arc<Mutex<Vec<Req>>>;

pub(crate) fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}
