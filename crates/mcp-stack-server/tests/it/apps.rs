//! MCP Apps on the server: view resources, tool links, app-only tools that exist only for clients
//! rendering apps, the text fallback, and the checks at build. (End to end with the client, both
//! eras: mcp-stack-cli `tests/it/apps.rs`.)

use mcp::server::apps::{Csp, Permissions, UiResource, Visibility};
use mcp_protocol::apps::{client_capability, EXTENSION, HTML_MIME_TYPE};
use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION};
use mcp_protocol::types::CallToolResult;
use mcp_protocol::Request;
use mcp_server::{BuildError, RequestEnv, Server, Tool};
use serde_json::{json, Value};

fn req(id: i64, method: &str, params: Value, apps: bool) -> Request {
    let mut params = params.as_object().cloned().unwrap_or_default();
    let caps = if apps { json!({"extensions": {EXTENSION: client_capability()}}) } else { json!({}) };
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: caps }));
    Request { id: json!(id), method: method.into(), params }
}

const HTML: &str = "<!DOCTYPE html><html><body>view</body></html>";

fn builder() -> mcp_server::ServerBuilder {
    Server::builder("apps", "1")
        .ui_resource(
            UiResource::new("ui://apps/view", "view", HTML)
                .csp(Csp { connect_domains: vec!["https://api.example.com".into()], ..Csp::default() })
                .permissions(Permissions { clipboard_write: true, ..Permissions::default() })
                .prefers_border(false),
        )
        .tool(Tool::new("show").ui("ui://apps/view").handler(|| async { "shown" }))
        .tool(Tool::new("refresh").ui("ui://apps/view").ui_visibility([Visibility::App]).handler(|| async { "fresh" }))
        .tool(Tool::new("plain").handler(|| async { "plain" }))
}

fn tool_names(r: &Value) -> Vec<&str> {
    r["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn app_only_tools_exist_only_for_clients_that_render_apps() {
    let s = builder().build().unwrap();
    let env = RequestEnv::default;
    let without = s.handle(req(1, "tools/list", json!({}), false), env()).await.unwrap();
    assert_eq!(tool_names(&without), ["show", "plain"]);
    assert_eq!(without["cacheScope"], "private", "the list depends on the request");
    let with = s.handle(req(2, "tools/list", json!({}), true), env()).await.unwrap();
    assert_eq!(tool_names(&with), ["show", "refresh", "plain"]);
    let refresh = &with["tools"][1];
    assert_eq!(refresh["_meta"]["ui"], json!({"resourceUri": "ui://apps/view", "visibility": ["app"]}));
    assert_eq!(with["tools"][0]["_meta"]["ui"], json!({"resourceUri": "ui://apps/view"}));

    // Called without the extension: the unknown tool's error, word for word.
    let call = |name: &str, apps| req(3, "tools/call", json!({"name": name, "arguments": {}}), apps);
    let hidden = s.handle(call("refresh", false), env()).await.unwrap_err();
    let unknown = s.handle(call("nope", false), env()).await.unwrap_err();
    assert_eq!(
        (hidden.code(), hidden.message().replace("refresh", "X")),
        (unknown.code(), unknown.message().replace("nope", "X"))
    );
    let ok = s.handle(call("refresh", true), env()).await.unwrap();
    assert_eq!(ok["content"][0]["text"], "fresh");
}

#[tokio::test]
async fn the_view_is_an_html_resource_with_its_ui_meta() {
    let s = builder().build().unwrap();
    let list = s.handle(req(1, "resources/list", json!({}), false), RequestEnv::default()).await.unwrap();
    let entry = &list["resources"][0];
    assert_eq!((entry["uri"].as_str(), entry["mimeType"].as_str()), (Some("ui://apps/view"), Some(HTML_MIME_TYPE)));
    let ui = json!({"csp": {"connectDomains": ["https://api.example.com"]}, "permissions": {"clipboardWrite": {}}, "prefersBorder": false});
    assert_eq!(entry["_meta"]["ui"], ui);
    let read = s
        .handle(req(2, "resources/read", json!({"uri": "ui://apps/view"}), false), RequestEnv::default())
        .await
        .unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["text"], HTML);
    assert_eq!(contents["mimeType"], HTML_MIME_TYPE);
    assert_eq!(contents["_meta"]["ui"], ui);
    // The typed view of the same contents.
    let typed: mcp_protocol::types::ReadResourceResult = serde_json::from_value(read).unwrap();
    let ui = typed.contents[0].ui().unwrap();
    assert!(typed.contents[0].is_app_view());
    assert!(ui.content_security_policy().contains("connect-src https://api.example.com;"));
    assert_eq!(ui.permissions.unwrap().allow_attribute(), "clipboard-write");
}

#[tokio::test]
async fn a_view_linked_tool_must_answer_with_text_too() {
    let s = Server::builder("apps", "1")
        .ui_resource(UiResource::new("ui://apps/view", "view", HTML))
        .tool(
            Tool::new("silent").ui("ui://apps/view").handler(|| async { CallToolResult::structured(json!({"n": 1})) }),
        )
        .tool(Tool::new("mute").ui("ui://apps/view").handler(|| async { CallToolResult::new(vec![]) }))
        .build()
        .unwrap();
    // `structured` writes the JSON as text as well: a fallback.
    let r =
        s.handle(req(1, "tools/call", json!({"name": "silent", "arguments": {}}), true), RequestEnv::default()).await;
    assert!(r.unwrap()["content"][0]["text"].is_string());
    let e = s
        .handle(req(2, "tools/call", json!({"name": "mute", "arguments": {}}), true), RequestEnv::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), -32603);
    assert!(e.message().contains("mute") && e.message().contains("text content"), "{}", e.message());
}

#[test]
fn broken_links_and_views_fail_the_build_naming_them() {
    let view = || UiResource::new("ui://apps/view", "view", HTML);
    let tool = |uri: &str| Tool::new("t").ui(uri).handler(|| async { "x" });
    let err = |b: mcp_server::ServerBuilder| match b.build() {
        Err(BuildError::InvalidApp { item, reason }) => format!("{item}: {reason}"),
        other => panic!("expected InvalidApp, got {other:?}"),
    };
    let e = err(Server::builder("a", "1").ui_resource(view()).tool(tool("ui://apps/other")));
    assert_eq!(e, "tool \"t\": _meta.ui.resourceUri \"ui://apps/other\" names no resource of this server");
    let e = err(Server::builder("a", "1").ui_resource(view()).tool(tool("https://example.com/view")));
    assert!(e.contains("is not a ui:// URI"), "{e}");
    let e = err(Server::builder("a", "1").ui_resource(UiResource::new("https://x/view", "v", HTML)));
    assert_eq!(e, "UI resource \"https://x/view\": a view's URI must start with ui://");
    // A template of this server may serve the view too.
    let template = mcp_server::Resource::template("ui://apps/{name}", "views").handler(|| async { HTML });
    assert!(Server::builder("a", "1").resource(template).tool(tool("ui://apps/any")).build().is_ok());
}

mod macro_form {
    use mcp::prelude::*;

    /// Shows a view.
    #[tool(ui = "ui://m/view", visibility = ["app"])]
    async fn app_button() -> String {
        "clicked".into()
    }

    #[test]
    fn the_tool_attribute_links_views_and_sets_visibility() {
        let t = app_button::tool();
        let ui = t.definition().ui().unwrap();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://m/view"));
        assert!(ui.app_visible() && !ui.model_visible());
    }
}
