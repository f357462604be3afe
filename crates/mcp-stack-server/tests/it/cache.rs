//! The result cache: what is cached (read-only tools named, resources by their `ttlMs`), for
//! whom (private results never cross callers, hidden items stay hidden), for how long (paused
//! clock), and what never is (errors, non-read-only tools, multi round-trip rounds).

use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION};
use mcp_protocol::types::{CacheScope, ReadResourceResult, ResourceContents, TextResourceContents};
use mcp_protocol::Request;
use mcp_server::cache::ResultCache;
use mcp_server::{Args, BuildError, Context, HandlerError, RequestEnv, Resource, Server, Tool};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

fn req(method: &str, params: Value) -> Request {
    let mut params = params.as_object().cloned().unwrap_or_default();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {} }));
    Request { id: json!(1), method: method.into(), params }
}

fn who(principal: Option<&str>, scopes: &[&str]) -> RequestEnv {
    RequestEnv {
        principal: principal.map(str::to_owned),
        scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        ..RequestEnv::default()
    }
}

/// A read-only tool answering "`principal`:`q`:`n`" (n counts its runs), failing when `q` is
/// "fail".
fn counting(name: &str, runs: &Arc<AtomicUsize>) -> Tool {
    let runs = runs.clone();
    Tool::new(name).read_only_hint(true).handler(move |ctx: Context, Args(a): Args<Map<String, Value>>| {
        let n = runs.fetch_add(1, SeqCst) + 1;
        async move {
            let arg = a.get("q").and_then(Value::as_str).unwrap_or("").to_owned();
            if arg == "fail" {
                return Err(HandlerError::tool("failed"));
            }
            Ok(format!("{}:{arg}:{n}", ctx.principal().unwrap_or("-")))
        }
    })
}

async fn text(s: &Server, name: &str, q: &str, env: RequestEnv) -> String {
    let r = s.handle(req("tools/call", json!({"name": name, "arguments": {"q": q}})), env).await.unwrap();
    r["content"][0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test(start_paused = true)]
async fn a_shared_tool_result_is_served_until_it_expires() {
    let runs = Arc::new(AtomicUsize::new(0));
    let s = Server::builder("c", "1")
        .result_cache(ResultCache::new().shared_tool("forecast", Duration::from_secs(30)))
        .tool(counting("forecast", &runs))
        .build()
        .unwrap();
    assert_eq!(text(&s, "forecast", "paris", who(Some("ann"), &[])).await, "ann:paris:1");
    assert_eq!(text(&s, "forecast", "paris", who(Some("bob"), &[])).await, "ann:paris:1", "shared: one for all");
    assert_eq!(text(&s, "forecast", "rome", who(None, &[])).await, "-:rome:2", "other arguments, other entry");
    tokio::time::advance(Duration::from_secs(31)).await;
    assert_eq!(text(&s, "forecast", "paris", who(Some("bob"), &[])).await, "bob:paris:3");
    assert_eq!(runs.load(SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn per_caller_results_never_cross_callers_and_errors_are_not_kept() {
    let runs = Arc::new(AtomicUsize::new(0));
    let s = Server::builder("c", "1")
        .result_cache(ResultCache::new().tool("mine", Duration::from_secs(30)))
        .tool(counting("mine", &runs))
        .build()
        .unwrap();
    assert_eq!(text(&s, "mine", "x", who(Some("ann"), &[])).await, "ann:x:1");
    assert_eq!(text(&s, "mine", "x", who(Some("bob"), &[])).await, "bob:x:2");
    assert_eq!(text(&s, "mine", "x", who(Some("ann"), &[])).await, "ann:x:1");
    // Anonymous callers cannot be told apart: nothing is kept for them.
    assert_eq!(text(&s, "mine", "x", who(None, &[])).await, "-:x:3");
    assert_eq!(text(&s, "mine", "x", who(None, &[])).await, "-:x:4");
    for _ in 0..2 {
        let r = s.handle(req("tools/call", json!({"name": "mine", "arguments": {"q": "fail"}})), who(Some("ann"), &[]));
        assert_eq!(r.await.unwrap()["isError"], true);
    }
    assert_eq!(runs.load(SeqCst), 6, "both failures ran");
}

#[tokio::test(start_paused = true)]
async fn a_hidden_tool_stays_hidden_whatever_is_cached() {
    let runs = Arc::new(AtomicUsize::new(0));
    let s = Server::builder("c", "1")
        .result_cache(ResultCache::new().shared_tool("report", Duration::from_secs(30)))
        .tool(counting("report", &runs).scopes(["mcp:admin"]))
        .build()
        .unwrap();
    assert_eq!(text(&s, "report", "q", who(Some("ann"), &["mcp:admin"])).await, "ann:q:1");
    let e = s.handle(req("tools/call", json!({"name": "report", "arguments": {"q": "q"}})), who(Some("bob"), &[]));
    assert_eq!(e.await.unwrap_err().message(), "Unknown tool: report");
}

#[test]
fn a_tool_not_marked_read_only_is_refused_at_build() {
    let e = Server::builder("c", "1")
        .result_cache(ResultCache::new().tool("write", Duration::from_secs(5)))
        .tool(Tool::new("write").handler(|| async { "done" }))
        .build()
        .unwrap_err();
    assert!(matches!(e, BuildError::InvalidPolicy { .. }));
    assert!(e.to_string().starts_with("result cache of tool \"write\": the tool is not marked read-only"), "{e}");
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_asks_for_input_is_cached_only_once_answered_never_its_rounds() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let s = Server::builder("c", "1")
        .result_cache(ResultCache::new().shared_tool("ask", Duration::from_secs(30)))
        .tool(Tool::new("ask").read_only_hint(true).handler(move |ctx: Context| {
            counter.fetch_add(1, SeqCst);
            async move {
                let mut inputs = ctx.inputs();
                let answer = inputs.elicit("name", "Name?", json!({"type": "object"}))?;
                inputs.finish()?;
                Ok::<_, HandlerError>(answer.map_or("none".to_owned(), |a| a["content"].to_string()))
            }
        }))
        .build()
        .unwrap();
    let caps = json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {"elicitation": {"form": {}}} });
    let first = || {
        let mut r = req("tools/call", json!({"name": "ask", "arguments": {}}));
        r.params.insert("_meta".into(), caps.clone());
        r
    };
    for _ in 0..2 {
        let r = s.handle(first(), RequestEnv::default()).await.unwrap();
        assert_eq!(r["resultType"], "input_required", "an input request is never cached");
    }
    assert_eq!(runs.load(SeqCst), 2);
}

/// A resource whose result is `scope`, for `ttl_ms`, reading "`principal`:`n`".
fn resource(uri: &str, scope: CacheScope, ttl_ms: u64, runs: &Arc<AtomicUsize>) -> Resource {
    let runs = runs.clone();
    let uri_owned = uri.to_owned();
    Resource::new(uri, "r").handler(move |ctx: Context| {
        let n = runs.fetch_add(1, SeqCst) + 1;
        let uri = uri_owned.clone();
        async move {
            let text = format!("{}:{n}", ctx.principal().unwrap_or("-"));
            let contents = vec![ResourceContents::Text(TextResourceContents::new(uri, text))];
            Ok::<_, HandlerError>(ReadResourceResult::new(contents, ttl_ms, scope))
        }
    })
}

async fn read(s: &Server, uri: &str, env: RequestEnv) -> String {
    let r = s.handle(req("resources/read", json!({"uri": uri})), env).await.unwrap();
    r["contents"][0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test(start_paused = true)]
async fn resources_are_kept_for_their_ttl_and_private_ones_only_for_their_caller() {
    let runs = Arc::new(AtomicUsize::new(0));
    let s = Server::builder("c", "1")
        .result_cache(ResultCache::new().resources())
        .resource(resource("doc://public", CacheScope::Public, 10_000, &runs))
        .resource(resource("doc://mine", CacheScope::Private, 10_000, &runs))
        .resource(resource("doc://live", CacheScope::Public, 0, &runs))
        .build()
        .unwrap();
    let (ann, bob) = (|| who(Some("ann"), &[]), || who(Some("bob"), &[]));
    assert_eq!(read(&s, "doc://public", ann()).await, "ann:1");
    assert_eq!(read(&s, "doc://public", bob()).await, "ann:1", "public: shared");
    assert_eq!(read(&s, "doc://mine", ann()).await, "ann:2");
    assert_eq!(read(&s, "doc://mine", bob()).await, "bob:3", "private: never another's");
    assert_eq!(read(&s, "doc://mine", ann()).await, "ann:2");
    assert_eq!(read(&s, "doc://live", ann()).await, "ann:4");
    assert_eq!(read(&s, "doc://live", ann()).await, "ann:5", "ttlMs 0: never kept");
    tokio::time::advance(Duration::from_secs(11)).await;
    assert_eq!(read(&s, "doc://public", bob()).await, "bob:6");
}
