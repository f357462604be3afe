//! Tools the official conformance suite's server scenarios call (names and behaviour are
//! fixed by the suite). `test_simple_text` stays first: the header scenarios call `tools[0]`.

use mcp::prelude::*;
use mcp::server::ServerBuilder;
use mcp::types::SamplingMessage;
use std::time::Duration;

/// A 1x1 PNG.
pub(super) const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A tiny WAV file.
pub(super) const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

type ToolResult = Result<CallToolResult, HandlerError>;

/// The `field` of an accepted form elicitation answer, if well-formed.
///
/// A present answer that is not an `ElicitResult` is a protocol error (`-32602`).
pub(crate) fn accepted_field(answer: &Value, field: &str) -> Result<Option<String>, HandlerError> {
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .filter(|a| matches!(*a, "accept" | "decline" | "cancel"))
        .ok_or_else(|| HandlerError::invalid_params("invalid inputResponses: expected an ElicitResult"))?;
    if action != "accept" {
        return Ok(None);
    }
    match answer.pointer(&format!("/content/{field}")) {
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Ok(Some(other.to_string())),
        None => Err(HandlerError::invalid_params(format!("invalid inputResponses: missing content.{field}"))),
    }
}

/// The text of a sampling answer.
pub(crate) fn sampled_text(answer: &Value) -> &str {
    answer.pointer("/content/text").and_then(Value::as_str).unwrap_or("(no text)")
}

fn ask_name_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn confirm_schema() -> Value {
    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
}

fn color_schema() -> Value {
    json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]})
}

/// Asks for confirmation under `confirm`, sealing `{"issued": true}` into `requestState`.
///
/// The framework honours an answer only under a key the previous round issued, read from a
/// verified `requestState`: an answer here proves the state was sealed by this server for this
/// request. Without one (no state, or a `confirm` the state did not issue) the question is asked
/// again; a malformed answer is `-32602`.
fn confirmation(ctx: &Context) -> Result<Value, HandlerError> {
    let mut inputs = ctx.inputs();
    let answer = inputs.elicit("confirm", "Please confirm", confirm_schema())?;
    inputs.set_state(json!({"issued": true}));
    inputs.finish()?;
    let answer = answer.unwrap_or_default();
    accepted_field(&answer, "ok")?;
    Ok(answer)
}

/// A sampling request for one user question.
pub(crate) fn sampling(question: &str, max_tokens: u32) -> Value {
    let messages = vec![SamplingMessage::text(Role::User, question)];
    json!({"messages": messages, "maxTokens": max_tokens})
}

/// Returns a simple text response.
#[tool]
async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns an image content block.
#[tool]
async fn test_image_content() -> ImageContent {
    ImageContent::new(PNG, "image/png")
}

/// Returns an audio content block.
#[tool]
async fn test_audio_content() -> AudioContent {
    AudioContent::new(WAV, "audio/wav")
}

fn embedded(uri: &str, mime: &str, text: &str) -> EmbeddedResource {
    EmbeddedResource::new(TextResourceContents { mime_type: Some(mime.into()), ..TextResourceContents::new(uri, text) })
}

/// Returns an embedded resource.
#[tool]
async fn test_embedded_resource() -> EmbeddedResource {
    embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")
}

/// Returns text, image and resource content together.
#[tool]
async fn test_multiple_content_types() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG, "image/png"),
        embedded("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#).into(),
    ]
}

/// Reports progress 0, 50, 100 before answering.
#[tool]
async fn test_tool_with_progress(ctx: Context) -> &'static str {
    for p in [0.0, 50.0, 100.0] {
        ctx.progress(p, Some(100.0), None);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Progress complete"
}

/// Always fails with a tool execution error.
#[tool]
async fn test_error_handling() -> Result<String, &'static str> {
    Err("This tool intentionally returns an error for testing")
}

fn json_schema_2020_12() -> Tool {
    Tool::new("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)")
        .input_schema(json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                           "contactMethod": {"type": "string", "enum": ["phone", "email"]}, "phone": {"type": "string"}, "email": {"type": "string"}},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]}, "else": {"required": ["email"]},
            "additionalProperties": false}))
        .handler(|Args(a): Args<Value>| async move { format!("JSON Schema 2020-12 tool called with: {a}") })
}

/// Needs the client's sampling capability.
#[tool]
async fn test_missing_capability(ctx: Context) -> ToolResult {
    ctx.require_capability(json!({"sampling": {}}))?;
    Ok(CallToolResult::text("Success"))
}

/// Asks for confirmation through an input_required result.
#[tool]
async fn test_streaming_elicitation(ctx: Context) -> ToolResult {
    let mut inputs = ctx.inputs();
    let answer = inputs.elicit("confirm", "Please confirm", confirm_schema())?;
    inputs.finish()?;
    accepted_field(&answer.unwrap_or_default(), "ok")?;
    Ok(CallToolResult::text("Streaming complete"))
}

/// Logs at info level when the request asks for logs.
#[tool]
async fn test_logging_tool(ctx: Context) -> &'static str {
    ctx.log(LoggingLevel::Info, Some("conformance"), json!("test_logging_tool evaluated"));
    "Logging evaluated"
}

/// Announces tools/list_changed to listeners (the list stays the same).
#[tool]
async fn test_trigger_tool_change(ctx: Context) -> &'static str {
    ctx.server().notify(ChangeEvent::ToolsListChanged);
    "Mutation triggered"
}

/// Announces prompts/list_changed to listeners (the list stays the same).
#[tool]
async fn test_trigger_prompt_change(ctx: Context) -> &'static str {
    ctx.server().notify(ChangeEvent::PromptsListChanged);
    "Mutation triggered"
}

fn x_mcp_header() -> Tool {
    Tool::new("test_x_mcp_header")
        .description("Echoes a region mirrored into the Mcp-Param-Region header.")
        .input_schema(json!({"type": "object", "properties": {"region": {"type": "string",
            "description": "Mirrored into Mcp-Param-Region", "x-mcp-header": "Region"}}, "required": ["region"]}))
        .handler(|Args(a): Args<Value>| async move { format!("region={}", a["region"].as_str().unwrap_or_default()) })
}

/// Adds the content, diagnostic and MRTR fixture tools.
pub(super) fn register(b: ServerBuilder) -> ServerBuilder {
    b.tools([
        test_simple_text::tool(),
        test_image_content::tool(),
        test_audio_content::tool(),
        test_embedded_resource::tool(),
        test_multiple_content_types::tool(),
        test_tool_with_progress::tool(),
        test_error_handling::tool(),
        json_schema_2020_12(),
        test_missing_capability::tool(),
        test_streaming_elicitation::tool(),
        test_logging_tool::tool(),
        test_trigger_tool_change::tool(),
        test_trigger_prompt_change::tool(),
        x_mcp_header(),
        test_input_required_result_elicitation::tool(),
        test_input_required_result_sampling::tool(),
        test_input_required_result_list_roots::tool(),
        test_input_required_result_request_state::tool(),
        test_input_required_result_multiple_inputs::tool(),
        test_input_required_result_multi_round::tool(),
        test_input_required_result_tampered_state::tool(),
        test_input_required_result_capabilities::tool(),
    ])
}

/// Asks for the user's name (MRTR elicitation).
#[tool]
async fn test_input_required_result_elicitation(ctx: Context) -> ToolResult {
    let mut inputs = ctx.inputs();
    let answer = inputs.elicit("user_name", "What is your name?", ask_name_schema())?;
    inputs.finish()?;
    Ok(match accepted_field(&answer.unwrap_or_default(), "name")? {
        Some(name) => CallToolResult::text(format!("Hello, {name}!")),
        None => CallToolResult::text("User declined"),
    })
}

/// Asks the client's model a question (MRTR sampling).
#[tool]
async fn test_input_required_result_sampling(ctx: Context) -> ToolResult {
    let mut inputs = ctx.inputs();
    let answer = inputs.sample("capital_question", sampling("What is the capital of France?", 100))?;
    inputs.finish()?;
    Ok(CallToolResult::text(format!("Sampling result: {}", sampled_text(&answer.unwrap_or_default()))))
}

/// Asks for the client's roots (MRTR roots).
#[tool]
async fn test_input_required_result_list_roots(ctx: Context) -> ToolResult {
    let mut inputs = ctx.inputs();
    let answer = inputs.roots("client_roots")?;
    inputs.finish()?;
    let n = answer.unwrap_or_default().get("roots").and_then(Value::as_array).map_or(0, Vec::len);
    Ok(CallToolResult::text(format!("Found {n} root(s)")))
}

/// Carries sealed state across an MRTR round.
#[tool]
async fn test_input_required_result_request_state(ctx: Context) -> ToolResult {
    confirmation(&ctx)?;
    Ok(CallToolResult::text("state-ok: requestState verified"))
}

/// Asks for elicitation, sampling and roots at once.
#[tool]
async fn test_input_required_result_multiple_inputs(ctx: Context) -> ToolResult {
    let mut inputs = ctx.inputs();
    let name = inputs.elicit("user_name", "What is your name?", ask_name_schema())?;
    let greeting = inputs.sample("greeting", sampling("Generate a greeting", 50))?;
    let roots = inputs.roots("client_roots")?;
    inputs.set_state(json!({"round": 1}));
    inputs.finish()?;
    let name = accepted_field(&name.unwrap_or_default(), "name")?.unwrap_or_else(|| "unknown".into());
    let greeting =
        greeting.unwrap_or_default().pointer("/content/text").and_then(Value::as_str).unwrap_or("").to_owned();
    let n = roots.unwrap_or_default().get("roots").and_then(Value::as_array).map_or(0, Vec::len);
    Ok(CallToolResult::text(format!("{name}: {greeting} ({n} root(s))")))
}

/// Asks two questions in two rounds.
#[tool]
async fn test_input_required_result_multi_round(ctx: Context) -> ToolResult {
    let state = ctx.round_state();
    let name = match state.get("name").and_then(Value::as_str) {
        Some(name) => name.to_owned(),
        None => {
            let mut inputs = ctx.inputs();
            let a = inputs.elicit("step1", "Step 1: What is your name?", ask_name_schema())?;
            inputs.finish()?;
            accepted_field(&a.unwrap_or_default(), "name")?.unwrap_or_else(|| "unknown".into())
        }
    };
    let mut inputs = ctx.inputs();
    let color = inputs.elicit("step2", "Step 2: What is your favorite color?", color_schema())?;
    inputs.set_state(json!({"round": 2, "name": name}));
    inputs.finish()?;
    let color = accepted_field(&color.unwrap_or_default(), "color")?.unwrap_or_else(|| "nothing".into());
    Ok(CallToolResult::text(format!("Multi-round complete for {name} who likes {color}")))
}

/// Rejects a requestState that was modified.
#[tool]
async fn test_input_required_result_tampered_state(ctx: Context) -> ToolResult {
    // The framework has already verified the sealed state (a tampered one never gets here).
    confirmation(&ctx)?;
    Ok(CallToolResult::text("state verified"))
}

/// Asks only for inputs the client declared capabilities for.
#[tool]
async fn test_input_required_result_capabilities(ctx: Context) -> ToolResult {
    // Only answers to the keys the previous round issued get here.
    if let Some(r) = ctx.input_responses() {
        let keys: Vec<&str> = r.keys().map(String::as_str).collect();
        return Ok(CallToolResult::text(format!("capabilities-ok: received {}", keys.join(", "))));
    }
    let mut inputs = ctx.inputs();
    let sample = sampling("Sample request", 50);
    if inputs.client_supports("sampling/createMessage", &sample) {
        inputs.sample("sample_input", sample)?;
    }
    let elicit = json!({"mode": "form"});
    if inputs.client_supports("elicitation/create", &elicit) {
        inputs.elicit("elicit_input", "Please provide input", ask_name_schema())?;
    }
    if inputs.client_supports("roots/list", &json!({})) {
        inputs.roots("roots_input")?;
    }
    inputs.finish()?;
    Ok(CallToolResult::text("capabilities-ok: the client declared no input capabilities"))
}
