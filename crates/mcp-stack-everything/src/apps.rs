//! The MCP Apps fixture: a counter dashboard view (`ui://everything/dashboard`), the tool that
//! shows it (`show_dashboard`, with a text fallback), and the app-only tool its button calls
//! (`dashboard_add`, listed and callable only for clients that render apps).

use mcp::prelude::*;
use mcp::server::apps::UiResource;
use mcp::server::ServerBuilder;
use mcp::types::CallToolResult;
use std::sync::atomic::{AtomicI64, Ordering};

/// The view's URI.
pub const DASHBOARD_URI: &str = "ui://everything/dashboard";

/// The view: one self-contained HTML document (no external resources, so the default CSP fits).
pub const DASHBOARD_HTML: &str = include_str!("../assets/dashboard.html");

/// The counter the view shows (per process: a fixture, not shared between replicas).
static COUNT: AtomicI64 = AtomicI64::new(0);

fn counter_result(text: String, label: Option<&str>, count: i64) -> CallToolResult {
    let mut structured = json!({ "count": count });
    if let Some(l) = label {
        structured["label"] = l.into();
    }
    CallToolResult { structured_content: Some(structured), ..CallToolResult::text(text) }
}

/// Shows the counter dashboard (an MCP Apps view); hosts without apps get the text.
#[tool(title = "Counter dashboard", ui = "ui://everything/dashboard", read_only, open_world = false)]
async fn show_dashboard(
    #[arg(description = "A label shown with the counter.")] label: Option<String>,
) -> CallToolResult {
    let count = COUNT.load(Ordering::Relaxed);
    let label = label.unwrap_or_else(|| "everything".into());
    counter_result(format!("Dashboard {label}: the counter is {count}"), Some(&label), count)
}

/// Adds `amount` to the dashboard's counter (called by the view, not the model).
#[tool(title = "Add to the counter", ui = "ui://everything/dashboard", visibility = ["app"], open_world = false)]
async fn dashboard_add(#[arg(description = "How much to add (-1000 to 1000).")] amount: i64) -> CallToolResult {
    if !(-1000..=1000).contains(&amount) {
        return CallToolResult::error(format!("amount {amount} is outside -1000..=1000"));
    }
    let count = COUNT.fetch_add(amount, Ordering::Relaxed).saturating_add(amount);
    counter_result(format!("the counter is {count}"), None, count)
}

/// Adds the apps fixtures to `b`.
pub(super) fn register(b: ServerBuilder) -> ServerBuilder {
    let view = UiResource::new(DASHBOARD_URI, "dashboard", DASHBOARD_HTML)
        .title("Counter dashboard")
        .description("Shows a tool's input and result and adds to a counter through an app-only tool")
        .prefers_border(true);
    b.ui_resource(view).tools([show_dashboard::tool(), dashboard_add::tool()])
}
