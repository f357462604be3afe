//! The multi-server client against fake (2025-11-25) HTTP servers on 127.0.0.1, configured by an
//! `mcpServers` file: prefixed tool names, routing, headers from the file, per-server failures.

use crate::http_support::*;
use mcp_client::config::McpConfig;
use mcp_client::multi::{MultiClient, MultiError};
use mcp_client::ClientBuilder;
use serde_json::{json, Value};
use std::time::Duration;

/// A legacy Streamable HTTP server named `name` offering `tools`; `tools/call` answers
/// `name:tool:text`. Every request's `x-test` header is logged.
async fn legacy_server(name: &'static str, tools: &'static [&'static str], seen: Log) -> String {
    serve(move |req, s| {
        seen.lock().unwrap().push(req.clone());
        async move {
            let sid = [("mcp-session-id", "S1")];
            let m = req.json();
            let reply = |result: Value| json!({"jsonrpc": "2.0", "id": m["id"], "result": result});
            match (req.method.as_str(), req.rpc_method().as_str()) {
                ("POST", "initialize") => {
                    let r = reply(json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                        "serverInfo": {"name": name, "version": "1"}}));
                    respond_json(s, "200 OK", &sid, &r).await;
                }
                ("POST", "tools/list") => {
                    let list: Vec<Value> =
                        tools.iter().map(|t| json!({"name": t, "inputSchema": {"type": "object"}})).collect();
                    respond_json(s, "200 OK", &sid, &reply(json!({"tools": list}))).await;
                }
                ("POST", "tools/call") => {
                    let text = format!(
                        "{name}:{}:{}",
                        m["params"]["name"].as_str().unwrap_or_default(),
                        m["params"]["arguments"]["text"].as_str().unwrap_or_default()
                    );
                    let r = reply(json!({"content": [{"type": "text", "text": text}]}));
                    respond_json(s, "200 OK", &sid, &r).await;
                }
                ("POST", m) if m.starts_with("notifications/") => respond(s, "202 Accepted", &[], b"").await,
                ("POST", _) => {
                    let e = json!({"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32600, "message": "Bad Request: Missing session ID"}});
                    respond_json(s, "400 Bad Request", &[], &e).await;
                }
                ("DELETE", _) => respond(s, "204 No Content", &[], b"").await,
                _ => respond(s, "405 Method Not Allowed", &[], b"").await,
            }
        }
    })
    .await
}

/// A loopback URL with nothing listening.
async fn refused_url() -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}/mcp")
}

fn builder(_server: &str) -> ClientBuilder {
    ClientBuilder::new("multi-test", "1").connect_timeout(Duration::from_secs(5)).timeout(Duration::from_secs(5))
}

#[tokio::test]
async fn tools_across_servers_with_prefixes() {
    bounded(async {
        let seen = log();
        let alpha = legacy_server("alpha", &["echo", "shout"], seen.clone()).await;
        let beta = legacy_server("beta", &["echo"], log()).await;
        // `a` + `b_c` would collide with server `a_b` + `c`: routing picks the longer name.
        let a = legacy_server("a", &["b_c", "d"], log()).await;
        let ab = legacy_server("a_b", &["c"], log()).await;
        let down = refused_url().await;
        let text = json!({"mcpServers": {
            "alpha": {"url": alpha, "headers": {"X-Test": "${TOKEN}"}},
            "beta": {"type": "http", "url": beta},
            "a": {"url": a},
            "a_b": {"url": ab},
            "down": {"url": down},
            "broken": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${UNSET_TOKEN}"}}
        }})
        .to_string();
        let vars = |k: &str| (k == "TOKEN").then(|| "from-env".to_owned());
        let config = McpConfig::parse(&text, "/test/mcp.json", &vars).unwrap();
        let multi = MultiClient::builder().client(builder).connect(&config).await;

        let connected: Vec<&str> = multi.clients().map(|(n, _)| n).collect();
        assert_eq!(connected, ["a", "a_b", "alpha", "beta"]);
        let failed: Vec<(&str, String)> =
            multi.failures().iter().map(|f| (f.server.as_str(), f.error.to_string())).collect();
        assert_eq!(failed.len(), 2, "{failed:?}");
        assert_eq!(failed[0].0, "broken");
        assert!(failed[0].1.contains("UNSET_TOKEN"), "{failed:?}");
        assert!(matches!(multi.failures()[0].error, MultiError::Config(_)));
        assert_eq!(failed[1].0, "down");
        assert!(matches!(multi.failures()[1].error, MultiError::Client(_)), "{failed:?}");
        assert!(multi.failures().iter().all(|f| f.source == std::path::Path::new("/test/mcp.json")));

        let listing = multi.list_tools().await;
        assert!(listing.failures.is_empty(), "{:?}", listing.failures);
        let names: Vec<&str> = listing.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a_d", "a_b_c", "alpha_echo", "alpha_shout", "beta_echo"]);
        let shout = &listing.tools[3];
        assert_eq!((shout.server.as_str(), shout.tool_name()), ("alpha", "shout"));
        assert_eq!(shout.prefixed_definition()["name"], "alpha_shout");

        let call = |name: &'static str| {
            let multi = &multi;
            async move { multi.call_tool(name, json!({"text": "hi"})).await.map(|r| r.text()) }
        };
        assert_eq!(call("alpha_echo").await.unwrap(), "alpha:echo:hi");
        assert_eq!(call("alpha_shout").await.unwrap(), "alpha:shout:hi");
        assert_eq!(call("beta_echo").await.unwrap(), "beta:echo:hi");
        assert_eq!(call("a_b_c").await.unwrap(), "a_b:c:hi");
        assert_eq!(call("a_d").await.unwrap(), "a:d:hi");
        assert!(matches!(call("gamma_echo").await, Err(MultiError::UnknownTool(n)) if n == "gamma_echo"));
        assert!(matches!(call("alpha_").await, Err(MultiError::UnknownTool(_))));
        assert!(matches!(call("down_echo").await, Err(MultiError::NotConnected(n)) if n == "down"));
        let r = multi.call_server_tool("a", "b_c", json!({"text": "x"})).await.unwrap();
        assert_eq!(r.text(), "a:b_c:x");

        // The file's header (expanded) went to alpha's every request.
        let sent = seen.lock().unwrap().clone();
        assert!(sent.iter().any(|r| r.rpc_method() == "tools/call"));
        assert!(sent.iter().all(|r| r.header("x-test") == Some("from-env")), "{sent:?}");
        multi.close().await;
    })
    .await;
}

#[tokio::test]
async fn custom_separator() {
    bounded(async {
        let url = legacy_server("one", &["echo"], log()).await;
        let text = json!({"servers": {"one": {"type": "http", "url": url}}}).to_string();
        let config = McpConfig::parse(&text, "/test/.vscode/mcp.json", &|_: &str| None).unwrap();
        let multi = MultiClient::builder().client(builder).separator("__").connect(&config).await;
        assert!(multi.failures().is_empty());
        assert_eq!(multi.separator(), "__");
        let listing = multi.list_tools().await;
        assert_eq!(listing.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["one__echo"]);
        assert_eq!(multi.call_tool("one__echo", json!({"text": "yo"})).await.unwrap().text(), "one:echo:yo");
        assert!(matches!(multi.call_tool("one_echo", json!({})).await, Err(MultiError::UnknownTool(_))));
        multi.close().await;
    })
    .await;
}
