//! The Streamable HTTP transport against tiny raw HTTP/1.1 servers on 127.0.0.1.

use crate::http_support::*;
use mcp_client::transport::http::HttpTransport;
use mcp_client::transport::{OutgoingRequest, Transport, TransportKind, UNSOLICITED_CAP};
use mcp_client::TransportError;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

#[test]
fn refuses_other_schemes() {
    for bad in ["ftp://example.com/mcp", "file:///tmp/x", "ws://127.0.0.1/mcp", "not a url"] {
        match HttpTransport::new(bad) {
            Err(TransportError::Connect(msg, _)) => assert!(msg.contains("URL"), "{bad}: {msg}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    assert!(HttpTransport::new("https://example.com/mcp").is_ok());
    let t = HttpTransport::builder("http://user:pw@127.0.0.1:1/mcp")
        .header("Authorization", "Bearer s3cret")
        .build()
        .unwrap();
    assert_eq!(t.kind(), TransportKind::Http);
    let shown = format!("{t:?}");
    assert!(!shown.contains("s3cret") && !shown.contains("pw"), "{shown}");
    assert!(HttpTransport::builder("http://127.0.0.1/mcp").header("bad header", "x").build().is_err());
}

#[tokio::test]
async fn json_response() {
    bounded(async {
        let seen = log();
        let s2 = seen.clone();
        let url = serve(move |req, s| {
            s2.lock().unwrap().push(req.clone());
            async move { respond_json(s, "200 OK", &[], &response(req.json()["id"].as_i64().unwrap())).await }
        })
        .await;
        let t = HttpTransport::builder(&url).bearer_token("tok").header("x-extra", "1").build().unwrap();
        let mut ex = t.request(request(1, "tools/list")).await.unwrap();
        assert_eq!(ex.next().await.unwrap().unwrap(), response(1));
        ex.complete();
        assert!(ex.next().await.is_none());
        let r = seen.lock().unwrap()[0].clone();
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/mcp");
        assert_eq!(r.header("content-type"), Some("application/json"));
        let accept = r.header("accept").unwrap();
        assert!(accept.contains("application/json") && accept.contains("text/event-stream"), "{accept}");
        assert_eq!(r.header("authorization"), Some("Bearer tok"));
        assert_eq!(r.header("x-extra"), Some("1"));
        assert_eq!(r.header("mcp-method"), Some("tools/list"));
        assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(r.json()["method"], "tools/list");
    })
    .await;
}

#[tokio::test]
async fn sse_response_with_keepalive_notification_and_response() {
    bounded(async {
        let url = serve(|_req, mut s| async move {
            start_sse(&mut s, &[]).await;
            event(&mut s, ": keep-alive\n\n").await;
            event(&mut s, "id: 1\ndata: \n\n").await; // priming event: empty data
            tokio::time::sleep(Duration::from_millis(20)).await;
            let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 7, "progress": 1}});
            event(&mut s, &data(&note)).await;
            // The response split across writes.
            let r = data(&response(7));
            let (a, b) = r.split_at(10);
            event(&mut s, a).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
            event(&mut s, b).await;
            // Keep the stream open: the exchange must end on the response anyway.
            wait_closed(&mut s).await;
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        let mut ex = t.request(request(7, "tools/call")).await.unwrap();
        let first = ex.next().await.unwrap().unwrap();
        assert_eq!(first["method"], "notifications/progress");
        assert_eq!(ex.next().await.unwrap().unwrap(), response(7));
        ex.complete();
        assert!(ex.next().await.is_none());
    })
    .await;
}

#[tokio::test]
async fn error_status_with_jsonrpc_body_is_delivered() {
    bounded(async {
        let url = serve(|req, s| async move {
            let id = match req.rpc_method().as_str() {
                "a" => json!(null),
                "b" => json!("server-error"),
                _ => req.json()["id"].clone(),
            };
            let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32020, "message": "Header mismatch"}});
            if req.rpc_method() == "scope" {
                respond_json(s, "403 Forbidden", &[("WWW-Authenticate", "Bearer error=\"insufficient_scope\"")], &body)
                    .await;
            } else {
                respond_json(s, "400 Bad Request", &[], &body).await;
            }
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        for (id, method) in [(3, "a"), (4, "b"), (5, "c")] {
            let mut ex = t.request(request(id, method)).await.unwrap();
            let m = ex.next().await.unwrap().unwrap();
            assert_eq!(m["id"], id, "the error answers this request");
            assert_eq!(m["error"]["code"], -32020);
            assert!(ex.next().await.is_none());
        }
        // An authorization challenge stays an HTTP error.
        match t.request(request(6, "scope")).await {
            Err(TransportError::Http { status: 403, www_authenticate: Some(w), .. }) => {
                assert!(w.contains("insufficient_scope"))
            }
            other => panic!("{other:?}"),
        }
    })
    .await;
}

#[tokio::test]
async fn error_status_without_jsonrpc_body_is_http_error() {
    bounded(async {
        let url = serve(|req, s| async move {
            if req.rpc_method() == "auth" {
                respond(s, "401 Unauthorized", &[("WWW-Authenticate", "Bearer realm=\"mcp\"")], b"").await;
            } else if req.rpc_method() == "big" {
                respond(s, "500 Internal Server Error", &[("Content-Type", "text/plain")], &[b'x'; 10_000]).await;
            } else {
                respond(s, "404 Not Found", &[("Content-Type", "text/html")], b"<html><body>Not Found</body></html>")
                    .await;
            }
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        match t.request(request(1, "tools/list")).await {
            Err(TransportError::Http { status: 404, body, www_authenticate: None }) => {
                assert!(body.contains("Not Found"), "{body}")
            }
            other => panic!("{other:?}"),
        }
        match t.request(request(2, "auth")).await {
            Err(TransportError::Http { status: 401, www_authenticate: Some(w), .. }) => {
                assert_eq!(w, "Bearer realm=\"mcp\"")
            }
            other => panic!("{other:?}"),
        }
        match t.request(request(3, "big")).await {
            Err(TransportError::Http { status: 500, body, .. }) => assert!(body.len() <= 2048 + 4, "{}", body.len()),
            other => panic!("{other:?}"),
        }
    })
    .await;
}

#[tokio::test]
async fn follows_method_preserving_redirects_only() {
    bounded(async {
        let url = serve(|req, s| async move {
            match req.path.as_str() {
                "/mcp" => respond(s, "307 Temporary Redirect", &[("Location", "/mcp/")], b"").await,
                "/mcp/" if req.method == "POST" => {
                    respond_json(s, "200 OK", &[], &response(req.json()["id"].as_i64().unwrap())).await
                }
                _ => respond(s, "303 See Other", &[("Location", "/elsewhere")], b"").await,
            }
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        let mut ex = t.request(request(1, "x")).await.unwrap();
        assert_eq!(ex.next().await.unwrap().unwrap(), response(1));
        let t = HttpTransport::new(&url.replace("/mcp", "/other")).unwrap();
        assert!(matches!(t.request(request(2, "x")).await, Err(TransportError::Http { status: 303, .. })));
    })
    .await;
}

#[tokio::test]
async fn accepted_for_a_request_is_malformed() {
    bounded(async {
        let url = serve(|_req, s| async move { respond(s, "202 Accepted", &[], b"").await }).await;
        let t = HttpTransport::new(&url).unwrap();
        assert!(matches!(t.request(request(1, "x")).await, Err(TransportError::Malformed(_))));
        // For a notification 202 is the expected answer.
        t.send(json!({"jsonrpc": "2.0", "method": "notifications/x"}), Vec::new()).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_program_that_cannot_start_keeps_its_io_error() {
    use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
    match StdioTransport::spawn(StdioCommand::new("/nonexistent/mcp-server-binary")) {
        Err(TransportError::Connect(msg, Some(source))) => {
            assert!(msg.contains("cannot start"), "{msg}");
            let io = source.downcast_ref::<std::io::Error>().expect("an io::Error");
            assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        }
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("spawned a program that does not exist"),
    }
}

#[tokio::test]
async fn connection_refused_is_connect_error() {
    bounded(async {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        drop(l);
        let t = HttpTransport::new(&format!("http://{addr}/mcp")).unwrap();
        match t.request(request(1, "x")).await {
            Err(e @ TransportError::Connect(..)) => {
                let msg = e.to_string();
                assert!(msg.to_lowercase().contains("refused") || msg.contains("connect"), "{msg}");
                // The cause is kept, not only its text.
                let TransportError::Connect(_, Some(source)) = &e else { panic!("no source: {e:?}") };
                // The transport connects itself: the OS error is the source.
                let io_refused = source
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused);
                assert!(io_refused, "{source:?}");
                assert!(std::error::Error::source(&e).is_some());
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            t.send(json!({"jsonrpc": "2.0", "method": "n"}), Vec::new()).await,
            Err(TransportError::Connect(..))
        ));
    })
    .await;
}

#[tokio::test]
async fn stream_ending_without_ids_ends_the_exchange() {
    bounded(async {
        let url = serve(|_req, mut s| async move {
            start_sse(&mut s, &[]).await;
            event(&mut s, &data(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}))).await;
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        let mut ex = t.request(request(1, "x")).await.unwrap();
        assert_eq!(ex.next().await.unwrap().unwrap()["method"], "notifications/message");
        assert!(ex.next().await.is_none());
    })
    .await;
}

#[tokio::test]
async fn legacy_session_id_get_stream_cancel_and_delete() {
    bounded(async {
        let seen = log();
        let s2 = seen.clone();
        let url = serve(move |req, mut s| {
            s2.lock().unwrap().push(req.clone());
            async move {
                let sid = [("Mcp-Session-Id", "sess-42")];
                match (req.method.as_str(), req.rpc_method().as_str()) {
                    ("POST", "initialize") => {
                        let r = json!({"jsonrpc": "2.0", "id": req.json()["id"], "result": {"protocolVersion": "2025-06-18"}});
                        respond_json(s, "200 OK", &sid, &r).await;
                    }
                    ("POST", "slow") => {
                        start_sse(&mut s, &[]).await;
                        event(&mut s, ": working\n\n").await;
                        wait_closed(&mut s).await;
                    }
                    ("POST", "gone") => respond(s, "404 Not Found", &[], b"no such session").await,
                    ("POST", m) if m.starts_with("notifications/") => respond(s, "202 Accepted", &[], b"").await,
                    ("POST", _) => respond_json(s, "200 OK", &[], &response(req.json()["id"].as_i64().unwrap())).await,
                    ("GET", _) => {
                        start_sse(&mut s, &[]).await;
                        let ping = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"});
                        event(&mut s, &format!("id: g1\n{}", data(&ping))).await;
                        wait_closed(&mut s).await;
                    }
                    ("DELETE", _) => respond(s, "200 OK", &[], b"").await,
                    _ => respond(s, "405 Method Not Allowed", &[], b"").await,
                }
            }
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        let (sink, mut unsolicited) = mpsc::channel(UNSOLICITED_CAP);
        t.route_unsolicited(Some(sink));
        let init = OutgoingRequest::new(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}), Vec::new()).unwrap();
        let mut ex = t.request(init).await.unwrap();
        assert_eq!(ex.next().await.unwrap().unwrap()["result"]["protocolVersion"], "2025-06-18");
        ex.complete();
        assert_eq!(t.session_id().as_deref(), Some("sess-42"));
        let pv = vec![("mcp-protocol-version".to_owned(), "2025-06-18".to_owned())];
        t.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), pv.clone()).await.unwrap();

        // The standalone GET stream carries a server request.
        let m = recv_bounded(&mut unsolicited).await;
        assert_eq!(m["method"], "roots/list");

        let mut ex = t.request(OutgoingRequest::new(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), pv.clone()).unwrap()).await.unwrap();
        assert_eq!(ex.next().await.unwrap().unwrap(), response(2));
        ex.complete();

        // Cancelling in a legacy session also sends notifications/cancelled.
        let ex = t.request(OutgoingRequest::new(json!({"jsonrpc": "2.0", "id": 3, "method": "slow"}), pv.clone()).unwrap()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(ex);
        loop {
            let cancelled = seen.lock().unwrap().iter().any(|r| r.rpc_method() == "notifications/cancelled" && r.json()["params"]["requestId"] == 3);
            if cancelled {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        match t.request(OutgoingRequest::new(json!({"jsonrpc": "2.0", "id": 4, "method": "gone"}), pv.clone()).unwrap()).await {
            Err(TransportError::Closed(why)) => assert_eq!(why, "session expired"),
            other => panic!("{other:?}"),
        }

        t.close().await;
        assert!(t.request(request(5, "x")).await.is_err());
        let reqs = seen.lock().unwrap().clone();
        assert!(reqs[0].header("mcp-session-id").is_none(), "initialize carries no session");
        for r in &reqs[1..] {
            assert_eq!(r.header("mcp-session-id"), Some("sess-42"), "{} {}", r.method, r.rpc_method());
        }
        let get = reqs.iter().find(|r| r.method == "GET").expect("a GET stream");
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        assert_eq!(get.header("mcp-protocol-version"), Some("2025-06-18"));
        let del = reqs.iter().find(|r| r.method == "DELETE").expect("a DELETE");
        assert_eq!(del.header("mcp-protocol-version"), Some("2025-06-18"));
    })
    .await;
}

#[tokio::test]
async fn resumes_with_last_event_id_after_retry_delay() {
    bounded(async {
        let closed_at: Arc<Mutex<Option<Instant>>> = Arc::default();
        let seen = log();
        let (c2, s2) = (closed_at.clone(), seen.clone());
        let url = serve(move |req, mut s| {
            s2.lock().unwrap().push(req.clone());
            let closed_at = c2.clone();
            async move {
                if req.method == "POST" {
                    start_sse(&mut s, &[]).await;
                    event(&mut s, "id: e1\nretry: 100\ndata: \n\n").await;
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 9, "progress": 1}});
                    event(&mut s, &format!("id: e2\n{}", data(&note))).await;
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    *closed_at.lock().unwrap() = Some(Instant::now());
                    let _ = s.shutdown().await;
                } else if req.header("last-event-id") == Some("e2") {
                    start_sse(&mut s, &[]).await;
                    event(&mut s, &format!("id: e3\n{}", data(&response(9)))).await;
                    wait_closed(&mut s).await;
                } else {
                    respond(s, "400 Bad Request", &[], b"bad resume").await;
                }
            }
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        let mut ex = t.request(request(9, "tools/call")).await.unwrap();
        assert_eq!(ex.next().await.unwrap().unwrap()["method"], "notifications/progress");
        assert_eq!(ex.next().await.unwrap().unwrap(), response(9));
        ex.complete();
        let reqs = seen.lock().unwrap().clone();
        assert_eq!(reqs.len(), 2);
        let get = &reqs[1];
        assert_eq!(get.method, "GET");
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        assert_eq!(get.header("mcp-protocol-version"), Some("2026-07-28"));
        let waited = closed_at.lock().unwrap().unwrap().elapsed();
        assert!(waited >= Duration::from_millis(90), "reconnected after {waited:?}");
    })
    .await;
}

#[tokio::test]
async fn resumption_refused_is_reported() {
    bounded(async {
        let url = serve(|req, mut s| async move {
            if req.method == "POST" {
                start_sse(&mut s, &[]).await;
                event(&mut s, "id: a\nretry: 10\ndata: \n\n").await;
            } else {
                respond(s, "405 Method Not Allowed", &[], b"").await;
            }
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        let mut ex = t.request(request(1, "x")).await.unwrap();
        assert!(matches!(ex.next().await, Some(Err(TransportError::Http { status: 405, .. }))));
    })
    .await;
}

#[tokio::test]
async fn http_sse_fallback() {
    bounded(async {
        let (to_stream, from_posts) = mpsc::unbounded_channel::<String>();
        let from_posts = Arc::new(tokio::sync::Mutex::new(Some(from_posts)));
        let seen = log();
        let s2 = seen.clone();
        let url = serve(move |req, mut s| {
            s2.lock().unwrap().push(req.clone());
            let from_posts = from_posts.clone();
            let to_stream = to_stream.clone();
            async move {
                match (req.method.as_str(), req.path.as_str()) {
                    ("GET", "/mcp") => {
                        let Some(mut rx) = from_posts.lock().await.take() else { return };
                        start_sse(&mut s, &[]).await;
                        event(&mut s, "event: endpoint\ndata: /messages?session=xyz\n\n").await;
                        while let Some(text) = rx.recv().await {
                            event(&mut s, &text).await;
                        }
                    }
                    ("POST", "/messages?session=xyz") => {
                        let m = req.json();
                        if let Some(id) = m.get("id").and_then(Value::as_i64) {
                            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": id, "progress": 1}});
                            let ping = json!({"jsonrpc": "2.0", "id": "srv", "method": "ping"});
                            for m in [progress, ping, response(id)] {
                                let _ = to_stream.send(data(&m));
                            }
                        }
                        respond(s, "202 Accepted", &[], b"Accepted").await;
                    }
                    _ => respond(s, "404 Not Found", &[], b"").await,
                }
            }
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        let (sink, mut unsolicited) = mpsc::channel(UNSOLICITED_CAP);
        t.route_unsolicited(Some(sink));
        // The POST of `initialize` is refused (404): the transport falls back by itself.
        let mut ex = t.request(request(1, "initialize")).await.unwrap();
        let m = ex.next().await.unwrap().unwrap();
        assert_eq!(m["method"], "notifications/progress");
        assert_eq!(ex.next().await.unwrap().unwrap(), response(1));
        ex.complete();
        assert_eq!(recv_bounded(&mut unsolicited).await["method"], "ping");
        t.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), Vec::new()).await.unwrap();
        let reqs = seen.lock().unwrap().clone();
        assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("POST", "/mcp"));
        assert_eq!(reqs[1].method, "GET");
        assert_eq!(reqs[1].header("accept"), Some("text/event-stream"));
        assert!(reqs[2..].iter().all(|r| r.method == "POST" && r.path == "/messages?session=xyz"));
        t.close().await;
    })
    .await;
}

#[tokio::test]
async fn http_sse_fallback_refuses_foreign_endpoint() {
    bounded(async {
        let url = serve(|_req, mut s| async move {
            start_sse(&mut s, &[]).await;
            event(&mut s, "event: endpoint\ndata: http://example.com/steal\n\n").await;
            wait_closed(&mut s).await;
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        assert!(matches!(t.fallback_to_sse().await, Err(TransportError::Malformed(_))));
    })
    .await;
}

#[tokio::test]
async fn dropping_the_exchange_closes_the_connection() {
    bounded(async {
        let (closed_tx, mut closed_rx) = mpsc::unbounded_channel::<()>();
        let url = serve(move |_req, mut s| {
            let closed_tx = closed_tx.clone();
            async move {
                start_sse(&mut s, &[]).await;
                event(&mut s, ": started\n\n").await;
                wait_closed(&mut s).await;
                let _ = closed_tx.send(());
            }
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        let ex = t.request(request(1, "tools/call")).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(closed_rx.try_recv().is_err(), "still open while the exchange lives");
        drop(ex);
        recv(&mut closed_rx).await;
    })
    .await;
}

#[tokio::test]
async fn a_flood_on_the_standalone_stream_stays_bounded_and_its_requests_are_refused() {
    bounded(async {
        let seen = log();
        let s2 = seen.clone();
        let url = serve(move |req, mut s| {
            s2.lock().unwrap().push(req.clone());
            async move {
                let sid = [("Mcp-Session-Id", "sess-7")];
                match (req.method.as_str(), req.rpc_method().as_str()) {
                    ("POST", "initialize") => {
                        let r = json!({"jsonrpc": "2.0", "id": req.json()["id"], "result": {"protocolVersion": "2025-06-18"}});
                        respond_json(s, "200 OK", &sid, &r).await;
                    }
                    ("POST", _) => respond(s, "202 Accepted", &[], b"").await,
                    ("GET", _) => {
                        start_sse(&mut s, &[]).await;
                        let note = data(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}));
                        for _ in 0..10 {
                            event(&mut s, &note.repeat(10_000)).await;
                        }
                        for i in 0..3 {
                            event(&mut s, &data(&json!({"jsonrpc": "2.0", "id": format!("r{i}"), "method": "roots/list"}))).await;
                        }
                        wait_closed(&mut s).await;
                    }
                    _ => respond(s, "405 Method Not Allowed", &[], b"").await,
                }
            }
        })
        .await;
        let t = HttpTransport::new(&url).unwrap();
        // Taken, never read: a consumer that fell behind.
        let (sink, _unsolicited) = mpsc::channel(UNSOLICITED_CAP);
        t.route_unsolicited(Some(sink));
        let init = OutgoingRequest::new(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}), Vec::new()).unwrap();
        let mut ex = t.request(init).await.unwrap();
        ex.next().await.unwrap().unwrap();
        ex.complete();
        let pv = vec![("mcp-protocol-version".to_owned(), "2025-06-18".to_owned())];
        t.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), pv).await.unwrap();
        // The three server requests come last: each is answered with an error.
        let refused = |seen: &Log| {
            seen.lock().unwrap().iter().filter(|r| r.json()["error"]["code"] == -32603).map(|r| r.json()["id"].clone()).collect::<Vec<_>>()
        };
        while refused(&seen).len() < 3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut ids = refused(&seen);
        ids.sort_by_key(|v| v.to_string());
        assert_eq!(ids, [json!("r0"), json!("r1"), json!("r2")]);
        let stats = t.unsolicited_stats();
        assert_eq!(stats.queued, mcp_client::transport::UNSOLICITED_CAP, "{stats:?}");
        assert_eq!(stats.dropped, 100_003 - mcp_client::transport::UNSOLICITED_CAP as u64, "{stats:?}");
    })
    .await;
}
