//! Rate limits through `Server::handle`: per caller and tool, per caller, per tool, global; the
//! error and its `retryAfterMs`; refills with time (paused clock); fairness between callers;
//! hidden tools; bad quotas. (Over HTTP, 429 and `Retry-After`: mcp-stack-http
//! `tests/it/access.rs`; across three replicas on Redis: `scripts/conformance-cluster.sh`.)

use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION};
use mcp_protocol::{ProtocolError, Request};
use mcp_server::layers::from_fn;
use mcp_server::rate_limit::{Quota, RateLimits};
use mcp_server::{BuildError, RequestEnv, Server, Tool};
use serde_json::{json, Value};
use std::time::Duration;

fn call(name: &str) -> Request {
    let mut params = json!({"name": name, "arguments": {}}).as_object().cloned().unwrap();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {} }));
    Request { id: json!(1), method: "tools/call".into(), params }
}

fn who(principal: &str) -> RequestEnv {
    RequestEnv { principal: Some(principal.into()), ..RequestEnv::default() }
}

fn tool(name: &str) -> Tool {
    Tool::new(name).handler(|| async { "ok" })
}

/// How many of `n` calls of `name` by `env` were served before the first refusal, and that
/// refusal.
async fn served(s: &Server, name: &str, env: impl Fn() -> RequestEnv, n: usize) -> (usize, Option<ProtocolError>) {
    for i in 0..n {
        if let Err(e) = s.handle(call(name), env()).await {
            return (i, Some(e));
        }
    }
    (n, None)
}

#[tokio::test(start_paused = true)]
async fn a_tool_quota_counts_each_caller_apart_and_refills() {
    let s = Server::builder("rl", "1")
        .tool(tool("limited").rate_limit("5/10s".parse().unwrap()))
        .tool(tool("free"))
        .build()
        .unwrap();
    let (n, e) = served(&s, "limited", || who("ann"), 10).await;
    assert_eq!(n, 5);
    let e = e.unwrap();
    assert_eq!(e.code(), -32029);
    assert_eq!(e.http_status(), 429);
    assert_eq!(e.data(), Some(json!({"retryAfterMs": 2000})), "one call comes back every 2 s");
    assert_eq!(e.message(), "Rate limit exceeded: 5/10s (tool limited per caller); retry in 2.0s");
    // Another caller, and another tool, are not slowed.
    assert_eq!(served(&s, "limited", || who("bob"), 5).await.0, 5);
    assert_eq!(served(&s, "free", || who("ann"), 50).await.0, 50);
    // Time gives the budget back, one call per interval.
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(served(&s, "limited", || who("ann"), 3).await.0, 1);
    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(served(&s, "limited", || who("ann"), 10).await.0, 5);
}

#[tokio::test(start_paused = true)]
async fn a_tool_quota_added_at_run_time_is_enforced() {
    // Built without any limit: the limits are not installed until a tool brings its own quota.
    let s = Server::builder("rl", "1").tool(tool("free")).build().unwrap();
    assert_eq!(served(&s, "free", || who("ann"), 20).await.0, 20);
    s.add_tool(tool("limited").rate_limit("2/10s".parse().unwrap())).unwrap();
    let (n, e) = served(&s, "limited", || who("ann"), 5).await;
    assert_eq!(n, 2);
    assert_eq!(e.unwrap().code(), -32029);
    assert_eq!(served(&s, "free", || who("ann"), 20).await.0, 20, "a tool without a quota stays free");
}

#[tokio::test(start_paused = true)]
async fn a_flooding_caller_does_not_spend_the_shared_budgets() {
    let s = Server::builder("rl", "1")
        .rate_limits(
            RateLimits::new()
                .per_caller(Quota::new(20, Duration::from_secs(60)))
                .per_tool("search", Quota::new(30, Duration::from_secs(60)))
                .global(Quota::new(100, Duration::from_secs(60))),
        )
        .tool(tool("search"))
        .build()
        .unwrap();
    // The flooder gets its 20 and then 1,000 refusals, none of which touch the tool's budget.
    let (n, e) = served(&s, "search", || who("flooder"), 1000).await;
    assert_eq!(
        (n, e.map(|e| e.message())),
        (20, Some("Rate limit exceeded: 20/60s (per caller); retry in 3.0s".into()))
    );
    for _ in 0..1000 {
        assert!(s.handle(call("search"), who("flooder")).await.is_err());
    }
    // The tool's budget (30) has 10 left, for everyone else.
    assert_eq!(served(&s, "search", || who("ann"), 20).await.0, 10);
    let refused = s.handle(call("search"), who("bob")).await.unwrap_err();
    assert!(refused.message().contains("(tool search)"), "{}", refused.message());
}

#[tokio::test(start_paused = true)]
async fn the_global_budget_is_shared_and_anonymous_callers_share_one_bucket_without_an_address() {
    let s = Server::builder("rl", "1")
        .rate_limits(RateLimits::new().global(Quota::new(3, Duration::from_secs(1))))
        .tool(tool("ping"))
        .build()
        .unwrap();
    assert_eq!(served(&s, "ping", || who("ann"), 2).await.0, 2);
    let (n, e) = served(&s, "ping", RequestEnv::default, 5).await;
    assert_eq!((n, e.unwrap().message().contains("(server)")), (1, true));
    let per_caller = Server::builder("rl", "1")
        .rate_limits(RateLimits::new().per_caller(Quota::new(2, Duration::from_secs(1))))
        .tool(tool("ping"))
        .build()
        .unwrap();
    assert_eq!(served(&per_caller, "ping", RequestEnv::default, 5).await.0, 2, "stdio: one client, one bucket");
}

#[tokio::test(start_paused = true)]
async fn a_hidden_tool_is_limited_like_an_unknown_one() {
    let s = Server::builder("rl", "1")
        .tool(tool("admin").scopes(["mcp:admin"]).rate_limit(Quota::new(1, Duration::from_secs(60))))
        .build()
        .unwrap();
    for _ in 0..5 {
        let e = s.handle(call("admin"), who("bob")).await.unwrap_err();
        assert_eq!((e.code(), e.message()), (-32602, "Unknown tool: admin".to_owned()));
    }
}

#[tokio::test(start_paused = true)]
async fn a_layer_that_sets_the_caller_decides_whose_budget_is_spent() {
    let s = Server::builder("rl", "1")
        .layer(from_fn(|mut op, next| async move {
            let key = op.meta().and_then(|m| m.get("example.com/key")).and_then(Value::as_str).map(str::to_owned);
            op.set_caller(key, Vec::new());
            next.run(op).await
        }))
        .tool(tool("ping").rate_limit(Quota::new(1, Duration::from_secs(60))))
        .build()
        .unwrap();
    let keyed = |k: &str| {
        let mut r = call("ping");
        r.params["_meta"]["example.com/key"] = json!(k);
        r
    };
    assert!(s.handle(keyed("a"), RequestEnv::default()).await.is_ok());
    assert!(s.handle(keyed("a"), RequestEnv::default()).await.is_err());
    assert!(s.handle(keyed("b"), RequestEnv::default()).await.is_ok());
}

#[test]
fn quotas_that_cannot_work_fail_the_build_naming_them() {
    let e = Server::builder("rl", "1").tool(tool("t").rate_limit_str("five per second")).build().unwrap_err();
    assert!(matches!(e, BuildError::InvalidPolicy { .. }));
    assert!(e.to_string().starts_with("rate limit of tool \"t\": \"five per second\" is not a quota"), "{e}");
    let e = Server::builder("rl", "1").tool(tool("t").rate_limit(Quota::new(0, Duration::from_secs(1)))).build();
    assert_eq!(e.unwrap_err().to_string(), "rate limit of tool \"t\": a quota needs a count of at least 1");
    let e = Server::builder("rl", "1").rate_limits(RateLimits::new().global(Quota::new(1, Duration::ZERO))).build();
    assert_eq!(e.unwrap_err().to_string(), "rate limit global: a quota needs a non-zero period");
}
