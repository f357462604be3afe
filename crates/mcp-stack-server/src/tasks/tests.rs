//! Deterministic tests of the tasks extension: in memory, on a paused clock.

use super::{TaskConfig, TaskLimits, TaskStart};
use crate::{Args, Context, HandlerError, RequestEnv, Server, TaskSupport, Tool};
use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION, TASKS_EXTENSION};
use mcp_protocol::{ProtocolError, Request};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const WITH_TASKS: fn() -> Value = || json!({ "elicitation": {}, "extensions": { TASKS_EXTENSION: {} } });

fn request(method: &str, params: Value, caps: Value) -> Request {
    let mut params = params.as_object().cloned().unwrap_or_default();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: caps }));
    Request { id: json!(1), method: method.into(), params }
}

fn env(principal: Option<&str>) -> RequestEnv {
    let mut e = RequestEnv::new(CancellationToken::new());
    e.principal = principal.map(str::to_owned);
    e
}

async fn call(s: &Server, method: &str, params: Value, caps: Value, who: Option<&str>) -> Result<Value, ProtocolError> {
    s.handle(request(method, params, caps), env(who)).await
}

async fn task(s: &Server, id: &str, who: Option<&str>) -> Result<Value, ProtocolError> {
    call(s, "tasks/get", json!({ "taskId": id }), WITH_TASKS(), who).await
}

/// Polls `tasks/get` (on the paused clock) until the status is `want`.
async fn wait_for(s: &Server, id: &str, want: &str) -> Value {
    for _ in 0..200 {
        let t = task(s, id, None).await.unwrap();
        if t["status"] == want {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never reached {want}: {}", task(s, id, None).await.unwrap());
}

/// Sets a flag when dropped: proves a handler future was dropped (stopped), not left running.
struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn server(dropped: Arc<AtomicBool>, finished: Arc<AtomicUsize>, config: TaskConfig) -> Server {
    let slow = Tool::new("slow").task_support(TaskSupport::Optional).handler(
        move |ctx: Context, Args(a): Args<Map<String, Value>>| {
            let (dropped, finished) = (dropped.clone(), finished.clone());
            async move {
                let _flag = DropFlag(dropped);
                ctx.status("warming up").await;
                let secs = a.get("seconds").and_then(Value::as_u64).unwrap_or(0);
                tokio::time::sleep(Duration::from_secs(secs)).await;
                finished.fetch_add(1, Ordering::SeqCst);
                format!("slept {secs}s")
            }
        },
    );
    let required = Tool::new("required")
        .task_support(TaskSupport::Required)
        .handler(|| async { Err::<String, _>(HandlerError::tool("job failed")) });
    let two = Tool::new("two_questions").task_support(TaskSupport::Required).handler(|ctx: Context| async move {
        let mut inputs = ctx.inputs();
        let schema = json!({ "type": "object", "properties": { "x": { "type": "string" } } });
        let a = inputs.elicit("first", "First?", schema.clone())?;
        let b = inputs.elicit("second", "Second?", schema)?;
        inputs.finish()?;
        Ok::<_, HandlerError>(format!("{} {}", a.unwrap()["content"]["x"], b.unwrap()["content"]["x"]))
    });
    let deferred = Tool::new("deferred").task_support(TaskSupport::Required).task_start(TaskStart::Handler).handler(
        |ctx: Context| async move {
            let mut inputs = ctx.inputs();
            let name = inputs.elicit("name", "Name?", json!({ "type": "object" }))?;
            inputs.finish()?;
            ctx.start_task().await?;
            assert!(ctx.task_id().is_some());
            Ok::<_, HandlerError>(format!("hello {}", name.unwrap()["content"]["name"]))
        },
    );
    let panics = Tool::new("panics").task_support(TaskSupport::Optional).handler(|| async {
        if true {
            panic!("kaboom");
        }
        "never"
    });
    Server::builder("t", "1").tasks(config).tools([slow, required, two, deferred, panics]).build().unwrap()
}

fn plain() -> Server {
    server(Arc::default(), Arc::default(), TaskConfig::new().poll_interval(Duration::from_millis(250)))
}

#[tokio::test(start_paused = true)]
async fn a_declaring_call_becomes_a_task_and_a_plain_call_stays_synchronous() {
    let s = plain();
    let caps = s.capabilities();
    assert_eq!(caps.extensions.unwrap()[TASKS_EXTENSION], serde_json::Map::new());
    assert!(!caps.extra.contains_key("tasks"));
    let sync = call(&s, "tools/call", json!({"name": "slow", "arguments": {"seconds": 1}}), json!({}), None).await;
    assert_eq!(sync.unwrap()["content"][0]["text"], "slept 1s");

    let created =
        call(&s, "tools/call", json!({"name": "slow", "arguments": {"seconds": 5}}), WITH_TASKS(), None).await.unwrap();
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    assert_eq!(created["pollIntervalMs"], 250);
    assert_eq!(created["ttlMs"], 3_600_000);
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32, "128 random bits, hex");
    tokio::time::sleep(Duration::from_millis(10)).await;
    let now = task(&s, &id, None).await.unwrap();
    assert_eq!(now["resultType"], "complete");
    assert_eq!(now["statusMessage"], "warming up");
    let done = wait_for(&s, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "slept 5s");
    assert!(done.get("error").is_none() && done.get("inputRequests").is_none());
}

#[tokio::test(start_paused = true)]
async fn cancelling_stops_the_handler_and_acks_again_on_a_terminal_task() {
    let (dropped, finished) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let s = server(dropped.clone(), finished.clone(), TaskConfig::new());
    let created = call(&s, "tools/call", json!({"name": "slow", "arguments": {"seconds": 60}}), WITH_TASKS(), None)
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(s.running_tasks(), 1);
    let ack = call(&s, "tasks/cancel", json!({ "taskId": id }), WITH_TASKS(), None).await.unwrap();
    assert_eq!(ack.as_object().unwrap().keys().filter(|k| *k != "_meta").collect::<Vec<_>>(), ["resultType"]);
    let t = wait_for(&s, id, "cancelled").await;
    assert!(t.get("result").is_none());
    assert!(dropped.load(Ordering::SeqCst), "the handler future was dropped");
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert_eq!(finished.load(Ordering::SeqCst), 0, "the handler never ran to its end");
    assert_eq!(s.running_tasks(), 0);
    let again = call(&s, "tasks/cancel", json!({ "taskId": id }), WITH_TASKS(), None).await.unwrap();
    assert_eq!(again["resultType"], "complete");
    assert_eq!(task(&s, id, None).await.unwrap()["status"], "cancelled");
}

#[tokio::test(start_paused = true)]
async fn partial_answers_keep_the_task_waiting_for_the_rest() {
    let s = plain();
    let created = call(&s, "tools/call", json!({"name": "two_questions"}), WITH_TASKS(), None).await.unwrap();
    let id = created["taskId"].as_str().unwrap();
    let parked = wait_for(&s, id, "input_required").await;
    let keys: Vec<&String> = parked["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["first", "second"]);
    assert_eq!(parked["inputRequests"]["first"]["method"], "elicitation/create");
    let answer = |k: &str, x: &str| json!({ "taskId": id, "inputResponses": { k: {"action": "accept", "content": {"x": x}}, "bogus": 1 } });
    call(&s, "tasks/update", answer("first", "a"), WITH_TASKS(), None).await.unwrap();
    let still = task(&s, id, None).await.unwrap();
    assert_eq!(still["status"], "input_required");
    assert!(still["inputRequests"].get("first").is_none());
    assert!(still["inputRequests"].get("second").is_some());
    call(&s, "tasks/update", answer("second", "b"), WITH_TASKS(), None).await.unwrap();
    let done = wait_for(&s, id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "\"a\" \"b\"");
}

#[tokio::test(start_paused = true)]
async fn another_principal_cannot_tell_a_task_exists() {
    let s = plain();
    let args = json!({"name": "slow", "arguments": {"seconds": 30}});
    let created = call(&s, "tools/call", args, WITH_TASKS(), Some("alice")).await.unwrap();
    let id = created["taskId"].as_str().unwrap();
    assert!(task(&s, id, Some("alice")).await.is_ok());
    let unknown = task(&s, "no-such-task", Some("bob")).await.unwrap_err();
    for (method, extra) in
        [("tasks/get", json!({})), ("tasks/cancel", json!({})), ("tasks/update", json!({"inputResponses": {}}))]
    {
        let mut p = extra;
        p["taskId"] = json!(id);
        for who in [Some("bob"), None] {
            let e = call(&s, method, p.clone(), WITH_TASKS(), who).await.unwrap_err();
            assert_eq!((e.code(), e.message()), (unknown.code(), unknown.message()), "{method} as {who:?}");
        }
    }
    assert_eq!(unknown.code(), -32602);
    assert_eq!(task(&s, id, Some("alice")).await.unwrap()["status"], "working", "bob's cancel did nothing");
}

#[tokio::test(start_paused = true)]
async fn an_expired_task_is_gone_and_its_work_is_stopped() {
    let dropped = Arc::new(AtomicBool::new(false));
    let config = TaskConfig::new().ttl(Some(Duration::from_secs(10))).sweep_interval(Duration::from_secs(1));
    let s = server(dropped.clone(), Arc::default(), config);
    let created = call(&s, "tools/call", json!({"name": "slow", "arguments": {"seconds": 600}}), WITH_TASKS(), None)
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(9_900)).await;
    assert_eq!(task(&s, id, None).await.unwrap()["status"], "working", "never before createdAt + ttlMs");
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(task(&s, id, None).await.unwrap_err().code(), -32602);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(dropped.load(Ordering::SeqCst), "the sweeper stopped the expired task's work");
    assert_eq!(s.running_tasks(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_gate_comes_first_and_required_tools_need_the_extension() {
    let s = plain();
    for m in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let e = call(&s, m, json!({"taskId": "x", "inputResponses": {}}), json!({}), None).await.unwrap_err();
        assert_eq!(e.code(), -32021, "{m}");
    }
    for m in ["tasks/list", "tasks/result"] {
        assert_eq!(call(&s, m, json!({"taskId": "x"}), WITH_TASKS(), None).await.unwrap_err().code(), -32601);
    }
    let e = call(&s, "tools/call", json!({"name": "required"}), json!({}), None).await.unwrap_err();
    assert_eq!(e.code(), -32021);
    assert_eq!(e.data().unwrap()["requiredCapabilities"]["extensions"][TASKS_EXTENSION], json!({}));
    // A tool error inside a task completes it with isError; a panic fails it.
    let created = call(&s, "tools/call", json!({"name": "required"}), WITH_TASKS(), None).await.unwrap();
    let done = wait_for(&s, created["taskId"].as_str().unwrap(), "completed").await;
    assert_eq!(done["result"]["isError"], true);
    let created = call(&s, "tools/call", json!({"name": "panics"}), WITH_TASKS(), None).await.unwrap();
    let failed = wait_for(&s, created["taskId"].as_str().unwrap(), "failed").await;
    assert_eq!(failed["error"]["code"], -32603);
    let m = failed["statusMessage"].as_str().unwrap();
    assert!(!m.contains("kaboom") && m.contains("the handler failed (ref "), "{m}");
    // The 2025-11-25 `task` hint is ignored.
    let hinted = json!({"name": "slow", "arguments": {"seconds": 0}, "task": {"ttl": 1000}});
    assert_eq!(call(&s, "tools/call", hinted, json!({}), None).await.unwrap()["resultType"], "complete");
}

#[tokio::test(start_paused = true)]
async fn questions_before_start_task_are_answered_synchronously_then_the_task_runs() {
    let s = plain();
    let first = call(&s, "tools/call", json!({"name": "deferred"}), WITH_TASKS(), None).await.unwrap();
    assert_eq!(first["resultType"], "input_required");
    assert!(first.get("taskId").is_none());
    let retry = json!({
        "name": "deferred",
        "inputResponses": { "name": {"action": "accept", "content": {"name": "Alice"}} },
        "requestState": first["requestState"],
    });
    let created = call(&s, "tools/call", retry, WITH_TASKS(), None).await.unwrap();
    assert_eq!(created["resultType"], "task");
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none());
    let done = wait_for(&s, created["taskId"].as_str().unwrap(), "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "hello \"Alice\"");
}

#[tokio::test(start_paused = true)]
async fn past_the_cap_optional_tools_run_synchronously_and_required_ones_fail_clearly() {
    let limits = TaskLimits { max_tasks: 10, max_tasks_per_principal: 1 };
    let s = server(Arc::default(), Arc::default(), TaskConfig::new().limits(limits));
    let slow = json!({"name": "slow", "arguments": {"seconds": 100}});
    assert_eq!(call(&s, "tools/call", slow, WITH_TASKS(), None).await.unwrap()["resultType"], "task");
    let quick = json!({"name": "slow", "arguments": {"seconds": 0}});
    assert_eq!(call(&s, "tools/call", quick, WITH_TASKS(), None).await.unwrap()["resultType"], "complete");
    let e = call(&s, "tools/call", json!({"name": "required"}), WITH_TASKS(), None).await.unwrap_err();
    assert_eq!(e.code(), -32603);
    assert!(e.message().contains("1 live tasks for this principal"), "{}", e.message());
    // Another principal has its own bucket.
    let other = call(&s, "tools/call", json!({"name": "required"}), WITH_TASKS(), Some("carol")).await.unwrap();
    assert_eq!(other["resultType"], "task");
}

#[tokio::test(start_paused = true)]
async fn listen_streams_carry_the_detailed_task_of_watched_ids() {
    use futures::StreamExt;
    let s = plain();
    let created =
        call(&s, "tools/call", json!({"name": "slow", "arguments": {"seconds": 2}}), WITH_TASKS(), None).await.unwrap();
    let id = created["taskId"].as_str().unwrap();
    let refused =
        s.listen(request("subscriptions/listen", json!({"notifications": {"taskIds": [id]}}), json!({})), env(None));
    assert_eq!(refused.err().unwrap().code(), -32021);
    let listen = request("subscriptions/listen", json!({"notifications": {"taskIds": [id]}}), WITH_TASKS());
    let mut stream = Box::pin(s.listen(listen, env(None)).unwrap());
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    let mut last = Value::Null;
    while last["params"]["status"] != "completed" {
        last = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.unwrap().unwrap();
        assert_eq!(last["method"], "notifications/tasks");
        assert_eq!(last["params"]["taskId"], id);
    }
    assert_eq!(last["params"]["result"]["content"][0]["text"], "slept 2s");
}

#[tokio::test(start_paused = true)]
async fn a_legacy_session_never_sees_tasks_even_when_its_capabilities_name_the_extension() {
    use crate::round::Preset;
    use mcp_protocol::meta::RequestMeta;
    let s = plain();
    let legacy = |method: &str, params: Value| {
        let preset = Preset {
            meta: RequestMeta {
                protocol_version: "2025-11-25".into(),
                client_capabilities: WITH_TASKS().as_object().cloned().unwrap(),
                client_info: None,
                log_level: None,
                progress_token: None,
            },
            state: None,
        };
        let req = Request { id: json!(1), method: method.into(), params: params.as_object().cloned().unwrap() };
        let reply = s.process_with(req, env(None), Some(Box::new(preset)));
        async move { reply.await.map(crate::Reply::into_value) }
    };
    let r = legacy("tools/call", json!({"name": "slow", "arguments": {"seconds": 0}})).await.unwrap();
    assert!(r.get("taskId").is_none(), "optional tools run synchronously: {r}");
    let e = legacy("tools/call", json!({"name": "required"})).await.unwrap_err();
    assert_eq!(e.code(), -32602);
    assert!(e.message().contains("runs only as a task"), "{}", e.message());
    assert_eq!(legacy("tasks/get", json!({"taskId": "x"})).await.unwrap_err().code(), -32601);
}

#[tokio::test(start_paused = true)]
async fn busy_tasks_never_make_list_listeners_lag() {
    let s = plain();
    let mut feed = s.change_feed();
    for i in 0..5_000 {
        s.notify_task_changed(&format!("t{i}"));
    }
    s.notify(crate::ChangeEvent::ToolsListChanged);
    assert_eq!(feed.next(Vec::new).await, Some(vec![crate::ChangeEvent::ToolsListChanged]), "no catch-up burst");
}

/// An in-memory store that shows every change to `on_update` before applying it.
struct Spy {
    inner: super::InMemoryTaskStore,
    on_update: Box<dyn Fn(&super::TaskChange) + Send + Sync>,
}

impl Spy {
    fn new(limits: TaskLimits, on_update: impl Fn(&super::TaskChange) + Send + Sync + 'static) -> Self {
        Self { inner: super::InMemoryTaskStore::new(limits), on_update: Box::new(on_update) }
    }
}

impl super::TaskStore for Spy {
    fn create(&self, r: super::TaskRecord, now: u64) -> super::TaskStoreFuture<'_, Result<(), super::TaskStoreError>> {
        self.inner.create(r, now)
    }
    fn get<'a>(
        &'a self,
        id: &'a str,
        now: u64,
    ) -> super::TaskStoreFuture<'a, Result<Option<super::TaskRecord>, super::TaskStoreError>> {
        self.inner.get(id, now)
    }
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: super::TaskChange,
        now: u64,
    ) -> super::TaskStoreFuture<'a, Result<Option<super::Updated>, super::TaskStoreError>> {
        (self.on_update)(&change);
        self.inner.update(id, change, now)
    }
    fn purge_expired(&self, now: u64) -> super::TaskStoreFuture<'_, Result<Vec<String>, super::TaskStoreError>> {
        self.inner.purge_expired(now)
    }
    fn watch(&self, id: &str) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.inner.watch(id)
    }
}

// Regression: the work loop used to keep a cancelled round alive while it recorded the end. A
// round cut short inside `ctx.status()` then held the Redis store's per-task update turn, and
// the end (and every later task on that stripe) waited for it forever.
#[tokio::test(start_paused = true)]
async fn a_cancelled_round_is_stopped_before_the_end_is_recorded() {
    let dropped = Arc::new(AtomicBool::new(false));
    let ended_after_drop = Arc::new(parking_lot::Mutex::new(Vec::new()));
    // Notes, when the task's end is recorded, whether its handler was stopped already.
    let (d, e) = (dropped.clone(), ended_after_drop.clone());
    let store = Spy::new(TaskLimits::default(), move |change| {
        if matches!(change, super::TaskChange::Finish(_)) {
            e.lock().push(d.load(Ordering::SeqCst));
        }
    });
    let s = server(dropped, Arc::default(), TaskConfig::new().store(Arc::new(store)));
    let created = call(&s, "tools/call", json!({"name": "slow", "arguments": {"seconds": 60}}), WITH_TASKS(), None)
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    call(&s, "tasks/cancel", json!({ "taskId": id }), WITH_TASKS(), None).await.unwrap();
    wait_for(&s, id, "cancelled").await;
    assert_eq!(*ended_after_drop.lock(), [true], "the handler was dropped before the end was stored");
}

/// The ordinal `n` of a written `"{prefix} {n}"`.
fn step(message: &str, prefix: &str) -> Option<u32> {
    message.strip_prefix(prefix)?.strip_prefix(' ')?.parse().ok()
}

// A chatty handler used to write the record at every `ctx.status()`: on a shared store the
// compare-and-set of a `tasks/cancel` from another instance then lost to it again and again.
#[tokio::test(start_paused = true)]
async fn status_writes_are_coalesced_spaced_and_never_after_the_end() {
    use tokio::time::Instant;
    let written = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
    // Notes every status message written.
    let w = written.clone();
    let store = Spy::new(TaskLimits::default(), move |change| {
        if let super::TaskChange::Message(m) = change {
            w.lock().push(m.clone());
        }
    });
    type Kept = Arc<parking_lot::Mutex<Option<(Context, Instant, Instant)>>>;
    let kept: Kept = Arc::default();
    let k = kept.clone();
    let chatty = Tool::new("chatty").task_support(TaskSupport::Required).handler(move |ctx: Context| {
        let kept = k.clone();
        async move {
            // A burst: 100,000 messages back to back.
            for i in 0..100_000 {
                ctx.status(format!("burst {i}")).await;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            // Then a message every millisecond for 10,000 of them.
            let ticking = Instant::now();
            for i in 0..10_000 {
                ctx.status(format!("tick {i}")).await;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            // The last words, then the end at once (the interval has not passed).
            ctx.status("last words").await;
            *kept.lock() = Some((ctx.clone(), ticking, Instant::now()));
            "done"
        }
    });
    let interval = Duration::from_millis(100);
    assert_eq!(TaskConfig::new().status_interval, interval, "the default");
    let s = Server::builder("t", "1").tasks(TaskConfig::new().store(Arc::new(store))).tool(chatty).build().unwrap();
    let created = call(&s, "tools/call", json!({"name": "chatty"}), WITH_TASKS(), None).await.unwrap();
    let id = created["taskId"].as_str().unwrap().to_owned();

    // The burst: the first message at once, the newest one an interval later, nothing between.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(*written.lock(), ["burst 0", "burst 99999"]);
    let t = task(&s, &id, None).await.unwrap();
    assert_eq!((&t["status"], &t["statusMessage"]), (&json!("working"), &json!("burst 99999")));

    // The ticks: about one write per interval, each newer than the one before.
    let (ctx, ticking, returned) = loop {
        if let Some(k) = kept.lock().clone() {
            break k;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let writes = written.lock().clone();
    let ticks: Vec<u32> = writes.iter().filter_map(|m| step(m, "tick")).collect();
    let spells = (returned - ticking).as_millis() as usize / interval.as_millis() as usize;
    assert!(spells >= 100, "10,000 ticks of at least 1 ms");
    assert!(ticks.len() <= spells + 1 && ticks.len() + 2 >= spells, "{} writes in {spells} intervals", ticks.len());
    assert!(ticks.windows(2).all(|w| w[0] < w[1]), "the newest wins: {ticks:?}");
    assert_eq!(ticks[0], 0, "the first tick after a quiet spell is written at once");

    // The end is not held back by the interval, and the last words waiting are kept.
    let t = task(&s, &id, None).await.unwrap();
    assert!(Instant::now() - returned < interval);
    assert_eq!((&t["status"], &t["statusMessage"]), (&json!("completed"), &json!("last words")));
    assert_eq!(t["result"]["content"][0]["text"], "done");
    assert_eq!(writes.last().map(String::as_str), Some("last words"));
    assert_eq!(writes.len(), 2 + ticks.len() + 1);

    // A status after the end is never written.
    ctx.status("too late").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(written.lock().len(), writes.len());
    assert_eq!(task(&s, &id, None).await.unwrap()["statusMessage"], "last words");
    assert_eq!(s.running_tasks(), 0);
}

#[tokio::test(start_paused = true)]
async fn shutdown_lets_tasks_finish_within_the_drain_and_fails_the_rest_after() {
    let (dropped, finished) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let s = server(dropped.clone(), finished.clone(), TaskConfig::new());
    let start = |secs: u64| {
        let s = s.clone();
        async move {
            let p = json!({"name": "slow", "arguments": {"seconds": secs}});
            let created = call(&s, "tools/call", p, WITH_TASKS(), None).await.unwrap();
            created["taskId"].as_str().unwrap().to_owned()
        }
    };
    let (quick, long) = (start(2).await, start(30).await);
    s.shutdown();
    // Shutdown alone stops nothing: both tasks are still working a second later.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(task(&s, &quick, None).await.unwrap()["status"], "working");
    assert_eq!(task(&s, &long, None).await.unwrap()["status"], "working");

    let before = tokio::time::Instant::now();
    let cut = s.drain_tasks(Duration::from_secs(5)).await;
    assert_eq!(cut, 1, "the 30 s task outlives a 5 s drain");
    let waited = before.elapsed();
    assert!(waited >= Duration::from_secs(5) && waited < Duration::from_secs(7), "{waited:?}");
    let done = task(&s, &quick, None).await.unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "slept 2s");
    let cut_short = task(&s, &long, None).await.unwrap();
    assert_eq!(cut_short["status"], "failed", "{cut_short}");
    assert!(cut_short["error"]["message"].as_str().unwrap().contains("shut down"), "{cut_short}");
    assert_eq!(finished.load(Ordering::SeqCst), 1);
    assert!(dropped.load(Ordering::SeqCst), "the cut-short handler was stopped");
}

#[tokio::test(start_paused = true)]
async fn a_drain_with_no_tasks_running_returns_at_once() {
    let s = plain();
    let before = tokio::time::Instant::now();
    assert_eq!(s.drain_tasks(Duration::from_secs(10)).await, 0);
    assert_eq!(before.elapsed(), Duration::ZERO);
}
