//! The client core over the HTTP transport, against fake legacy servers on 127.0.0.1.

use crate::http_support::*;
use mcp_client::transport::http::HttpTransport;
use mcp_client::{ClientBuilder, ServerEra};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

#[derive(Default)]
struct Legacy {
    pending_call: Option<Value>,
    stream_closed_at: Option<Instant>,
    gets: Vec<(Instant, Option<String>)>,
    events: usize,
}

/// A 2025-11-25 Streamable HTTP server that closes the `tools/call` stream after a priming
/// event and answers on the resumed GET stream (like the `sse-retry` conformance scenario).
#[tokio::test]
async fn legacy_session_with_sse_resumption() {
    bounded(async {
        let state: Arc<Mutex<Legacy>> = Arc::default();
        let seen = log();
        let (st, s2) = (state.clone(), seen.clone());
        let url = serve(move |req, mut s| {
            s2.lock().unwrap().push(req.clone());
            let state = st.clone();
            async move {
                let sid = [("mcp-session-id", "S1")];
                let m = req.json();
                match (req.method.as_str(), req.rpc_method().as_str()) {
                    ("POST", "initialize") => {
                        let r = json!({"jsonrpc": "2.0", "id": m["id"], "result": {
                            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}}});
                        respond_json(s, "200 OK", &sid, &r).await;
                    }
                    ("POST", "tools/call") => {
                        state.lock().unwrap().pending_call = Some(m["id"].clone());
                        start_sse(&mut s, &sid).await;
                        event(&mut s, "id: call-1\nretry: 300\ndata: \n\n").await;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        state.lock().unwrap().stream_closed_at = Some(Instant::now());
                        let _ = s.shutdown().await;
                    }
                    ("POST", m) if m.starts_with("notifications/") => respond(s, "202 Accepted", &[], b"").await,
                    ("POST", _) => {
                        // Python-SDK style: no session yet, error with a placeholder id.
                        let e = json!({"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32600, "message": "Bad Request: Missing session ID"}});
                        respond_json(s, "400 Bad Request", &[], &e).await;
                    }
                    ("GET", _) => {
                        let (n, pending) = {
                            let mut st = state.lock().unwrap();
                            st.gets.push((Instant::now(), req.header("last-event-id").map(str::to_owned)));
                            st.events += 1;
                            (st.events, st.pending_call.take())
                        };
                        start_sse(&mut s, &sid).await;
                        event(&mut s, &format!("id: get-{n}\nretry: 300\ndata: \n\n")).await;
                        if let Some(id) = pending {
                            let r = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "resumed"}]}});
                            event(&mut s, &format!("id: get-{n}-r\n{}", data(&r))).await;
                        }
                        wait_closed(&mut s).await;
                    }
                    ("DELETE", _) => respond(s, "204 No Content", &[], b"").await,
                    _ => respond(s, "405 Method Not Allowed", &[], b"").await,
                }
            }
        })
        .await;
        let client = ClientBuilder::new("test", "1").connect(HttpTransport::new(&url).unwrap()).await.unwrap();
        assert!(matches!(client.era(), Some(ServerEra::Legacy { ref version, .. }) if version == "2025-11-25"));
        let result = client.call_tool("test_reconnection", json!({})).await.unwrap();
        assert_eq!(result.text(), "resumed");
        client.close().await;

        let st = state.lock().unwrap();
        let closed_at = st.stream_closed_at.unwrap();
        let (at, last_id) = st.gets.iter().find(|(_, l)| l.is_some()).expect("a resuming GET");
        assert_eq!(last_id.as_deref(), Some("call-1"));
        let waited = at.duration_since(closed_at);
        // The client honoured the server's `retry` (a lower bound; an upper bound would be a
        // wall-clock assertion on a shared machine).
        assert!(waited >= Duration::from_millis(250), "resumed after {waited:?}");
        let reqs = seen.lock().unwrap().clone();
        let init = reqs.iter().position(|r| r.rpc_method() == "initialize").unwrap();
        for r in &reqs[init + 1..] {
            assert_eq!(r.header("mcp-session-id"), Some("S1"), "{} {}", r.method, r.rpc_method());
            assert_eq!(r.header("mcp-protocol-version"), Some("2025-11-25"), "{} {}", r.method, r.rpc_method());
        }
        assert!(reqs.iter().any(|r| r.method == "DELETE"));
    })
    .await;
}

/// A 2024-11-05 HTTP+SSE server: POST on the URL is refused, GET gives the endpoint.
#[tokio::test]
async fn deprecated_http_sse_server() {
    bounded(async {
        let (to_stream, from_posts) = mpsc::unbounded_channel::<String>();
        let from_posts = Arc::new(tokio::sync::Mutex::new(Some(from_posts)));
        let seen = log();
        let s2 = seen.clone();
        let url = serve(move |req, mut s| {
            s2.lock().unwrap().push(req.clone());
            let (from_posts, to_stream) = (from_posts.clone(), to_stream.clone());
            async move {
                match (req.method.as_str(), req.path.starts_with("/messages")) {
                    ("GET", false) => {
                        let Some(mut rx) = from_posts.lock().await.take() else { return };
                        start_sse(&mut s, &[]).await;
                        event(&mut s, "event: endpoint\ndata: /messages?sessionId=abc\n\n").await;
                        while let Some(text) = rx.recv().await {
                            event(&mut s, &text).await;
                        }
                    }
                    ("POST", true) => {
                        let m = req.json();
                        let answer = match m["method"].as_str() {
                            Some("initialize") => Some(json!({"protocolVersion": "2024-11-05", "capabilities": {"tools": {}}, "serverInfo": {"name": "older", "version": "0"}})),
                            Some("tools/list") => {
                                let ask = json!({"jsonrpc": "2.0", "id": 99, "method": "roots/list"});
                                let _ = to_stream.send(data(&ask));
                                Some(json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}))
                            }
                            _ => None,
                        };
                        if let (Some(result), Some(id)) = (answer, m.get("id")) {
                            let _ = to_stream.send(data(&json!({"jsonrpc": "2.0", "id": id, "result": result})));
                        }
                        respond(s, "202 Accepted", &[], b"Accepted").await;
                    }
                    _ => respond(s, "405 Method Not Allowed", &[], b"").await,
                }
            }
        })
        .await;
        let client = ClientBuilder::new("test", "1").roots(vec![mcp_protocol::types::Root::new("file:///tmp")]).connect(HttpTransport::new(&url).unwrap()).await.unwrap();
        assert!(matches!(client.era(), Some(ServerEra::Legacy { ref version, .. }) if version == "2024-11-05"));
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0].name, "echo");
        // The server's roots/list request is answered with a POST to the endpoint.
        loop {
            let answered = seen.lock().unwrap().iter().any(|r| r.path.starts_with("/messages") && r.json()["id"] == 99 && r.json()["result"]["roots"].is_array());
            if answered {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        client.close().await;
    })
    .await;
}
