//! The declarative API end to end, in memory: definitions derived by `#[tool]`, `#[prompt]`,
//! `#[resource]`, extractors, typed returns and typed elicitation, served by `Server::handle`.

use mcp::prelude::*;
use mcp::protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION};
use mcp::protocol::Request;
use mcp::server::{BuildError, RequestEnv};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn request(method: &str, mut params: Value, caps: Value) -> Request {
    params["_meta"] = json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: caps });
    Request { id: json!(1), method: method.into(), params: params.as_object().cloned().unwrap_or_default() }
}

async fn call(s: &Server, method: &str, params: Value) -> Result<Value, ProtocolError> {
    s.handle(request(method, params, json!({"elicitation": {}})), RequestEnv::default()).await
}

/// The definition `name` in the list `method` returns under `key`.
async fn listed(s: &Server, method: &str, key: &str, name: &str) -> Value {
    let list = call(s, method, json!({})).await.unwrap();
    list[key].as_array().unwrap().iter().find(|d| d["name"] == name).cloned().expect("listed")
}

/// Adds two integers.
///
/// Overflow is reported to the model.
#[tool(title = "Adder", read_only, open_world = false, icon = "https://example.com/add.png")]
async fn add(
    #[arg(description = "First addend")] a: i64,
    b: i64,
    State(calls): State<Arc<AtomicUsize>>,
) -> Result<Json<Sum>, String> {
    calls.fetch_add(1, Ordering::SeqCst);
    let sum = a.checked_add(b).ok_or_else(|| "integer overflow".to_owned())?;
    Ok(Json(Sum { sum }))
}

/// What `add` returns.
#[schema]
struct Sum {
    sum: i64,
}

/// Parses a number.
#[tool(name = "parse-number", task_support = "optional")]
async fn parse(text: String, #[arg(default)] strict: bool) -> Result<String, HandlerError> {
    let n: i64 = text.trim().parse()?;
    if strict && n < 0 {
        return Err(HandlerError::invalid_params("negative"));
    }
    Ok(format!("{n}"))
}

/// No arguments at all.
#[tool]
async fn ping(ctx: Context) -> String {
    format!("pong from {}", ctx.method())
}

/// Greets someone.
#[prompt(title = "Greeting")]
async fn greet(
    #[arg(description = "Who to greet", complete = complete_name)] name: String,
    times: Option<u32>,
) -> String {
    format!("Hello {name}! x{}", times.unwrap_or(1))
}

fn complete_name(prefix: &str) -> Vec<String> {
    ["ada", "alan", "grace"].into_iter().filter(|n| n.starts_with(prefix)).map(String::from).collect()
}

/// One user's profile.
#[resource("users://{id}/profile", mime_type = "application/json")]
async fn profile(id: u32) -> Json<Value> {
    Json(json!({ "id": id }))
}

/// The readme.
#[resource("docs://readme", name = "readme", mime_type = "text/markdown")]
async fn readme() -> &'static str {
    "# Hello"
}

/// The user's favourite colour.
#[schema]
struct Colour {
    /// The colour.
    colour: String,
}

/// Asks for a colour.
#[tool]
async fn ask_colour(ctx: Context, State(entered): State<Arc<AtomicUsize>>) -> Result<String, HandlerError> {
    entered.fetch_add(1, Ordering::SeqCst);
    Ok(match ctx.elicit::<Colour>("Favourite colour?")? {
        Elicitation::Accept(c) => format!("you like {}", c.colour),
        Elicitation::Decline => "declined".into(),
        Elicitation::Cancel => "cancelled".into(),
    })
}

fn server(calls: Arc<AtomicUsize>) -> Server {
    Server::builder("macros", "1.0.0")
        .state(calls)
        .tools([add::tool(), parse::tool(), ping::tool(), ask_colour::tool()])
        .prompt(greet::prompt())
        .resources([profile::resource(), readme::resource()])
        .build()
        .expect("valid definitions")
}

#[tokio::test]
async fn tool_definitions_come_from_the_function() {
    let s = server(Arc::default());
    let d = listed(&s, "tools/list", "tools", "add").await;
    assert_eq!(d["description"], "Adds two integers.\n\nOverflow is reported to the model.");
    assert_eq!(d["title"], "Adder");
    assert_eq!(d["annotations"], json!({"readOnlyHint": true, "openWorldHint": false}));
    assert_eq!(d["icons"], json!([{"src": "https://example.com/add.png"}]));
    assert_eq!(d["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(d["inputSchema"]["properties"]["a"]["description"], "First addend");
    assert!(d["inputSchema"]["properties"].get("calls").is_none(), "extractors are not arguments");
    assert_eq!(d["outputSchema"]["properties"]["sum"]["type"], "integer");
    let p = listed(&s, "tools/list", "tools", "parse-number").await;
    assert_eq!(p["inputSchema"]["required"], json!(["text"]), "a #[arg(default)] argument is optional");
    assert!(p.get("outputSchema").is_none());
    assert_eq!(s.tool("parse-number").unwrap().task_support(), TaskSupport::Optional);
    let ping = listed(&s, "tools/list", "tools", "ping").await;
    assert_eq!(ping["inputSchema"], json!({"type": "object", "properties": {}}));
}

#[tokio::test]
async fn tools_get_typed_arguments_and_state_and_return_typed_results() {
    let calls = Arc::new(AtomicUsize::new(0));
    let s = server(calls.clone());
    let r = call(&s, "tools/call", json!({"name": "add", "arguments": {"a": 2, "b": 3}})).await.unwrap();
    assert_eq!(r["structuredContent"], json!({"sum": 5}));
    assert_eq!(r["content"][0]["text"], r#"{"sum":5}"#);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let r = call(&s, "tools/call", json!({"name": "add", "arguments": {"a": i64::MAX, "b": 1}})).await.unwrap();
    assert_eq!((r["isError"].as_bool(), r["content"][0]["text"].as_str()), (Some(true), Some("integer overflow")));
    let r = call(&s, "tools/call", json!({"name": "add", "arguments": {"a": "x", "b": 1}})).await.unwrap();
    assert_eq!(r["isError"], true, "the derived schema is enforced: {r}");
    let r = call(&s, "tools/call", json!({"name": "ping"})).await.unwrap();
    assert_eq!(r["content"][0]["text"], "pong from tools/call");
}

#[tokio::test]
async fn question_mark_turns_errors_into_tool_errors_and_protocol_errors_stay_protocol_errors() {
    let s = server(Arc::default());
    let r = call(&s, "tools/call", json!({"name": "parse-number", "arguments": {"text": "12"}})).await.unwrap();
    assert_eq!(r["content"][0]["text"], "12");
    let r = call(&s, "tools/call", json!({"name": "parse-number", "arguments": {"text": "x"}})).await.unwrap();
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("invalid digit"), "{r}");
    let e = call(&s, "tools/call", json!({"name": "parse-number", "arguments": {"text": "-1", "strict": true}}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), -32602);
}

#[tokio::test]
async fn the_annotated_functions_stay_callable() {
    let state = State(Arc::new(AtomicUsize::new(0)));
    assert_eq!(add(1, 2, state).await.unwrap().0.sum, 3);
    assert_eq!(greet("Ada".into(), Some(2)).await, "Hello Ada! x2");
}

#[tokio::test]
async fn prompts_get_typed_arguments_and_completions() {
    let s = server(Arc::default());
    let d = listed(&s, "prompts/list", "prompts", "greet").await;
    assert_eq!(d["title"], "Greeting");
    let args = d["arguments"].as_array().unwrap();
    assert_eq!(args[0], json!({"name": "name", "description": "Who to greet", "required": true}));
    assert_eq!((args[1]["name"].as_str(), args[1]["required"].as_bool()), (Some("times"), Some(false)));
    let r =
        call(&s, "prompts/get", json!({"name": "greet", "arguments": {"name": "Ada", "times": "3"}})).await.unwrap();
    assert_eq!(r["messages"][0], json!({"role": "user", "content": {"type": "text", "text": "Hello Ada! x3"}}));
    let e = call(&s, "prompts/get", json!({"name": "greet", "arguments": {"name": "Ada", "times": "many"}}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), -32602, "{e}");
    let e = call(&s, "prompts/get", json!({"name": "greet", "arguments": {}})).await.unwrap_err();
    assert_eq!(e.code(), -32602, "a required argument is missing");
    let c = call(
        &s,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}),
    )
    .await
    .unwrap();
    assert_eq!(c["completion"]["values"], json!(["ada", "alan"]));
    assert!(s.capabilities().completions.is_some());
}

#[tokio::test]
async fn resource_templates_pass_typed_variables() {
    let s = server(Arc::default());
    let t = listed(&s, "resources/templates/list", "resourceTemplates", "profile").await;
    assert_eq!(t["uriTemplate"], "users://{id}/profile");
    assert_eq!(t["description"], "One user's profile.");
    let r = call(&s, "resources/read", json!({"uri": "users://7/profile"})).await.unwrap();
    assert_eq!(
        r["contents"][0],
        json!({"uri": "users://7/profile", "mimeType": "application/json", "text": "{\"id\":7}"})
    );
    assert!(r.get("ttlMs").is_some(), "the server's read cache defaults are added");
    let e = call(&s, "resources/read", json!({"uri": "users://seven/profile"})).await.unwrap_err();
    assert_eq!(e.code(), -32602, "a variable that does not parse is invalid params");
    let r = call(&s, "resources/read", json!({"uri": "docs://readme"})).await.unwrap();
    assert_eq!(r["contents"][0], json!({"uri": "docs://readme", "mimeType": "text/markdown", "text": "# Hello"}));
}

#[tokio::test]
async fn typed_elicitation_derives_the_form_and_reads_the_answer_on_the_retry() {
    let entered = Arc::new(AtomicUsize::new(0));
    let s = server(entered.clone());
    let first = call(&s, "tools/call", json!({"name": "ask_colour"})).await.unwrap();
    assert_eq!(first["resultType"], "input_required");
    let (key, req) = first["inputRequests"].as_object().unwrap().iter().next().unwrap();
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(req["params"]["requestedSchema"]["properties"]["colour"]["type"], "string");
    assert_eq!(req["params"]["requestedSchema"]["required"], json!(["colour"]));
    let state = first["requestState"].clone();
    let retry = |answer: Value| json!({"name": "ask_colour", "inputResponses": {key.clone(): answer}, "requestState": state.clone()});
    let r = call(&s, "tools/call", retry(json!({"action": "accept", "content": {"colour": "teal"}}))).await.unwrap();
    assert_eq!(r["content"][0]["text"], "you like teal");
    assert_eq!(entered.load(Ordering::SeqCst), 2, "the handler ran again from the top");
    let r = call(&s, "tools/call", retry(json!({"action": "decline"}))).await.unwrap();
    assert_eq!(r["content"][0]["text"], "declined");
    for bad in [json!({"action": "accept", "content": {"colour": 5}}), json!({"nothing": true}), json!(7)] {
        let e = call(&s, "tools/call", retry(bad.clone())).await.unwrap_err();
        assert_eq!(e.code(), -32602, "{bad} is refused, not a panic");
    }
    let no_caps = s.handle(request("tools/call", json!({"name": "ask_colour"}), json!({})), RequestEnv::default());
    assert_eq!(no_caps.await.unwrap_err().code(), -32021, "asking needs the elicitation capability");
}

/// A handler taking `ctx: Context` is unit-tested by calling the function with
/// `Context::for_test()`, the client's answers scripted.
#[tokio::test]
async fn a_handler_taking_context_is_called_directly_with_a_test_context() {
    use mcp::types::{ElicitAction, ElicitResult, ElicitValue};
    let entered = Arc::new(AtomicUsize::new(0));
    let first = ask_colour(Context::for_test().build(), State(entered.clone())).await;
    let Err(HandlerError::InputRequired(ir)) = first else { panic!("the first round asks: {first:?}") };
    assert_eq!(ir.requests["input-0"]["method"], "elicitation/create");
    let mut teal = ElicitResult::new(ElicitAction::Accept);
    teal.content = Some([("colour".to_owned(), ElicitValue::String("teal".into()))].into());
    let r = ask_colour(Context::for_test().answer(teal).build(), State(entered.clone())).await;
    assert_eq!(r.unwrap(), "you like teal");
    let declined = Context::for_test().answer(ElicitResult::new(ElicitAction::Decline)).build();
    assert_eq!(ask_colour(declined, State(entered.clone())).await.unwrap(), "declined");
    assert_eq!(entered.load(Ordering::SeqCst), 3);
    // A client that cannot elicit: the handler's question is refused.
    let no_caps = Context::for_test().capabilities(json!({})).build();
    let e = ask_colour(no_caps, State(entered)).await.unwrap_err();
    assert!(matches!(e, HandlerError::Protocol(ref p) if p.code() == -32021), "{e:?}");
}

#[test]
fn misconfigurations_are_build_errors() {
    let missing_state = Server::builder("t", "1").tool(add::tool()).build().unwrap_err();
    assert!(matches!(&missing_state, BuildError::MissingState(m) if m.contains("AtomicUsize")), "{missing_state}");
    let reserved = Tool::new("x").meta("io.modelcontextprotocol/private", json!(1)).handler(|| async { "" });
    let e = Server::builder("t", "1").tool(reserved).build().unwrap_err();
    assert!(matches!(e, BuildError::InvalidMeta { .. }), "{e}");
    let invalid = Tool::new("x").meta("not a key!", json!(1)).handler(|| async { "" });
    assert!(matches!(Server::builder("t", "1").tool(invalid).build().unwrap_err(), BuildError::InvalidMeta { .. }));
    let ok = Tool::new("x").meta("com.example/flag", json!(true)).handler(|| async { "" });
    let s = Server::builder("t", "1").tool(ok).build().unwrap();
    assert_eq!(s.tool("x").map(|t| t.header_params().len()), Some(0));
    let dup = Server::builder("t", "1").tools([ping::tool(), ping::tool()]).build().unwrap_err();
    assert!(matches!(dup, BuildError::Duplicate { .. }));
}

#[test]
fn the_builder_and_the_macro_produce_the_same_definition() {
    /// Pings.
    #[tool]
    async fn pinger() -> &'static str {
        "pong"
    }
    let by_hand = Tool::new("pinger").description("Pings.").handler(|| async { "pong" });
    assert_eq!(pinger::tool().definition(), by_hand.definition());
}

#[test]
fn misuse_is_a_compile_error() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
