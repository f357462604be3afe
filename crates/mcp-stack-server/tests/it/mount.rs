//! Composition: the everything server (and small ones) mounted into a hub under a prefix:
//! names, state, list changes reaching the hub's listeners, MRTR rounds and tasks through the
//! mount, the hub's layers and access rules around mounted items, and clashes.

use futures::StreamExt;
use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION};
use mcp_protocol::Request;
use mcp_server::layers::from_fn;
use mcp_server::{BuildError, Context, Prompt, RequestEnv, Resource, Server, State, Tool};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn req(method: &str, params: Value, caps: Value) -> Request {
    let mut params = params.as_object().cloned().unwrap_or_default();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: caps }));
    Request { id: json!(1), method: method.into(), params }
}

async fn ok(s: &Server, method: &str, params: Value, caps: Value) -> Value {
    s.handle(req(method, params, caps), RequestEnv::default()).await.unwrap_or_else(|e| panic!("{method}: {e}"))
}

fn names(r: &Value, list: &str) -> Vec<String> {
    r[list].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[derive(Clone)]
struct Greeting(&'static str);

fn weather() -> Server {
    Server::builder("weather", "1")
        .state(Greeting("hello from weather"))
        .tool(Tool::new("forecast").handler(|State(g): State<Greeting>| async move { g.0 }))
        .tool(Tool::new("grow").handler(|ctx: Context| async move {
            ctx.server().add_tool(Tool::new("radar").handler(|| async { "rain" })).map_err(|e| e.to_string())?;
            Ok::<_, String>("grown")
        }))
        .prompt(Prompt::new("brief").handler(|| async { "the brief" }))
        .resource(Resource::new("weather://today", "today").handler(|| async { "cloudy" }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_mounted_servers_items_are_served_under_the_prefix_with_its_own_state() {
    let hub = Server::builder("hub", "1")
        .tool(Tool::new("ping").handler(|| async { "pong" }))
        .mount("weather_", weather())
        .build()
        .unwrap();
    assert_eq!(
        names(&ok(&hub, "tools/list", json!({}), json!({})).await, "tools"),
        ["ping", "weather_forecast", "weather_grow"]
    );
    assert_eq!(names(&ok(&hub, "prompts/list", json!({}), json!({})).await, "prompts"), ["weather_brief"]);
    let r = ok(&hub, "tools/call", json!({"name": "weather_forecast", "arguments": {}}), json!({})).await;
    assert_eq!(r["content"][0]["text"], "hello from weather", "the mounted server's state");
    let r = ok(&hub, "prompts/get", json!({"name": "weather_brief"}), json!({})).await;
    assert_eq!(r["messages"][0]["content"]["text"], "the brief");
    let r = ok(&hub, "resources/read", json!({"uri": "weather://today"}), json!({})).await;
    assert_eq!(r["contents"][0]["text"], "cloudy", "URIs are left as they are");
    let e =
        hub.handle(req("tools/call", json!({"name": "forecast", "arguments": {}}), json!({})), RequestEnv::default());
    assert_eq!(e.await.unwrap_err().message(), "Unknown tool: forecast", "only under the prefix");
}

#[tokio::test(start_paused = true)]
async fn a_change_of_the_mounted_server_reaches_the_hub_and_its_listeners() {
    let hub = Server::builder("hub", "1").mount("weather_", weather()).build().unwrap();
    let listen = req("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}), json!({}));
    let mut stream = Box::pin(hub.listen(listen, RequestEnv::default()).unwrap());
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    // The mounted tool adds a tool to its own server (what `ctx.server()` names there).
    let r = ok(&hub, "tools/call", json!({"name": "weather_grow", "arguments": {}}), json!({})).await;
    assert_eq!(r["content"][0]["text"], "grown");
    let note = tokio::time::timeout(Duration::from_secs(1), stream.next()).await.unwrap().unwrap();
    assert_eq!(note["method"], "notifications/tools/list_changed");
    assert!(names(&ok(&hub, "tools/list", json!({}), json!({})).await, "tools").contains(&"weather_radar".to_owned()));
    let r = ok(&hub, "tools/call", json!({"name": "weather_radar", "arguments": {}}), json!({})).await;
    assert_eq!(r["content"][0]["text"], "rain");
}

#[tokio::test]
async fn mrtr_rounds_and_tasks_work_through_the_mount() {
    let hub = Server::builder("hub", "1").mount("ev_", mcp_everything::server()).build().unwrap();
    let caps = json!({"elicitation": {"form": {}}});
    let first = ok(
        &hub,
        "tools/call",
        json!({"name": "ev_test_input_required_result_request_state", "arguments": {}}),
        caps.clone(),
    )
    .await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let retry = json!({"name": "ev_test_input_required_result_request_state", "arguments": {},
        "requestState": first["requestState"], "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}});
    let done = ok(&hub, "tools/call", retry, caps).await;
    assert_eq!(done["content"][0]["text"], "state-ok: requestState verified");

    let caps = json!({"extensions": { TASKS: {} }});
    let created = ok(
        &hub,
        "tools/call",
        json!({"name": "ev_slow_compute", "arguments": {"seconds": 0.05, "label": "m"}}),
        caps.clone(),
    )
    .await;
    let id = created["task"]["taskId"].as_str().or(created["taskId"].as_str()).expect("a task").to_owned();
    let mut t = Value::Null;
    for _ in 0..200 {
        t = ok(&hub, "tasks/get", json!({ "taskId": id }), caps.clone()).await;
        if t["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(t["result"]["content"][0]["text"], "computed m in 0.05s", "{t}");
}

#[tokio::test]
async fn the_hubs_layers_and_access_rules_apply_to_mounted_items() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let secret = Server::builder("secret", "1")
        .tool(Tool::new("vault").scopes(["mcp:admin"]).handler(|| async { "gold" }))
        .build()
        .unwrap();
    let hub = Server::builder("hub", "1")
        .layer(from_fn(move |op, next| {
            log.lock().push(op.target().unwrap_or_default().to_owned());
            next.run(op)
        }))
        .mount("s_", secret)
        .build()
        .unwrap();
    let call = || req("tools/call", json!({"name": "s_vault", "arguments": {}}), json!({}));
    let e = hub.handle(call(), RequestEnv::default()).await.unwrap_err();
    assert_eq!(e.message(), "Unknown tool: s_vault", "the mounted tool's rule holds");
    let admin = RequestEnv {
        principal: Some("ann".into()),
        scopes: vec!["mcp:admin".to_owned()].into(),
        ..RequestEnv::default()
    };
    assert_eq!(hub.handle(call(), admin).await.unwrap()["content"][0]["text"], "gold");
    assert_eq!(*seen.lock(), ["s_vault", "s_vault"]);
}

#[test]
fn a_clash_fails_the_build_naming_the_item() {
    let a = || Server::builder("a", "1").tool(Tool::new("x").handler(|| async { "a" })).build().unwrap();
    let e = Server::builder("hub", "1").tool(Tool::new("p_x").handler(|| async { "hub" })).mount("p_", a()).build();
    assert!(matches!(e, Err(BuildError::Duplicate { .. })));
    assert_eq!(e.unwrap_err().to_string(), "duplicate tool \"p_x\"");
    let r = |uri: &'static str| Resource::new(uri, "r").handler(|| async { "r" });
    let b = Server::builder("b", "1").resource(r("doc://same")).build().unwrap();
    let e = Server::builder("hub", "1").resource(r("doc://same")).mount("b_", b).build().unwrap_err();
    assert_eq!(e.to_string(), "duplicate resource \"doc://same\"");
}
