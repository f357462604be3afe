//! In-memory tests of request dispatch: no transport, no sockets.

use futures::StreamExt;
use mcp_protocol::meta::{
    CLIENT_CAPABILITIES, LOG_LEVEL, PROGRESS_TOKEN, PROTOCOL_VERSION, SERVER_INFO, SUBSCRIPTION_ID,
};
use mcp_protocol::state::KeyRing;
use mcp_protocol::types::CallToolResult;
use mcp_protocol::{ProtocolError, Request};
use mcp_server::{
    Args, BuildError, ChangeEvent, Context, HandlerError, ItemKind, RequestEnv, Resource, Server, ServerBuilder, Tool,
};
use serde_json::{json, Map, Value};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A tool from a JSON definition (name, description, schemas) whose handler gets the raw
/// arguments and returns a `CallToolResult` as JSON, so these tests can send any result.
fn raw<F, Fut>(def: Value, f: F) -> Tool
where
    F: Fn(Context, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    let mut t = Tool::new(def["name"].as_str().expect("name"));
    if let Some(d) = def.get("description").and_then(Value::as_str) {
        t = t.description(d);
    }
    if let Some(s) = def.get("inputSchema") {
        t = t.input_schema(s.clone());
    }
    if let Some(s) = def.get("outputSchema") {
        t = t.output_schema(s.clone());
    }
    let f = Arc::new(f);
    t.handler(move |ctx: Context, Args(a): Args<Map<String, Value>>| {
        let fut = (*f)(ctx, a);
        async move { Ok::<_, HandlerError>(serde_json::from_value::<CallToolResult>(fut.await?)?) }
    })
}

trait RawTools {
    fn tool_raw<F, Fut>(self, def: Value, f: F) -> Self
    where
        F: Fn(Context, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static;
}

impl RawTools for ServerBuilder {
    fn tool_raw<F, Fut>(self, def: Value, f: F) -> Self
    where
        F: Fn(Context, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
    {
        self.tool(raw(def, f))
    }
}

fn meta(caps: Value) -> Value {
    json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: caps })
}

fn req(id: i64, method: &str, mut params: Value, caps: Value) -> Request {
    let m = params.get("_meta").cloned().unwrap_or(json!({}));
    let mut full = meta(caps);
    full.as_object_mut().unwrap().extend(m.as_object().unwrap().clone());
    params["_meta"] = full;
    Request { id: json!(id), method: method.into(), params: params.as_object().unwrap().clone() }
}

fn text(t: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": t }] })
}

fn server() -> Server {
    Server::builder("test", "1.2.3")
        .page_size(2)
        .tool_raw(
            json!({"name": "ask", "description": "asks a name", "inputSchema": {"type": "object", "properties": {"greeting": {"type": "string"}}}}),
            |ctx: Context, args: Map<String, Value>| async move {
                let mut inputs = ctx.inputs();
                let a = inputs.elicit("name", "Name?", json!({"type": "object", "properties": {"n": {"type": "string"}}}))?;
                inputs.set_state(json!({"carried": args.get("greeting").cloned().unwrap_or(Value::Null)}));
                inputs.finish()?;
                let n = a.unwrap()["content"]["n"].as_str().unwrap_or("?").to_owned();
                Ok::<_, HandlerError>(text(&format!("{} {n} ({})", ctx.round_state()["carried"].as_str().unwrap_or("-"), ctx.round_state())))
            },
        )
        .tool_raw(
            json!({"name": "typed_out", "description": "bad structured output",
                   "inputSchema": {"type": "object", "properties": {"good": {"type": "boolean"}}},
                   "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}),
            |_ctx: Context, args: Map<String, Value>| async move {
                let n = if args.get("good") == Some(&json!(true)) { json!(1) } else { json!("x") };
                Ok::<_, HandlerError>(json!({"content": [], "structuredContent": {"n": n}}))
            },
        )
        .tool_raw(
            json!({"name": "noisy", "description": "logs and reports progress", "inputSchema": {"type": "object"}}),
            |ctx: Context, _args| async move {
                ctx.log(mcp_protocol::types::LoggingLevel::Debug, None, json!("debug line"));
                ctx.log(mcp_protocol::types::LoggingLevel::Warning, Some("w"), json!("warning line"));
                ctx.progress(1.0, None, None);
                Ok::<_, HandlerError>(text("done"))
            },
        )
        .tool_raw(json!({"name": "boom", "description": "panics", "inputSchema": {"type": "object"}}), |_ctx: Context, _args| async move {
            if true {
                panic!("kaboom");
            }
            Ok::<_, HandlerError>(text("unreachable"))
        })
        .tool_raw(json!({"name": "t4", "description": "d", "inputSchema": {"type": "object"}}), |_c: Context, _a| async move {
            Ok::<_, HandlerError>(text("4"))
        })
        .tool_raw(json!({"name": "t5", "description": "d", "inputSchema": {"type": "object"}}), |_c: Context, _a| async move {
            Ok::<_, HandlerError>(text("5"))
        })
        .completion(|_ctx: Context, _r, _a, _c| async move {
            let values: Vec<String> = (0..150).map(|i| format!("v{i}")).collect();
            Ok(json!({ "values": values, "hasMore": true }))
        })
        .build()
        .unwrap()
}

async fn call(s: &Server, r: Request) -> Result<Value, ProtocolError> {
    s.handle(r, RequestEnv::default()).await
}

#[tokio::test]
async fn discover_and_result_envelope() {
    let s = server();
    let r = call(&s, req(1, "server/discover", json!({}), json!({}))).await.unwrap();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["supportedVersions"], json!(["2026-07-28"]));
    assert!(r["capabilities"]["tools"].is_object());
    assert!(r["capabilities"]["completions"].is_object());
    assert_eq!(r["_meta"][SERVER_INFO], json!({"name": "test", "version": "1.2.3"}));
    assert!(r["ttlMs"].as_u64().is_some());
    assert_eq!(r["cacheScope"], "public");
}

#[tokio::test]
async fn pagination_is_stable_and_cursors_are_checked() {
    let s = server();
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..10 {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let r = call(&s, req(1, "tools/list", params, json!({}))).await.unwrap();
        names.extend(r["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        assert!(r["tools"].as_array().unwrap().len() <= 2);
        cursor = r.get("nextCursor").cloned();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(names, ["ask", "typed_out", "noisy", "boom", "t4", "t5"]);
    let e = call(&s, req(1, "tools/list", json!({"cursor": "garbage"}), json!({}))).await.unwrap_err();
    assert_eq!(e.code(), -32602);
}

#[tokio::test]
async fn mrtr_round_trip_binds_state() {
    let s = server();
    let caps = json!({"elicitation": {}});
    let r1 = call(&s, req(1, "tools/call", json!({"name": "ask", "arguments": {"greeting": "hi"}}), caps.clone()))
        .await
        .unwrap();
    assert_eq!(r1["resultType"], "input_required");
    assert_eq!(r1["inputRequests"]["name"]["method"], "elicitation/create");
    let state = r1["requestState"].as_str().unwrap().to_owned();
    let answer = json!({"name": {"action": "accept", "content": {"n": "Ada"}}});
    let retry =
        |args: Value, st: &str| json!({"name": "ask", "arguments": args, "inputResponses": answer, "requestState": st});
    let r2 = call(&s, req(2, "tools/call", retry(json!({"greeting": "hi"}), &state), caps.clone())).await.unwrap();
    assert_eq!(r2["resultType"], "complete");
    assert!(r2["content"][0]["text"].as_str().unwrap().starts_with("hi Ada"), "{r2}");
    // Same state, different arguments: refused.
    let e =
        call(&s, req(3, "tools/call", retry(json!({"greeting": "other"}), &state), caps.clone())).await.unwrap_err();
    assert_eq!(e.code(), -32602);
    // Same state, different principal: refused.
    let env = RequestEnv { principal: Some("mallory".into()), ..RequestEnv::default() };
    let e =
        s.handle(req(4, "tools/call", retry(json!({"greeting": "hi"}), &state), caps.clone()), env).await.unwrap_err();
    assert_eq!(e.code(), -32602);
    // Tampered state: refused.
    let e = call(&s, req(5, "tools/call", retry(json!({"greeting": "hi"}), &format!("{state}x")), caps.clone()))
        .await
        .unwrap_err();
    assert_eq!(e.code(), -32602);
    // Another server instance with another key: refused; with the same key ring: accepted.
    let e = call(&server(), req(6, "tools/call", retry(json!({"greeting": "hi"}), &state), caps)).await.unwrap_err();
    assert_eq!(e.code(), -32602);
}

#[tokio::test]
async fn shared_key_ring_lets_any_instance_finish_and_expired_state_is_refused() {
    let make_named = |name: &str, ttl| {
        Server::builder(name, "1")
            .state_keys(KeyRing::from_secrets([7; 32], &[]))
            .state_ttl_secs(ttl)
            .tool_raw(
                json!({"name": "r", "description": "roots", "inputSchema": {"type": "object"}}),
                |ctx: Context, _a| async move {
                    let mut i = ctx.inputs();
                    let roots = i.roots("roots")?;
                    i.finish()?;
                    Ok::<_, HandlerError>(text(&roots.unwrap()["roots"].to_string()))
                },
            )
            .build()
            .unwrap()
    };
    let make = |ttl| make_named("t", ttl);
    let (a, b) = (make(600), make(600));
    let caps = json!({"roots": {}});
    let r1 = call(&a, req(1, "tools/call", json!({"name": "r"}), caps.clone())).await.unwrap();
    let st = r1["requestState"].as_str().unwrap();
    let retry =
        json!({"name": "r", "inputResponses": {"roots": {"roots": [{"uri": "file:///x"}]}}, "requestState": st});
    let r2 = call(&b, req(2, "tools/call", retry.clone(), caps.clone())).await.unwrap();
    assert_eq!(r2["resultType"], "complete");
    // Another service sharing the keys (another name, so another audience) refuses it.
    let other = make_named("other-service", 600);
    let e = call(&other, req(3, "tools/call", retry.clone(), caps.clone())).await.unwrap_err();
    assert_eq!(e.code(), -32602);
    assert!(e.message().contains("issued by a different server"), "{e}");
    let expired = make(0);
    let r1 = call(&expired, req(1, "tools/call", json!({"name": "r"}), caps.clone())).await.unwrap();
    let retry = json!({"name": "r", "inputResponses": {"roots": {"roots": []}}, "requestState": r1["requestState"]});
    let e = call(&expired, req(2, "tools/call", retry, caps)).await.unwrap_err();
    assert!(e.message().contains("expired"), "{e}");
}

#[tokio::test]
async fn undeclared_capability_is_never_requested() {
    let s = server();
    let e = call(&s, req(1, "tools/call", json!({"name": "ask"}), json!({"sampling": {}}))).await.unwrap_err();
    assert_eq!(e.code(), -32021);
    assert_eq!(e.http_status(), 400);
    assert_eq!(e.data().unwrap()["requiredCapabilities"], json!({"elicitation": {"form": {}}}));
}

#[tokio::test]
async fn arguments_and_structured_output_are_validated() {
    let s = server();
    let r =
        call(&s, req(1, "tools/call", json!({"name": "ask", "arguments": {"greeting": 5}}), json!({}))).await.unwrap();
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("Invalid arguments"));
    let e = call(&s, req(2, "tools/call", json!({"name": "typed_out", "arguments": {"good": false}}), json!({})))
        .await
        .unwrap_err();
    assert_eq!(e.code(), -32603);
    let r = call(&s, req(3, "tools/call", json!({"name": "typed_out", "arguments": {"good": true}}), json!({})))
        .await
        .unwrap();
    assert_eq!(r["structuredContent"]["n"], 1);
    let e = call(&s, req(4, "tools/call", json!({"name": "nope"}), json!({}))).await.unwrap_err();
    assert_eq!(e.code(), -32602);
}

#[tokio::test]
async fn logging_needs_a_level_and_progress_needs_a_token() {
    let s = server();
    let run = |extra_meta: Value| {
        let s = s.clone();
        async move {
            // A test's sink: the noisy tool sends a handful of notifications.
            let (tx, mut rx) = tokio::sync::mpsc::channel(64);
            let sink = mcp_server::NotificationSink::new(move |v| {
                let _ = tx.try_send(v);
            });
            let env = RequestEnv { sink: Some(sink), ..RequestEnv::default() };
            s.handle(req(1, "tools/call", json!({"name": "noisy", "_meta": extra_meta}), json!({})), env)
                .await
                .unwrap();
            let mut out = Vec::new();
            while let Ok(m) = rx.try_recv() {
                out.push(m);
            }
            out
        }
    };
    assert!(run(json!({})).await.is_empty());
    let logs = run(json!({ LOG_LEVEL: "info" })).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0]["params"]["level"], "warning");
    let with_progress = run(json!({ PROGRESS_TOKEN: 9 })).await;
    assert_eq!(with_progress.len(), 1);
    assert_eq!(with_progress[0]["method"], "notifications/progress");
    assert_eq!(with_progress[0]["params"]["progressToken"], 9);
}

#[tokio::test]
async fn panics_become_internal_errors_and_the_server_keeps_serving() {
    let s = server();
    let e = call(&s, req(1, "tools/call", json!({"name": "boom"}), json!({}))).await.unwrap_err();
    assert_eq!(e.code(), -32603);
    assert!(!e.message().contains("kaboom"), "no panic text for the client: {e}");
    assert!(e.message().starts_with("Internal error: the handler failed (ref "), "{e}");
    assert!(call(&s, req(2, "tools/call", json!({"name": "t4"}), json!({}))).await.is_ok());
    // A server that opts in tells the panic message.
    let open = Server::builder("t", "1")
        .expose_internal_errors(true)
        .tool(Tool::new("boom").handler(|| async {
            if true {
                panic!("kaboom");
            }
            "unreachable"
        }))
        .build()
        .unwrap();
    let e = call(&open, req(1, "tools/call", json!({"name": "boom"}), json!({}))).await.unwrap_err();
    assert!(e.message().contains("handler panicked: kaboom"), "{e}");
}

/// An error wrapping an `io::Error`, as `?` on a library call makes one.
#[derive(Debug)]
struct ConfigError(std::io::Error);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cannot read the configuration")
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

fn config_tool() -> Tool {
    Tool::new("config").handler(|| async {
        let io = std::io::Error::other("open /srv/secret/db.toml: permission denied");
        Err::<String, HandlerError>(ConfigError(io).into())
    })
}

#[tokio::test]
async fn handler_error_sources_stay_in_the_logs_unless_exposed() {
    let deliberate = Tool::new("says").handler(|| async { Err::<String, _>("the model should read this") });
    let s = Server::builder("t", "1").tool(config_tool()).tool(deliberate).build().unwrap();
    let r = call(&s, req(1, "tools/call", json!({"name": "config"}), json!({}))).await.unwrap();
    assert_eq!(r["isError"], true);
    assert_eq!(r["content"][0]["text"], "cannot read the configuration", "only the top message: {r}");
    let r = call(&s, req(2, "tools/call", json!({"name": "says"}), json!({}))).await.unwrap();
    assert_eq!(
        (r["isError"].clone(), r["content"][0]["text"].clone()),
        (json!(true), json!("the model should read this"))
    );

    let open = Server::builder("t", "1").expose_internal_errors(true).tool(config_tool()).build().unwrap();
    let r = call(&open, req(1, "tools/call", json!({"name": "config"}), json!({}))).await.unwrap();
    assert_eq!(r["content"][0]["text"], "cannot read the configuration: open /srv/secret/db.toml: permission denied");
}

/// `.context(..)` puts what the handler was doing in front of the error the model reads; the
/// wrapped error's own sources still stay in the log.
#[tokio::test]
async fn context_tells_the_model_what_failed() {
    use mcp_server::ResultExt;
    let read = Tool::new("read").handler(|| async {
        let path = "/no/such/dir/config.toml";
        std::fs::read_to_string(path).with_context(|| format!("reading {path}"))
    });
    let wrapped = Tool::new("wrapped").handler(|| async {
        let io = std::io::Error::other("open /srv/secret/db.toml: permission denied");
        Err::<String, _>(ConfigError(io)).context("loading settings")
    });
    let s = Server::builder("t", "1").tool(read).tool(wrapped).build().unwrap();
    let r = call(&s, req(1, "tools/call", json!({"name": "read"}), json!({}))).await.unwrap();
    assert_eq!(r["isError"], true);
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("reading /no/such/dir/config.toml: "), "{text}");
    assert!(text.contains("os error 2"), "{text}");
    let r = call(&s, req(2, "tools/call", json!({"name": "wrapped"}), json!({}))).await.unwrap();
    assert_eq!(r["content"][0]["text"], "loading settings: cannot read the configuration", "{r}");
}

#[tokio::test]
async fn listen_filters_are_capped_and_matched_by_set() {
    let s = server();
    let listen = |s: &Server, id: i64, n: Value| {
        s.listen(req(id, "subscriptions/listen", json!({"notifications": n}), json!({})), RequestEnv::default())
    };
    let uris = |n: usize| (0..n).map(|i| format!("a://{i}")).collect::<Vec<_>>();
    let Err(e) = listen(&s, 1, json!({"resourceSubscriptions": uris(2000)})) else { panic!("2,000 URIs accepted") };
    assert_eq!(e.code(), -32602);
    assert!(e.message().contains("at most 1024"), "{e}");
    let Err(e) = listen(&s, 7, json!({"taskIds": uris(1025)})) else { panic!("1,025 task ids accepted") };
    assert_eq!(e.code(), -32602);
    let Err(e) = listen(&s, 2, json!({"resourceSubscriptions": ["a://".to_owned() + &"x".repeat(4096)]})) else {
        panic!("a 4 KiB URI accepted")
    };
    assert_eq!(e.code(), -32602);
    let small = Server::builder("t", "1")
        .listen_limits(mcp_server::ListenLimits::default().max_resource_subscriptions(3).max_filter_bytes(64))
        .build()
        .unwrap();
    assert!(listen(&small, 3, json!({"resourceSubscriptions": uris(4)})).is_err());
    assert!(listen(&small, 4, json!({"resourceSubscriptions": uris(3)})).is_ok());
    let long: Vec<String> = (0..3).map(|i| format!("a://{i}{}", "y".repeat(30))).collect();
    assert_eq!(listen(&small, 5, json!({"resourceSubscriptions": long})).err().map(|e| e.code()), Some(-32602));

    // The open streams' filters share one budget, given back when a stream ends.
    let budget = Server::builder("t", "1")
        .listen_limits(mcp_server::ListenLimits::default().max_total_filter_bytes(100))
        .build()
        .unwrap();
    let forty: Vec<String> = vec!["a://".to_owned() + &"z".repeat(36)];
    let first = listen(&budget, 8, json!({"resourceSubscriptions": forty})).unwrap();
    let second = listen(&budget, 9, json!({"resourceSubscriptions": [forty[0].clone() + "2"]})).unwrap();
    let Err(e) = listen(&budget, 10, json!({"resourceSubscriptions": [forty[0].clone() + "3"]})) else {
        panic!("past the server-wide budget")
    };
    assert_eq!(e.http_status(), 503, "{e}");
    assert!(listen(&budget, 11, json!({"toolsListChanged": true})).is_ok(), "a filter of flags holds nothing");
    drop((first, second));
    tokio::task::yield_now().await; // the aborted producers drop their share
    assert!(listen(&budget, 12, json!({"resourceSubscriptions": forty})).is_ok(), "given back");

    // At the cap, each of 10,000 events reaches exactly the streams that asked for it.
    let mut stream = Box::pin(listen(&s, 6, json!({"resourceSubscriptions": uris(1024)})).unwrap());
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"].as_array().unwrap().len(), 1024);
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"][5], "a://5", "the order given");
    let mut seen = 0;
    for i in 0..10_000usize {
        // Every 10th event is watched (a://0 to a://999), the rest are not.
        let uri = if i % 10 == 0 { format!("a://{}", i / 10) } else { format!("b://{i}") };
        s.notify_resource_updated(&uri);
        if uri.starts_with("a://") {
            let n = stream.next().await.unwrap();
            assert_eq!(n["params"]["uri"], uri);
            seen += 1;
        }
    }
    assert_eq!(seen, 1000);
    s.notify(ChangeEvent::ToolsListChanged); // not asked for
    s.notify_resource_updated("a://1023");
    assert_eq!(stream.next().await.unwrap()["params"]["uri"], "a://1023");
}

#[tokio::test]
async fn request_state_of_rounds_no_person_answers_lives_shorter() {
    let roots = Tool::new("r").handler(|ctx: Context| async move {
        let mut i = ctx.inputs();
        let roots = i.roots("roots")?;
        i.finish()?;
        Ok::<_, HandlerError>(roots.unwrap()["roots"].to_string())
    });
    let s = Server::builder("t", "1").automatic_state_ttl_secs(0).tool(roots).build().unwrap();
    let caps = json!({"roots": {}});
    let r1 = call(&s, req(1, "tools/call", json!({"name": "r"}), caps.clone())).await.unwrap();
    let retry = json!({"name": "r", "inputResponses": {"roots": {"roots": []}}, "requestState": r1["requestState"]});
    let e = call(&s, req(2, "tools/call", retry, caps)).await.unwrap_err();
    assert!(e.message().contains("expired"), "{e}");
    // An elicitation round keeps the long lifetime.
    let s = Server::builder("t", "1").automatic_state_ttl_secs(0).tool(ask_tool()).build().unwrap();
    let caps = json!({"elicitation": {}});
    let r1 = call(&s, req(1, "tools/call", json!({"name": "ask"}), caps.clone())).await.unwrap();
    assert_eq!(r1["resultType"], "input_required");
    let answer = json!({"action": "accept", "content": {"n": "Ada"}});
    let retry = json!({"name": "ask", "inputResponses": {"name": answer}, "requestState": r1["requestState"]});
    let r2 = call(&s, req(2, "tools/call", retry, caps)).await.unwrap();
    assert_eq!(r2["resultType"], "complete", "{r2}");
}

fn ask_tool() -> Tool {
    Tool::new("ask").handler(|ctx: Context| async move {
        let mut inputs = ctx.inputs();
        let a = inputs.elicit("name", "Name?", json!({"type": "object", "properties": {"n": {"type": "string"}}}))?;
        inputs.finish()?;
        Ok::<_, HandlerError>(a.unwrap()["content"]["n"].as_str().unwrap_or("?").to_owned())
    })
}

#[tokio::test]
async fn completion_values_are_capped_at_100() {
    let s = server();
    let p = json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}});
    let r = call(&s, req(1, "completion/complete", p, json!({}))).await.unwrap();
    assert_eq!(r["completion"]["values"].as_array().unwrap().len(), 100);
}

#[tokio::test]
async fn methods_and_meta_are_checked() {
    let s = server();
    assert_eq!(call(&s, req(1, "ping", json!({}), json!({}))).await.unwrap_err().code(), -32601);
    assert_eq!(call(&s, req(1, "initialize", json!({}), json!({}))).await.unwrap_err().code(), -32601);
    let bare = Request { id: json!(1), method: "tools/list".into(), params: Map::new() };
    assert_eq!(call(&s, bare).await.unwrap_err().code(), -32602);
    let mut old = req(1, "tools/list", json!({}), json!({}));
    old.params["_meta"][PROTOCOL_VERSION] = json!("2025-06-18");
    assert_eq!(call(&s, old).await.unwrap_err().code(), -32022);
    let st = req(1, "tools/list", json!({"requestState": "x"}), json!({}));
    assert_eq!(call(&s, st).await.unwrap_err().code(), -32602);
}

#[tokio::test]
async fn listen_acknowledges_filters_and_closes_gracefully() {
    let s = server();
    let r = req(
        77,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["a://b"]}}),
        json!({}),
    );
    let mut stream = Box::pin(s.listen(r, RequestEnv::default()).unwrap());
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], 77);
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true, "resourceSubscriptions": ["a://b"]}));
    s.notify(ChangeEvent::PromptsListChanged); // not subscribed
    s.notify_resource_updated("other://x"); // not subscribed
    s.notify_resource_updated("a://b");
    s.notify(ChangeEvent::ToolsListChanged);
    let n1 = stream.next().await.unwrap();
    assert_eq!(n1["method"], "notifications/resources/updated");
    assert_eq!(n1["params"]["uri"], "a://b");
    assert_eq!(n1["params"]["_meta"][SUBSCRIPTION_ID], 77);
    let n2 = stream.next().await.unwrap();
    assert_eq!(n2["method"], "notifications/tools/list_changed");
    s.shutdown();
    let last = stream.next().await.unwrap();
    assert_eq!(last["id"], 77);
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(last["result"]["_meta"][SUBSCRIPTION_ID], 77);
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn run_time_tool_changes_are_announced() {
    let s = server();
    let mut events = s.events();
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    s.add_tool(raw(
        json!({"name": "late", "description": "added later", "inputSchema": {"type": "object"}}),
        move |_ctx: Context, _a| {
            c.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, HandlerError>(text("late")) }
        },
    ))
    .unwrap();
    assert_eq!(events.recv().await.unwrap(), ChangeEvent::ToolsListChanged);
    call(&s, req(1, "tools/call", json!({"name": "late"}), json!({}))).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(s.remove_tool("late"));
    assert_eq!(events.recv().await.unwrap(), ChangeEvent::ToolsListChanged);
    assert_eq!(call(&s, req(2, "tools/call", json!({"name": "late"}), json!({}))).await.unwrap_err().code(), -32602);
}

#[tokio::test]
async fn invalid_schemas_are_reported_on_first_use_when_compiled_lazily() {
    let s = Server::builder("t", "1")
        .tool_raw(json!({"name": "bad", "inputSchema": {"type": 12}}), |_c: Context, _a| async move {
            Ok::<_, HandlerError>(json!({"content": []}))
        })
        .build()
        .expect("lazy compilation defers the schema check");
    let e = call(&s, req(1, "tools/call", json!({"name": "bad"}), json!({}))).await.unwrap_err();
    assert_eq!(e.code(), -32603);
    assert!(e.message().contains("invalid inputSchema"), "{e}");
}

#[test]
fn invalid_definitions_are_refused_at_build() {
    let noop = |_c: Context, _a: Map<String, Value>| async move { Ok::<_, HandlerError>(json!({"content": []})) };
    let build = |def: Value| {
        Server::builder("t", "1").compile_schemas_at_build(true).tool_raw(def, noop).build().map(|_| ()).unwrap_err()
    };
    assert!(matches!(
        build(
            json!({"name": "h", "inputSchema": {"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}})
        ),
        BuildError::InvalidHeaderAnnotation { .. }
    ));
    assert!(matches!(
        build(json!({"name": "d", "inputSchema": {"$schema": "https://example.com/my-dialect", "type": "object"}})),
        BuildError::UnsupportedDialect { .. }
    ));
    assert!(matches!(build(json!({"name": "s", "inputSchema": {"type": 12}})), BuildError::InvalidSchema { .. }));
    // A tool without a handler does not compile (`tests/ui/tool_without_handler.rs` in `mcp`).
    let dup = Server::builder("t", "1")
        .tool_raw(json!({"name": "a", "inputSchema": {"type": "object"}}), noop)
        .tool_raw(json!({"name": "a", "inputSchema": {"type": "object"}}), noop)
        .build()
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(dup, BuildError::Duplicate { kind: ItemKind::Tool, .. }));
    let bad_template = Server::builder("t", "1")
        .resource(Resource::template("x://{a", "t").handler(|| async { "never read" }))
        .build()
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(bad_template, BuildError::InvalidTemplate(_)));
    // Draft-07 is a supported dialect.
    assert!(Server::builder("t", "1")
        .tool_raw(json!({"name": "d7", "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}}), noop)
        .build()
        .is_ok());
}

#[tokio::test]
async fn encode_response_matches_handle() {
    let s = server();
    for (i, (method, params)) in [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("tools/call", json!({"name": "t4"})),
        ("tools/call", json!({"name": "ask"})),
        ("tools/call", json!({"name": "nope"})),
    ]
    .into_iter()
    .enumerate()
    {
        let caps = json!({"elicitation": {}});
        let id = json!(i);
        let handled = match s.handle(req(i as i64, method, params.clone(), caps.clone()), RequestEnv::default()).await {
            Ok(v) => mcp_protocol::jsonrpc::result_response(&id, v),
            Err(e) => e.to_response(Some(&id)),
        };
        let processed = s.handle_reply(req(i as i64, method, params, caps), RequestEnv::default()).await;
        let encoded: Value = serde_json::from_slice(&s.encode_response(&id, &processed)).unwrap();
        // requestState differs between two calls (fresh nonce); compare everything else.
        let strip = |mut v: Value| {
            if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                r.remove("requestState");
            }
            v
        };
        assert_eq!(strip(encoded), strip(handled), "{method}");
    }
}

#[tokio::test]
async fn capabilities_follow_what_is_registered() {
    let only_prompts =
        Server::builder("p", "1").prompt(mcp_server::Prompt::new("hi").handler(|| async { "hello" })).build().unwrap();
    let caps = only_prompts.capabilities();
    assert!(caps.prompts.is_some() && caps.logging.is_some());
    assert!(caps.tools.is_none() && caps.resources.is_none() && caps.completions.is_none());
    let d = call(&only_prompts, req(1, "server/discover", json!({}), json!({}))).await.unwrap();
    assert_eq!(d["capabilities"], serde_json::to_value(&caps).unwrap());
    let full = server();
    let caps = full.capabilities();
    assert!(caps.tools.is_some() && caps.completions.is_some());
}

/// `State<T>` is checked when the server is built, whatever the order of `.state(..)` and the
/// registrations (it used to be checked at `.tool(..)`, so state given after failed).
#[test]
fn state_is_checked_at_build_in_either_order() {
    use mcp_server::{Prompt, State};
    #[derive(Clone)]
    struct Counter(u32);
    let tool = || Tool::new("t").handler(|State(c): State<Counter>| async move { c.0.to_string() });
    let prompt = || Prompt::new("p").handler(|State(c): State<Counter>| async move { c.0.to_string() });
    let resource = || Resource::new("x://r", "r").handler(|State(c): State<Counter>| async move { c.0.to_string() });
    assert!(Server::builder("s", "1").tool(tool()).state(Counter(1)).build().is_ok());
    assert!(Server::builder("s", "1").state(Counter(1)).tool(tool()).build().is_ok());
    assert!(Server::builder("s", "1").prompt(prompt()).state(Counter(1)).build().is_ok());
    assert!(Server::builder("s", "1").state(Counter(1)).prompt(prompt()).build().is_ok());
    assert!(Server::builder("s", "1").resource(resource()).state(Counter(1)).build().is_ok());
    assert!(Server::builder("s", "1").state(Counter(1)).resource(resource()).build().is_ok());
    for missing in [
        Server::builder("s", "1").tool(tool()).build(),
        Server::builder("s", "1").prompt(prompt()).build(),
        Server::builder("s", "1").resource(resource()).build(),
    ] {
        let e = missing.map(|_| ()).unwrap_err();
        assert!(matches!(&e, BuildError::MissingState(m) if m.contains("Counter")), "{e}");
    }
}
