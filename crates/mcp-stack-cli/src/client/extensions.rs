//! The extension commands: following a task (`tools call`, `tasks wait`), `tasks get|cancel`,
//! and `skills list|get|read`.

use super::render::{self, Stream};
use super::{hints, Ctx, Failure, TaskAction};
use mcp_client::{Client, ClientError};
use mcp_client::{SkillEntry, SkillResources, TaskHandle, ToolResult};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Prints a task's id (and how to pick it up) instead of waiting for it: `--detach`.
pub(super) fn detached(ctx: &Ctx<'_>, task: &TaskHandle) -> u8 {
    if ctx.opts.json {
        render::print_json(&json!({ "taskId": task.id() }));
    } else {
        Stream::Out.line(task.id());
        Stream::Err.line(&format!("the task runs on; follow it with `mcp tasks wait TARGET {}`", task.id()));
    }
    0
}

/// Follows a task to its end with a spinner showing its status message and in-task questions
/// asked in the terminal. The first Ctrl-C cancels the task (and waits for the server to
/// confirm); a second one detaches, printing the id, and exits 130.
pub(super) async fn follow(ctx: &Ctx<'_>, task: &TaskHandle) -> Result<Result<ToolResult, ClientError>, Failure> {
    let ui = ctx.ui.clone();
    let wait = task.wait_with(move |t| ui.task_status(t));
    tokio::pin!(wait);
    let mut interrupts = Interrupts::new().map_err(|e| Failure::new(format!("cannot watch for Ctrl-C: {e}")))?;
    let mut cancelling = false;
    loop {
        tokio::select! {
            r = &mut wait => {
                ctx.ui.finish_progress();
                return Ok(r);
            }
            _ = interrupts.next() => {
                if cancelling {
                    ctx.ui.finish_progress();
                    Stream::Err.line(&format!("detached: task {} goes on on the server", task.id()));
                    return Err(Failure::new(format!("detached from task {}", task.id()))
                        .hint(format!("pick it up with `mcp tasks wait TARGET {}`", task.id()))
                        .exit(130));
                }
                cancelling = true;
                ctx.ui.note(&format!("cancelling task {} (press Ctrl-C again to detach instead)", task.id()));
                if let Err(e) = task.cancel().await {
                    ctx.ui.note(&format!("tasks/cancel failed: {e}"));
                }
            }
        }
    }
}

/// Ctrl-C presses, counted from creation on: one registered before the first wait, so that a
/// press while `tasks/cancel` is in flight is not lost.
struct Interrupts(#[cfg(unix)] tokio::signal::unix::Signal, #[cfg(windows)] tokio::signal::windows::CtrlC);

impl Interrupts {
    fn new() -> std::io::Result<Self> {
        #[cfg(unix)]
        return tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).map(Self);
        #[cfg(windows)]
        return tokio::signal::windows::ctrl_c().map(Self);
    }

    async fn next(&mut self) {
        self.0.recv().await;
    }
}

/// `tasks get|wait|cancel TASK_ID`.
pub(super) async fn task(ctx: &Ctx<'_>, action: TaskAction, id: &str) -> Result<u8, Failure> {
    let c = ctx.client;
    if !c.server_supports_tasks() {
        return Err(Failure::new("the server does not offer the tasks extension"));
    }
    let task = c.task(id);
    match action {
        TaskAction::Get => {
            let t = task.get().await.map_err(|e| ctx.fail(e, "tasks/get"))?;
            if ctx.opts.json {
                render::print_json(&t);
            } else {
                Stream::Out.write(&render_task(&t));
            }
            Ok(0)
        }
        TaskAction::Cancel => {
            task.cancel().await.map_err(|e| ctx.fail(e, "tasks/cancel"))?;
            if !ctx.opts.json {
                Stream::Err.line(&format!("cancellation of task {id} requested"));
            } else {
                render::print_json(&json!({ "taskId": id, "cancelRequested": true }));
            }
            Ok(0)
        }
        TaskAction::Wait => {
            let r = follow(ctx, &task).await?.map_err(|e| ctx.fail(e, "tasks/get"))?;
            if ctx.opts.json {
                render::print_json(r.as_value());
            } else {
                let dir = PathBuf::from(".");
                let mut out = render::ContentRenderer { out_dir: &dir, stem: id, saved: 0 };
                Stream::Out.write(&render::tool_result(r.as_value(), &mut out));
            }
            Ok(u8::from(r.is_error()))
        }
    }
}

fn render_task(t: &Value) -> String {
    let field = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("-").to_owned();
    let mut s = format!("task {}\n  status: {}\n", field("taskId"), field("status"));
    if let Some(m) = t.get("statusMessage").and_then(Value::as_str) {
        s.push_str(&format!("  message: {m}\n"));
    }
    s.push_str(&format!("  created: {}\n  updated: {}\n", field("createdAt"), field("lastUpdatedAt")));
    if let Some(q) = t.get("inputRequests").and_then(Value::as_object) {
        s.push_str(&format!("  waiting for {} answer(s): run `mcp tasks wait` to give them\n", q.len()));
    }
    if let Some(e) = t.get("error") {
        s.push_str(&format!("  error: {}\n", e.get("message").and_then(Value::as_str).unwrap_or("?")));
    }
    if t.get("result").is_some() {
        s.push_str("  result: ready (`mcp tasks wait` prints it)\n");
    }
    s
}

fn require_skills(c: &Client) -> Result<(), Failure> {
    match c.skills_capability() {
        Some(_) => Ok(()),
        None => Err(Failure::new("the server does not offer the skills extension")),
    }
}

/// The listed skill `what` names: a `SKILL.md` URI, or a skill name.
async fn find_skill(ctx: &Ctx<'_>, what: &str) -> Result<SkillEntry, Failure> {
    let c = ctx.client;
    if what.contains("://") {
        return c.get_skill(what).await.map_err(|e| ctx.fail(e, "skills/get"));
    }
    let skills = c.list_skills().await.map_err(|e| ctx.fail(e, "skills/list"))?;
    let mut matching: Vec<SkillEntry> = skills.iter().filter(|s| s.name() == what).cloned().collect();
    match matching.len() {
        1 => Ok(matching.remove(0)),
        0 => {
            let names: Vec<String> = skills.iter().map(|s| s.name().to_owned()).collect();
            Err(Failure::new(format!("no skill named `{what}`")).hint(hints::names_hint("skills", &names)))
        }
        _ => Err(Failure::new(format!("several skills are named `{what}`; give its URI"))
            .hint(matching.iter().map(|s| s.uri.clone()).collect::<Vec<_>>().join(", "))),
    }
}

/// `skills list`.
pub(super) async fn skills_list(ctx: &Ctx<'_>) -> Result<u8, Failure> {
    require_skills(ctx.client)?;
    let skills = ctx.client.list_skills().await.map_err(|e| ctx.fail(e, "skills/list"))?;
    if ctx.opts.json {
        render::print_json(&json!({ "skills": skills }));
        return Ok(0);
    }
    if skills.is_empty() {
        Stream::Err.line("(the server lists no skills)");
    }
    for s in &skills {
        let files = match &s.resources {
            SkillResources::Files(f) => format!("{} file(s)", f.len()),
            SkillResources::Dynamic => "dynamic".into(),
        };
        Stream::Out.line(&format!("{}  {}  ({files})", s.name(), s.uri));
        Stream::Out.line(&format!("    {}", s.description()));
    }
    Ok(0)
}

/// `skills get SKILL`: the listing (frontmatter and files), nothing read.
pub(super) async fn skills_get(ctx: &Ctx<'_>, what: &str) -> Result<u8, Failure> {
    require_skills(ctx.client)?;
    let s = find_skill(ctx, what).await?;
    if ctx.opts.json {
        render::print_json(&json!({ "skill": s }));
        return Ok(0);
    }
    let mut out = format!("{}\n  uri: {}\n", s.name(), s.uri);
    for (k, v) in &s.frontmatter {
        if k != "name" {
            out.push_str(&format!("  {k}: {}\n", v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())));
        }
    }
    if let SkillResources::Files(files) = &s.resources {
        out.push_str("  files:\n");
        for f in files {
            out.push_str(&format!("    {}  {} bytes  {}\n", f.uri, f.size, f.digest));
        }
    }
    Stream::Out.write(&out);
    Ok(0)
}

/// `skills read SKILL [FILE]`: loads the skill (verified) and prints its `SKILL.md`, or one
/// of its files (verified too).
pub(super) async fn skills_read(ctx: &Ctx<'_>, what: &str, file: Option<&str>) -> Result<u8, Failure> {
    require_skills(ctx.client)?;
    let entry = find_skill(ctx, what).await?;
    let skill = ctx.client.load_skill(&entry).await.map_err(|e| ctx.fail(e, "resources/read"))?;
    let bytes = match file {
        None => skill.skill_md().as_bytes().to_vec(),
        Some(f) => skill.read(f).await.map_err(|e| ctx.fail(e, "resources/read"))?,
    };
    if ctx.opts.json {
        let uri = file.map_or_else(|| entry.uri.clone(), |f| entry.resolve(f));
        let text = String::from_utf8_lossy(&bytes);
        render::print_json(&json!({ "uri": uri, "verified": true, "text": text }));
        return Ok(0);
    }
    match String::from_utf8(bytes) {
        Ok(t) => Stream::Out.write(&t),
        Err(e) => {
            let dir = PathBuf::from(".");
            let name = file.unwrap_or("file").rsplit('/').next().unwrap_or("file");
            let path = dir.join(name);
            std::fs::write(&path, e.as_bytes())
                .map_err(|e| Failure::new(format!("cannot save {}: {e}", path.display())))?;
            Stream::Out.line(&format!("saved {} (verified) to {}", file.unwrap_or_default(), path.display()));
        }
    }
    Ok(0)
}
