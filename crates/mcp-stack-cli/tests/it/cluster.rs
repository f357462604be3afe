//! Many instances behave like one: three `mcp serve everything --redis` child processes sharing
//! a real `redis-server`, behind a real nginx round-robin proxy (the `mcp-cluster` harness).
//! Each test names what crossed instances; requests go to one instance directly when the test
//! is about crossing, and through the proxy otherwise.

use crate::common::*;
use mcp_cluster::{Cluster, ClusterOptions};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A fresh cluster of three instances. Without Redis or nginx the test fails naming the package
/// (`mcp_cluster::needs`); `None` only under `MCP_TEST_SKIP_MISSING=1`, said on stderr.
fn cluster() -> Option<Cluster> {
    cluster_with(&[])
}

/// [`cluster`] with more `mcp serve` flags for every instance.
fn cluster_with(args: &[&str]) -> Option<Cluster> {
    if !mcp_cluster::needs::programs(&[("redis-server", "redis-server"), ("nginx", "nginx-light")]) {
        return None;
    }
    let mut options = ClusterOptions::new(env!("CARGO_BIN_EXE_mcp"), 3);
    options.extra_args = args.iter().map(|a| a.to_string()).collect();
    Some(Cluster::start(options).expect("start the cluster"))
}

async fn rpc(addr: SocketAddr, body: &Value) -> Resp {
    post(addr, &std_headers(body), body.to_string()).await
}

/// The `result` of a successful modern request to `addr`.
async fn ok(addr: SocketAddr, body: &Value) -> Value {
    let r = rpc(addr, body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    result_of(&r.message(), &body["id"])
}

async fn open_listen(addr: SocketAddr, filter: Value, caps_: Value) -> Streaming {
    let body = req(1, "subscriptions/listen", caps(json!({"notifications": filter}), caps_));
    let mut s = open(addr, "POST", "/mcp", &std_headers(&body), full(body.to_string())).await;
    assert_eq!(s.status, 200);
    let ack = s.next().await.expect("the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    s
}

/// The next notification on `s` within `limit` (other methods are skipped).
async fn expect_note(s: &mut Streaming, method: &str, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.next()).await {
            Ok(Some(n)) if n["method"] == method => return n,
            Ok(Some(_)) => {}
            Ok(None) => panic!("the stream ended before {method}"),
            Err(_) => panic!("no {method} within {limit:?}"),
        }
    }
}

fn tasks_caps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}})
}

fn task_req(id: i64, method: &str, params: Value) -> Value {
    req(id, method, caps(params, tasks_caps()))
}

/// `tasks/get` on `addr` until `done` holds for the task (bounded by `limit`).
async fn poll_task(addr: SocketAddr, task: &str, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let t = ok(addr, &task_req(9, "tasks/get", json!({"taskId": task}))).await;
        if done(&t) {
            return t;
        }
        assert!(Instant::now() < deadline, "task {task} still {t} after {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mrtr_round_on_one_instance_is_retried_on_another() {
    let Some(c) = cluster() else { return };
    let (a, b, cc) = (c.instance_addr(0), c.instance_addr(1), c.instance_addr(2));
    let params =
        caps(call("test_input_required_result_request_state", json!({})), json!({"elicitation": {"form": {}}}));
    let first = ok(a, &req(1, "tools/call", params.clone())).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let state = first["requestState"].as_str().expect("sealed state").to_owned();
    assert!(first["inputRequests"]["confirm"].is_object(), "{first}");
    let mut retry = params;
    retry["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    retry["requestState"] = json!(state);
    // Sealed on A, opened on B: the instances share the key ring.
    let done = ok(b, &req(2, "tools/call", retry.clone())).await;
    assert_eq!(first_text(&done), "state-ok: requestState verified", "{done}");
    // A modified state is refused on C as it would be on A.
    let mut bad = state.into_bytes();
    let last = bad.len() - 2;
    bad[last] = if bad[last] == b'A' { b'B' } else { b'A' };
    retry["requestState"] = json!(String::from_utf8(bad).unwrap());
    let body = req(3, "tools/call", retry);
    expect_err("tampered state", &rpc(cc, &body).await, 400, -32602, Some(&json!(3)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_one_instance_reaches_listen_streams_on_another_within_a_second() {
    let Some(c) = cluster() else { return };
    let (a, b, cc) = (c.instance_addr(0), c.instance_addr(1), c.instance_addr(2));
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched-resource"]});
    let mut on_a = open_listen(a, filter, json!({})).await;
    ok(b, &tcall(2, "test_trigger_tool_change", json!({}))).await;
    let n = expect_note(&mut on_a, "notifications/tools/list_changed", Duration::from_secs(1)).await;
    assert!(n["params"]["_meta"][K_SUB].is_number() || n["params"]["_meta"][K_SUB].is_string(), "{n}");
    ok(cc, &tcall(3, "touch_watched_resource", json!({}))).await;
    let n = expect_note(&mut on_a, "notifications/resources/updated", Duration::from_secs(1)).await;
    assert_eq!(n["params"]["uri"], "test://watched-resource");
    // Through the proxy too (wherever the stream and the trigger land).
    let mut via_proxy = open_listen(c.proxy_addr(), json!({"promptsListChanged": true}), json!({})).await;
    for i in 0..3 {
        ok(c.proxy_addr(), &tcall(10 + i, "test_trigger_prompt_change", json!({}))).await;
        expect_note(&mut via_proxy, "notifications/prompts/list_changed", Duration::from_secs(1)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_on_one_instance_is_polled_answered_and_cancelled_on_others() {
    let Some(c) = cluster() else { return };
    let (a, b, cc) = (c.instance_addr(0), c.instance_addr(1), c.instance_addr(2));
    // Created on A: visible on B at once (the create result is returned only once stored).
    let created = ok(a, &task_req(1, "tools/call", call("confirm_delete", json!({"filename": "x.txt"})))).await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let mut watch_on_c = open_listen(cc, json!({"taskIds": [id]}), tasks_caps()).await;
    let t = poll_task(b, &id, WAIT, |t| t["status"] == "input_required").await;
    assert!(t["inputRequests"]["confirm"].is_object(), "{t}");
    // Answered on B: the worker on A wakes; the answered key is gone everywhere at once.
    let answer = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    ok(b, &task_req(2, "tasks/update", json!({"taskId": id, "inputResponses": answer}))).await;
    let t = ok(cc, &task_req(3, "tasks/get", json!({"taskId": id}))).await;
    assert!(t.get("inputRequests").is_none_or(|r| r.get("confirm").is_none()), "{t}");
    let t = poll_task(cc, &id, WAIT, |t| t["status"] == "completed").await;
    assert_eq!(first_text(&t["result"]), "deleted x.txt", "{t}");
    // The listen stream on C heard of the task run by A.
    let n = expect_note(&mut watch_on_c, "notifications/tasks", WAIT).await;
    assert_eq!(n["params"]["taskId"], json!(id), "{n}");

    // Cancelled on C while A runs it: A's work stops, B sees `cancelled`.
    let slow = ok(a, &task_req(4, "tools/call", call("slow_compute", json!({"seconds": 60})))).await;
    let slow_id = slow["taskId"].as_str().unwrap().to_owned();
    ok(cc, &task_req(5, "tasks/cancel", json!({"taskId": slow_id}))).await;
    poll_task(b, &slow_id, WAIT, |t| t["status"] == "cancelled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_is_killed_fails_within_the_lease() {
    let Some(mut c) = cluster() else { return };
    let (a, doomed) = (c.instance_addr(0), c.instance_addr(2));
    let slow = ok(doomed, &task_req(1, "tools/call", call("slow_compute", json!({"seconds": 120})))).await;
    let id = slow["taskId"].as_str().unwrap().to_owned();
    poll_task(a, &id, WAIT, |t| t["status"] == "working").await;
    c.kill_instance(2);
    let killed = Instant::now();
    // The lease is 6 s, checked every 2 s by every instance: failed within about 8 s.
    let t = poll_task(a, &id, Duration::from_secs(20), |t| t["status"] != "working").await;
    assert_eq!(t["status"], "failed", "{t}");
    let message = t["statusMessage"].as_str().unwrap_or_default();
    assert!(message.contains("instance running this task stopped"), "{t}");
    assert!(killed.elapsed() < Duration::from_secs(20));
}

/// SIGTERM while a task runs: the instance drains it (within `--drain-timeout`) instead of
/// failing it, keeps its lease alive meanwhile, and exits 0; the result is read on another
/// instance. A task longer than the drain fails with the shutdown message.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_instance_finishes_its_tasks_within_the_drain() {
    let Some(mut c) = cluster_with(&["--drain-timeout", "6"]) else { return };
    let (a, stopping) = (c.instance_addr(0), c.instance_addr(2));
    let start = |id, seconds: u64| task_req(id, "tools/call", call("slow_compute", json!({"seconds": seconds})));
    let short = ok(stopping, &start(1, 3)).await["taskId"].as_str().unwrap().to_owned();
    let long = ok(stopping, &start(2, 120)).await["taskId"].as_str().unwrap().to_owned();
    poll_task(a, &short, WAIT, |t| t["status"] == "working").await;
    let stopped = Instant::now();
    let status = tokio::task::block_in_place(|| c.stop_instance(2, Duration::from_secs(30))).expect("stop");
    assert!(status.success(), "the draining instance exited with {status}");
    assert!(stopped.elapsed() >= Duration::from_secs(2), "it waited for the 3 s task");
    let done = poll_task(a, &short, WAIT, |t| t["status"] != "working").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "computed job in 3s", "{done}");
    let cut = poll_task(a, &long, WAIT, |t| t["status"] != "working").await;
    assert_eq!(cut["status"], "failed", "{cut}");
}

/// Legacy requests for one session, each on a chosen instance.
struct Legacy {
    sid: String,
}

impl Legacy {
    async fn open(at: SocketAddr) -> Self {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY_PV, "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "cluster-test", "version": "1"}}});
        let r = post(at, &legacy_headers(None), init.to_string()).await;
        assert_eq!(r.status, 200, "{}", r.text());
        Self { sid: r.header("mcp-session-id").to_owned() }
    }

    async fn post(&self, at: SocketAddr, body: Value) -> Resp {
        post(at, &legacy_headers(Some(&self.sid)), body.to_string()).await
    }

    async fn call(&self, at: SocketAddr, id: i64, method: &str, params: Value) -> Value {
        let r = self.post(at, json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        assert_eq!(r.status, 200, "{method}: {}", r.text());
        let text = r.text();
        let last = text.lines().filter_map(|l| l.strip_prefix("data: ")).rfind(|d| !d.trim().is_empty());
        let v: Value = match last {
            Some(d) => serde_json::from_str(d).unwrap(),
            None => serde_json::from_slice(&r.body).unwrap(),
        };
        assert_legacy_wire(&v);
        v
    }

    async fn get(&self, at: SocketAddr, last_event_id: Option<&str>) -> Streaming {
        let mut h = legacy_headers(Some(&self.sid));
        h.retain(|(k, _)| k != "content-type");
        if let Some(l) = last_event_id {
            h.push(("last-event-id".into(), l.into()));
        }
        open(at, "GET", "/mcp", &h, full(Vec::new())).await.legacy()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_is_served_by_every_instance() {
    let Some(c) = cluster() else { return };
    let (a, b, cc) = (c.instance_addr(0), c.instance_addr(1), c.instance_addr(2));
    // initialize on A, calls on B and C.
    let s = Legacy::open(a).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(s.post(b, note).await.status, 202);
    let tools = s.call(b, 1, "tools/list", json!({})).await;
    assert!(tools["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{tools}");
    assert_eq!(s.call(cc, 2, "ping", json!({})).await["result"], json!({}));

    // The GET stream on B hears of a list change made by a call on A, and of an update to a
    // resource subscribed to on C.
    let mut stream_b = s.get(b, None).await;
    assert_eq!(stream_b.status, 200);
    s.call(a, 3, "tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}})).await;
    expect_note(&mut stream_b, "notifications/tools/list_changed", WAIT).await;
    s.call(cc, 4, "resources/subscribe", json!({"uri": "test://watched-resource"})).await;
    s.call(a, 5, "tools/call", json!({"name": "touch_watched_resource", "arguments": {}})).await;
    let n = expect_note(&mut stream_b, "notifications/resources/updated", WAIT).await;
    assert_eq!(n["params"]["uri"], "test://watched-resource");

    // Elicitation during a call on A, answered via C: the answer is routed to A.
    let call = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                      "params": {"name": "test_elicitation", "arguments": {"message": "Who?"}}});
    let mut on_a = open(a, "POST", "/mcp", &legacy_headers(Some(&s.sid)), full(call.to_string())).await.legacy();
    let ask = on_a.next().await.expect("the elicitation request");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"],
                        "result": {"action": "accept", "content": {"username": "u", "email": "u@example.com"}}});
    assert_eq!(s.post(cc, answer).await.status, 202);
    let done = on_a.next().await.expect("the call's response");
    assert_eq!(done["id"], 6);
    assert!(first_text(&done["result"]).contains("action=accept"), "{done}");

    // Last-Event-ID on B replays what followed on A's stream, up to the response.
    let (number, events) = stream_number_of(a, &s, 7).await;
    assert!(events >= 2, "progress notifications, then the response");
    let mut replay = s.get(b, Some(&format!("{number}-1"))).await;
    assert_eq!(replay.status, 200);
    let mut replayed = Vec::new();
    while let Some(e) = replay.next().await {
        replayed.push(e);
    }
    assert_eq!(replayed.len(), events - 1, "{replayed:?}");
    assert_eq!(replayed.last().unwrap()["id"], 7, "{replayed:?}");
    // An unknown stream is 400 on any instance.
    assert_eq!(s.get(cc, Some("12345-1")).await.status, 400);
    // A stream A closes at once (before its result) is resumed on C right away: the stream is
    // in Redis before A's response starts, and C follows it to the result.
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "test_reconnection", "arguments": {}}});
    let closed = s.post(a, call).await;
    let priming = closed.text().lines().find_map(|l| l.strip_prefix("id: ")).expect("a priming event").to_owned();
    let mut resumed = s.get(cc, Some(&priming)).await;
    assert_eq!(resumed.status, 200, "resuming {priming} on another instance");
    let result = resumed.next().await.expect("the result on the resumed stream");
    assert_eq!(result["id"], 9, "{result}");

    // DELETE on C ends the session on A (and everywhere).
    let mut h = legacy_headers(Some(&s.sid));
    h.retain(|(k, _)| k != "content-type");
    assert_eq!(send(cc, "DELETE", "/mcp", &h, full(Vec::new())).await.status, 200);
    let r = s.post(a, json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})).await;
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(stream_b.next().await.is_none(), "the GET stream on B ends with the session");
}

/// Runs a call with progress notifications (so its response is a resumable SSE stream) with
/// request id `id` on `at`; returns its stream number and how many events it had.
async fn stream_number_of(at: SocketAddr, s: &Legacy, id: i64) -> (u64, usize) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let r = s.post(at, call).await;
    assert!(r.content_type().starts_with("text/event-stream"), "{}", r.text());
    let text = r.text();
    let ids: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("id: ")).collect();
    let number = ids[0].split('-').next().unwrap().parse().unwrap();
    (number, ids.len() - 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_recover_from_a_redis_restart_and_listeners_catch_up() {
    let Some(mut c) = cluster() else { return };
    let (a, b) = (c.instance_addr(0), c.instance_addr(1));
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched-resource"]});
    let mut on_a = open_listen(a, filter, json!({})).await;
    c.kill_redis();
    // Without Redis, stateless calls keep working; what needs Redis fails with -32603.
    let echo = ok(b, &tcall(2, "echo", json!({"text": "still here"}))).await;
    assert_eq!(first_text(&echo), "still here");
    let body = task_req(3, "tools/call", call("slow_compute", json!({"seconds": 1})));
    let v = rpc(b, &body).await.message();
    assert_error(&v, -32603, Some(&json!(3)));
    // A fixed text and a reference to the log line: nothing of Redis (its address, its error).
    let m = v["error"]["message"].as_str().unwrap();
    assert!(m.contains("(ref ") && !m.contains("Redis") && !m.contains("127.0.0.1"), "{v}");
    // Redis is back (empty): the pub/sub reconnect makes every listener catch up.
    c.start_redis().expect("restart Redis");
    expect_note(&mut on_a, "notifications/tools/list_changed", Duration::from_secs(15)).await;
    expect_note(&mut on_a, "notifications/resources/updated", WAIT).await;
    // And the bus carries changes again, without restarting any instance.
    let deadline = Instant::now() + WAIT;
    loop {
        ok(b, &tcall(4, "test_trigger_tool_change", json!({}))).await;
        let heard = tokio::time::timeout(Duration::from_millis(500), on_a.next()).await;
        if matches!(heard, Ok(Some(n)) if n["method"] == "notifications/tools/list_changed") {
            break;
        }
        assert!(Instant::now() < deadline, "the bus did not recover");
    }
    let t = ok(b, &task_req(5, "tools/call", call("slow_compute", json!({"seconds": 0})))).await;
    assert_eq!(t["resultType"], "task", "tasks work again: {t}");
}

#[test]
fn serve_with_redis_refuses_to_start_without_shared_keys_or_a_reachable_redis() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcp"));
        cmd.args(["serve", "everything", "--http", "127.0.0.1:0"]).args(args);
        cmd.env_remove("MCP_REDIS_URL").env_remove("MCP_STATE_SECRETS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run mcp");
        assert!(!out.status.success(), "{args:?} started");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run(&["--redis", "redis://127.0.0.1:1"], &[]);
    assert!(err.contains("--state-secret-file PATH or MCP_STATE_SECRETS"), "{err}");
    let secret = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="; // 32 bytes
    let err = run(&[], &[("MCP_REDIS_URL", "redis://127.0.0.1:1"), ("MCP_STATE_SECRETS", secret)]);
    assert!(err.contains("cannot reach Redis at redis://127.0.0.1:1"), "{err}");
    let err = run(&["--redis", "redis://127.0.0.1:1"], &[("MCP_STATE_SECRETS", "c2hvcnQ=")]);
    assert!(err.contains("secret 1 has 5 bytes; at least 32"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stored_session_cap_holds_across_instances() {
    let Some(c) = cluster_with(&["--redis-max-sessions", "3"]) else { return };
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut sessions = Vec::new();
    for i in 0..5 {
        let at = c.instance_addr(i % 3);
        let s = Legacy::open(at).await;
        assert_eq!(s.post(at, note.clone()).await.status, 202);
        sessions.push(s);
    }
    // The two least recently used are gone everywhere; the three newest are served anywhere.
    for (i, s) in sessions.iter().enumerate() {
        for k in 0..3 {
            let r = s.post(c.instance_addr(k), json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await;
            assert_eq!(r.status, if i < 2 { 404 } else { 200 }, "session {i} on instance {k}: {}", r.text());
        }
    }
    // Ids that are not ours are unknown without a lookup.
    for bad in ["../../x".to_owned(), "a".repeat(10_000)] {
        let r = post(
            c.instance_addr(0),
            &legacy_headers(Some(&bad)),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string(),
        )
        .await;
        assert_eq!(r.status, 404, "{}", r.text());
    }
}

/// One request on a keep-alive connection to `addr` (opened, or reopened after an error): the
/// outcome, never a panic. `Err` says what failed (connect, send, status, body, JSON-RPC error).
#[cfg(unix)]
async fn try_call(
    conn: &mut Option<hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>>,
    addr: SocketAddr,
    body: &Value,
    expect: &str,
) -> Result<(), String> {
    use http_body_util::BodyExt;
    let ready = match conn.as_mut() {
        Some(s) => s.ready().await.is_ok(),
        None => false,
    };
    if !ready {
        let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
        let io = hyper_util::rt::TokioIo::new(tcp);
        let (sender, c) = hyper::client::conn::http1::handshake(io).await.map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(c);
        *conn = Some(sender);
    }
    let sender = conn.as_mut().expect("connected");
    let mut b = http::Request::post("/mcp").header("host", addr.to_string());
    for (k, v) in std_headers(body) {
        b = b.header(k, v);
    }
    let request = b.body(http_body_util::Full::new(bytes::Bytes::from(body.to_string()))).expect("request");
    let r = sender.send_request(request).await.map_err(|e| {
        *conn = None;
        format!("send: {e}")
    })?;
    let status = r.status();
    let bytes = r.into_body().collect().await.map_err(|e| format!("body: {e}"))?.to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    if status != 200 {
        return Err(format!("status {status}: {text}"));
    }
    if !text.contains(expect) {
        return Err(format!("unexpected answer: {text}"));
    }
    Ok(())
}

/// Rolling restart: the three instances behind nginx are stopped one after another with
/// SIGTERM (each drains and exits 0) and started again, while a steady, bounded load (8
/// clients, each one request at a time on a kept-alive connection, fast calls and every
/// hundredth a 300 ms call) runs through the proxy. Not one call is lost: calls in flight at SIGTERM
/// finish on the draining instance, a call nginx sends on a kept-alive connection to it is
/// answered (`Connection: close`) rather than cut off, and new connections are refused there
/// and go to another (`proxy_next_upstream error`).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_under_load_loses_no_request() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    use std::sync::{Arc, Mutex};
    let Some(mut c) = cluster() else { return };
    let proxy = c.proxy_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failures) = (Arc::new(AtomicUsize::new(0)), Arc::new(Mutex::new(Vec::<String>::new())));
    // Bounded: 8 clients, one request each at a time, at most 200 000 requests per client.
    let clients: Vec<_> = (0..8)
        .map(|w| {
            let (stop, ok, failures) = (stop.clone(), ok.clone(), failures.clone());
            tokio::spawn(async move {
                let mut conn = None;
                for n in 0..200_000u64 {
                    if stop.load(SeqCst) {
                        break;
                    }
                    let id = (w * 1_000_000 + n) as i64;
                    let (body, expect) = if n % 100 == 99 {
                        (tcall(id, "count_with_progress", json!({"steps": 3, "delay_ms": 100})), "counted to 3")
                    } else {
                        (tcall(id, "echo", json!({"text": format!("m{id}")})), "m")
                    };
                    let outcome =
                        tokio::time::timeout(Duration::from_secs(30), try_call(&mut conn, proxy, &body, expect))
                            .await
                            .unwrap_or_else(|_| Err("no answer within 30 s".into()));
                    match outcome {
                        Ok(()) => ok.fetch_add(1, SeqCst),
                        Err(e) => {
                            failures.lock().unwrap().push(format!("request {id}: {e}"));
                            0
                        }
                    };
                }
            })
        })
        .collect();
    let warmed = ok.clone();
    eventually("the load to run", || warmed.load(SeqCst) >= 20).await;
    let mut restarts = Vec::new();
    for i in 0..c.len() {
        let before = ok.load(SeqCst);
        let status = tokio::task::block_in_place(|| c.stop_instance(i, Duration::from_secs(30))).expect("stop");
        assert!(status.success(), "instance {i} exited with {status}");
        tokio::task::block_in_place(|| c.start_instance(i)).expect("restart");
        // As an operator would: the next instance stops only once this one is back in the
        // proxy's rotation (nginx takes a refusing instance out for its `fail_timeout`, 2 s),
        // else two are out at once. Some load is served meanwhile.
        tokio::time::sleep(Duration::from_millis(2_500)).await;
        let progressed = ok.clone();
        eventually("the load to go on", || progressed.load(SeqCst) >= before + 20).await;
        restarts.push(ok.load(SeqCst) - before);
    }
    stop.store(true, SeqCst);
    for client in clients {
        within("a load client to stop", client).await.expect("client");
    }
    let failures = failures.lock().unwrap();
    eprintln!(
        "rolling restart of {} instances: {} requests answered, {} failed (answered per restart: {restarts:?})",
        c.len(),
        ok.load(SeqCst),
        failures.len()
    );
    assert!(failures.is_empty(), "{} lost: {:?}", failures.len(), &failures[..failures.len().min(10)]);
    assert!(ok.load(SeqCst) >= 80);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_is_one_budget_across_three_instances_behind_nginx() {
    let Some(c) = cluster() else { return };
    // `limited_echo` allows 5 calls per caller per 10 s; through the round-robin proxy, 12 calls
    // reach all three instances (each would allow 5 on its own: 15).
    let (mut served, mut refused) = (0, 0);
    for i in 0..12 {
        let r = rpc(c.proxy_addr(), &tcall(i, "limited_echo", json!({"text": "x"}))).await;
        match r.status {
            200 => served += 1,
            429 => {
                assert_eq!(r.message()["error"]["code"], -32029, "{}", r.text());
                assert!(!r.header("retry-after").is_empty());
                refused += 1;
            }
            other => panic!("status {other}: {}", r.text()),
        }
    }
    assert_eq!((served, refused), (5, 7), "one budget for the service");
    // Each instance, asked directly, agrees the budget is spent.
    for i in 0..c.len() {
        let r = rpc(c.instance_addr(i), &tcall(100, "limited_echo", json!({"text": "x"}))).await;
        assert_eq!(r.status, 429, "instance {i}: {}", r.text());
    }
}
