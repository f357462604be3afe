//! In-process cost of the tasks extension on one core (a current-thread runtime): a direct
//! `tools/call`, against the same call run as a task (created, run by its worker, and read back
//! `completed` with `tasks/get`). `cargo bench -p mcp-stack-server --bench tasks`.

use criterion::{criterion_main, Criterion};
use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION, TASKS_EXTENSION};
use mcp_protocol::Request;
use mcp_server::tasks::{TaskConfig, TaskLimits};
use mcp_server::{Args, RequestEnv, Server, TaskSupport, Tool};
use serde_json::{json, Map, Value};
use std::hint::black_box;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn request(method: &str, params: Value, tasks: bool) -> Request {
    let caps = if tasks { json!({ "extensions": { TASKS_EXTENSION: {} } }) } else { json!({}) };
    let mut params = params.as_object().cloned().unwrap_or_default();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: caps }));
    Request { id: json!(1), method: method.into(), params }
}

fn server() -> Server {
    let echo = Tool::new("echo")
        .task_support(TaskSupport::Optional)
        .handler(|Args(a): Args<Map<String, Value>>| async move { a["text"].as_str().unwrap_or("").to_owned() });
    // Finished tasks expire after 2 s, so the store stays at a steady size under the caps.
    let limits = TaskLimits { max_tasks: 1_000_000, max_tasks_per_principal: 1_000_000 };
    let config = TaskConfig::new().ttl(Some(Duration::from_secs(2))).limits(limits);
    Server::builder("bench", "1").tasks(config).tool(echo).build().unwrap()
}

fn tasks(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let s = server();
    let args = json!({"name": "echo", "arguments": {"text": "hello"}});
    let env = || RequestEnv::new(CancellationToken::new());
    let mut g = c.benchmark_group("tools/call echo");
    g.bench_function("direct", |b| {
        b.iter(|| {
            rt.block_on(async { black_box(s.handle(request("tools/call", args.clone(), false), env()).await.unwrap()) })
        })
    });
    g.bench_function("as a task (create, run, tasks/get completed)", |b| {
        b.iter(|| {
            rt.block_on(async {
                let created = s.handle(request("tools/call", args.clone(), true), env()).await.unwrap();
                let get = json!({ "taskId": created["taskId"] });
                loop {
                    let t = s.handle(request("tasks/get", get.clone(), true), env()).await.unwrap();
                    if t["status"] == "completed" {
                        break black_box(t);
                    }
                    tokio::task::yield_now().await;
                }
            })
        })
    });
    g.finish();
}

#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::tasks);
}
use group::benches;
criterion_main!(benches);
