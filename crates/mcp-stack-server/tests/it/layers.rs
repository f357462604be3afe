//! Operation layers around `Server::handle`: refusing, ordering, changing params and results,
//! and a panicking layer. (Over stdio, both eras: mcp-stack-stdio `tests/it/serve.rs`; over
//! HTTP: mcp-stack-http `tests/it/streamable.rs`.)

use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION};
use mcp_protocol::{ProtocolError, Request};
use mcp_server::layers::{from_fn, Era};
use mcp_server::{Args, Reply, RequestEnv, Server, ServerBuilder, Tool};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use std::sync::Arc;

fn req(id: i64, method: &str, params: Value) -> Request {
    let mut params = params.as_object().cloned().unwrap_or_default();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {} }));
    Request { id: json!(id), method: method.into(), params }
}

fn as_user(principal: Option<&str>) -> RequestEnv {
    RequestEnv { principal: principal.map(str::to_owned), ..RequestEnv::default() }
}

fn echo() -> Tool {
    Tool::new("echo").handler(|Args(a): Args<Map<String, Value>>| async move {
        a.get("text").and_then(Value::as_str).unwrap_or_default().to_owned()
    })
}

fn builder() -> ServerBuilder {
    Server::builder("layers", "1").tool(echo()).tool(Tool::new("secret").handler(|| async { "the secret" }))
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_layer_refuses_with_the_error_an_unknown_tool_gets() {
    let s = builder()
        .layer(from_fn(|op, next| async move {
            if op.target() == Some("secret") && op.principal() != Some("admin") {
                return Err(ProtocolError::invalid_params("Unknown tool: secret"));
            }
            next.run(op).await
        }))
        .build()
        .unwrap();
    let call = || req(1, "tools/call", json!({"name": "secret", "arguments": {}}));
    let refused = s.handle(call(), as_user(Some("guest"))).await.unwrap_err();
    let unknown = s.handle(req(2, "tools/call", json!({"name": "nope", "arguments": {}})), as_user(None)).await;
    assert_eq!(refused.code(), unknown.unwrap_err().code());
    assert_eq!(refused.message(), "Unknown tool: secret");
    let r = s.handle(call(), as_user(Some("admin"))).await.unwrap();
    assert_eq!(text(&r), "the secret");
}

#[tokio::test]
async fn layers_run_in_the_order_added_first_outermost() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let layer = |name: &'static str| {
        let log = log.clone();
        from_fn(move |op, next| {
            let log = log.clone();
            async move {
                log.lock().push(format!("{name} in {}", op.method()));
                let r = next.run(op).await;
                log.lock().push(format!("{name} out"));
                r
            }
        })
    };
    let s = builder().layer(layer("a")).layer(layer("b")).build().unwrap();
    s.handle(req(1, "tools/list", json!({})), as_user(None)).await.unwrap();
    assert_eq!(*log.lock(), ["a in tools/list", "b in tools/list", "b out", "a out"]);
}

#[tokio::test]
async fn a_layer_changes_params_and_results() {
    let s = builder()
        .layer(from_fn(|mut op, next| async move {
            assert_eq!(op.era(), Era::Modern);
            if let Some(Value::Object(args)) = op.params_mut().get_mut("arguments") {
                if let Some(Value::String(t)) = args.get_mut("text") {
                    *t = t.to_uppercase();
                }
            }
            let mut result = next.run(op).await?.into_value();
            result["_meta"]["example.com/layered"] = json!(true);
            Ok(Reply::from(result))
        }))
        .build()
        .unwrap();
    let r = s.handle(req(1, "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})), as_user(None)).await;
    let r = r.unwrap();
    assert_eq!(text(&r), "HI");
    assert_eq!(r["_meta"]["example.com/layered"], true, "{r}");
    assert_eq!(r["resultType"], "complete");
}

#[tokio::test]
async fn a_panicking_layer_is_answered_like_a_panicking_handler() {
    let s = builder()
        .layer(from_fn(|op, next| async move {
            if op.method() == "tools/list" {
                panic!("layer bug");
            }
            next.run(op).await
        }))
        .build()
        .unwrap();
    let e = s.handle(req(1, "tools/list", json!({})), as_user(None)).await.unwrap_err();
    assert_eq!(e.code(), -32603);
    // The server keeps serving.
    let r = s.handle(req(2, "tools/call", json!({"name": "echo", "arguments": {"text": "ok"}})), as_user(None)).await;
    assert_eq!(text(&r.unwrap()), "ok");
}

#[tokio::test]
async fn listen_requests_pass_through_layers_before_the_stream_opens() {
    use futures::StreamExt;
    let s = builder()
        .layer(from_fn(|mut op, next| async move {
            if op.method() == "subscriptions/listen" {
                if op.principal().is_none() {
                    return Err(ProtocolError::invalid_params("sign in to listen"));
                }
                // A layer may narrow what the stream announces.
                op.params_mut().insert("notifications".into(), json!({"toolsListChanged": true}));
            }
            let r = next.run(op).await;
            assert!(r.as_ref().is_ok_and(|r| r.clone().into_value() == json!({})), "the listen reply is empty");
            r
        }))
        .build()
        .unwrap();
    let listen = || req(1, "subscriptions/listen", json!({"notifications": {"promptsListChanged": true}}));
    let Err(e) = s.listen_layered(listen(), as_user(None)).await else { panic!("an anonymous listen was opened") };
    assert_eq!(e.message(), "sign in to listen");
    let mut stream = Box::pin(s.listen_layered(listen(), as_user(Some("ann"))).await.unwrap());
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}), "{ack}");
    // Without layers in the way, `Server::listen` opens the stream as asked.
    let plain = builder().build().unwrap();
    let ack = Box::pin(plain.listen(listen(), as_user(None)).unwrap()).next().await.unwrap();
    assert_eq!(ack["params"]["notifications"], json!({"promptsListChanged": true}));
}

#[tokio::test]
async fn a_layer_sees_the_refusal_of_a_listen_it_passed_on() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let s = builder()
        .layer(from_fn(move |op, next| {
            let log = log.clone();
            async move {
                let r = next.run(op).await;
                log.lock().push(r.as_ref().map(|r| r.clone().into_value()).map_err(|e| e.code()));
                r
            }
        }))
        .build()
        .unwrap();
    let bad = req(1, "subscriptions/listen", json!({"notifications": 7}));
    let Err(e) = s.listen_layered(bad, as_user(None)).await else { panic!("a bad filter was opened") };
    assert_eq!(e.code(), -32602);
    assert_eq!(e.message(), "`notifications` must be an object");
    let good = req(2, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    assert!(s.listen_layered(good, as_user(None)).await.is_ok());
    assert_eq!(*seen.lock(), vec![Err(-32602), Ok(json!({}))], "the layer saw what the client got");
}

#[tokio::test]
async fn a_panicking_layer_refuses_a_listen_with_an_internal_error() {
    let s = builder()
        .layer(from_fn(|op, next| async move {
            if op.method() == "subscriptions/listen" {
                panic!("layer bug");
            }
            next.run(op).await
        }))
        .build()
        .unwrap();
    let listen = req(1, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let Err(e) = s.listen_layered(listen, as_user(None)).await else { panic!("opened") };
    assert_eq!(e.code(), -32603);
    assert_eq!(s.panic_count(), 1);
    assert!(s.handle(req(2, "tools/list", json!({})), as_user(None)).await.is_ok(), "the server keeps serving");
}

#[tokio::test]
async fn a_layer_that_panics_before_returning_its_future_is_caught() {
    // `Next::run` calls the next layer at once: its own code runs before any future does.
    let s = builder()
        .layer(from_fn(|op, next| {
            if op.method() != "tools/call" {
                panic!("layer bug before its future");
            }
            next.run(op)
        }))
        .build()
        .unwrap();
    let listen = req(1, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let Err(e) = s.listen_layered(listen, as_user(None)).await else { panic!("opened") };
    assert_eq!(e.code(), -32603);
    let e = s.handle(req(2, "tools/list", json!({})), as_user(None)).await.unwrap_err();
    assert_eq!(e.code(), -32603);
    assert_eq!(s.panic_count(), 2);
    let r = s.handle(req(3, "tools/call", json!({"name": "echo", "arguments": {"text": "ok"}})), as_user(None)).await;
    assert_eq!(text(&r.unwrap()), "ok", "the server keeps serving");
}

/// A writer the test reads back.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_access_log_writes_one_escaped_line_per_request() {
    use mcp_server::access_log::AccessLog;
    let lines = Lines::default();
    let log = AccessLog::new(lines.clone());
    let s = builder()
        .layer(log.clone())
        .rate_limits(mcp_server::rate_limit::RateLimits::new().per_tool("secret", "1/h".parse().unwrap()));
    let s = s.build().unwrap();
    s.handle(req(1, "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})), as_user(Some("alice")))
        .await
        .unwrap();
    let forged = "x\nts=2000-01-01T00:00:00.000Z era=modern method=tools/call target=secret caller=root outcome=ok";
    s.handle(req(2, "tools/call", json!({"name": forged, "arguments": {}})), as_user(None)).await.unwrap_err();
    s.handle(req(3, "tools/call", json!({"name": "secret", "arguments": {}})), as_user(None)).await.unwrap();
    let limited = s.handle(req(4, "tools/call", json!({"name": "secret", "arguments": {}})), as_user(None)).await;
    assert_eq!(limited.unwrap_err().code(), -32029);
    s.handle(req(5, "tools/list", json!({})), as_user(Some("bob"))).await.unwrap();

    // The lines are written by the log's own thread: wait for them.
    log.flush();
    let text = String::from_utf8(lines.0.lock().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    let fields = |line: &str| -> Vec<String> {
        // Everything but the time and the duration, which vary.
        line.split(' ').filter(|f| !f.starts_with("ts=") && !f.starts_with("micros=")).map(str::to_owned).collect()
    };
    assert_eq!(fields(lines[0]), ["era=modern", "method=tools/call", "target=echo", "caller=alice", "outcome=ok"]);
    assert!(lines[1].contains(r#"target="x\nts=2000-01-01T00:00:00.000Z era=modern"#), "{}", lines[1]);
    assert!(lines[1].ends_with(&format!("caller=- outcome=-32602 micros={}", lines[1].rsplit('=').next().unwrap())));
    assert!(lines[2].contains("target=secret caller=- outcome=ok"), "{}", lines[2]);
    assert!(lines[3].contains("target=secret caller=- outcome=-32029"), "{}", lines[3]);
    assert!(lines[4].contains("method=tools/list target=- caller=bob outcome=ok"), "{}", lines[4]);
    for line in &lines {
        let ts = line.strip_prefix("ts=").unwrap().split(' ').next().unwrap();
        assert!(ts.len() == 24 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T', "{ts}");
        let micros = line.rsplit_once("micros=").unwrap().1;
        micros.parse::<u64>().unwrap();
    }
}
