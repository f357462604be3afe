//! Dual-era over stdio: a legacy (2025-11-25, initialize-based) client talking to
//! `mcp::stdio::serve` of the everything server. Every message the server sends is checked
//! against the 2025-11-25 schema.

use mcp_test_support::*;
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

const LEGACY: &str = LEGACY_PV;

struct Proc {
    _served: JoinHandle<std::io::Result<()>>,
    stdin: Option<DuplexStream>,
    out: Lines<BufReader<DuplexStream>>,
}

impl Proc {
    fn spawn() -> Self {
        let (served, stdin, out) = super::serve_everything();
        Self { _served: served, stdin: Some(stdin), out }
    }

    async fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        within("writing to stdin", stdin.write_all(format!("{v}\n").as_bytes())).await.expect("write");
        within("flushing stdin", stdin.flush()).await.expect("flush");
    }

    /// The next message, checked against the legacy schema's envelope.
    async fn next(&mut self) -> Value {
        let line = within("a line on stdout", self.out.next_line()).await.expect("read").expect("not EOF");
        let v: Value = serde_json::from_str(&line).expect("stdout line is JSON");
        assert_legacy_wire(&v);
        v
    }

    /// Sends a legacy request (no `_meta`) and returns the response.
    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let r = self.next().await;
        assert_eq!(r["id"], json!(id), "{r}");
        r
    }

    async fn ok(&mut self, id: i64, method: &str, params: Value, result_def: &str) -> Value {
        let r = self.request(id, method, params).await;
        let result = r.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {r}"));
        assert_schema_of(LEGACY, result_def, &result);
        assert!(result.get("resultType").is_none(), "legacy results carry no resultType: {result}");
        result
    }

    async fn initialize(&mut self, capabilities: Value) -> Value {
        let params = json!({"protocolVersion": LEGACY, "capabilities": capabilities,
                            "clientInfo": {"name": "legacy-test", "version": "1"}});
        let result = self.ok(0, "initialize", params, "InitializeResult").await;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        result
    }
}

#[tokio::test]
async fn initialize_negotiates_and_serves_legacy_requests() {
    let mut p = Proc::spawn();
    let init = p.initialize(json!({})).await;
    assert_eq!(init["protocolVersion"], LEGACY);
    assert_eq!(init["serverInfo"]["name"], "mcp-rs-everything");
    assert_eq!(init["capabilities"]["resources"]["subscribe"], true, "{init}");
    p.ok(1, "ping", json!({}), "EmptyResult").await;
    let tools = p.ok(2, "tools/list", json!({}), "ListToolsResult").await;
    assert!(tools["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"));
    assert!(tools.get("ttlMs").is_none() && tools.get("cacheScope").is_none(), "{tools}");
    let r = p.ok(3, "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}), "CallToolResult").await;
    assert_eq!(r["content"][0]["text"], "hi");
    p.ok(4, "resources/read", json!({"uri": "test://static-text"}), "ReadResourceResult").await;
    p.ok(5, "prompts/get", json!({"name": "test_simple_prompt"}), "GetPromptResult").await;
    // A second initialize, and modern-only methods, are refused.
    assert_eq!(p.request(6, "initialize", json!({"protocolVersion": LEGACY})).await["error"]["code"], -32600);
    assert_eq!(p.request(7, "server/discover", json!({})).await["error"]["code"], -32601);
    // A modern request on the same process is still served statelessly.
    p.send(&req(8, "tools/call", call("echo", json!({"text": "modern"})))).await;
    let modern = p.next().await;
    assert_eq!(modern["result"]["resultType"], "complete", "{modern}");
}

#[tokio::test]
async fn unknown_versions_get_the_newest_legacy_version() {
    let mut p = Proc::spawn();
    let params =
        json!({"protocolVersion": "2024-01-01", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}});
    let init = p.ok(0, "initialize", params, "InitializeResult").await;
    assert_eq!(init["protocolVersion"], LEGACY);
}

#[tokio::test]
async fn client_input_becomes_server_to_client_requests() {
    let mut p = Proc::spawn();
    p.initialize(json!({"elicitation": {}, "sampling": {}})).await;
    p.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "test_input_required_result_elicitation", "arguments": {}}}))
        .await;
    let ask = p.next().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "What is your name?");
    p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    let done = p.next().await;
    assert_eq!(done["id"], 1, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!", "{done}");

    // Sampling, answered with an error: the call fails with -32603 and the server keeps serving.
    p.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "test_input_required_result_sampling", "arguments": {}}}))
        .await;
    let ask = p.next().await;
    assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
    p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -1, "message": "user said no"}})).await;
    let failed = p.next().await;
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(failed["error"]["message"].as_str().unwrap().contains("user said no"), "{failed}");
    p.ok(3, "ping", json!({}), "EmptyResult").await;
}

#[tokio::test]
async fn undeclared_capabilities_are_never_asked_for() {
    let mut p = Proc::spawn();
    p.initialize(json!({})).await;
    let r =
        p.request(1, "tools/call", json!({"name": "test_input_required_result_elicitation", "arguments": {}})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
}

#[tokio::test]
async fn set_level_enables_log_messages_and_subscribe_is_accepted() {
    let mut p = Proc::spawn();
    p.initialize(json!({})).await;
    p.ok(1, "logging/setLevel", json!({"level": "debug"}), "EmptyResult").await;
    assert_eq!(p.request(2, "logging/setLevel", json!({"level": "loud"})).await["error"]["code"], -32602);
    p.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                   "params": {"name": "test_tool_with_logging", "arguments": {}}}))
        .await;
    for expected in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
        let n = p.next().await;
        assert_eq!(
            (n["method"].as_str(), n["params"]["data"].as_str()),
            (Some("notifications/message"), Some(expected))
        );
    }
    assert_eq!(p.next().await["id"], 9);
    p.ok(3, "resources/subscribe", json!({"uri": "test://static-text"}), "EmptyResult").await;
    p.ok(4, "resources/unsubscribe", json!({"uri": "test://static-text"}), "EmptyResult").await;
}

/// A 2025-era client that never sends `logging/setLevel` (LangChain's adapters, many others)
/// still gets the log messages a tool emits: legacy sessions log every level by default.
#[tokio::test]
async fn a_client_that_never_sets_a_level_gets_log_messages() {
    let mut p = Proc::spawn();
    p.initialize(json!({})).await;
    p.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "test_tool_with_logging", "arguments": {}}}))
        .await;
    for expected in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
        let n = p.next().await;
        assert_eq!(
            (n["method"].as_str(), n["params"]["data"].as_str()),
            (Some("notifications/message"), Some(expected)),
            "{n}"
        );
    }
    assert_eq!(p.next().await["id"], 1);
}
