//! Access rules: what a caller may not use does not exist for it (lists, calls, reads, prompts,
//! completions, listen streams), lists that depend on the caller are private, and bad rules
//! fail at build. (Over HTTP with real tokens: mcp-stack-http `tests/it/access.rs`.)

use futures::StreamExt;
use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION};
use mcp_protocol::Request;
use mcp_server::layers::from_fn;
use mcp_server::{Access, BuildError, Prompt, RequestEnv, Resource, Server, Tool};
use serde_json::{json, Value};
use std::time::Duration;

fn req(id: i64, method: &str, params: Value) -> Request {
    let mut params = params.as_object().cloned().unwrap_or_default();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {} }));
    Request { id: json!(id), method: method.into(), params }
}

fn caller(principal: Option<&str>, scopes: &[&str]) -> RequestEnv {
    RequestEnv {
        principal: principal.map(str::to_owned),
        scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        ..RequestEnv::default()
    }
}

fn admin() -> RequestEnv {
    caller(Some("ann"), &["mcp:admin"])
}

fn user() -> RequestEnv {
    caller(Some("bob"), &["mcp:read"])
}

fn server() -> Server {
    Server::builder("access", "1")
        .tool(Tool::new("ping").handler(|| async { "pong" }))
        .tool(Tool::new("report").scopes(["mcp:admin"]).handler(|| async { "numbers" }))
        .prompt(Prompt::new("hello").handler(|| async { "hi" }))
        .prompt(
            Prompt::new("audit")
                .scopes(["mcp:admin"])
                .argument("year", None, false)
                .complete("year", |_| vec!["2026".to_owned()])
                .handler(|| async { "audit" }),
        )
        .resource(Resource::new("doc://public", "public").handler(|| async { "open" }))
        .resource(Resource::new("doc://payroll", "payroll").scopes(["mcp:admin"]).handler(|| async { "salaries" }))
        .resource(
            Resource::template("vault://{key}", "vault")
                .access(Access::custom(|c| c.principal() == Some("ann")))
                .handler(|| async { "locked" }),
        )
        .build()
        .unwrap()
}

fn names(r: &Value, list: &str, key: &str) -> Vec<String> {
    r[list].as_array().unwrap().iter().map(|t| t[key].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn two_callers_see_different_private_lists() {
    let s = server();
    let list = |env| s.handle(req(1, "tools/list", json!({})), env);
    let (a, u, anon) = (list(admin()).await.unwrap(), list(user()).await.unwrap(), list(RequestEnv::default()).await);
    assert_eq!(names(&a, "tools", "name"), ["ping", "report"]);
    assert_eq!(names(&u, "tools", "name"), ["ping"]);
    assert_eq!(names(&anon.unwrap(), "tools", "name"), ["ping"]);
    // The list depends on the authorization: private for every caller, the admin included.
    assert_eq!((a["cacheScope"].as_str(), u["cacheScope"].as_str()), (Some("private"), Some("private")));
    let prompts = s.handle(req(2, "prompts/list", json!({})), user()).await.unwrap();
    assert_eq!(
        (names(&prompts, "prompts", "name"), prompts["cacheScope"].as_str()),
        (vec!["hello".into()], Some("private"))
    );
    let resources = s.handle(req(3, "resources/list", json!({})), user()).await.unwrap();
    assert_eq!(names(&resources, "resources", "uri"), ["doc://public"]);
    let templates = s.handle(req(4, "resources/templates/list", json!({})), admin()).await.unwrap();
    assert_eq!(names(&templates, "resourceTemplates", "uriTemplate"), ["vault://{key}"]);
    let none = s.handle(req(5, "resources/templates/list", json!({})), user()).await.unwrap();
    assert_eq!(none["resourceTemplates"], json!([]));
}

#[tokio::test]
async fn a_list_without_rules_stays_public() {
    let s = Server::builder("open", "1").tool(Tool::new("ping").handler(|| async { "pong" })).build().unwrap();
    let r = s.handle(req(1, "tools/list", json!({})), user()).await.unwrap();
    assert_eq!(r["cacheScope"], "public");
}

#[tokio::test]
async fn private_lists_page_over_what_the_caller_sees() {
    let mut b = Server::builder("paged", "1").page_size(2);
    for i in 0..5 {
        let t = Tool::new(format!("t{i}")).handler(|| async { "x" });
        b = b.tool(if i % 2 == 1 { t.scopes(["mcp:admin"]) } else { t });
    }
    let s = b.build().unwrap();
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let params = if cursor.is_null() { json!({}) } else { json!({ "cursor": cursor }) };
        let page = s.handle(req(1, "tools/list", params), user()).await.unwrap();
        seen.extend(names(&page, "tools", "name"));
        cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(seen, ["t0", "t2", "t4"]);
}

/// The error of `method` with `params` for `env`, as the wire carries it, with `name` replaced.
async fn error_of(s: &Server, method: &str, params: Value, env: RequestEnv, name: &str) -> (i64, String) {
    let e = s.handle(req(1, method, params), env).await.unwrap_err();
    (e.code(), e.message().replace(name, "NAME"))
}

#[tokio::test]
async fn hidden_items_answer_exactly_as_unknown_ones() {
    let s = server();
    let hidden = error_of(&s, "tools/call", json!({"name": "report", "arguments": {}}), user(), "report").await;
    let unknown = error_of(&s, "tools/call", json!({"name": "nope", "arguments": {}}), user(), "nope").await;
    assert_eq!(hidden, unknown);
    let hidden = error_of(&s, "prompts/get", json!({"name": "audit"}), user(), "audit").await;
    let unknown = error_of(&s, "prompts/get", json!({"name": "nope"}), user(), "nope").await;
    assert_eq!(hidden, unknown);
    let hidden = s.handle(req(1, "resources/read", json!({"uri": "doc://payroll"})), user()).await.unwrap_err();
    let unknown = s.handle(req(1, "resources/read", json!({"uri": "doc://nope"})), user()).await.unwrap_err();
    assert_eq!(
        (hidden.code(), hidden.data().map(|d| d["uri"].clone())),
        (unknown.code(), Some(json!("doc://payroll")))
    );
    assert_eq!(hidden.message().replace("payroll", "nope"), unknown.message());
    let templated = s.handle(req(1, "resources/read", json!({"uri": "vault://k"})), user()).await.unwrap_err();
    assert_eq!(templated.code(), unknown.code());
    // The callers the rules allow are served.
    let r = s.handle(req(1, "tools/call", json!({"name": "report", "arguments": {}})), admin()).await.unwrap();
    assert_eq!(r["content"][0]["text"], "numbers");
    let r = s.handle(req(1, "resources/read", json!({"uri": "vault://k"})), caller(Some("ann"), &[])).await.unwrap();
    assert_eq!(r["contents"][0]["text"], "locked");
    // A hidden prompt's completions are not offered.
    let complete = |env| {
        let p = json!({"ref": {"type": "ref/prompt", "name": "audit"}, "argument": {"name": "year", "value": "2"}});
        s.handle(req(1, "completion/complete", p), env)
    };
    assert_eq!(complete(admin()).await.unwrap()["completion"]["values"], json!(["2026"]));
    let hidden = complete(user()).await.unwrap_err();
    let p = json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "year", "value": "2"}});
    let unknown = s.handle(req(1, "completion/complete", p), user()).await.unwrap_err();
    assert_eq!((hidden.code(), hidden.message()), (unknown.code(), unknown.message()));
}

#[tokio::test]
async fn a_layer_can_say_who_the_caller_is() {
    let s = Server::builder("keys", "1")
        .layer(from_fn(|mut op, next| async move {
            let key = op.meta().and_then(|m| m.get("example.com/apiKey")).and_then(Value::as_str).map(str::to_owned);
            if key.as_deref() == Some("k-admin") {
                op.set_caller(Some("ops".into()), vec!["mcp:admin".into()]);
            }
            next.run(op).await
        }))
        .tool(Tool::new("report").scopes(["mcp:admin"]).handler(|| async { "numbers" }))
        .build()
        .unwrap();
    let mut r = req(1, "tools/list", json!({}));
    assert_eq!(s.handle(r.clone(), RequestEnv::default()).await.unwrap()["tools"], json!([]));
    r.params["_meta"]["example.com/apiKey"] = json!("k-admin");
    assert_eq!(names(&s.handle(r, RequestEnv::default()).await.unwrap(), "tools", "name"), ["report"]);
}

/// The next notification's method on `stream`, or `None` when none comes within a second.
async fn next_method(stream: &mut (impl futures::Stream<Item = Value> + Unpin)) -> Option<String> {
    let v = tokio::time::timeout(Duration::from_secs(1), stream.next()).await.ok()??;
    v["method"].as_str().map(str::to_owned)
}

/// Every notification's method until none comes within a second.
async fn drain(stream: &mut (impl futures::Stream<Item = Value> + Unpin)) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(m) = next_method(stream).await {
        out.push(m);
    }
    out
}

#[tokio::test(start_paused = true)]
async fn listen_streams_never_announce_what_the_caller_cannot_see() {
    let s = server();
    let filter = json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true,
        "resourceSubscriptions": ["doc://payroll", "doc://public"]}});
    let open = |env| Box::pin(s.listen(req(9, "subscriptions/listen", filter.clone()), env).unwrap());
    let (mut a, mut u) = (open(admin()), open(user()));
    for stream in [&mut a, &mut u] {
        assert_eq!(next_method(stream).await.as_deref(), Some("notifications/subscriptions/acknowledged"));
    }
    // A tool only admins see appears, then the payroll changes, then a public prompt appears.
    s.add_tool(Tool::new("purge").scopes(["mcp:admin"]).handler(|| async { "gone" })).unwrap();
    s.notify_resource_updated("doc://payroll");
    s.notify_resource_updated("doc://public");
    s.notify(mcp_server::ChangeEvent::PromptsListChanged);
    let (admin_saw, user_saw) = (drain(&mut a).await, drain(&mut u).await);
    let updated = "notifications/resources/updated";
    assert_eq!(admin_saw, ["notifications/tools/list_changed", updated, updated, "notifications/prompts/list_changed"]);
    assert_eq!(user_saw, [updated, "notifications/prompts/list_changed"], "only what bob can see");
    // A public tool is news to everyone.
    s.add_tool(Tool::new("echo").handler(|| async { "echo" })).unwrap();
    assert_eq!(next_method(&mut u).await.as_deref(), Some("notifications/tools/list_changed"));
    assert_eq!(next_method(&mut a).await.as_deref(), Some("notifications/tools/list_changed"));
}

#[test]
fn a_rule_that_cannot_work_fails_the_build_naming_the_item() {
    let e = Server::builder("bad", "1")
        .tool(Tool::new("report").scopes(["admin scope"]).handler(|| async { "x" }))
        .build()
        .unwrap_err();
    assert!(matches!(e, BuildError::InvalidAccess { .. }));
    assert_eq!(e.to_string(), "tool \"report\": invalid access rule: \"admin scope\" is not an OAuth scope token");
    let e = Server::builder("bad", "1")
        .resource(Resource::new("a://b", "b").scopes(Vec::<String>::new()).handler(|| async { "x" }))
        .build()
        .unwrap_err();
    assert_eq!(e.to_string(), "resource \"a://b\": invalid access rule: Access::scopes needs at least one scope");
}
