//! Tools that run as tasks (the tasks extension): the fixtures the suite's `tasks-*` scenarios
//! call, exactly as they call them, plus a demo job that reports status messages.

use mcp::prelude::*;
use mcp::server::tasks::TaskStart;
use mcp::server::ServerBuilder;
use std::time::Duration;

/// Greets `name` synchronously (never a task).
#[tool]
async fn greet(#[arg(description = "Who to greet.")] name: String) -> String {
    format!("Hello, {name}!")
}

/// `slow_compute`'s arguments.
#[schema]
struct SlowCompute {
    /// How long to work, in seconds (0 to 600).
    seconds: Option<f64>,
    /// A label echoed in the result.
    label: Option<String>,
}

/// Works for `seconds` (as a task when the client declares the tasks extension, otherwise
/// synchronously), then returns its label.
#[tool(task_support = "optional")]
async fn slow_compute(ctx: Context, Args(a): Args<SlowCompute>) -> String {
    let secs = a.seconds.unwrap_or(1.0).clamp(0.0, 600.0);
    let label = a.label.unwrap_or_else(|| "job".into());
    if secs > 0.0 {
        ctx.status(format!("computing {label} for {secs}s")).await;
        tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    }
    format!("computed {label} in {secs}s")
}

/// Fails after about a second with a tool error (the task completes with `isError: true`).
/// Runs only as a task.
#[tool(task_support = "required")]
async fn failing_job(ctx: Context) -> Result<String, HandlerError> {
    ctx.status("about to fail").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(HandlerError::tool("the job failed: the input data set is empty"))
}

/// Ends with a JSON-RPC error (the task fails with `error`).
#[tool(task_support = "optional")]
async fn protocol_error_job() -> Result<String, HandlerError> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    Err(ProtocolError::unavailable("backend", "the job's backend refused the request").into())
}

/// Asks the user to confirm, then "deletes" `filename`.
#[tool(task_support = "optional")]
async fn confirm_delete(ctx: Context, #[arg(description = "File to delete.")] filename: String) -> ToolResult {
    let mut inputs = ctx.inputs();
    let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]});
    let answer = inputs.elicit("confirm", &format!("Delete {filename}?"), schema)?;
    inputs.finish()?;
    let confirmed = answer.as_ref().and_then(|a| a.pointer("/content/confirm")).and_then(Value::as_bool);
    Ok(CallToolResult::text(match (answer.as_ref().and_then(|a| a["action"].as_str()), confirmed) {
        (Some("accept"), Some(true)) => format!("deleted {filename}"),
        _ => format!("kept {filename}"),
    }))
}

type ToolResult = Result<CallToolResult, HandlerError>;

/// Asks two questions in one round, then reports both answers.
#[tool(task_support = "optional")]
async fn multi_input(ctx: Context) -> ToolResult {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
        "required": ["name"]
    });
    let mut inputs = ctx.inputs();
    let first = inputs.elicit("multi-name", "Your name?", schema.clone())?;
    let second = inputs.elicit("multi-confirm", "Confirm the run?", schema)?;
    inputs.finish()?;
    let name = |a: &Option<Value>| a.as_ref().and_then(|a| a.pointer("/content/name")).cloned().unwrap_or(Value::Null);
    Ok(CallToolResult::text(format!("got {} and {}", name(&first), name(&second))))
}

/// Asks for a name synchronously (MRTR), then does the rest as a task.
#[tool(task_support = "required")]
async fn test_tool_with_task(ctx: Context) -> ToolResult {
    let mut inputs = ctx.inputs();
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let answer = inputs.elicit("user_name", "What is your name?", schema)?;
    inputs.finish()?;
    let name = answer
        .as_ref()
        .and_then(|a| a.pointer("/content/name"))
        .and_then(Value::as_str)
        .unwrap_or("stranger")
        .to_owned();
    ctx.start_task().await?;
    ctx.status(format!("preparing a greeting for {name}")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(CallToolResult::text(format!("Hello, {name}! (greeted from task {})", ctx.task_id().unwrap_or("-"))))
}

/// `build_project`'s arguments.
#[schema]
struct Build {
    /// Number of build steps (1 to 20).
    steps: Option<u32>,
    /// Milliseconds per step (at most 10,000).
    step_ms: Option<u64>,
}

/// A demo build: reports each step as the task's status message (or as progress when it runs
/// synchronously) and can be cancelled at any step.
#[tool(task_support = "optional")]
async fn build_project(ctx: Context, Args(a): Args<Build>) -> String {
    let steps = a.steps.unwrap_or(5).clamp(1, 20);
    let each = Duration::from_millis(a.step_ms.unwrap_or(1_000).min(10_000));
    let names = ["resolving dependencies", "compiling", "linking", "running tests", "packaging"];
    for i in 0..steps {
        ctx.status(format!("step {} of {steps}: {}", i + 1, names[i as usize % names.len()])).await;
        tokio::time::sleep(each).await;
    }
    format!("built in {steps} steps")
}

/// Adds the task tools to `b`.
pub(super) fn register(b: ServerBuilder) -> ServerBuilder {
    b.tools([
        greet::tool(),
        slow_compute::tool(),
        failing_job::tool(),
        protocol_error_job::tool(),
        confirm_delete::tool(),
        multi_input::tool(),
        test_tool_with_task::tool().task_start(TaskStart::Handler),
        build_project::tool(),
    ])
}
