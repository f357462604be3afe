//! Fixtures of per-caller policy: a tool only administrators see, and a rate-limited echo, so
//! `mcp serve everything --auth-issuer ..` shows visibility and limits to any client.

use mcp::prelude::*;
use mcp::server::ServerBuilder;

/// A report for administrators: listed and callable only when the request's access token
/// carries the OAuth scope `mcp:admin` (never without authorization).
#[tool(title = "Admin report", scopes = ["mcp:admin"], read_only, open_world = false)]
async fn admin_report(ctx: Context) -> String {
    format!("report for {}: all systems nominal", ctx.principal().unwrap_or("an administrator"))
}

/// Echoes `text`, at most 5 calls per caller per 10 s (anonymous callers are counted by peer
/// address); past that the error -32029 says when to retry (HTTP 429 with Retry-After).
#[tool(title = "Limited echo", rate_limit = "5/10s", read_only, open_world = false)]
async fn limited_echo(#[arg(description = "Text to send back.")] text: String) -> String {
    text
}

/// Adds the policy fixtures to `b`.
pub(super) fn register(b: ServerBuilder) -> ServerBuilder {
    b.tools([admin_report::tool(), limited_echo::tool()])
}
