//! `mcp proxy --http` in front of a legacy-only (2025-11-25) stdio server: a modern client gets
//! full 2026-07-28 semantics (discover, MRTR for the upstream's elicitation, listen for its list
//! changes), and a legacy client is served too. Every wait is bounded.

use crate::support::http_server;
use crate::support::proxy as proxy_support;

use crate::common::*;
use mcp_client::transport::http::HttpTransport;
use mcp_client::types::{
    ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue, LoggingLevel, Root, SubscriptionFilter,
};
use mcp_client::{Client, ClientBuilder, ClientError, ElicitationModes, ListenEvent, Typed};
use proxy_support::{legacy_upstream, slow_post, Proxy};
use serde_json::{json, Value};
use std::future::IntoFuture;
use std::time::Duration;

async fn client(url: &str, b: ClientBuilder) -> Client {
    let t = HttpTransport::builder(url).build().unwrap();
    within("connect to the proxy", b.connect(t)).await.unwrap()
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("proxy-test", "1.0.0").timeout(Duration::from_secs(20))
}

/// A client that answers every elicitation with colour `blue`.
fn answering() -> ClientBuilder {
    builder().on_elicitation(ElicitationModes::FORM, |p: ElicitRequestParams| async move {
        assert!(matches!(&p, ElicitRequestParams::Form(f) if f.message == "Favourite colour?"), "{p:?}");
        Ok(accept("color", "blue"))
    })
}

/// An accepted form with one string field.
fn accept(field: &str, value: &str) -> ElicitResult {
    let content = [(field.to_owned(), ElicitValue::String(value.into()))].into();
    ElicitResult { content: Some(content), ..ElicitResult::new(ElicitAction::Accept) }
}

async fn text_of(c: &Client, tool: &str, args: Value) -> String {
    within(tool, c.call_tool(tool, args).into_future()).await.unwrap().text()
}

fn names<T>(items: &[Typed<T>]) -> Vec<String> {
    let mut n: Vec<String> = items.iter().map(|t| t.raw()["name"].as_str().unwrap().to_owned()).collect();
    n.sort();
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_client_through_a_legacy_upstream() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let c = client(&proxy.url, builder()).await;
    assert!(c.is_modern(), "the proxy's front speaks 2026-07-28");
    let discover = within("discover", c.discover()).await.unwrap();
    assert_eq!(discover.capabilities.tools.as_ref().and_then(|t| t.list_changed), Some(true), "{discover}");
    assert_eq!(discover.instructions.as_deref(), Some("A legacy test server."));
    let tools = within("tools/list", c.list_tools()).await.unwrap();
    assert!(names(&tools).contains(&"echo".to_owned()), "{tools:?}");
    assert_eq!(text_of(&c, "echo", json!({ "text": "hi" })).await, "hi");
    let prompt = within("prompts/get", c.get_prompt("greet", json!({ "who": "Ada" }).as_object().cloned().unwrap()))
        .await
        .unwrap();
    assert_eq!(prompt.raw()["messages"][0]["content"]["text"], "Hello, Ada!");
    let read = within("resources/read", c.read_resource("mem://hello")).await.unwrap();
    assert_eq!(read.raw()["contents"][0]["text"], "hello from legacy");
    // (Our client refuses unknown tools itself: ask on the wire.)
    let missing = raw_call(proxy.addr(), "nope").await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_elicitation_becomes_an_mrtr_round() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    // Our modern client answers only `input_required` rounds (a modern server cannot send it
    // requests), so the answer getting through proves the bridge.
    let c = client(&proxy.url, answering()).await;
    assert_eq!(text_of(&c, "ask", json!({})).await, "accept: {\"color\": \"blue\"}");
    // Twice in a row, on the same pooled upstream session.
    assert_eq!(text_of(&c, "ask", json!({})).await, "accept: {\"color\": \"blue\"}");
    // A client without the elicitation capability: the upstream is told it cannot ask.
    let plain = client(&proxy.url, builder()).await;
    assert!(text_of(&plain, "ask", json!({})).await.starts_with("refused"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_roots_requests_become_rounds_too() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let c = client(&proxy.url, builder().roots(vec![Root::new("file:///work")])).await;
    assert_eq!(text_of(&c, "roots", json!({})).await, "file:///work");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_sampling_requests_become_rounds_too() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let b = builder().on_sampling_raw(mcp_client::Sampling::Text, |p: Value| async move {
        assert_eq!(p["messages"][0]["content"]["text"], "Say hi");
        Ok(json!({ "role": "assistant", "content": { "type": "text", "text": "hi" }, "model": "test" }))
    });
    let c = client(&proxy.url, b).await;
    assert_eq!(text_of(&c, "sample", json!({})).await, "model: hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_upstream_keeps_its_rounds() {
    // `mcp serve everything --stdio` answers `input_required`: the proxy's client library
    // drives the upstream's rounds with the downstream's answers.
    let upstream = ["--", env!("CARGO_BIN_EXE_mcp"), "serve", "everything", "--stdio"].map(str::to_owned);
    let proxy = Proxy::http(&[], &upstream);
    assert!(proxy.stderr().contains("(modern, protocol 2026-07-28)"), "{}", proxy.stderr());
    let b = builder().on_elicitation(ElicitationModes::FORM, |_| async move { Ok(accept("name", "Ada")) });
    let c = client(&proxy.url, b).await;
    assert_eq!(text_of(&c, "greet_user", json!({})).await, "Hello, Ada!");
    assert_eq!(text_of(&c, "echo", json!({ "text": "modern" })).await, "modern");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_log_messages_reach_the_client_at_its_level() {
    // Over HTTP a modern upstream's log messages travel on the call's own response stream (on
    // stdio nothing ties a `notifications/message` to its request).
    let upstream = http_server::EverythingHttp::start();
    let proxy = Proxy::http(&[], std::slice::from_ref(&upstream.url));
    let c = client(&proxy.url, builder()).await;
    for (level, want) in [(LoggingLevel::Info, 1), (LoggingLevel::Error, 0)] {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = seen.clone();
        let call =
            c.call_tool("test_logging_tool", json!({})).on_log(level, move |p| kept.lock().unwrap().push(p.clone()));
        within("test_logging_tool", call.into_future()).await.unwrap();
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), want, "at {level:?}: {seen:?}");
        if want == 1 {
            assert_eq!(
                seen[0],
                json!({ "level": "info", "logger": "conformance", "data": "test_logging_tool evaluated" })
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_legacy_reaches_the_upstream() {
    let upstream = ["--", env!("CARGO_BIN_EXE_mcp"), "serve", "everything", "--stdio"].map(str::to_owned);
    let proxy = Proxy::http(&["--force-legacy", "2025-06-18"], &upstream);
    assert!(proxy.stderr().contains("(legacy, protocol 2025-06-18)"), "{}", proxy.stderr());
    let c = client(&proxy.url, builder()).await;
    assert!(c.is_modern(), "the front stays dual era");
    assert_eq!(text_of(&c, "echo", json!({ "text": "old upstream" })).await, "old upstream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_at_most() {
    // With one session allowed, each kind of request closes the other kind's idle session
    // (its process exits) to open its own.
    let proxy = Proxy::http(&["--max-sessions", "1"], &legacy_upstream());
    let plain = client(&proxy.url, builder()).await;
    let asking = client(&proxy.url, answering()).await;
    let first = text_of(&plain, "pid", json!({})).await;
    assert_eq!(text_of(&asking, "ask", json!({})).await, "accept: {\"color\": \"blue\"}");
    let asking_pid = text_of(&asking, "pid", json!({})).await;
    let last = text_of(&plain, "pid", json!({})).await;
    assert!(first != asking_pid && asking_pid != last && first != last, "{first} {asking_pid} {last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_input_round_on_the_wire_and_a_stale_retry() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let addr = proxy.addr();
    let caps = json!({ "elicitation": { "form": {} } });
    let first = caps_call(addr, 1, &caps, json!({})).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let (key, request) = first["inputRequests"].as_object().unwrap().iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let state = first["requestState"].as_str().unwrap().to_owned();
    let retry = json!({
        "requestState": state,
        "inputResponses": { key.clone(): { "action": "accept", "content": { "color": "red" } } },
    });
    let done = caps_call(addr, 2, &caps, retry.clone()).await;
    assert_eq!(first_text(&done), "accept: {\"color\": \"red\"}", "{done}");
    // The same state again: that upstream call is over.
    let stale = caps_call_raw(addr, 3, &caps, retry).await;
    assert_eq!(stale["error"]["code"], -32602, "{stale}");
    assert!(stale["error"]["message"].as_str().unwrap().contains("no longer waiting"), "{stale}");
    // Made-up state never opens.
    let forged = json!({ "requestState": "forged", "inputResponses": {} });
    let forged = caps_call_raw(addr, 4, &caps, forged).await;
    assert_eq!(forged["error"]["code"], -32602, "{forged}");
}

/// `tools/call ask` with client capabilities `caps` and `extra` params; the JSON-RPC message.
async fn caps_call_raw(addr: std::net::SocketAddr, id: i64, caps: &Value, extra: Value) -> Value {
    tool_call_raw(addr, id, "ask", caps, extra).await.message()
}

/// `tools/call NAME` with client capabilities `caps` and `extra` params; the response.
async fn tool_call_raw(addr: std::net::SocketAddr, id: i64, name: &str, caps: &Value, extra: Value) -> Resp {
    let params = merged(json!({ "name": name, "arguments": {}, "_meta": { K_CAPS: caps } }), extra);
    let body = req(id, "tools/call", params);
    within("POST", post(addr, &std_headers(&body), body.to_string())).await
}

/// `tools/call NAME` without arguments, on the wire: the JSON-RPC message.
async fn raw_call(addr: std::net::SocketAddr, name: &str) -> Value {
    let body = tcall(1, name, json!({}));
    within(name, post(addr, &std_headers(&body), body.to_string())).await.message()
}

/// [`caps_call_raw`]'s result.
async fn caps_call(addr: std::net::SocketAddr, id: i64, caps: &Value, extra: Value) -> Value {
    let m = caps_call_raw(addr, id, caps, extra).await;
    result_of(&m, &json!(id))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_round_expires() {
    let proxy = Proxy::http(&["--input-timeout", "1"], &legacy_upstream());
    let (addr, caps) = (proxy.addr(), json!({ "elicitation": {} }));
    let first = caps_call(addr, 1, &caps, json!({})).await;
    let state = first["requestState"].clone();
    let log = || proxy.stderr();
    // The sweeper runs every second: bounded by the wait of `eventually`.
    eventually("the parked call to expire", || log().contains("expired")).await;
    let late = json!({ "requestState": state, "inputResponses": { "upstream-1": { "action": "cancel" } } });
    let late = caps_call_raw(addr, 2, &caps, late).await;
    assert_eq!(late["error"]["code"], -32602, "{late}");
    assert!(late["error"]["message"].as_str().unwrap().contains("expired after 1 s"), "{late}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_progress_reaches_the_client() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let c = client(&proxy.url, builder()).await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    let call = c.call_tool("steps", json!({})).on_progress(move |p| kept.lock().unwrap().push(p["progress"].as_f64()));
    assert_eq!(within("steps", call.into_future()).await.unwrap().text(), "done");
    // A number is a number: 1.0 may go out as 1 (the typed params write whole values so).
    assert_eq!(*seen.lock().unwrap(), [Some(1.0), Some(2.0)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_receives_the_upstream_list_change() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let c = client(&proxy.url, builder()).await;
    let mut sub =
        within("listen", c.listen(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }))
            .await
            .unwrap();
    assert_eq!(text_of(&c, "grow", json!({})).await, "grown");
    let event = within("the list change", sub.next()).await.expect("an event").unwrap();
    let ListenEvent::Notification { method, .. } = event else { panic!("{event:?}") };
    assert_eq!(method, "notifications/tools/list_changed");
    let tools = within("tools/list", c.list_tools()).await.unwrap();
    assert!(names(&tools).contains(&"extra".to_owned()), "{tools:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_receives_upstream_resource_updates() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let c = client(&proxy.url, builder()).await;
    let filter = SubscriptionFilter { resource_subscriptions: Some(vec!["mem://hello".into()]), ..Default::default() };
    let mut sub = within("listen", c.listen(filter)).await.unwrap();
    // The proxy subscribed upstream to the listed resources when it started.
    assert_eq!(text_of(&c, "touch", json!({})).await, "touched");
    let event = within("the update", sub.next()).await.expect("an event").unwrap();
    let ListenEvent::Notification { method, params } = event else { panic!("{event:?}") };
    assert_eq!((method.as_str(), &params["uri"]), ("notifications/resources/updated", &json!("mem://hello")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_upstream_is_restarted() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let c = client(&proxy.url, builder()).await;
    let before = text_of(&c, "pid", json!({})).await;
    let crash = within("crash", c.call_tool("crash", json!({})).into_future()).await;
    assert!(matches!(crash, Err(ClientError::Server { code: -32603, .. })), "{crash:?}");
    let after = text_of(&c, "pid", json!({})).await;
    assert_ne!(before, after, "a new upstream process serves the next call");
    assert_eq!(text_of(&c, "echo", json!({ "text": "still here" })).await, "still here");
    // The log is read by another thread: it may lag the answers a little.
    let logged = || {
        let log = proxy.stderr();
        log.contains("process lost") && log.contains("restarted")
    };
    eventually("the loss and the restart in the log", logged).await;
}

/// `mcp proxy --http` on SIGTERM: the 2-second call in flight through it (to an upstream that
/// keeps running) gets its full answer, and the proxy exits 0.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_finishes_its_calls_on_sigterm_and_exits_zero() {
    let upstream: Vec<String> =
        ["--", env!("CARGO_BIN_EXE_mcp"), "serve", "everything", "--stdio"].map(String::from).into();
    let mut proxy = Proxy::http(&[], &upstream);
    let c = client(&proxy.url, builder()).await;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = std::sync::Mutex::new(Some(tx));
    let call = c.call_tool("count_with_progress", json!({"steps": 2, "delay_ms": 1000})).on_progress(move |_| {
        if let Some(tx) = tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
    });
    // SIGTERM once the call is known to be in flight (its first progress arrived).
    let stop = async {
        within("the first progress", rx).await.expect("progress");
        proxy.terminate();
    };
    let (answer, ()) = tokio::join!(within("the call", call.into_future()), stop);
    assert_eq!(answer.expect("the call's answer").text(), "counted to 2");
    let status = within("the proxy to exit", proxy.exit_status()).await;
    assert!(status.success(), "exit status {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_dies_between_calls_is_replaced_at_once() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let c = client(&proxy.url, builder()).await;
    let before = text_of(&c, "pid", json!({})).await;
    // Killed from outside, with no call in flight: only its notification stream can tell.
    let killed = std::process::Command::new("kill").args(["-9", &before]).status().unwrap();
    assert!(killed.success());
    eventually("the proxy notices", || proxy.stderr().contains("notification stream ended")).await;
    let after = text_of(&c, "pid", json!({})).await;
    assert_ne!(before, after, "the next call is served by the new process, not failed on the dead one");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_filters_and_prefix() {
    // Globs name the tools as clients see them, prefix included.
    let proxy = Proxy::http(&["--tools", "up_e*", "--tools", "up_pid", "--prefix", "up_"], &legacy_upstream());
    let c = client(&proxy.url, builder()).await;
    let tools = within("tools/list", c.list_tools()).await.unwrap();
    assert_eq!(names(&tools), ["up_echo", "up_pid"]);
    assert_eq!(text_of(&c, "up_echo", json!({ "text": "prefixed" })).await, "prefixed");
    for hidden in ["up_crash", "echo", "crash"] {
        let e = raw_call(proxy.addr(), hidden).await;
        assert_eq!(e["error"]["code"], -32602, "{hidden}: {e}");
        assert!(e["error"]["message"].as_str().unwrap().contains("Unknown tool"), "{e}");
    }
    let prompts = within("prompts/list", c.list_prompts()).await.unwrap();
    assert_eq!(names(&prompts), ["up_greet"]);
    let args = json!({ "who": "Bo" }).as_object().cloned().unwrap();
    let prompt = within("prompts/get", c.get_prompt("up_greet", args)).await.unwrap();
    assert_eq!(prompt.raw()["messages"][0]["content"]["text"], "Hello, Bo!");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbound_token_never_reaches_the_upstream() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let t = HttpTransport::builder(&proxy.url).header("Authorization", "Bearer secret-inbound-token").build().unwrap();
    let c = within("connect", builder().connect(t)).await.unwrap();
    let raw = within("raw", c.call_tool("raw", json!({})).into_future()).await.unwrap();
    let seen = raw.as_value()["structuredContent"].clone();
    let line = seen["line"].as_str().unwrap();
    assert!(!line.contains("secret-inbound-token"), "{line}");
    assert!(!line.contains("io.modelcontextprotocol/"), "no downstream _meta is forwarded: {line}");
    assert_eq!(seen["envLeak"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_client_is_served_too() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let c = client(&proxy.url, answering().force_legacy("2025-11-25")).await;
    assert!(!c.is_modern());
    assert_eq!(text_of(&c, "echo", json!({ "text": "old" })).await, "old");
    // The upstream's question reaches the legacy client as a real elicitation/create request
    // (the server's MRTR-to-legacy bridge), after the proxy turned it into an MRTR round.
    assert_eq!(text_of(&c, "ask", json!({})).await, "accept: {\"color\": \"blue\"}");
}

/// The trace context a caller sends; its span id must never reach the upstream (the proxy's
/// own client span is the upstream's parent, when traced at all).
const CALLER_SPAN: &str = "b7ad6b7169203331";

/// `_meta` keys of the caller's that are none of the upstream's business.
fn callers_meta() -> Value {
    json!({
        "com.example/identity": "mallory",
        "traceparent": format!("00-0af7651916cd43dd8448eb211c80319c-{CALLER_SPAN}-01"),
        "tracestate": "vendor=caller-state",
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_downstream_meta_reaches_the_upstream() {
    // The fixture writes every line it receives to this file.
    let log = std::env::temp_dir().join(format!("mcp-proxy-meta-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let env = format!("PROXY_FIXTURE_LOG={}", log.display());
    let proxy = Proxy::http(&["--env", &env], &legacy_upstream());
    let (plain, asking) = (json!({}), json!({ "elicitation": {} }));
    let complete =
        json!({ "ref": { "type": "ref/prompt", "name": "greet" }, "argument": { "name": "who", "value": "A" } });
    let requests = [
        ("prompts/get", json!({ "name": "greet", "arguments": { "who": "Ada" } }), &plain),
        ("prompts/get", json!({ "name": "greet", "arguments": { "who": "Ada" } }), &asking),
        ("resources/read", json!({ "uri": "mem://hello" }), &plain),
        ("resources/read", json!({ "uri": "mem://hello" }), &asking),
        ("completion/complete", complete, &plain),
        ("tools/call", json!({ "name": "echo", "arguments": { "text": "x" } }), &plain),
        ("tools/call", json!({ "name": "echo", "arguments": { "text": "x" } }), &asking),
    ];
    for (id, (method, params, caps)) in requests.into_iter().enumerate() {
        let mut body = req(id, method, params);
        body["params"]["_meta"][K_CAPS] = caps.clone();
        for (k, v) in callers_meta().as_object().unwrap() {
            body["params"]["_meta"][k] = v.clone();
        }
        let m = within(method, post(proxy.addr(), &std_headers(&body), body.to_string())).await.message();
        result_of(&m, &json!(id));
    }
    let seen = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    for method in ["prompts/get", "resources/read", "completion/complete", "tools/call"] {
        assert!(seen.contains(&format!("\"{method}\"")), "{method} reached the upstream: {seen}");
    }
    for leak in ["com.example/identity", "mallory", CALLER_SPAN, "caller-state"] {
        assert!(!seen.contains(leak), "{leak} reached the upstream: {seen}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_failure_names_a_ref_not_the_url() {
    let upstream = http_server::EverythingHttp::start();
    let url = format!("{}?api_key=SECRET-KEY-42", upstream.url);
    let proxy = Proxy::http(&[], &[url]);
    let c = client(&proxy.url, builder()).await;
    assert_eq!(text_of(&c, "echo", json!({ "text": "up" })).await, "up");
    drop(upstream);
    let e = raw_call(proxy.addr(), "echo").await;
    assert_eq!(e["error"]["code"], -32603, "{e}");
    let message = e["error"]["message"].as_str().unwrap().to_owned();
    let id = message.split_once("upstream unavailable (ref ").and_then(|(_, r)| r.strip_suffix(')'));
    let id = id.unwrap_or_else(|| panic!("{e}")).to_owned();
    assert!(!e.to_string().contains("SECRET") && !e.to_string().contains("127.0.0.1"), "{e}");
    // The details are in the log, under the same ref, with the URL redacted.
    eventually("the failure in the log", || proxy.stderr().contains(&format!("(ref {id}): "))).await;
    let log = proxy.stderr();
    assert!(!log.contains("SECRET"), "{log}");
    upstream_url_without_query(&log);
}

/// The upstream URL the proxy logged at start (it must have no query).
fn upstream_url_without_query(log: &str) -> String {
    // `mcp proxy` writes its notices as the CLI's other messages: `mcp: note: upstream URL is ...`.
    let prefix = "mcp: note: upstream ";
    let line = log.lines().find(|l| l.starts_with("mcp: note: upstream http")).unwrap_or_else(|| panic!("{log}"));
    let url = line[prefix.len()..].split(' ').next().unwrap().to_owned();
    assert!(url.ends_with("/mcp"), "logged redacted: {line}");
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_upstreams_waiting_calls_hold_no_session() {
    // With 2 sessions, 3 calls waiting for input would need 3 legacy sessions: a modern
    // upstream has finished each of its requests, and they share one session.
    let upstream = ["--", env!("CARGO_BIN_EXE_mcp"), "serve", "everything", "--stdio"].map(str::to_owned);
    let proxy = Proxy::http(&["--max-sessions", "2"], &upstream);
    let caps = json!({ "elicitation": { "form": {} } });
    let mut waiting = Vec::new();
    for id in 1..=3 {
        let first = tool_call_raw(proxy.addr(), id, "greet_user", &caps, json!({})).await.message();
        let first = result_of(&first, &json!(id));
        assert_eq!(first["resultType"], "input_required", "{first}");
        waiting.push(first);
    }
    let c = client(&proxy.url, builder()).await;
    assert_eq!(text_of(&c, "echo", json!({ "text": "not starved" })).await, "not starved");
    for (id, first) in (10..).zip(waiting) {
        let key = first["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
        let retry = json!({
            "requestState": first["requestState"],
            "inputResponses": { key: { "action": "accept", "content": { "name": "Ada" } } },
        });
        let done = tool_call_raw(proxy.addr(), id, "greet_user", &caps, retry).await.message();
        assert_eq!(first_text(&result_of(&done, &json!(id))), "Hello, Ada!", "{done}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_waiting_for_input_never_hold_every_session() {
    let proxy = Proxy::http(&["--max-sessions", "3"], &legacy_upstream());
    let caps = json!({ "elicitation": {} });
    for id in 1..=2 {
        assert_eq!(caps_call(proxy.addr(), id, &caps, json!({})).await["resultType"], "input_required");
    }
    // The last session is kept for calls that cannot be asked: a third waiting call would
    // need it, and gets "unavailable" once the pool's (10 s) wait for a session is over.
    let body = tool_call(3, "ask", &caps);
    let third = slow_post(proxy.addr(), &std_headers(&body), &body.to_string()).await;
    assert!(third.starts_with("HTTP/1.1 503"), "{third}");
    assert!(third.contains("-32603") && third.contains("no upstream session became free"), "{third}");
    let c = client(&proxy.url, builder()).await;
    assert_eq!(text_of(&c, "echo", json!({ "text": "not starved" })).await, "not starved");
}

/// A `tools/call NAME` request declaring client capabilities `caps`.
fn tool_call(id: i64, name: &str, caps: &Value) -> Value {
    req(id, "tools/call", json!({ "name": name, "arguments": {}, "_meta": { K_CAPS: caps } }))
}

/// Sequential echo calls per second through `client`, over `n` calls.
async fn echo_rate(c: &Client, n: u32) -> f64 {
    let start = std::time::Instant::now();
    for i in 0..n {
        assert_eq!(text_of(c, "echo", json!({ "text": i.to_string() })).await, i.to_string());
    }
    f64::from(n) / start.elapsed().as_secs_f64()
}

/// The proxy's overhead: echo through `mcp proxy --http` in front of `mcp serve everything
/// --stdio`, against the same server on `--http` directly. A measurement, not a check (run
/// with `--ignored --nocapture`; debug builds make both sides slower).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn overhead() {
    let bin = env!("CARGO_BIN_EXE_mcp");
    let direct = tokio::task::spawn_blocking(|| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["serve", "everything", "--http", "127.0.0.1:0"])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
        let url = lines.find_map(|l| l.ok()?.strip_prefix("mcp: serving on ").map(str::to_owned)).unwrap();
        (child, url)
    })
    .await
    .unwrap();
    let proxy = Proxy::http(&[], &["--", bin, "serve", "everything", "--stdio"].map(str::to_owned));
    let (a, b) = (client(&direct.1, builder()).await, client(&proxy.url, builder()).await);
    let (n, warm) = (2000, 100);
    echo_rate(&a, warm).await;
    echo_rate(&b, warm).await;
    let (direct_rate, proxied_rate) = (echo_rate(&a, n).await, echo_rate(&b, n).await);
    println!(
        "echo, sequential: direct {direct_rate:.0}/s, through the proxy {proxied_rate:.0}/s, ratio {:.2}",
        proxied_rate / direct_rate
    );
    let mut child = direct.0;
    let _ = child.kill();
    let _ = child.wait();
}
