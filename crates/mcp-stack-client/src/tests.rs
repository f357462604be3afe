//! The typed client surface against scripted servers over [`StdioTransport::from_io`]: no
//! process, no socket.

use crate::transport::stdio::StdioTransport;
use crate::types::{
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue, LoggingLevel, Role,
    SamplingMessageContent, SamplingMessageContentBlock, TextContent,
};
use crate::{Client, ClientBuilder, ClientError, ElicitationModes, Sampling};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A modern server answering each request with `answer(method, params)` (a `result`, or an
/// `{"error": ..}`); it records every request it gets.
fn scripted(answer: impl Fn(&str, &Value) -> Value + Send + 'static) -> (StdioTransport, Arc<Mutex<Vec<Value>>>) {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (client_read, client_write) = tokio::io::split(client_end);
    let (server_read, mut server_write) = tokio::io::split(server_end);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(server_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let m: Value = serde_json::from_str(&line).unwrap();
            log.lock().push(m.clone());
            let (Some(id), Some(method)) = (m.get("id"), m["method"].as_str()) else { continue };
            let params = m.get("params").cloned().unwrap_or_default();
            let out = match method {
                "server/discover" => json!({"supportedVersions": ["2026-07-28"], "ttlMs": 0, "cacheScope": "private",
                    "capabilities": {"tools": {"listChanged": true}, "x-future": {"on": true}}}),
                _ => answer(method, &params),
            };
            let reply = match out.get("error") {
                Some(e) => json!({"jsonrpc": "2.0", "id": id, "error": e}),
                None => json!({"jsonrpc": "2.0", "id": id, "result": out}),
            };
            let mut text = reply.to_string().into_bytes();
            text.push(b'\n');
            if server_write.write_all(&text).await.is_err() {
                return;
            }
        }
    });
    (StdioTransport::from_io(client_read, client_write), seen)
}

async fn connect(builder: ClientBuilder, t: StdioTransport) -> Client {
    tokio::time::timeout(std::time::Duration::from_secs(10), builder.connect(t)).await.unwrap().unwrap()
}

#[tokio::test]
async fn unknown_fields_survive_in_extra_and_raw() {
    let (t, _) = scripted(|method, _| match method {
        "tools/list" => json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}, "x-vendor": {"k": [1]},
            "annotations": {"readOnlyHint": true, "futureHint": 2}}], "ttlMs": 0, "cacheScope": "private"}),
        "resources/read" => json!({"contents": [{"uri": "m://x", "text": "hi", "x-enc": "utf8"}],
            "x-result": 5}),
        "prompts/get" => json!({"messages": [], "x-trace": "t"}),
        "completion/complete" => json!({"completion": {"values": ["v"]}, "x-more": true}),
        _ => json!({"error": {"code": -32601, "message": "no"}}),
    });
    let c = connect(ClientBuilder::new("t", "1"), t).await;
    let tools = c.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "a");
    assert_eq!(tools[0].extra["x-vendor"], json!({"k": [1]}));
    assert_eq!(tools[0].raw()["annotations"]["futureHint"], 2, "nested unknown fields are in the raw JSON");
    let read = c.read_resource("m://x").await.unwrap();
    assert_eq!(read.extra["x-result"], 5);
    assert_eq!(read.raw()["contents"][0]["x-enc"], "utf8");
    assert_eq!(c.get_prompt("p", Default::default()).await.unwrap().extra["x-trace"], "t");
    let reference = crate::types::CompleteReference::Prompt(crate::types::PromptReference {
        name: "p".into(),
        ..Default::default()
    });
    let done = c.complete(reference, "a", "", None).await.unwrap();
    assert_eq!((done.completion.values.as_slice(), &done.extra["x-more"]), (&["v".to_owned()][..], &json!(true)));
    // The discover result and the capabilities keep theirs too.
    assert_eq!(c.server_capabilities().extra["x-future"], json!({"on": true}));
    assert_eq!(c.server_capabilities().tools.and_then(|t| t.list_changed), Some(true));
    assert_eq!(c.discover().await.unwrap().capabilities.extra["x-future"]["on"], true);
}

#[tokio::test]
async fn a_result_of_the_wrong_shape_is_an_invalid_response_naming_the_method() {
    let (t, _) = scripted(|method, _| match method {
        "tools/list" => json!({"tools": [{"name": "ok", "inputSchema": {}}, {"name": 7}]}),
        "resources/list" => json!({"resources": {"not": "an array"}}),
        "resources/read" => json!({"contents": "nope"}),
        "prompts/get" => json!({"messages": [{"role": "robot"}]}),
        "completion/complete" => json!({"completion": {"values": [1, 2]}}),
        _ => json!([]),
    });
    let c = connect(ClientBuilder::new("t", "1"), t).await;
    let invalid = |r: Result<(), ClientError>, want: &str| match r {
        Err(ClientError::InvalidResponse { message: m, .. }) => assert!(m.starts_with(want), "{m}"),
        other => panic!("{want}: {other:?}"),
    };
    invalid(c.list_tools().await.map(drop), "tools/list: tools[1]: ");
    invalid(c.list_resources().await.map(drop), "resources/list: `resources` is not an array");
    invalid(c.list_prompts().await.map(drop), "prompts/list: the result is not an object");
    invalid(c.read_resource("m://x").await.map(drop), "resources/read: ");
    invalid(c.get_prompt("p", Default::default()).await.map(drop), "prompts/get: ");
    let reference = crate::types::CompleteReference::ResourceTemplate(crate::types::ResourceTemplateReference {
        uri: "m://{x}".into(),
        ..Default::default()
    });
    invalid(c.complete(reference, "x", "", None).await.map(drop), "completion/complete: ");
}

#[tokio::test]
async fn a_malformed_discover_result_fails_the_connection_clearly() {
    let (client_end, server_end) = tokio::io::duplex(1 << 12);
    let (r, w) = tokio::io::split(client_end);
    tokio::spawn(async move {
        let (sr, mut sw) = tokio::io::split(server_end);
        let mut lines = BufReader::new(sr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let m: Value = serde_json::from_str(&line).unwrap();
            let result =
                json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": "yes"}}});
            let reply = json!({"jsonrpc": "2.0", "id": m["id"], "result": result});
            sw.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
        }
    });
    let e = ClientBuilder::new("t", "1").allow_legacy(false).connect(StdioTransport::from_io(r, w)).await.unwrap_err();
    assert!(matches!(&e, ClientError::InvalidResponse { message: m, .. } if m.starts_with("server/discover: ")), "{e}");
}

#[tokio::test]
async fn typed_handlers_answer_rounds_and_typed_options_go_on_the_wire() {
    // Round 1 asks for a form and a sampling; round 2 (with the answers) completes.
    let (t, seen) = scripted(|method, params| match (method, params.get("inputResponses")) {
        ("tools/call", None) => json!({"resultType": "input_required", "inputRequests": {
            "who": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer", "default": 3}}}}},
            "say": {"method": "sampling/createMessage", "params": {"maxTokens": 5,
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}}}}),
        ("tools/call", Some(answers)) => json!({"content": [{"type": "text", "text": answers.to_string()}]}),
        _ => json!({"error": {"code": -32601, "message": "no"}}),
    });
    let b = ClientBuilder::new("t", "1")
        .on_elicitation(ElicitationModes::FORM, |p| async move {
            let ElicitRequestParams::Form(form) = p else { panic!("form mode") };
            assert_eq!(form.message, "Name?");
            let content = [("name".to_owned(), ElicitValue::String("Ada".into()))].into();
            Ok(ElicitResult { content: Some(content), ..ElicitResult::new(ElicitAction::Accept) })
        })
        .on_sampling(Sampling::Text, |p| async move {
            assert_eq!(p.max_tokens, 5);
            Ok(CreateMessageResult {
                meta: None,
                role: Role::Assistant,
                content: SamplingMessageContent::Single(SamplingMessageContentBlock::Text(TextContent::new("yo"))),
                model: "m".into(),
                stop_reason: None,
                extra: Default::default(),
            })
        });
    let c = connect(b, t).await;
    let r = c.call_tool("x", json!({})).on_log(LoggingLevel::Warning, |_| {}).await.unwrap();
    let answers: Value = serde_json::from_str(&r.text()).unwrap();
    // The form answer got its schema default filled in; the sampling result went as typed.
    assert_eq!(answers["who"], json!({"action": "accept", "content": {"name": "Ada", "n": 3}}));
    assert_eq!(answers["say"], json!({"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}));
    let seen = seen.lock();
    let call = seen.iter().find(|m| m["method"] == "tools/call").unwrap();
    assert_eq!(call["params"]["_meta"]["io.modelcontextprotocol/logLevel"], "warning");
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {"form": {}}, "sampling": {}})
    );
}

#[tokio::test]
async fn params_of_the_wrong_shape_never_reach_a_typed_handler() {
    let called = Arc::new(Mutex::new(false));
    let flag = called.clone();
    let b = ClientBuilder::new("t", "1").on_sampling(Sampling::Text, move |_| {
        *flag.lock() = true;
        async { Err(ClientError::handler("unreachable")) }
    });
    let e = b.handlers.answer("sampling/createMessage", json!({"messages": "none"})).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::InvalidResponse { message: m, .. } if m.starts_with("sampling/createMessage: params: ")),
        "{e}"
    );
    assert!(!*called.lock());
}

#[tokio::test]
async fn closing_a_transport_over_io_ends_the_servers_input() {
    let (client_end, server_end) = tokio::io::duplex(1 << 12);
    let (r, w) = tokio::io::split(client_end);
    let t = StdioTransport::from_io(r, w);
    crate::transport::Transport::close(&t).await;
    let mut lines = BufReader::new(server_end).lines();
    let end = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line()).await.unwrap();
    assert!(end.unwrap().is_none(), "the server sees the end of its input");
}

#[tokio::test]
async fn unsolicited_messages_wait_for_their_consumer_and_the_sink_can_change() {
    use crate::transport::{Unsolicited, UNSOLICITED_CAP};
    let u = Unsolicited::new();
    assert!(u.deliver(json!({"method": "notifications/a"})).is_none(), "queued before a consumer is named");
    let (first, mut rx1) = tokio::sync::mpsc::channel(UNSOLICITED_CAP);
    u.route(Some(first));
    assert!(u.deliver(json!({"method": "notifications/b"})).is_none());
    assert_eq!(rx1.recv().await.unwrap()["method"], "notifications/a", "what came first goes first");
    assert_eq!(rx1.recv().await.unwrap()["method"], "notifications/b");
    // Named again: the new sink takes over (no take-once), the old one ends.
    let (second, mut rx2) = tokio::sync::mpsc::channel(UNSOLICITED_CAP);
    u.route(Some(second));
    assert!(rx1.recv().await.is_none());
    assert!(u.deliver(json!({"method": "notifications/c"})).is_none());
    assert_eq!(rx2.recv().await.unwrap()["method"], "notifications/c");
    // No consumer: dropped as they come, a server request refused.
    u.route(None);
    let refused = u.deliver(json!({"jsonrpc": "2.0", "id": 4, "method": "roots/list"})).unwrap();
    assert_eq!((refused["id"].as_i64(), refused["error"]["code"].as_i64()), (Some(4), Some(-32603)));
    assert!(rx2.recv().await.is_none());
    // Closed: a consumer named later sees the end at once.
    u.close();
    let (late, mut rx3) = tokio::sync::mpsc::channel(UNSOLICITED_CAP);
    u.route(Some(late));
    assert!(rx3.recv().await.is_none());
}
