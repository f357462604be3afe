//! The tasks extension through `mcp proxy --http`: in front of `mcp serve everything --stdio`
//! (a modern upstream that offers it) tasks are created, polled, answered and cancelled
//! through the proxy, under task ids the proxy issues; in front of a legacy-only upstream the
//! extension is not advertised. Every wait is bounded.

use crate::support::http_server;
use crate::support::proxy as proxy_support;

use crate::common::*;
use mcp_client::transport::http::HttpTransport;
use mcp_client::types::{DiscoverResult, ElicitAction, ElicitResult};
use mcp_client::{Client, ClientBuilder, ClientError, ElicitationModes, Started, TaskHandle};
use proxy_support::{legacy_upstream, Proxy};
use serde_json::{json, Map, Value};
use std::time::Duration;

fn everything() -> Vec<String> {
    ["--", env!("CARGO_BIN_EXE_mcp"), "serve", "everything", "--stdio"].map(str::to_owned).to_vec()
}

/// A client of the proxy that declares the tasks extension (and form elicitation with
/// `elicit`, so the in-task question of `confirm_delete` can be asked).
async fn client(proxy: &Proxy, elicit: bool) -> Client {
    let mut b = ClientBuilder::new("proxy-tasks-test", "1.0.0").timeout(Duration::from_secs(20)).tasks(true);
    if elicit {
        b = b.on_elicitation(ElicitationModes::FORM, |_| async move { Ok(ElicitResult::new(ElicitAction::Decline)) });
    }
    let t = HttpTransport::builder(&proxy.url).build().unwrap();
    within("connect to the proxy", b.connect(t)).await.unwrap()
}

/// Starts `tool` and expects a task.
async fn start(c: &Client, tool: &str, args: Value) -> TaskHandle {
    match within(tool, c.call_tool(tool, args).start()).await.unwrap() {
        Started::Task(t) => t,
        Started::Done(r) => panic!("{tool} answered at once: {r:?}"),
    }
}

/// Polls `tasks/get` until the task's status is `want` (bounded).
async fn until(task: &TaskHandle, want: &str) -> Value {
    within(&format!("task status {want}"), async {
        loop {
            let now = task.get().await.unwrap();
            if now["status"] == want {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

fn offers_tasks(discover: &DiscoverResult) -> bool {
    discover.capabilities.extensions.as_ref().is_some_and(|e| e.contains_key("io.modelcontextprotocol/tasks"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_created_and_polled_to_completion() {
    let proxy = Proxy::http(&[], &everything());
    let c = client(&proxy, false).await;
    assert!(c.server_supports_tasks(), "the front advertises the upstream's tasks extension");
    assert!(offers_tasks(&within("discover", c.discover()).await.unwrap()));
    let task = start(&c, "slow_compute", json!({ "seconds": 0.3, "label": "through" })).await;
    let done = until(&task, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "computed through in 0.3s", "{done}");
    assert_eq!(done["taskId"], task.id());
}

/// Whether `id` looks like a proxy-issued task id (128 random bits, hex).
fn proxy_issued(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_downstream_sees_proxy_issued_task_ids() {
    let proxy = Proxy::http(&[], &everything());
    let c = client(&proxy, true).await;
    // `test_tool_with_task` asks first (declined here), then names its upstream task id.
    let (one, two) =
        (start(&c, "test_tool_with_task", json!({})).await, start(&c, "test_tool_with_task", json!({})).await);
    assert!(proxy_issued(one.id()) && proxy_issued(two.id()) && one.id() != two.id(), "{} {}", one.id(), two.id());
    for task in [&one, &two] {
        let done = until(task, "completed").await;
        assert_eq!(done["taskId"], task.id(), "tasks/get names the proxy's id: {done}");
        let text = done["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        let upstream = text.strip_prefix("Hello, stranger! (greeted from task ").and_then(|t| t.strip_suffix(')'));
        let upstream = upstream.unwrap_or_else(|| panic!("{done}"));
        assert_ne!(upstream, task.id(), "the upstream's id stays behind the proxy");
        match within("tasks/get by the upstream's id", c.task(upstream).get()).await {
            Err(ClientError::Server { code: -32602, message, .. }) => assert!(message.contains("Task not found")),
            other => panic!("the upstream's own id {upstream}: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declaring_call_mirrors_x_mcp_header_parameters_to_an_http_upstream() {
    // The session of a declaring call never listed its tools; the upstream rejects a
    // `tools/call` whose `x-mcp-header` parameter has no `Mcp-Param-*` header.
    let upstream = http_server::EverythingHttp::start();
    let proxy = Proxy::http(&[], std::slice::from_ref(&upstream.url));
    let c = client(&proxy, false).await;
    assert!(c.server_supports_tasks());
    let r = within("test_x_mcp_header", c.call_tool("test_x_mcp_header", json!({ "region": "eu-west" })).start()).await;
    match r.unwrap() {
        Started::Done(r) => assert_eq!(r.into_value()["content"][0]["text"], "region=eu-west"),
        Started::Task(t) => panic!("a task for a tool without task support: {}", t.id()),
    }
    // A task-capable tool on the same path, with its id translated both ways.
    let task = start(&c, "slow_compute", json!({ "seconds": 0.2, "label": "http" })).await;
    assert!(proxy_issued(task.id()), "{}", task.id());
    assert_eq!(until(&task, "completed").await["result"]["content"][0]["text"], "computed http in 0.2s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_required_task_is_answered_with_tasks_update() {
    let proxy = Proxy::http(&[], &everything());
    let c = client(&proxy, true).await;
    let task = start(&c, "confirm_delete", json!({ "filename": "notes.txt" })).await;
    let parked = until(&task, "input_required").await;
    let asked = parked["inputRequests"].as_object().cloned().unwrap_or_default();
    assert_eq!(asked.len(), 1, "{parked}");
    let mut answers = Map::new();
    for key in asked.keys() {
        answers.insert(key.clone(), json!({ "action": "accept", "content": { "confirm": true } }));
    }
    within("tasks/update", task.update(answers)).await.unwrap();
    let done = until(&task, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "deleted notes.txt", "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_cancelled_and_unknown_ids_are_not_found() {
    let proxy = Proxy::http(&[], &everything());
    let c = client(&proxy, false).await;
    let task = start(&c, "slow_compute", json!({ "seconds": 60 })).await;
    assert_eq!(within("tasks/get", task.get()).await.unwrap()["status"], "working");
    within("tasks/cancel", task.cancel()).await.unwrap();
    until(&task, "cancelled").await;
    for id in ["no-such-task", ""] {
        match within("tasks/get of an unknown task", c.task(id).get()).await {
            Err(ClientError::Server { code: -32602, message, .. }) => {
                assert!(message.contains("Task not found"), "{message}")
            }
            other => panic!("unknown task {id:?}: {other:?}"),
        }
    }
    let unknown = within("tasks/cancel of an unknown task", c.task("no-such-task").cancel()).await;
    assert!(matches!(unknown, Err(ClientError::Server { code: -32602, .. })), "{unknown:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_upstream_gets_no_tasks_extension() {
    let proxy = Proxy::http(&[], &legacy_upstream());
    let c = client(&proxy, false).await;
    assert!(!c.server_supports_tasks());
    let discover = within("discover", c.discover()).await.unwrap();
    assert!(!offers_tasks(&discover), "{discover}");
    let refused = within("tasks/get", c.task("any").get()).await;
    assert!(matches!(refused, Err(ClientError::Server { code: -32601, .. })), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declaring_call_forwards_none_of_the_callers_meta() {
    // An upstream whose task-capable tool records the `_meta` it was called with.
    use mcp::server::{Context, Server, TaskSupport, Tool};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let kept = seen.clone();
    let tool = Tool::new("meta").task_support(TaskSupport::Optional).handler(move |ctx: Context| {
        let kept = kept.clone();
        async move {
            kept.lock().unwrap().push(ctx.params().get("_meta").cloned().unwrap_or_default());
            "recorded"
        }
    });
    let server = Server::builder("meta-upstream", "1.0.0").tool(tool).build().unwrap();
    let up = TestServer::start(server, mcp::http::EndpointConfig::default()).await;
    let up_url = format!("http://{}/mcp", up.addr);
    let proxy = tokio::task::spawn_blocking(move || Proxy::http(&[], &[up_url])).await.unwrap();
    let caps = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let callers = json!({
        "com.example/identity": "mallory",
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    });
    let mut body = req(1, "tools/call", json!({ "name": "meta", "arguments": {} }));
    body["params"]["_meta"][K_CAPS] = caps;
    for (k, v) in callers.as_object().unwrap() {
        body["params"]["_meta"][k] = v.clone();
    }
    let m = within("tools/call", post(proxy.addr(), &std_headers(&body), body.to_string())).await.message();
    let r = result_of(&m, &json!(1));
    assert_eq!(r["resultType"], "task", "the declaring path: {r}");
    eventually("the upstream tool to run", || !seen.lock().unwrap().is_empty()).await;
    let meta = seen.lock().unwrap()[0].to_string();
    for leak in ["com.example/identity", "mallory", "b7ad6b7169203331"] {
        assert!(!meta.contains(leak), "{leak} reached the upstream: {meta}");
    }
}
