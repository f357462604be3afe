//! Tools the official conformance suite's server scenarios call (names and behaviour are
//! fixed by the suite). `test_simple_text` stays first: the header scenarios call `tools[0]`.

use mcp::prelude::*;
use mcp::server::ServerBuilder;
use std::time::Duration;

/// A 1x1 PNG.
pub const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A tiny WAV file.
pub const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

pub(crate) fn text(t: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": t.into() }] })
}

pub(crate) fn no_args(name: &str, description: &str) -> Value {
    json!({ "name": name, "description": description, "inputSchema": { "type": "object", "properties": {} } })
}

/// Registers a no-argument tool returning a fixed result.
fn fixed(b: ServerBuilder, name: &str, description: &str, result: Value) -> ServerBuilder {
    b.tool_raw(no_args(name, description), move |_ctx: Context, _args| {
        let result = result.clone();
        async move { Ok::<_, HandlerError>(result) }
    })
}

/// The `name` of an accepted form elicitation answer, if well-formed.
///
/// A present answer that is not an `ElicitResult` is a protocol error (`-32602`).
pub(crate) fn accepted_field(answer: &Value, field: &str) -> Result<Option<String>, HandlerError> {
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .filter(|a| matches!(*a, "accept" | "decline" | "cancel"))
        .ok_or_else(|| {
            HandlerError::Protocol(ProtocolError::invalid_params("invalid inputResponses: expected an ElicitResult"))
        })?;
    if action != "accept" {
        return Ok(None);
    }
    match answer.pointer(&format!("/content/{field}")) {
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Ok(Some(other.to_string())),
        None => Err(HandlerError::Protocol(ProtocolError::invalid_params(format!(
            "invalid inputResponses: missing content.{field}"
        )))),
    }
}

fn ask_name_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn confirm_schema() -> Value {
    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
}

/// First round: asks for confirmation and seals `{"issued": true}` into `requestState`. On the
/// retry the (framework-verified) state shows the question was asked, so nothing more is needed.
fn ask_confirmation_once(ctx: &Context) -> Result<(), HandlerError> {
    if ctx.state().get("issued").is_none() {
        let mut inputs = ctx.inputs();
        inputs.elicit("confirm", "Please confirm", confirm_schema())?;
        inputs.set_state(json!({"issued": true}));
        inputs.finish()?;
    }
    Ok(())
}

pub(crate) fn sampling(question: &str, max_tokens: u32) -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": question}}], "maxTokens": max_tokens})
}

/// Adds the content, diagnostic and MRTR fixture tools.
pub fn register(b: ServerBuilder) -> ServerBuilder {
    let b = fixed(
        b,
        "test_simple_text",
        "Returns a simple text response.",
        text("This is a simple text response for testing."),
    );
    let b = fixed(
        b,
        "test_image_content",
        "Returns an image content block.",
        json!({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}),
    );
    let b = fixed(
        b,
        "test_audio_content",
        "Returns an audio content block.",
        json!({"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}),
    );
    let b = fixed(
        b,
        "test_embedded_resource",
        "Returns an embedded resource.",
        json!({"content": [{"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}}]}),
    );
    let b = fixed(
        b,
        "test_multiple_content_types",
        "Returns text, image and resource content together.",
        json!({"content": [
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
        ]}),
    );
    let b = b.tool_raw(
        no_args("test_tool_with_progress", "Reports progress 0, 50, 100 before answering."),
        |ctx: Context, _args| async move {
            for p in [0.0, 50.0, 100.0] {
                ctx.progress(p, Some(100.0), None);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok::<_, HandlerError>(text("Progress complete"))
        },
    );
    let b = b.tool_raw(
        no_args("test_error_handling", "Always fails with a tool execution error."),
        |_ctx: Context, _args| async move {
            Err::<Value, _>(HandlerError::tool("This tool intentionally returns an error for testing"))
        },
    );
    let b = b.tool_raw(
        json!({"name": "json_schema_2020_12_tool",
               "description": "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
               "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                   "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                                  "contactMethod": {"type": "string", "enum": ["phone", "email"]}, "phone": {"type": "string"}, "email": {"type": "string"}},
                   "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                   "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                   "then": {"required": ["phone"]}, "else": {"required": ["email"]},
                   "additionalProperties": false}}),
        |_ctx: Context, args| async move { Ok::<_, HandlerError>(text(format!("JSON Schema 2020-12 tool called with: {}", Value::Object(args)))) },
    );
    let b = b.tool_raw(
        no_args("test_missing_capability", "Needs the client's sampling capability."),
        |ctx: Context, _args| async move {
            ctx.require_capability(json!({"sampling": {}}))?;
            Ok::<_, HandlerError>(text("Success"))
        },
    );
    let b = b.tool_raw(
        no_args("test_streaming_elicitation", "Asks for confirmation through an input_required result."),
        |ctx: Context, _args| async move {
            let mut inputs = ctx.inputs();
            let answer = inputs.elicit("confirm", "Please confirm", confirm_schema())?;
            inputs.finish()?;
            accepted_field(&answer.unwrap_or_default(), "ok")?;
            Ok::<_, HandlerError>(text("Streaming complete"))
        },
    );
    let b = b.tool_raw(
        no_args("test_logging_tool", "Logs at info level when the request asks for logs."),
        |ctx: Context, _args| async move {
            ctx.log("info", Some("conformance"), json!("test_logging_tool evaluated"));
            Ok::<_, HandlerError>(text("Logging evaluated"))
        },
    );
    let b = b.tool_raw(
        no_args("test_trigger_tool_change", "Announces tools/list_changed to listeners (the list stays the same)."),
        |ctx: Context, _args| async move {
            ctx.server().notify(ChangeEvent::ToolsListChanged);
            Ok::<_, HandlerError>(text("Mutation triggered"))
        },
    );
    let b = b.tool_raw(
        no_args("test_trigger_prompt_change", "Announces prompts/list_changed to listeners (the list stays the same)."),
        |ctx: Context, _args| async move {
            ctx.server().notify(ChangeEvent::PromptsListChanged);
            Ok::<_, HandlerError>(text("Mutation triggered"))
        },
    );
    let b = b.tool_raw(
        json!({"name": "test_x_mcp_header", "description": "Echoes a region mirrored into the Mcp-Param-Region header.",
               "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "description": "Mirrored into Mcp-Param-Region", "x-mcp-header": "Region"}}, "required": ["region"]}}),
        |_ctx: Context, args| async move {
            Ok::<_, HandlerError>(text(format!("region={}", args.get("region").and_then(Value::as_str).unwrap_or_default())))
        },
    );
    mrtr_tools(b)
}

fn mrtr_tools(b: ServerBuilder) -> ServerBuilder {
    b.tool_raw(
        no_args("test_input_required_result_elicitation", "Asks for the user's name (MRTR elicitation)."),
        |ctx: Context, _args| async move {
            let mut inputs = ctx.inputs();
            let answer = inputs.elicit("user_name", "What is your name?", ask_name_schema())?;
            inputs.finish()?;
            Ok::<_, HandlerError>(match accepted_field(&answer.unwrap_or_default(), "name")? {
                Some(name) => text(format!("Hello, {name}!")),
                None => text("User declined"),
            })
        },
    )
    .tool_raw(
        no_args("test_input_required_result_sampling", "Asks the client's model a question (MRTR sampling)."),
        |ctx: Context, _args| async move {
            let mut inputs = ctx.inputs();
            let answer = inputs.sample("capital_question", sampling("What is the capital of France?", 100))?;
            inputs.finish()?;
            let answer = answer.unwrap_or_default();
            let reply = answer.pointer("/content/text").and_then(Value::as_str).unwrap_or("(no text)");
            Ok::<_, HandlerError>(text(format!("Sampling result: {reply}")))
        },
    )
    .tool_raw(
        no_args("test_input_required_result_list_roots", "Asks for the client's roots (MRTR roots)."),
        |ctx: Context, _args| async move {
            let mut inputs = ctx.inputs();
            let answer = inputs.roots("client_roots")?;
            inputs.finish()?;
            let n = answer.unwrap_or_default().get("roots").and_then(Value::as_array).map_or(0, Vec::len);
            Ok::<_, HandlerError>(text(format!("Found {n} root(s)")))
        },
    )
    .tool_raw(
        no_args("test_input_required_result_request_state", "Carries sealed state across an MRTR round."),
        |ctx: Context, _args| async move {
            ask_confirmation_once(&ctx)?;
            let answer = ctx.input_responses().and_then(|r| r.get("confirm")).cloned().unwrap_or_default();
            accepted_field(&answer, "ok")?;
            Ok::<_, HandlerError>(text("state-ok: requestState verified"))
        },
    )
    .tool_raw(
        no_args("test_input_required_result_multiple_inputs", "Asks for elicitation, sampling and roots at once."),
        |ctx: Context, _args| async move {
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
            Ok::<_, HandlerError>(text(format!("{name}: {greeting} ({n} root(s))")))
        },
    )
    .tool_raw(
        no_args("test_input_required_result_multi_round", "Asks two questions in two rounds."),
        |ctx: Context, _args| async move {
            let round = ctx.state().get("round").and_then(Value::as_u64).unwrap_or(1);
            let mut inputs = ctx.inputs();
            if round == 1 {
                let a = inputs.elicit("step1", "Step 1: What is your name?", ask_name_schema())?;
                inputs.finish()?;
                let name = accepted_field(&a.unwrap_or_default(), "name")?.unwrap_or_else(|| "unknown".into());
                let mut next = ctx.inputs();
                next.elicit(
                    "step2",
                    "Step 2: What is your favorite color?",
                    json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}),
                )?;
                next.set_state(json!({"round": 2, "name": name}));
                next.finish()?;
                unreachable!("step2 is never answered in round 1");
            }
            let name = ctx.state().get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
            let color = inputs.elicit(
                "step2",
                "Step 2: What is your favorite color?",
                json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}),
            )?;
            inputs.set_state(ctx.state().clone());
            inputs.finish()?;
            let color = accepted_field(&color.unwrap_or_default(), "color")?.unwrap_or_else(|| "nothing".into());
            Ok::<_, HandlerError>(text(format!("Multi-round complete for {name} who likes {color}")))
        },
    )
    .tool_raw(
        no_args("test_input_required_result_tampered_state", "Rejects a requestState that was modified."),
        |ctx: Context, _args| async move {
            // The framework has already verified the sealed state (a tampered one never gets here).
            ask_confirmation_once(&ctx)?;
            Ok::<_, HandlerError>(text("state verified"))
        },
    )
    .tool_raw(
        no_args(
            "test_input_required_result_capabilities",
            "Asks only for inputs the client declared capabilities for.",
        ),
        |ctx: Context, _args| async move {
            if let Some(r) = ctx.input_responses() {
                let keys: Vec<&str> = r.keys().map(String::as_str).collect();
                return Ok::<_, HandlerError>(text(format!("capabilities-ok: received {}", keys.join(", "))));
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
            Ok(text("capabilities-ok: the client declared no input capabilities"))
        },
    )
}
