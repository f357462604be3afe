//! `mcp proxy --config FILE`: two stdio upstreams (the everything server, and the legacy
//! python fixture) and one HTTP upstream served as one server: names prefixed `NAME_`, every
//! kind of request routed to its upstream, tasks and MRTR rounds through the gateway, clashes
//! without prefixes, and the per-upstream stats on stderr.

use crate::common::*;
use crate::support::proxy::{legacy_upstream, Proxy};
use mcp::server::{Server, Tool};
use serde_json::{json, Value};

/// An HTTP upstream with one tool of its own, and one whose name the others have too.
async fn web_upstream() -> TestServer {
    let server = Server::builder("web", "1.0.0")
        .tool(Tool::new("weather").handler(|| async { "sunny on the web" }))
        .tool(Tool::new("echo").handler(|| async { "the web's echo" }))
        .build()
        .unwrap();
    TestServer::start(server, mcp::http::EndpointConfig::default()).await
}

/// The config file naming the three upstreams (in a fresh temporary folder).
fn config_file(web: &TestServer) -> std::path::PathBuf {
    let legacy = legacy_upstream();
    let servers = json!({"mcpServers": {
        "ev": {"command": env!("CARGO_BIN_EXE_mcp"), "args": ["serve", "everything", "--stdio"]},
        "legacy": {"command": legacy[1], "args": [legacy[2]]},
        "web": {"url": format!("http://{}/mcp", web.addr)},
    }});
    let dir = std::env::temp_dir().join(format!("mcp-gateway-{}-{}", std::process::id(), web.addr.port()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("servers.json");
    std::fs::write(&path, servers.to_string()).unwrap();
    path
}

pub(crate) async fn rpc(addr: std::net::SocketAddr, body: &Value) -> Value {
    let r = post(addr, &std_headers(body), body.to_string()).await;
    r.message()
}

pub(crate) fn tool_names(v: &Value) -> Vec<String> {
    v["result"]["tools"].as_array().expect("tools").iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_upstreams_are_served_as_one_under_their_names() {
    let web = web_upstream().await;
    let file = config_file(&web);
    let f = file.to_string_lossy().into_owned();
    let gw = tokio::task::spawn_blocking(move || Proxy::http(&["--config", &f, "--stats-interval", "1"], &[]))
        .await
        .unwrap();
    let addr = gw.addr();
    let names = tool_names(&rpc(addr, &req(1, "tools/list", json!({}))).await);
    for expected in ["ev_echo", "ev_slow_compute", "legacy_echo", "legacy_pid", "web_weather", "web_echo"] {
        assert!(names.contains(&expected.to_owned()), "{expected} missing from {names:?}");
    }
    let text = |v: Value| v["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert_eq!(text(rpc(addr, &tcall(2, "ev_echo", json!({"text": "to ev"}))).await), "to ev");
    assert_eq!(text(rpc(addr, &tcall(3, "legacy_echo", json!({"text": "to legacy"}))).await), "to legacy");
    assert_eq!(text(rpc(addr, &tcall(4, "web_weather", json!({}))).await), "sunny on the web");
    let unknown = rpc(addr, &tcall(5, "nobody_echo", json!({}))).await;
    assert_eq!(unknown["error"]["message"], "Unknown tool: nobody_echo", "{unknown}");
    // Prompts and resources reach the upstream that has them.
    let prompt = rpc(addr, &req(6, "prompts/get", json!({"name": "legacy_greet", "arguments": {"who": "Bo"}}))).await;
    assert_eq!(prompt["result"]["messages"][0]["content"]["text"], "Hello, Bo!", "{prompt}");
    let listed = rpc(addr, &req(7, "resources/list", json!({}))).await;
    let uris: Vec<&str> =
        listed["result"]["resources"].as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
    assert!(uris.contains(&"mem://hello"), "{uris:?}");
    let read = rpc(addr, &req(8, "resources/read", json!({"uri": "mem://hello"}))).await;
    assert!(read["result"]["contents"][0]["text"].is_string(), "{read}");
    // A task of the everything server, through the gateway.
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let created = rpc(
        addr,
        &req(9, "tools/call", caps(call("ev_slow_compute", json!({"seconds": 0.1, "label": "g"})), tasks.clone())),
    )
    .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .or(created["result"]["taskId"].as_str())
        .expect("a task")
        .to_owned();
    let mut status = Value::Null;
    for _ in 0..100 {
        status = rpc(addr, &req(10, "tasks/get", caps(json!({"taskId": id}), tasks.clone()))).await;
        if status["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status["result"]["result"]["content"][0]["text"], "computed g in 0.1s", "{status}");
    // The stats line of each upstream that was called.
    within("the stats on stderr", async {
        while !(gw.stderr().contains("upstream web: ") && gw.stderr().contains("upstream legacy: ")) {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(gw.stderr().contains("upstream web: 1 calls, 0 errors"), "{}", gw.stderr());
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_prefixes_a_clash_goes_to_the_first_upstream_and_is_reported() {
    let web = web_upstream().await;
    let file = config_file(&web);
    let f = file.to_string_lossy().into_owned();
    let gw = tokio::task::spawn_blocking(move || Proxy::http(&["--config", &f, "--no-prefix"], &[])).await.unwrap();
    let addr = gw.addr();
    let names = tool_names(&rpc(addr, &req(1, "tools/list", json!({}))).await);
    assert_eq!(names.iter().filter(|n| *n == "echo").count(), 1, "{names:?}");
    assert!(names.contains(&"weather".to_owned()) && names.contains(&"pid".to_owned()));
    let echo = rpc(addr, &tcall(2, "echo", json!({"text": "first"}))).await;
    assert_eq!(echo["result"]["content"][0]["text"], "first", "ev (first by name) serves echo: {echo}");
    assert_eq!(rpc(addr, &tcall(3, "weather", json!({}))).await["result"]["content"][0]["text"], "sunny on the web");
    assert!(gw.stderr().contains("\"echo\" is offered by upstreams ev and legacy"), "{}", gw.stderr());
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

/// MCP Apps through the gateway: two everything servers whose views have the same `ui://` URI
/// are served as `ui://a/...` and `ui://b/...`, each read from its own upstream; app-only tools
/// are listed and callable only for clients that render apps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_of_two_upstreams_stay_apart_and_app_only_tools_follow_the_client() {
    let everything = json!({"command": env!("CARGO_BIN_EXE_mcp"), "args": ["serve", "everything", "--stdio"]});
    let dir = std::env::temp_dir().join(format!("mcp-gateway-apps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("servers.json");
    std::fs::write(&file, json!({"mcpServers": {"a": everything, "b": everything}}).to_string()).unwrap();
    let f = file.to_string_lossy().into_owned();
    let gw = tokio::task::spawn_blocking(move || Proxy::http(&["--config", &f], &[])).await.unwrap();
    let addr = gw.addr();
    let apps = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
    let with_apps = |id: i64, method: &str, params: Value| req(id, method, caps(params, apps.clone()));

    let listed = rpc(addr, &with_apps(1, "tools/list", json!({}))).await;
    let link = |name: &str| {
        let tool = listed["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == name);
        tool.unwrap_or_else(|| panic!("{name} missing: {listed}"))["_meta"]["ui"]["resourceUri"].clone()
    };
    assert_eq!(link("a_dashboard_add"), "ui://a/everything/dashboard");
    assert_eq!(link("b_show_dashboard"), "ui://b/everything/dashboard");
    let resources = rpc(addr, &with_apps(2, "resources/list", json!({}))).await;
    let uris: Vec<&str> =
        resources["result"]["resources"].as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
    assert!(uris.contains(&"ui://a/everything/dashboard") && uris.contains(&"ui://b/everything/dashboard"), "{uris:?}");
    // Read without listing first: routed by the authority, the URI given back as asked.
    let read = rpc(addr, &req(3, "resources/read", json!({"uri": "ui://b/everything/dashboard"}))).await;
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], "ui://b/everything/dashboard", "{read}");
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents["_meta"]["ui"]["prefersBorder"], true);
    assert!(contents["text"].as_str().unwrap().contains("ui/initialize"));
    let stray = rpc(addr, &req(4, "resources/read", json!({"uri": "ui://c/everything/dashboard"}))).await;
    assert!(stray["error"]["message"].as_str().unwrap_or_default().contains("not found"), "{stray}");

    let added = rpc(addr, &with_apps(5, "tools/call", call("a_dashboard_add", json!({"amount": 3})))).await;
    assert_eq!(added["result"]["content"][0]["text"], "the counter is 3", "{added}");
    let plain = tool_names(&rpc(addr, &req(6, "tools/list", json!({}))).await);
    assert!(
        plain.contains(&"a_show_dashboard".to_owned()) && !plain.iter().any(|n| n.ends_with("dashboard_add")),
        "{plain:?}"
    );
    let hidden = rpc(addr, &tcall(7, "a_dashboard_add", json!({"amount": 1}))).await;
    let unknown = rpc(addr, &tcall(8, "a_no_such_tool", json!({}))).await;
    // A hidden tool is an unknown one, named as the caller named it.
    assert_eq!(hidden["error"]["message"], "Unknown tool: a_dashboard_add", "{hidden}");
    assert_eq!(unknown["error"]["message"], "Unknown tool: a_no_such_tool", "{unknown}");
    assert_eq!(hidden["error"]["code"], unknown["error"]["code"]);
    let _ = std::fs::remove_dir_all(&dir);
}
