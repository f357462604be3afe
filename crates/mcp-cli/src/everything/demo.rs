//! Demo tools beyond the conformance fixtures: echo (benchmarks), progress, elicitation,
//! sampling and run-time list changes.

use super::fixtures::text;
use mcp::prelude::*;
use mcp::server::ServerBuilder;
use std::time::Duration;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text to send back.
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CountArgs {
    /// How many steps to count (1-100).
    #[schemars(range(min = 1, max = 100))]
    steps: u32,
    /// Milliseconds between steps.
    #[serde(default)]
    delay_ms: Option<u64>,
}

/// Adds the demo tools to `b`.
pub fn register(b: ServerBuilder) -> ServerBuilder {
    b.tool(
        json!({"name": "echo", "title": "Echo", "description": "Returns the given text unchanged.",
               "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}}),
        |_ctx: Context, a: EchoArgs| async move { Ok(text(a.text)) },
    )
    .tool_with_output(
        json!({"name": "add", "description": "Adds two integers; the sum is returned as structured content."}),
        |_ctx: Context, a: AddArgs| async move {
            let sum = a.a.checked_add(a.b).ok_or_else(|| HandlerError::tool("integer overflow"))?;
            Ok(Sum { sum })
        },
    )
    .tool(
        json!({"name": "count_with_progress", "description": "Counts to `steps`, sending a progress notification for each step."}),
        |ctx: Context, a: CountArgs| async move {
            let steps = a.steps.clamp(1, 100);
            for i in 1..=steps {
                if ctx.is_cancelled() {
                    return Err(HandlerError::tool("cancelled"));
                }
                tokio::time::sleep(Duration::from_millis(a.delay_ms.unwrap_or(50).min(5_000))).await;
                ctx.progress(f64::from(i), Some(f64::from(steps)), Some(&format!("step {i} of {steps}")));
                ctx.log("info", Some("count"), json!(format!("reached {i}")));
            }
            Ok(text(format!("counted to {steps}")))
        },
    )
    .tool_raw(
        json!({"name": "greet_user", "description": "Asks the user for their name (form elicitation), then greets them.",
               "inputSchema": {"type": "object", "additionalProperties": false}}),
        |ctx: Context, _args| async move {
            let mut inputs = ctx.inputs();
            let answer = inputs.elicit(
                "name",
                "What is your name?",
                json!({"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}, "required": ["name"]}),
            )?;
            inputs.finish()?;
            let answer = answer.unwrap_or_default();
            match answer.get("action").and_then(Value::as_str) {
                Some("accept") => {
                    let name = answer.pointer("/content/name").and_then(Value::as_str).unwrap_or("stranger");
                    Ok(text(format!("Hello, {name}!")))
                }
                Some(other) => Ok(text(format!("No greeting: the user chose to {other}."))),
                None => Err(HandlerError::tool("elicitation answer has no action")),
            }
        },
    )
    .tool_raw(
        json!({"name": "ask_llm", "description": "Asks the client's model a question (sampling) and returns its answer.",
               "inputSchema": {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}}),
        |ctx: Context, args| async move {
            let q = args.get("question").and_then(Value::as_str).unwrap_or_default().to_owned();
            let mut inputs = ctx.inputs();
            let answer = inputs.sample(
                "answer",
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": q}}], "maxTokens": 200}),
            )?;
            inputs.finish()?;
            let reply = answer.unwrap_or_default();
            let t = reply.pointer("/content/text").and_then(Value::as_str).unwrap_or("(no text)");
            Ok(text(format!("The model says: {t}")))
        },
    )
    .tool_raw(
        json!({"name": "toggle_extra_tool", "description": "Adds or removes the tool `extra` (announces tools/list_changed).",
               "inputSchema": {"type": "object", "additionalProperties": false}}),
        |_ctx: Context, _args| async move {
            let server = _ctx.server();
            if server.remove_tool("extra") {
                return Ok(text("removed tool `extra`"));
            }
            server
                .add_tool(
                    json!({"name": "extra", "description": "A tool added at run time.", "inputSchema": {"type": "object"}}),
                    |_ctx: Context, _args| async move { Ok::<_, HandlerError>(text("extra tool called")) },
                )
                .map_err(|e| HandlerError::tool(e.to_string()))?;
            Ok(text("added tool `extra`"))
        },
    )
}
