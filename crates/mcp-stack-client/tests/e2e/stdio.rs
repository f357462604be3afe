//! The client library against real stdio servers: our `everything` server (modern) and a
//! legacy (initialize-based) server written here in Python.

use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
use mcp_client::types::{
    CompleteReference, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue, LoggingLevel,
    PromptReference, ResourceContents, Role, Root, SamplingMessageContent, SamplingMessageContentBlock, TextContent,
};
use mcp_client::{CallOptions, Client, ClientBuilder, ClientError, ElicitationModes, ListenEvent, Sampling, ServerEra};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

async fn everything(builder: ClientBuilder) -> Client {
    let t = StdioTransport::spawn(mcp_test_support::child::stdio_command()).unwrap();
    tokio::time::timeout(T, builder.connect(t)).await.unwrap().unwrap()
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("test-client", "0.0.1")
        .on_elicitation(ElicitationModes::FORM, |params: ElicitRequestParams| async move {
            let ElicitRequestParams::Form(form) = params else { return Ok(ElicitResult::new(ElicitAction::Decline)) };
            // Fill every requested field by its type, like a cooperative user.
            let mut content = std::collections::BTreeMap::new();
            for (name, schema) in &form.requested_schema.properties {
                let v = match serde_json::to_value(schema).unwrap()["type"].as_str() {
                    Some("boolean") => ElicitValue::Boolean(true),
                    Some("integer" | "number") => ElicitValue::Integer(7),
                    _ if name == "name" => ElicitValue::String("Ada".into()),
                    _ => ElicitValue::String("blue".into()),
                };
                content.insert(name.clone(), v);
            }
            Ok(ElicitResult { content: Some(content), ..ElicitResult::new(ElicitAction::Accept) })
        })
        .on_sampling(Sampling::Text, |p| async move {
            assert!(!p.messages.is_empty(), "{p:?}");
            Ok(CreateMessageResult {
                meta: None,
                role: Role::Assistant,
                content: SamplingMessageContent::Single(SamplingMessageContentBlock::Text(TextContent::new("Paris"))),
                model: "test".into(),
                stop_reason: Some("endTurn".into()),
                extra: Default::default(),
            })
        })
        .roots(vec![Root { name: Some("project".into()), ..Root::new("file:///tmp/project") }])
}

pub(crate) async fn modern_server_over_stdio() {
    let c = everything(builder()).await;
    assert!(matches!(c.era(), Some(ServerEra::Modern { ref version, .. }) if version == "2026-07-28"));
    let tools = c.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    let r = c.call_tool("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(r.text(), "hi");
    // MRTR: elicitation answered by the handler, then the tool completes.
    let r = c.call_tool("greet_user", json!({})).await.unwrap();
    assert_eq!(r.text(), "Hello, Ada!");
    // Three inputs at once, with state carried.
    let r = c.call_tool("test_input_required_result_multiple_inputs", json!({})).await.unwrap();
    assert!(r.text().contains("Ada"), "{r}");
    // Two rounds.
    let r = c.call_tool("test_input_required_result_multi_round", json!({})).await;
    assert!(r.is_ok(), "{r:?}");
    // Resources, templates, prompts, completion; -32602 resource not found.
    let read = c.read_resource("test://template/42/data").await.unwrap();
    assert!(matches!(&read.contents[0], ResourceContents::Text(t) if t.text.contains("42")), "{read}");
    assert!(
        matches!(c.read_resource("test://nope").await, Err(ClientError::ResourceNotFound { uri: u, .. }) if u == "test://nope")
    );
    let p = c
        .get_prompt("test_prompt_with_arguments", json!({"arg1": "a", "arg2": "b"}).as_object().unwrap().clone())
        .await
        .unwrap();
    assert!(p.raw()["messages"][0]["content"]["text"].as_str().unwrap().contains("arg1='a'"));
    let prompt = PromptReference { name: "test_prompt_with_arguments".into(), ..Default::default() };
    let comp = c.complete(CompleteReference::Prompt(prompt), "arg1", "pa", None).await.unwrap();
    assert_eq!(comp.completion.values, ["paris", "park", "party"]);
    c.close().await;
}

pub(crate) async fn progress_and_logs_reach_callbacks() {
    let c = everything(builder()).await;
    let progress = Arc::new(AtomicUsize::new(0));
    let p2 = progress.clone();
    let logs = Arc::new(AtomicUsize::new(0));
    let l2 = logs.clone();
    let opts = CallOptions {
        on_progress: Some(Arc::new(move |_p: &Value| {
            p2.fetch_add(1, Ordering::SeqCst);
        })),
        on_log: Some(Arc::new(move |_l: &Value| {
            l2.fetch_add(1, Ordering::SeqCst);
        })),
        log_level: Some(LoggingLevel::Info),
        timeout: None,
    };
    let r = c.call_tool("count_with_progress", json!({"steps": 3, "delay_ms": 5})).options(opts.clone()).await.unwrap();
    assert_eq!(r.text(), "counted to 3");
    assert_eq!(progress.load(Ordering::SeqCst), 3);
    // The log messages (one per step) came before the response: all are in.
    assert_eq!(logs.load(Ordering::SeqCst), 3);
    c.close().await;
}

pub(crate) async fn undeclared_capabilities_give_a_clear_error() {
    let c = everything(ClientBuilder::new("bare", "1")).await;
    let e = c.call_tool("greet_user", json!({})).await.unwrap_err();
    assert_eq!(e.code(), Some(-32021), "{e}");
    c.close().await;
}

pub(crate) async fn listen_gets_tagged_notifications_and_invalidates_cache() {
    let c = everything(builder()).await;
    let asked = mcp_client::types::SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = c.listen(asked.clone()).await.unwrap();
    assert_eq!(sub.acknowledged, asked);
    let before = c.list_tools().await.unwrap().len();
    c.call_tool("toggle_extra_tool", json!({})).await.unwrap();
    let ev = tokio::time::timeout(T, sub.next()).await.unwrap().unwrap().unwrap();
    assert!(matches!(ev, ListenEvent::Notification { ref method, .. } if method == "notifications/tools/list_changed"));
    // The cached list was invalidated by the notification: the new tool is visible at once.
    assert_eq!(c.list_tools().await.unwrap().len(), before + 1);
    c.close().await;
}

pub(crate) async fn timeout_cancels_the_request_and_the_server_keeps_serving() {
    let c = everything(builder().timeout(Duration::from_millis(300))).await;
    let e = c.call_tool("count_with_progress", json!({"steps": 20, "delay_ms": 1000})).await.unwrap_err();
    assert!(matches!(e, ClientError::Timeout(_)), "{e}");
    let r = c.call_tool("echo", json!({"text": "still here"})).await.unwrap();
    assert_eq!(r.text(), "still here");
    c.close().await;
}

/// A legacy (2025-06-18) stdio server: initialize handshake, then tools that make real
/// server-to-client requests.
pub(crate) const LEGACY_SERVER: &str = r#"
import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
initialized = False
pending = {}
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "server/discover":
        send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "Method not found"}})
    elif m.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": "2025-06-18",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy-py", "version": "1"}}})
    elif m.get("method") == "notifications/initialized":
        initialized = True
    elif m.get("method") == "tools/list":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": [{"name": "ask", "inputSchema": {"type": "object"}}]}})
    elif m.get("method") == "tools/call" and initialized:
        pending["srv-1"] = m["id"]
        send({"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create",
              "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}})
    elif m.get("method") == "resources/read":
        send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32002, "message": "Resource not found", "data": {"uri": m["params"]["uri"]}}})
    elif "result" in m and m.get("id") in pending:
        orig = pending.pop(m["id"])
        send({"jsonrpc": "2.0", "id": orig, "result": {"content": [{"type": "text", "text": "hello " + m["result"]["content"]["name"]}]}})
"#;

pub(crate) async fn legacy_server_over_stdio() {
    let t = StdioTransport::spawn(StdioCommand::new("python3").args(["-u", "-c", LEGACY_SERVER])).unwrap();
    let c = tokio::time::timeout(T, builder().connect(t)).await.unwrap().unwrap();
    assert!(matches!(c.era(), Some(ServerEra::Legacy { ref version, .. }) if version == "2025-06-18"), "{:?}", c.era());
    let tools = c.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "ask");
    // The same elicitation handler answers a real server-to-client request.
    let r = tokio::time::timeout(T, c.call_tool("ask", json!({}))).await.unwrap().unwrap();
    assert_eq!(r.text(), "hello Ada");
    // A missing resultType means complete; -32002 is resource-not-found.
    assert!(matches!(c.read_resource("file:///x").await, Err(ClientError::ResourceNotFound { .. })));
    c.close().await;
}

pub(crate) async fn killed_server_fails_pending_calls_promptly_and_leaves_no_process() {
    // The server runs in its own process group; a grandchild shares it.
    let script = "sleep 313 & MCP_TEST_SERVE=stdio exec \"$0\"";
    let exe = std::env::current_exe().unwrap().to_string_lossy().into_owned();
    let t = StdioTransport::spawn(StdioCommand::new("sh").args(["-c", script, &exe])).unwrap();
    let pid = t.pid().unwrap();
    let c = tokio::time::timeout(T, builder().connect(t)).await.unwrap().unwrap();
    let pending = crate::in_flight::slow_call_in_flight(&c).await;
    // Kill the server process (not the group): pending calls must fail with a clear error.
    let status = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(status.success());
    let r =
        tokio::time::timeout(Duration::from_secs(5), pending).await.expect("pending call must fail promptly").unwrap();
    let e = r.unwrap_err();
    assert!(matches!(e, ClientError::Transport(_)), "{e}");
    c.close().await;
    // The grandchild `sleep 313` was in the server's process group: gone after close (the
    // kernel reaps it asynchronously, so look until it is gone, within a bound).
    let mut left = Vec::new();
    for _ in 0..100 {
        left = std::process::Command::new("pgrep").args(["-f", "^sleep 313$"]).output().unwrap().stdout;
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(left.is_empty(), "processes left behind: {}", String::from_utf8_lossy(&left));
}
