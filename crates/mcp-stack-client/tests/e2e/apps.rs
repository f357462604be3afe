//! MCP Apps end to end with the real everything server over stdio, in both eras: a client that
//! declares the extension sees and calls the app-only tool, reads the view with its typed
//! `_meta.ui`; one that does not never sees the tool, and calling it is an unknown tool.

use mcp_client::transport::stdio::StdioTransport;
use mcp_client::{Client, ClientBuilder};
use mcp_protocol::apps::HTML_MIME_TYPE;
use serde_json::json;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

async fn everything(apps: bool, legacy: bool) -> Client {
    let cmd = mcp_test_support::child::stdio_command();
    let mut b = ClientBuilder::new("apps-test", "0.0.1").apps(apps);
    if legacy {
        b = b.force_legacy("2025-11-25");
    }
    tokio::time::timeout(T, b.connect(StdioTransport::spawn(cmd).unwrap())).await.unwrap().unwrap()
}

async fn check(legacy: bool) {
    let era = if legacy { "legacy" } else { "modern" };
    let with = everything(true, legacy).await;
    let tools = with.list_tools().await.unwrap();
    let add = tools.iter().find(|t| t.name == "dashboard_add").unwrap_or_else(|| panic!("{era}: dashboard_add listed"));
    let ui = add.ui().unwrap();
    assert_eq!(ui.resource_uri.as_deref(), Some("ui://everything/dashboard"));
    assert!(!ui.model_visible() && ui.app_visible(), "{era}");
    let show = tools.iter().find(|t| t.name == "show_dashboard").unwrap();
    assert!(show.ui().unwrap().model_visible());
    let r = with.call_tool("dashboard_add", json!({"amount": 2})).await.unwrap();
    assert!(r.text().starts_with("the counter is "), "{era}: {}", r.text());
    let r = with.call_tool("show_dashboard", json!({"label": "e2e"})).await.unwrap();
    assert!(r.text().starts_with("Dashboard e2e: the counter is "), "{era}: {}", r.text());
    let view = with.read_resource("ui://everything/dashboard").await.unwrap();
    assert!(view.contents[0].is_app_view(), "{era}");
    assert_eq!(view.contents[0].ui().unwrap().prefers_border, Some(true));
    let listed = with.list_resources().await.unwrap();
    let entry = listed.iter().find(|r| r.uri == "ui://everything/dashboard").unwrap();
    assert_eq!(entry.mime_type.as_deref(), Some(HTML_MIME_TYPE));

    let without = everything(false, legacy).await;
    let tools = without.list_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "dashboard_add"), "{era}: hidden without the extension");
    assert!(tools.iter().any(|t| t.name == "show_dashboard"), "{era}: the model-visible tool stays");
    let hidden = without.call_tool("dashboard_add", json!({"amount": 1})).await.unwrap_err().to_string();
    let unknown = without.call_tool("no_such_tool", json!({})).await.unwrap_err().to_string();
    assert_eq!(hidden.replace("dashboard_add", "X"), unknown.replace("no_such_tool", "X"), "{era}");
}

pub(crate) async fn apps_in_both_eras_over_stdio() {
    check(false).await;
    check(true).await;
}

/// `ClientBuilder::on_traffic` sees the request as sent (with its `_meta`) and the response.
pub(crate) async fn the_traffic_tap_sees_requests_and_responses() {
    use mcp_client::Direction;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let b = ClientBuilder::new("tap-test", "0.0.1").on_traffic(move |d, m| s.lock().unwrap().push((d, m.clone())));
    let cmd = mcp_test_support::child::stdio_command();
    let c = tokio::time::timeout(T, b.connect(StdioTransport::spawn(cmd).unwrap())).await.unwrap().unwrap();
    c.call_tool("echo", json!({"text": "tapped"})).await.unwrap();
    let seen = seen.lock().unwrap();
    let sent = seen.iter().find(|(d, m)| *d == Direction::Sent && m["method"] == "tools/call").expect("the call");
    assert_eq!(sent.1["params"]["arguments"]["text"], "tapped");
    assert!(sent.1["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_string(), "{}", sent.1);
    let id = &sent.1["id"];
    let answer = seen.iter().find(|(d, m)| *d == Direction::Received && &m["id"] == id).expect("the response");
    assert_eq!(answer.1["result"]["content"][0]["text"], "tapped");
}
