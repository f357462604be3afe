//! Demo tools beyond the conformance fixtures: echo (benchmarks), progress, elicitation,
//! sampling and run-time list changes.

use super::fixtures::{sampled_text, sampling};
use mcp::prelude::*;
use mcp::server::ServerBuilder;
use std::time::Duration;

/// Returns the given text unchanged.
#[tool(title = "Echo", read_only, idempotent, open_world = false)]
async fn echo(#[arg(description = "Text to send back.")] text: String) -> String {
    text
}

/// The sum `add` returns as structured content.
#[schema]
struct Sum {
    sum: i64,
}

/// Adds two integers; the sum is returned as structured content.
#[tool]
async fn add(
    #[arg(description = "First addend.")] a: i64,
    #[arg(description = "Second addend.")] b: i64,
) -> Result<Json<Sum>, &'static str> {
    let sum = a.checked_add(b).ok_or("integer overflow")?;
    Ok(Json(Sum { sum }))
}

/// Arguments of `count_with_progress`.
#[schema]
struct CountArgs {
    /// How many steps to count (1-100).
    #[schemars(range(min = 1, max = 100))]
    steps: u32,
    /// Milliseconds between steps.
    #[serde(default)]
    delay_ms: Option<u64>,
}

/// Counts to `steps`, sending a progress notification for each step.
#[tool]
async fn count_with_progress(ctx: Context, Args(a): Args<CountArgs>) -> Result<String, &'static str> {
    let steps = a.steps.clamp(1, 100);
    for i in 1..=steps {
        if ctx.is_cancelled() {
            return Err("cancelled");
        }
        tokio::time::sleep(Duration::from_millis(a.delay_ms.unwrap_or(50).min(5_000))).await;
        ctx.progress(f64::from(i), Some(f64::from(steps)), Some(&format!("step {i} of {steps}")));
        ctx.log(LoggingLevel::Info, Some("count"), json!(format!("reached {i}")));
    }
    Ok(format!("counted to {steps}"))
}

/// The form `greet_user` asks for.
#[schema]
struct Name {
    /// Name
    name: String,
}

/// Asks the user for their name (form elicitation), then greets them.
#[tool]
async fn greet_user(ctx: Context) -> Result<String, HandlerError> {
    Ok(match ctx.elicit::<Name>("What is your name?")? {
        Elicitation::Accept(Name { name }) => format!("Hello, {name}!"),
        Elicitation::Decline => "No greeting: the user chose to decline.".into(),
        Elicitation::Cancel => "No greeting: the user chose to cancel.".into(),
    })
}

/// Asks the client's model a question (sampling) and returns its answer.
#[tool]
async fn ask_llm(ctx: Context, question: String) -> Result<String, HandlerError> {
    let mut inputs = ctx.inputs();
    let answer = inputs.sample("answer", sampling(&question, 200))?;
    inputs.finish()?;
    Ok(format!("The model says: {}", sampled_text(&answer.unwrap_or_default())))
}

/// A tool added at run time.
#[tool]
async fn extra() -> &'static str {
    "extra tool called"
}

/// Adds or removes the tool `extra` (announces tools/list_changed).
#[tool]
async fn toggle_extra_tool(ctx: Context) -> Result<&'static str, HandlerError> {
    let server = ctx.server();
    if server.remove_tool("extra") {
        return Ok("removed tool `extra`");
    }
    server.add_tool(extra::tool())?;
    Ok("added tool `extra`")
}

/// Adds the demo tools to `b`.
pub(super) fn register(b: ServerBuilder) -> ServerBuilder {
    b.tools([
        echo::tool(),
        add::tool(),
        count_with_progress::tool(),
        greet_user::tool(),
        ask_llm::tool(),
        toggle_extra_tool::tool(),
    ])
}
