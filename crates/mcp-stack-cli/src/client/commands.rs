//! Command bodies that need more than a few lines: `tools call`, `listen`, and their helpers.

use super::hints::names_hint;
use super::render::{self, Stream};
use super::{args, Ctx, Failure};
use mcp_client::{Client, ClientError, ListenEvent};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// Fetches the tool list for hints; `None` if that fails too.
pub(super) async fn find_tool(c: &Client, name: &str) -> Option<Result<Value, Vec<String>>> {
    let tools = c.list_tools().await.ok()?;
    match tools.iter().find(|t| t.name == name) {
        Some(t) => Some(Ok(t.raw().clone())),
        None => Some(Err(tools.iter().map(|t| t.name.clone()).collect())),
    }
}

pub(super) async fn tools_call(
    ctx: &Ctx<'_>,
    name: &str,
    args_json: Option<&str>,
    pairs: &[String],
    out: Option<PathBuf>,
    detach: bool,
) -> Result<u8, Failure> {
    let c = ctx.client;
    // The schema types `--arg` values; fetched only when there are some.
    let mut tool: Option<Result<Value, Vec<String>>> = None;
    if !pairs.is_empty() {
        tool = find_tool(c, name).await;
    }
    let schema = match &tool {
        Some(Ok(t)) => t.get("inputSchema").cloned(),
        _ => None,
    };
    let arguments = args::tool_arguments(args_json, pairs, schema.as_ref()).map_err(|m| {
        let mut f = Failure::usage(m);
        if let Some(s) = &schema {
            f.hints.extend(args::schema_hint(name, s));
        }
        f
    })?;
    let started = tokio::select! {
        r = c.call_tool(name, arguments).options(ctx.call_options()).start() => r,
        _ = tokio::signal::ctrl_c() => return Err(Failure::new("interrupted").exit(130)),
    };
    let result = match started {
        Ok(mcp_client::Started::Done(r)) => Ok(r),
        Ok(mcp_client::Started::Task(task)) if detach => return Ok(super::extensions::detached(ctx, &task)),
        Ok(mcp_client::Started::Task(task)) => super::extensions::follow(ctx, &task).await?,
        Err(e) => Err(e),
    };
    ctx.ui.finish_progress();
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            let not_offered = matches!(e, ClientError::InvalidTool { .. });
            let invalid = not_offered
                || matches!(e, ClientError::Server { code, .. } if code == mcp::protocol::error::code::INVALID_PARAMS);
            let mut f = ctx.fail(e, "tools/call");
            if invalid {
                if tool.is_none() {
                    tool = find_tool(c, name).await;
                }
                match tool {
                    Some(Ok(t)) => {
                        f.hints.extend(args::schema_hint(name, t.get("inputSchema").unwrap_or(&Value::Null)))
                    }
                    Some(Err(names)) => {
                        f.message = if not_offered {
                            format!("unknown tool `{name}`: the server does not offer it")
                        } else {
                            format!("unknown tool `{name}` ({})", f.message)
                        };
                        f = f.hint(names_hint("tools", &names));
                    }
                    None => {}
                }
            }
            return Err(f);
        }
    };
    let is_error = result.is_error();
    if ctx.opts.json {
        render::print_json(result.as_value());
        return Ok(u8::from(is_error));
    }
    let dir = out.unwrap_or_else(|| PathBuf::from("."));
    let mut r = render::ContentRenderer { out_dir: &dir, stem: name, saved: 0 };
    let text = render::tool_result(result.as_value(), &mut r);
    if !is_error {
        Stream::Out.write(&text);
        return Ok(0);
    }
    let mut s = format!("mcp: tool `{name}` failed:\n{text}");
    let about_args = text.to_ascii_lowercase().contains("argument");
    if about_args {
        if tool.is_none() {
            tool = find_tool(c, name).await;
        }
        if let Some(Ok(t)) = &tool {
            for h in args::schema_hint(name, t.get("inputSchema").unwrap_or(&Value::Null)) {
                s.push_str(&format!("  {h}\n"));
            }
        }
    }
    Stream::Err.write(&s);
    Ok(1)
}

pub(super) async fn prompt_failure(ctx: &Ctx<'_>, e: ClientError, name: &str) -> Failure {
    let invalid = matches!(e, ClientError::Server { code, .. } if code == mcp::protocol::error::code::INVALID_PARAMS);
    let mut f = ctx.fail(e, "prompts/get");
    if invalid {
        if let Ok(prompts) = ctx.client.list_prompts().await {
            match prompts.iter().find(|p| p.name == name) {
                Some(p) => f.hints.extend(render::prompt_hint(p.raw())),
                None => {
                    let names: Vec<String> = prompts.iter().map(|p| p.name.clone()).collect();
                    f.message = format!("unknown prompt `{name}` ({})", f.message);
                    f = f.hint(names_hint("prompts", &names));
                }
            }
        }
    }
    f
}

pub(super) async fn listen(
    ctx: &Ctx<'_>,
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
) -> Result<u8, Failure> {
    let all = !tools && !prompts && !resources && uris.is_empty();
    let mut filter = Map::new();
    if tools || all {
        filter.insert("toolsListChanged".into(), json!(true));
    }
    if prompts || all {
        filter.insert("promptsListChanged".into(), json!(true));
    }
    if resources || all {
        filter.insert("resourcesListChanged".into(), json!(true));
    }
    if !uris.is_empty() {
        filter.insert("resourceSubscriptions".into(), json!(uris));
    }
    let asked = serde_json::from_value(Value::Object(filter.clone())).map_err(|e| Failure::new(e.to_string()))?;
    let mut sub = ctx.client.listen(asked).await.map_err(|e| ctx.fail(e, "subscriptions/listen"))?;
    let ack = serde_json::to_value(&sub.acknowledged).map_err(|e| Failure::new(e.to_string()))?;
    if ctx.opts.json {
        render::print_json_line(&json!({
            "method": "notifications/subscriptions/acknowledged",
            "params": { "notifications": ack },
        }));
    } else {
        let honoured: Vec<String> = ack
            .as_object()
            .map(|o| {
                o.iter()
                    .filter(|(_, v)| !matches!(v, Value::Bool(false) | Value::Null))
                    .map(|(k, v)| match v {
                        Value::Array(a) => format!(
                            "{k} ({})",
                            a.iter().map(|x| x.as_str().unwrap_or("?")).collect::<Vec<_>>().join(", ")
                        ),
                        _ => k.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Stream::Err.line(&format!(
            "listening to {} for: {} (Ctrl-C to stop)",
            ctx.target.describe(),
            if honoured.is_empty() { "nothing the server supports".to_owned() } else { honoured.join(", ") }
        ));
        for k in filter.keys().filter(|k| ack.get(*k).is_none()) {
            Stream::Err.line(&format!("note: the server does not offer {k}"));
        }
    }
    loop {
        tokio::select! {
            ev = sub.next() => match ev {
                None => {
                    if !ctx.opts.json {
                        Stream::Err.line("the server closed the subscription");
                    }
                    return Ok(0);
                }
                Some(Ok(ListenEvent::Notification { method, params })) => {
                    if ctx.opts.json {
                        render::print_json_line(&json!({ "method": method, "params": params }));
                    } else {
                        Stream::Out.line(&render::notification_line(&method, &params));
                    }
                }
                Some(Ok(ListenEvent::Reconnected)) => {
                    if ctx.opts.json {
                        render::print_json_line(&json!({ "event": "reconnected" }));
                    } else {
                        Stream::Err.line("(the stream dropped and was re-opened; notifications may have been missed)");
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(ctx.fail(e, "subscriptions/listen")),
            },
            _ = tokio::signal::ctrl_c() => return Ok(0),
        }
    }
}
