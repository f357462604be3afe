//! The inspector page's API: one JSON object in, one JSON object out (`POST /api/NAME`), each
//! a thin call into the Rust client. Answers are `{"result": ...}` or `{"error": {...}}` with
//! status 200: a server's error is data for the page, not a failure of the API.

use super::state::Inspector;
use super::views;
use mcp_client::{ClientError, ServerEra, Started};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Instant;

/// Most tasks followed at once (past it a task is still started, but not followed).
const MAX_FOLLOWED: usize = 64;

/// A client error as the page shows it.
pub(crate) fn error(e: &ClientError) -> Value {
    match e {
        ClientError::Server { code, message, data } => json!({"code": code, "message": message, "data": data}),
        other => json!({"message": other.to_string()}),
    }
}

fn text(v: &Map<String, Value>, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn object(v: &Map<String, Value>, key: &str) -> Map<String, Value> {
    v.get(key).and_then(Value::as_object).cloned().unwrap_or_default()
}

/// Runs API call `name` with `body`.
pub(crate) async fn call(app: &Arc<Inspector>, name: &str, body: Map<String, Value>) -> Value {
    match run(app, name, body).await {
        Ok(v) => v,
        Err(e) => json!({"error": e}),
    }
}

async fn run(app: &Arc<Inspector>, name: &str, body: Map<String, Value>) -> Result<Value, Value> {
    let fail = |e: ClientError| error(&e);
    let refuse = |m: String| json!({"message": m});
    if name == "answer" {
        let id = body.get("id").and_then(Value::as_u64).ok_or_else(|| refuse("answer needs an id".into()))?;
        let answer = match body.get("result") {
            Some(Value::Object(r)) => Ok(Value::Object(r.clone())),
            _ => Err(text(&body, "error")),
        };
        return if app.answer(id, answer) {
            Ok(json!({"result": {}}))
        } else {
            Err(refuse(format!("no question {id}")))
        };
    }
    if name == "login" {
        return login(app).map(|()| json!({"result": {"started": true}})).map_err(refuse);
    }
    if name == "disconnect" {
        app.disconnect().await;
        return Ok(json!({"result": {}}));
    }
    let client = app.client(name == "connect").await.map_err(refuse)?;
    let started = Instant::now();
    let timed = |result: Value| json!({"result": result, "ms": started.elapsed().as_secs_f64() * 1000.0});
    match name {
        "connect" | "status" => {
            let (era, first) = match client.era() {
                Some(ServerEra::Modern { discover, .. }) => ("modern", discover.raw().clone()),
                Some(ServerEra::Legacy { initialize, .. }) => ("legacy", initialize.clone()),
                _ => ("unknown", Value::Null),
            };
            Ok(timed(json!({
                "target": app.target.describe(),
                "sandbox": app.sandbox_origin,
                "era": era,
                "protocolVersion": client.protocol_version(),
                "handshake": first,
                "capabilities": client.server_capabilities(),
                "generation": app.generation.load(std::sync::atomic::Ordering::Relaxed),
            })))
        }
        "list" => {
            let kind = text(&body, "kind");
            let items: Vec<Value> = match kind.as_str() {
                "tools" => client.list_tools().await.map_err(fail)?.into_iter().map(|t| t.into_raw()).collect(),
                "resources" => client.list_resources().await.map_err(fail)?.into_iter().map(|t| t.into_raw()).collect(),
                "templates" => {
                    client.list_resource_templates().await.map_err(fail)?.into_iter().map(|t| t.into_raw()).collect()
                }
                "prompts" => client.list_prompts().await.map_err(fail)?.into_iter().map(|t| t.into_raw()).collect(),
                "skills" => {
                    let skills = client.list_skills().await.map_err(fail)?;
                    skills.into_iter().map(|s| serde_json::to_value(s).unwrap_or_default()).collect()
                }
                other => return Err(refuse(format!("unknown list {other:?}"))),
            };
            Ok(timed(Value::Array(items)))
        }
        "call" | "read" if body.get("view").is_some() => {
            // A view's request through the bridge: its own upstream only.
            let view = object(&body, "view");
            let upstream = views::upstream_of(&client, &view).await.map_err(fail)?;
            let (method, mut params, target, what) = if name == "call" {
                let tool = text(&body, "name");
                let target = views::tool_target(&client, &tool).await.map_err(fail)?;
                let arguments = Value::Object(object(&body, "arguments"));
                let params = Map::from_iter([("name".to_owned(), json!(tool)), ("arguments".to_owned(), arguments)]);
                ("tools/call", params, target, format!("tool {tool:?}"))
            } else {
                let uri = text(&body, "uri");
                let target = views::resource_target(&client, &uri).await.map_err(fail)?;
                (
                    "resources/read",
                    Map::from_iter([("uri".to_owned(), json!(uri))]),
                    target,
                    format!("resource {uri:?}"),
                )
            };
            views::admit(upstream.as_deref(), &target, &what, &mut params)?;
            if method == "tools/call" {
                client.learn_tool_headers(&text(&body, "name")).await.map_err(fail)?;
            }
            client.request(method, params, &Default::default()).await.map(timed).map_err(fail)
        }
        "call" => {
            let (tool, args) = (text(&body, "name"), Value::Object(object(&body, "arguments")));
            let progress = Arc::downgrade(app);
            let call = client.call_tool(&tool, args).on_progress(move |p| {
                if let Some(app) = progress.upgrade() {
                    app.publish(&json!({"type": "progress", "params": p}));
                }
            });
            match call.start().await.map_err(fail)? {
                Started::Done(r) => {
                    let r = r.into_value();
                    let check = output_check(&client, &tool, &r).await;
                    let mut answer = timed(r);
                    if let Some(c) = check {
                        answer["outputCheck"] = c;
                    }
                    Ok(answer)
                }
                Started::Task(task) => {
                    let id = task.id().to_owned();
                    follow(app, task);
                    Ok(timed(json!({"task": {"taskId": id}})))
                }
            }
        }
        "task" => {
            let task = client.task(&text(&body, "taskId"));
            match text(&body, "action").as_str() {
                "cancel" => task.cancel().await.map(|()| timed(json!({}))).map_err(fail),
                _ => task.get().await.map(timed).map_err(fail),
            }
        }
        "read" => client.request("resources/read", body, &Default::default()).await.map(timed).map_err(fail),
        "prompt" => client.request("prompts/get", body, &Default::default()).await.map(timed).map_err(fail),
        "complete" => client.request("completion/complete", body, &Default::default()).await.map(timed).map_err(fail),
        "listen" => {
            let filter = serde_json::from_value(Value::Object(object(&body, "filter")))
                .map_err(|e| refuse(format!("filter: {e}")))?;
            let mut sub = client.listen(filter).await.map_err(fail)?;
            let acknowledged = serde_json::to_value(&sub.acknowledged).unwrap_or_default();
            let weak = Arc::downgrade(app);
            let pump = tokio::spawn(async move {
                while let Some(event) = sub.next().await {
                    let Some(app) = weak.upgrade() else { return };
                    let event = match event {
                        Ok(mcp_client::ListenEvent::Notification { method, params }) => {
                            json!({"type": "notification", "method": method, "params": params})
                        }
                        Ok(_) => json!({"type": "notification", "method": "(stream re-opened)", "params": {}}),
                        Err(e) => json!({"type": "notification", "method": "(stream failed)", "params": error(&e)}),
                    };
                    app.publish(&event);
                }
            });
            if let Some(old) = app.listen.lock().replace(pump) {
                old.abort();
            }
            Ok(timed(json!({"acknowledged": acknowledged})))
        }
        "unlisten" => {
            if let Some(old) = app.listen.lock().take() {
                old.abort();
            }
            Ok(timed(json!({})))
        }
        other => Err(refuse(format!("unknown API call {other:?}"))),
    }
}

/// Starts logging in to the (HTTP) target in the browser: the page gets the authorization URL
/// (a `login` event), then the outcome; on success the inspector connects again with the new
/// tokens. One login at a time.
fn login(app: &Arc<Inspector>) -> Result<(), String> {
    use std::sync::atomic::Ordering::{AcqRel, Release};
    let url = app.target.http_url().ok_or("logging in applies to HTTP servers")?.to_owned();
    if app.logging_in.swap(true, AcqRel) {
        return Err("a login is already under way".into());
    }
    let (weak, done) = (Arc::downgrade(app), Arc::downgrade(app));
    let open: crate::client::auth::Opener = Arc::new(move |u: &str| {
        if let Some(app) = weak.upgrade() {
            app.publish(&json!({"type": "login", "authorize": u}));
        }
    });
    tokio::spawn(async move {
        let outcome = crate::client::auth::browser_login(&url, open).await;
        let Some(app) = done.upgrade() else { return };
        app.logging_in.store(false, Release);
        match outcome {
            Ok(()) => {
                app.publish(&json!({"type": "login", "done": true}));
                let _ = app.client(true).await;
            }
            Err(e) => app.publish(&json!({"type": "login", "error": e})),
        }
    });
    Ok(())
}

/// Whether a result's `structuredContent` matches the tool's `outputSchema` (when the tool has
/// one and the result is not an error): `{valid, errors}`.
async fn output_check(client: &mcp_client::Client, tool: &str, result: &Value) -> Option<Value> {
    if result.get("isError") == Some(&Value::Bool(true)) {
        return None;
    }
    let tools = client.list_tools().await.ok()?;
    let schema = tools.iter().find(|t| t.name == tool)?.output_schema.clone()?;
    let validator = match jsonschema::validator_for(&Value::Object(schema)) {
        Ok(v) => v,
        Err(e) => return Some(json!({"valid": false, "errors": [format!("the outputSchema does not compile: {e}")]})),
    };
    let Some(sc) = result.get("structuredContent") else {
        return Some(json!({"valid": false, "errors": ["no structuredContent"]}));
    };
    let errors: Vec<String> =
        validator.iter_errors(sc).take(20).map(|e| format!("{e} at '{}'", e.instance_path())).collect();
    Some(json!({"valid": errors.is_empty(), "errors": errors}))
}

/// Follows `task` to its end in the background, publishing each status and the outcome.
fn follow(app: &Arc<Inspector>, task: mcp_client::TaskHandle) {
    static FOLLOWED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    use std::sync::atomic::Ordering::Relaxed;
    if FOLLOWED.fetch_add(1, Relaxed) >= MAX_FOLLOWED {
        FOLLOWED.fetch_sub(1, Relaxed);
        return;
    }
    let weak = Arc::downgrade(app);
    tokio::spawn(async move {
        let id = task.id().to_owned();
        let status = weak.clone();
        let tid = id.clone();
        let outcome = task
            .wait_with(move |s| {
                if let Some(app) = status.upgrade() {
                    app.publish(&json!({"type": "task", "taskId": tid, "status": s}));
                }
            })
            .await;
        if let Some(app) = weak.upgrade() {
            let done = match outcome {
                Ok(r) => json!({"type": "task", "taskId": id, "result": r.into_value()}),
                Err(e) => json!({"type": "task", "taskId": id, "error": error(&e)}),
            };
            app.publish(&done);
        }
        FOLLOWED.fetch_sub(1, Relaxed);
    });
}
