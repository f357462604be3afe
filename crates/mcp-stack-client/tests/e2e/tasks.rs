//! Tasks and skills end to end: the client library against `mcp serve everything` as a real
//! child process, over stdio and over HTTP (127.0.0.1:0).

use mcp_client::transport::http::HttpTransport;
use mcp_client::transport::stdio::StdioTransport;
use mcp_client::types::{ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue};
use mcp_client::{Client, ClientBuilder, ClientError, ElicitationModes, Started};
use mcp_test_support::child::HttpChild as EverythingHttp;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

fn builder(tasks: bool) -> ClientBuilder {
    ClientBuilder::new("task-test", "0.0.1").tasks(tasks).on_elicitation(
        ElicitationModes::FORM,
        |p: ElicitRequestParams| async move {
            let mut content = std::collections::BTreeMap::new();
            if let ElicitRequestParams::Form(form) = p {
                for (name, schema) in form.requested_schema.properties {
                    let boolean = serde_json::to_value(schema).unwrap()["type"] == "boolean";
                    let v = if boolean {
                        ElicitValue::Boolean(true)
                    } else {
                        ElicitValue::String(format!("{name}-answer"))
                    };
                    content.insert(name, v);
                }
            }
            Ok(ElicitResult { content: Some(content), ..ElicitResult::new(ElicitAction::Accept) })
        },
    )
}

async fn stdio(tasks: bool) -> Client {
    let cmd = mcp_test_support::child::stdio_command();
    tokio::time::timeout(T, builder(tasks).connect(StdioTransport::spawn(cmd).unwrap())).await.unwrap().unwrap()
}

/// A client of the HTTP server.
async fn http(server: &EverythingHttp, tasks: bool) -> Client {
    let t = HttpTransport::builder(&server.url).build().unwrap();
    tokio::time::timeout(T, builder(tasks).connect(t)).await.unwrap().unwrap()
}

async fn status_of(c: &Client, id: &str) -> String {
    c.task(id).get().await.unwrap()["status"].as_str().unwrap().to_owned()
}

/// A task's whole life, and what a declaring client does with it.
async fn task_life(c: &Client) {
    assert!(c.server_supports_tasks() && c.declares_tasks());
    // In-task input: the elicitation is answered through tasks/update, then the task completes.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let r = c
        .call_tool("confirm_delete", json!({"filename": "a.txt"}))
        .on_task_status(move |t| s.lock().unwrap().push(t["status"].as_str().unwrap_or("").to_owned()))
        .await
        .unwrap();
    assert_eq!(r.text(), "deleted a.txt");
    assert!(seen.lock().unwrap().contains(&"input_required".to_owned()), "{:?}", seen.lock().unwrap());
    // Two questions in one round (answered together here), then the result.
    let r = c.call_tool("multi_input", json!({})).await.unwrap();
    assert_eq!(r.text(), "got \"name-answer\" and \"name-answer\"");
    // MRTR first, then a task.
    let r = c.call_tool("test_tool_with_task", json!({})).await.unwrap();
    assert!(r.text().starts_with("Hello, name-answer!"), "{r}");
    // A tool error completes the task with isError; a protocol error fails it.
    assert!(c.call_tool("failing_job", json!({})).await.unwrap().is_error());
    let e = c.call_tool("protocol_error_job", json!({})).await.unwrap_err();
    assert_eq!(e.code(), Some(-32603), "{e}");
    // Detach and resume by id.
    let Started::Task(handle) =
        c.call_tool("slow_compute", json!({"seconds": 0.5, "label": "x"})).start().await.unwrap()
    else {
        panic!("slow_compute runs as a task for a declaring client")
    };
    let id = handle.id().to_owned();
    drop(handle);
    assert_eq!(c.task(&id).wait().await.unwrap().text(), "computed x in 0.5s");
    // The status stream: each change once, ending with the terminal state.
    let Ok(Started::Task(h)) = c.call_tool("build_project", json!({"steps": 2, "step_ms": 200})).start().await else {
        panic!()
    };
    use futures::StreamExt;
    let states: Vec<Value> = h.updates().map(Result::unwrap).collect().await;
    let last = states.last().unwrap();
    assert_eq!(last["status"], "completed");
    assert_eq!(last["result"]["content"][0]["text"], "built in 2 steps");
    assert!(states.iter().any(|s| s["statusMessage"] == "step 2 of 2: compiling"), "{states:?}");
    // Dropping a call that follows a task cancels the task (tasks/cancel, not a notification).
    let created = Arc::new(Mutex::new(None::<String>));
    let cr = created.clone();
    let call = c
        .call_tool("slow_compute", json!({"seconds": 60}))
        .on_task_status(move |t| *cr.lock().unwrap() = t["taskId"].as_str().map(str::to_owned));
    assert!(tokio::time::timeout(Duration::from_millis(800), call).await.is_err(), "still running");
    let id = created.lock().unwrap().clone().expect("the call became a task");
    for _ in 0..100 {
        if status_of(c, &id).await == "cancelled" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status_of(c, &id).await, "cancelled");
    // An explicit cancel of a running task.
    let Ok(Started::Task(h)) = c.call_tool("slow_compute", json!({"seconds": 60})).start().await else { panic!() };
    h.cancel().await.unwrap();
    assert!(matches!(h.wait().await, Err(ClientError::TaskCancelled { task_id: ref t, .. }) if t == h.id()));
}

/// A client that does not enable tasks never sees one.
async fn without_tasks(c: &Client) {
    assert!(!c.declares_tasks());
    let r = c.call_tool("slow_compute", json!({"seconds": 0.1, "label": "sync"})).await.unwrap();
    assert_eq!(r.text(), "computed sync in 0.1s");
    let e = c.call_tool("failing_job", json!({})).await.unwrap_err();
    assert_eq!(e.code(), Some(-32021), "{e}");
}

/// Skills: list, load verified, read a listed file; an unlisted one is refused unread.
async fn skills(c: &Client) {
    let list = c.list_skills().await.unwrap();
    let pdf = list.iter().find(|s| s.name() == "pdf-processing").expect("demo skill");
    let skill = c.load_skill(pdf).await.unwrap();
    assert!(skill.skill_md().starts_with("---\nname: pdf-processing\n"));
    let forms = skill.read("references/FORMS.md").await.unwrap();
    assert!(String::from_utf8(forms).unwrap().starts_with("# PDF forms"));
    assert!(matches!(skill.read("../../etc/passwd").await, Err(ClientError::SkillVerification { .. })));
    let dir = c.read_directory("skill://pdf-processing").await.unwrap();
    assert!(dir.iter().any(|r| r.mime_type.as_deref() == Some("inode/directory")));
    assert_eq!(c.get_skill(&pdf.uri).await.unwrap(), *pdf);
    assert_eq!(c.get_skill("skill://nope/SKILL.md").await.unwrap_err().code(), Some(-32602));
}

pub(crate) async fn tasks_and_skills_over_stdio() {
    let c = stdio(true).await;
    task_life(&c).await;
    skills(&c).await;
    c.close().await;
    let plain = stdio(false).await;
    without_tasks(&plain).await;
    plain.close().await;
}

pub(crate) async fn tasks_and_skills_over_http() {
    let server = EverythingHttp::start();
    let c = http(&server, true).await;
    task_life(&c).await;
    skills(&c).await;
    without_tasks(&http(&server, false).await).await;
}
