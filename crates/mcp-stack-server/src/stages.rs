//! The stages between the operation layers and a handler. `build()` installs the configured
//! ones; a request meets them in this order (the one place it is written down):
//!
//! 1. the user's operation layers, the first added outermost ([`crate::layers`]);
//! 2. the `_meta` and `requestState` checks (`Server::prepare`);
//! 3. **rate limits** ([`Stage::RateLimits`]): every request but the later rounds of a multi
//!    round-trip request, before the method is served;
//! 4. **access rules**: the item is looked up as the caller may see it (always on: a hidden
//!    item is unknown, with the unknown item's error);
//! 5. **the result cache** ([`Stage::ResultCache`]): `tools/call` of a read-only tool the
//!    cache names, `resources/read`; never a call that runs as a task;
//! 6. **the task decision** (with the server's task runtime): a tool that may run as a task, for a client
//!    that declared the tasks extension;
//! 7. the handler, its outcome settled, then stored by the result cache.
//!
//! A stage that was not configured is not installed ([`crate::stage_set`]), and the request
//! path only tests a flag for it: no lookup, no allocation, no call.

use crate::cache::{Cache, Scope};
use crate::catalog::{TaskSupport, ToolEntry};
use crate::context::Context;
use crate::error::HandlerError;
use crate::reply::Reply;
use crate::server::Server;
use crate::stage_set::Stage;
use crate::tasks::worker::ToolRun;
use mcp_protocol::types::{self, CallToolResult, ReadResourceResult};
use mcp_protocol::{Method, ProtocolError};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

// Rate limits.

/// Spends the request from the rate-limit buckets that apply (a tool's own ones only when the
/// caller may see it: a hidden tool is limited like an unknown one).
pub(crate) async fn spend(server: &Server, ctx: &Context, method: Method) -> Result<(), ProtocolError> {
    let limiter = &server.inner.stages.limiter;
    let catalog = server.catalog();
    let name = (method == Method::ToolsCall).then(|| ctx.params().get("name").and_then(Value::as_str)).flatten();
    let tool = match name {
        // A name the catalog does not know may be the fallback's (a proxy's upstream tool):
        // the server-wide per-tool quotas apply to it by name.
        Some(n) if catalog.tool(n).is_none() && server.inner.config.extensions.fallback.is_some() => Some((n, None)),
        Some(n) => catalog.tool_for(n, &ctx.caller()).map(|t| (t.name.as_str(), t.rate_limit)),
        None => None,
    };
    if !limiter.applies(tool) {
        return Ok(());
    }
    Box::pin(limiter.check(&ctx.inner.env, tool)).await
}

// Access rules.

/// The tool `name` as the caller may see it: one it may not see gets exactly the unknown
/// tool's error.
pub(crate) fn tool(server: &Server, ctx: &Context, name: &str) -> Result<Arc<ToolEntry>, ProtocolError> {
    server
        .catalog()
        .tool_for(name, &ctx.caller())
        .cloned()
        .ok_or_else(|| ProtocolError::invalid_params(format!("Unknown tool: {name}")))
}

// The stages of a tool call: the result cache, then the task decision, then the handler.

/// How the stages of a tool call ended.
#[allow(clippy::large_enum_variant)] // short-lived, moved once: boxing would only cost an allocation
pub(crate) enum Ran {
    /// A stage answered: a cached result, or the created task.
    Answered(Reply),
    /// The handler's outcome, and where the result cache keeps the result, when it does.
    Done(Result<CallToolResult, HandlerError>, Option<Slot>),
}

/// Runs a validated tool call through the installed stages to its handler.
pub(crate) async fn run_tool(
    server: &Server,
    ctx: &Context,
    tool: &Arc<ToolEntry>,
    args: &Value,
) -> Result<Ran, ProtocolError> {
    let stages = &server.inner.stages;
    let as_task = runs_as_task(server, ctx, tool);
    let slot = match stages.has(Stage::ResultCache) && !as_task {
        true => tool_slot(server, ctx, tool, args),
        false => None,
    };
    if let Some(slot) = &slot {
        // Boxed, as every path most requests do not take: the request future stays small.
        if let Some(hit) = Box::pin(stages.cache.get(&slot.key)).await {
            return Ok(Ran::Answered(hit.into()));
        }
    }
    let run = match server.tasks().is_some() {
        true => decide_task(server, ctx, tool).await?,
        false => None,
    };
    let r = match run {
        Some(ToolRun::Task(created)) => return Ok(Ran::Answered(created.into())),
        Some(ToolRun::Done(r)) => r,
        None => (tool.handler)(ctx.clone()).await,
    };
    Ok(Ran::Done(r, slot))
}

// The result cache.

/// Where the result cache keeps one result: its key and time.
pub(crate) struct Slot {
    key: String,
    ttl: Duration,
}

impl Slot {
    /// Stores `result` here, then answers with it. Callers box it (a path most requests do not
    /// take), so the store's future stays out of the request future.
    pub(crate) async fn store<R>(self, server: &Server, result: R) -> Result<Reply, ProtocolError>
    where
        R: serde::Serialize + Into<Reply>,
    {
        server.inner.stages.cache.put(&self.key, &result, self.ttl).await;
        Ok(result.into())
    }
}

/// Whether the request is a later round of a multi round-trip request (never cached).
fn is_round(ctx: &Context) -> bool {
    ctx.params().get("requestState").is_some() || ctx.params().get("inputResponses").is_some()
}

/// Where this call's result is cached, when it may be: a read-only tool the cache names, a
/// first round (no answers, no state), and a caller to key it by unless the tool's results
/// are shared.
fn tool_slot(server: &Server, ctx: &Context, tool: &ToolEntry, args: &Value) -> Option<Slot> {
    let (ttl, scope) = server.inner.stages.cache.tool(&tool.name)?;
    if !tool.is_read_only() || is_round(ctx) {
        return None;
    }
    let principal = match scope {
        Scope::Shared => None,
        Scope::PerCaller => Some(ctx.principal()?),
    };
    Some(Slot { key: Cache::key("tools/call", &tool.name, &args.to_string(), principal), ttl })
}

/// Whether `resources/read` results of this request are cached.
pub(crate) fn caches_reads(server: &Server, ctx: &Context) -> bool {
    let stages = &server.inner.stages;
    stages.has(Stage::ResultCache) && stages.cache.resources() && !is_round(ctx)
}

fn read_key(uri: &str, principal: Option<&str>) -> String {
    Cache::key("resources/read", uri, "", principal)
}

/// The cached result of reading `uri`: a public one first, then one made for this caller.
pub(crate) async fn cached_read(server: &Server, ctx: &Context, uri: &str) -> Option<Reply> {
    let keys = [Some(read_key(uri, None)), ctx.principal().map(|p| read_key(uri, Some(p)))];
    for k in keys.iter().flatten() {
        if let Some(hit) = server.inner.stages.cache.get(k).await {
            return Some(hit.into());
        }
    }
    None
}

/// Keeps a read's result for its `ttlMs` (a private one only for its caller), then answers
/// with it.
pub(crate) async fn store_read(
    server: &Server,
    ctx: &Context,
    uri: &str,
    result: ReadResourceResult,
) -> Result<Reply, ProtocolError> {
    let ttl = Duration::from_millis(result.ttl_ms.unwrap_or(0));
    let private = result.cache_scope != Some(types::CacheScope::Public);
    let key = match (private, ctx.principal()) {
        (false, _) => Some(read_key(uri, None)),
        (true, Some(p)) => Some(read_key(uri, Some(p))),
        (true, None) => None,
    };
    match key.filter(|_| !ttl.is_zero()) {
        Some(key) => Slot { key, ttl }.store(server, result).await,
        None => Ok(result.into()),
    }
}

// The task decision.

/// Whether the call goes to the task runtime (which may still serve it without a task).
fn runs_as_task(server: &Server, ctx: &Context, tool: &ToolEntry) -> bool {
    tool.task_support != TaskSupport::Forbidden && server.tasks().is_some() && ctx.declares_tasks()
}

/// Runs the call as a task when the tool and the client allow it; `None`: the handler serves
/// it as usual. A tool that runs only as a task is refused to a client without the extension
/// (a legacy session never gets tasks).
async fn decide_task(server: &Server, ctx: &Context, tool: &Arc<ToolEntry>) -> Result<Option<ToolRun>, ProtocolError> {
    let Some(rt) = server.tasks().filter(|_| tool.task_support != TaskSupport::Forbidden) else {
        return Ok(None);
    };
    if ctx.declares_tasks() {
        let rt = rt.clone();
        let required = tool.task_support == TaskSupport::Required;
        return Box::pin(rt.call_tool(server, ctx, tool.clone(), required)).await.map(Some);
    }
    match tool.task_support {
        TaskSupport::Required if ctx.inner.legacy => Err(ProtocolError::invalid_params(format!(
            "tool {} runs only as a task (the io.modelcontextprotocol/tasks extension of 2026-07-28)",
            tool.name
        ))),
        TaskSupport::Required => Err(crate::tasks::extension_required()),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tool;

    fn installed(s: &Server) -> [bool; 3] {
        let st = &s.inner.stages;
        [st.has(Stage::RateLimits), st.has(Stage::ResultCache), s.tasks().is_some()]
    }

    #[test]
    fn only_the_configured_stages_are_installed() {
        let ping = || Tool::new("ping").read_only_hint(true).handler(|| async { "pong" });
        let plain = Server::builder("s", "1").tool(ping()).build().unwrap();
        assert_eq!(installed(&plain), [false; 3], "a plain server passes no stage");
        let limited = Server::builder("s", "1")
            .rate_limits(crate::rate_limit::RateLimits::new().global("10/1s".parse().unwrap()))
            .tool(ping())
            .build()
            .unwrap();
        assert_eq!(installed(&limited), [true, false, false]);
        let quota = Server::builder("s", "1").tool(ping().rate_limit("1/1s".parse().unwrap())).build().unwrap();
        assert_eq!(installed(&quota), [true, false, false], "a tool's own quota installs the limits");
        let cache = crate::cache::ResultCache::new().resources();
        let cached = Server::builder("s", "1").result_cache(cache).tool(ping()).build().unwrap();
        assert_eq!(installed(&cached), [false, true, false]);
        let tasks = Server::builder("s", "1").tasks(Default::default()).tool(ping()).build().unwrap();
        assert_eq!(installed(&tasks), [false, false, true]);
        // A tool with a quota of its own, added at run time, installs the limits for good.
        plain.add_tool(Tool::new("slow").rate_limit("1/1s".parse().unwrap()).handler(|| async { "" })).unwrap();
        assert!(plain.inner.stages.has(Stage::RateLimits));
        assert!(plain.remove_tool("slow") && plain.inner.stages.has(Stage::RateLimits));
    }
}
