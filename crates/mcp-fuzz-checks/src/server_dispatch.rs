//! `Server` dispatch fed arbitrary JSON-RPC never panics and never answers `-32603`.
//!
//! A small server with MRTR tools (raw `Inputs` over two rounds, the typed API), an MRTR prompt,
//! a resource template and a plain tool. Each input is one JSON-RPC message; a request is
//! dispatched, and when it answers `input_required` it is retried once with the server's real
//! `requestState` and the input's own `inputResponses`, so the fuzzer reaches the honoured
//! answers too. (libfuzzer's panic hook aborts even on panics the server would catch.)
use mcp_protocol::jsonrpc::{parse_incoming, Incoming};
use mcp_protocol::Request;
use mcp_server::{Context, Elicitation, HandlerError, Prompt, RequestEnv, Resource, Server, Tool};
use serde_json::{json, Value};
use std::sync::OnceLock;

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let two_rounds = Tool::new("two_rounds").description("asks twice").handler(|ctx: Context| async move {
            let name = match ctx.round_state().get("name").and_then(Value::as_str) {
                Some(n) => n.to_owned(),
                None => {
                    let mut inputs = ctx.inputs();
                    let a = inputs.elicit("step1", "Name?", json!({"type": "object"}))?;
                    inputs.finish()?;
                    a.unwrap_or_default().pointer("/content/name").map(Value::to_string).unwrap_or_default()
                }
            };
            let mut inputs = ctx.inputs();
            let s = inputs.sample("step2", json!({"messages": [], "maxTokens": 5}))?;
            let r = inputs.roots("step2_roots")?;
            inputs.set_state(json!({ "name": name }));
            inputs.finish()?;
            let text = s.unwrap_or_default().pointer("/content/text").map(Value::to_string).unwrap_or_default();
            let roots = r.unwrap_or_default().get("roots").and_then(Value::as_array).map_or(0, Vec::len);
            Ok::<_, HandlerError>(format!("{name} {text} {roots}"))
        });
        let typed = Tool::new("typed").description("typed elicitation").handler(|ctx: Context| async move {
            let first = ctx.elicit::<Value>("Anything?")?;
            let roots = ctx.roots()?;
            Ok::<_, HandlerError>(format!("{} {}", matches!(first, Elicitation::Accept(_)), roots.len()))
        });
        let plain = Tool::new("plain").description("no input").handler(|| async { "ok" });
        let prompt = Prompt::new("ask_prompt").description("asks for context").handler(|ctx: Context| async move {
            let mut inputs = ctx.inputs();
            let a = inputs.elicit("ctx", "Context?", json!({"type": "object"}))?;
            inputs.finish()?;
            Ok::<_, HandlerError>(format!("context: {}", a.unwrap_or_default()))
        });
        let template = Resource::template("fuzz://{id}/item", "item").handler(|ctx: Context| async move {
            let mut inputs = ctx.inputs();
            let a = inputs.elicit("confirm", "Read it?", json!({"type": "object"}))?;
            inputs.finish()?;
            Ok::<_, HandlerError>(format!("item {}", a.unwrap_or_default()))
        });
        Server::builder("fuzz", "1")
            .tools([two_rounds, typed, plain])
            .prompt(prompt)
            .resource(template)
            .build()
            .expect("the fuzz server builds")
    })
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime"))
}

fn check_outcome(s: &Server, id: &Value, outcome: &Result<Value, mcp_protocol::ProtocolError>) {
    if let Err(e) = outcome {
        assert_ne!(e.code(), -32603, "internal error: {}", e.message());
    }
    let bytes = s.encode_response(id, &outcome.clone().map(mcp_server::Reply::from));
    assert!(serde_json::from_slice::<Value>(&bytes).is_ok());
}

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let Ok(Incoming::Request(req)) = parse_incoming(data, 64) else { return };
    let s = server();
    runtime().block_on(async {
        let first = s.handle(req.clone(), RequestEnv::default()).await;
        check_outcome(s, &req.id, &first);
        let Ok(v) = &first else { return };
        let Some(state) = v.get("requestState").and_then(Value::as_str) else { return };
        let mut params = req.params.clone();
        params.insert("requestState".into(), json!(state));
        let retry = Request { id: req.id.clone(), method: req.method.clone(), params };
        let second = s.handle(retry, RequestEnv::default()).await;
        check_outcome(s, &req.id, &second);
    });
}
