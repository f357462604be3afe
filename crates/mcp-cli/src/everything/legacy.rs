//! Fixtures of the conformance suite's legacy-era (2025-11-25) server scenarios. They ask for
//! client input with `ctx.inputs()` like every other handler: a legacy session turns that into
//! server-to-client requests, a modern client gets an `input_required` result.

use super::fixtures::{no_args, sampling, text};
use mcp::prelude::*;
use mcp::server::ServerBuilder;
use std::time::Duration;

fn with_string_arg(name: &str, description: &str, arg: &str) -> Value {
    json!({"name": name, "description": description,
           "inputSchema": {"type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]}})
}

/// The form answer as the reference fixtures report it.
fn elicitation_summary(answer: &Value) -> String {
    let action = answer.get("action").and_then(Value::as_str).unwrap_or("unknown");
    let content = answer.get("content").cloned().unwrap_or(Value::Null);
    format!("Elicitation completed: action={action}, content={content}")
}

/// Asks one form question (`key` "form") and answers with what came back.
async fn elicit_once(ctx: Context, message: &str, schema: Value) -> Result<Value, HandlerError> {
    let mut inputs = ctx.inputs();
    let answer = inputs.elicit("form", message, schema)?;
    inputs.finish()?;
    Ok(text(elicitation_summary(&answer.unwrap_or_default())))
}

fn sep1034_schema() -> Value {
    json!({"type": "object", "required": [], "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": true}
    }})
}

fn sep1330_schema() -> Value {
    let titled = |v: &str, t: &str| json!({"const": v, "title": t});
    json!({"type": "object", "required": [], "properties": {
        "untitledSingle": {"type": "string", "description": "Pick one", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Pick one (titled)",
            "oneOf": [titled("value1", "First Option"), titled("value2", "Second Option"), titled("value3", "Third Option")]},
        "legacyEnum": {"type": "string", "description": "Pick one (legacy names)",
            "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Pick several", "minItems": 1, "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Pick several (titled)", "minItems": 1, "maxItems": 3,
            "items": {"anyOf": [titled("value1", "First Choice"), titled("value2", "Second Choice"), titled("value3", "Third Choice")]}}
    }})
}

/// Adds the legacy-era fixture tools.
pub fn register(b: ServerBuilder) -> ServerBuilder {
    b.tool_raw(
        no_args("test_reconnection", "Ends its response stream early; the client resumes it to get the result."),
        |ctx: Context, _args| async move {
            ctx.close_stream();
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok::<_, HandlerError>(text(
                "Reconnection test completed successfully: the result arrived on the resumed stream.",
            ))
        },
    )
    .tool_raw(
        no_args("test_tool_with_logging", "Sends three log messages (at the level the client set) while it runs."),
        |ctx: Context, _args| async move {
            for message in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
                ctx.log("info", None, json!(message));
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok::<_, HandlerError>(text("Tool with logging executed successfully"))
        },
    )
    .tool_raw(
        with_string_arg("test_sampling", "Asks the client's model to answer `prompt`.", "prompt"),
        |ctx: Context, args| async move {
            let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or_default().to_owned();
            let mut inputs = ctx.inputs();
            let answer = inputs.sample("answer", sampling(&prompt, 100))?;
            inputs.finish()?;
            let answer = answer.unwrap_or_default();
            let reply = answer.pointer("/content/text").and_then(Value::as_str).unwrap_or("(no text)");
            Ok::<_, HandlerError>(text(format!("LLM response: {reply}")))
        },
    )
    .tool_raw(
        with_string_arg("test_elicitation", "Asks the user for a username and e-mail address.", "message"),
        |ctx: Context, args| async move {
            let message = args.get("message").and_then(Value::as_str).unwrap_or("Please provide your information");
            let schema = json!({"type": "object", "required": ["username", "email"], "properties": {
                "username": {"type": "string", "description": "Your username"},
                "email": {"type": "string", "description": "Your e-mail address"}}});
            elicit_once(ctx, message, schema).await
        },
    )
    .tool_raw(
        no_args("test_elicitation_sep1034_defaults", "Asks for a form whose fields all have defaults (SEP-1034)."),
        |ctx: Context, _args| {
            elicit_once(ctx, "Please review and update the form fields with defaults", sep1034_schema())
        },
    )
    .tool_raw(
        no_args("test_elicitation_sep1330_enums", "Asks for a form with every enum shape (SEP-1330)."),
        |ctx: Context, _args| elicit_once(ctx, "Please select options from the enum fields", sep1330_schema()),
    )
}
