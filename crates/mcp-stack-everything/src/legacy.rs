//! Fixtures of the conformance suite's legacy-era (2025-11-25) server scenarios. They ask for
//! client input with `ctx.inputs()` like every other handler: a legacy session turns that into
//! server-to-client requests, a modern client gets an `input_required` result.

use super::fixtures::{sampled_text, sampling};
use mcp::prelude::*;
use mcp::server::ServerBuilder;
use std::time::Duration;

/// The form answer as the reference fixtures report it.
fn elicitation_summary(answer: &Value) -> String {
    let action = answer.get("action").and_then(Value::as_str).unwrap_or("unknown");
    let content = answer.get("content").cloned().unwrap_or(Value::Null);
    format!("Elicitation completed: action={action}, content={content}")
}

/// Asks one form question (`key` "form") and answers with what came back.
fn elicit_once(ctx: &Context, message: &str, schema: Value) -> Result<String, HandlerError> {
    let mut inputs = ctx.inputs();
    let answer = inputs.elicit("form", message, schema)?;
    inputs.finish()?;
    Ok(elicitation_summary(&answer.unwrap_or_default()))
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

/// Ends its response stream early; the client resumes it to get the result.
#[tool]
async fn test_reconnection(ctx: Context) -> &'static str {
    ctx.close_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully: the result arrived on the resumed stream."
}

/// Sends three log messages (at the level the client set) while it runs.
#[tool]
async fn test_tool_with_logging(ctx: Context) -> &'static str {
    for message in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
        ctx.log(LoggingLevel::Info, None, json!(message));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Tool with logging executed successfully"
}

/// Asks the client's model to answer `prompt`.
#[tool]
async fn test_sampling(ctx: Context, prompt: String) -> Result<String, HandlerError> {
    let mut inputs = ctx.inputs();
    let answer = inputs.sample("answer", sampling(&prompt, 100))?;
    inputs.finish()?;
    Ok(format!("LLM response: {}", sampled_text(&answer.unwrap_or_default())))
}

/// Asks the user for a username and e-mail address.
#[tool]
async fn test_elicitation(ctx: Context, message: String) -> Result<String, HandlerError> {
    let schema = json!({"type": "object", "required": ["username", "email"], "properties": {
        "username": {"type": "string", "description": "Your username"},
        "email": {"type": "string", "description": "Your e-mail address"}}});
    elicit_once(&ctx, &message, schema)
}

/// Asks for a form whose fields all have defaults (SEP-1034).
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, HandlerError> {
    elicit_once(&ctx, "Please review and update the form fields with defaults", sep1034_schema())
}

/// Asks for a form with every enum shape (SEP-1330).
#[tool]
async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, HandlerError> {
    elicit_once(&ctx, "Please select options from the enum fields", sep1330_schema())
}

/// Adds the legacy-era fixture tools.
pub(super) fn register(b: ServerBuilder) -> ServerBuilder {
    b.tools([
        test_reconnection::tool(),
        test_tool_with_logging::tool(),
        test_sampling::tool(),
        test_elicitation::tool(),
        test_elicitation_sep1034_defaults::tool(),
        test_elicitation_sep1330_enums::tool(),
    ])
}
