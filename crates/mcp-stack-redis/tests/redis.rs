//! The Redis backend against a real `redis-server` (started by the test, on a free loopback
//! port): two backends play two instances of one service.

use mcp_cluster::RedisServer;
use mcp_http::{SessionChange, SessionEvent, SessionRecord};
use mcp_redis::{RedisBackend, RedisOptions};
use mcp_tasks::{Applied, TaskChange, TaskLimits, TaskRecord, TaskStatus, TaskStoreError, Terminal};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn redis() -> Option<RedisServer> {
    if !mcp_cluster::needs::program("redis-server", "redis-server") {
        return None;
    }
    Some(RedisServer::start().expect("start redis-server"))
}

async fn two(r: &RedisServer, options: RedisOptions) -> (RedisBackend, RedisBackend) {
    let a = RedisBackend::connect_with(&r.url(), "test", options.clone()).await.unwrap();
    let b = RedisBackend::connect_with(&r.url(), "test", options).await.unwrap();
    (a, b)
}

fn record(id: &str, owner: &str, now: u64) -> TaskRecord {
    TaskRecord::new(id.into(), Some(owner.into()), now, Some(60_000), 100)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

#[tokio::test]
async fn caps_count_across_instances_and_updates_never_lose_a_change() {
    let Some(r) = redis() else { return };
    let (a, b) = two(&r, RedisOptions::default()).await;
    let limits = TaskLimits { max_tasks: 100, max_tasks_per_principal: 2 };
    let (sa, sb) = (a.task_store(limits), b.task_store(limits));
    let now = now_ms();
    sa.create(record("t1", "alice", now), now).await.unwrap();
    sb.create(record("t2", "alice", now), now).await.unwrap();
    let e = sa.create(record("t3", "alice", now), now).await.unwrap_err();
    assert!(matches!(e, TaskStoreError::Capacity(_)), "{e}");
    sb.create(record("b1", "bob", now), now).await.unwrap();
    assert_eq!(sa.create(record("b1", "bob", now), now).await, Err(TaskStoreError::Duplicate("b1".into())));
    // 40 concurrent changes through both instances: compare-and-set keeps every one.
    let mut jobs = Vec::new();
    for i in 0..40 {
        let s = if i % 2 == 0 { sa.clone() } else { sb.clone() };
        jobs.push(tokio::spawn(async move { s.update("t1", TaskChange::Message(format!("m{i}")), now_ms()).await }));
    }
    for j in jobs {
        assert!(j.await.unwrap().unwrap().is_some());
    }
    assert_eq!(sb.get("t1", now_ms()).await.unwrap().unwrap().revision, 40);
}

#[tokio::test]
async fn a_change_on_one_instance_wakes_watchers_on_the_other() {
    let Some(r) = redis() else { return };
    let (a, b) = two(&r, RedisOptions::default()).await;
    let (sa, sb) = (a.task_store(TaskLimits::default()), b.task_store(TaskLimits::default()));
    let now = now_ms();
    sa.create(record("w", "alice", now), now).await.unwrap();
    let mut rx = sa.watch("w").unwrap();
    sb.update("w", TaskChange::Cancel, now_ms()).await.unwrap().unwrap();
    tokio::time::timeout(Duration::from_secs(1), rx.changed()).await.expect("woken within 1 s").unwrap();
    assert!(sa.get("w", now_ms()).await.unwrap().unwrap().cancel_requested);
}

#[tokio::test]
async fn a_lapsed_lease_makes_an_orphan_until_the_task_ends() {
    let Some(r) = redis() else { return };
    let options = RedisOptions::default().task_lease(Duration::from_millis(200));
    let (a, b) = two(&r, options).await;
    let (sa, sb) = (a.task_store(TaskLimits::default()), b.task_store(TaskLimits::default()));
    let now = now_ms();
    sa.create(record("kept", "alice", now), now).await.unwrap();
    sa.create(record("lost", "alice", now), now).await.unwrap();
    assert!(sb.orphans(now).await.unwrap().is_empty());
    // Only "kept" is renewed: "lost" is an orphan once its lease lapses.
    sa.heartbeat(&["kept".to_owned()], now + 150).await.unwrap();
    assert_eq!(sb.orphans(now + 300).await.unwrap(), ["lost"]);
    let failed = Terminal::Failed(json!({"code": -32603, "message": "gone"}));
    sb.update("lost", TaskChange::Finish(failed), now_ms()).await.unwrap().unwrap();
    assert!(sb.orphans(now + 300).await.unwrap().is_empty(), "a finished task has no lease");
}

#[tokio::test]
async fn nothing_read_from_redis_is_trusted() {
    let Some(r) = redis() else { return };
    let (a, _) = two(&r, RedisOptions::default()).await;
    let store = a.task_store(TaskLimits::default());
    let client = redis::Client::open(r.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let bad = [
        ("mcp:test:task:garbage", "not json".to_owned()),
        ("mcp:test:task:other", serde_json::to_string(&record("someone-else", "x", 1)).unwrap()),
    ];
    for (k, v) in &bad {
        let _: () = redis::cmd("SET").arg(k).arg(v).query_async(&mut conn).await.unwrap();
    }
    for id in ["garbage", "other"] {
        let e = store.get(id, now_ms()).await.unwrap_err();
        assert!(matches!(&e, TaskStoreError::Unavailable { message: m, .. } if m.contains("is invalid")), "{e}");
        assert!(store.update(id, TaskChange::Cancel, now_ms()).await.is_err());
    }
    // A session record from outside: a version this server does not speak is refused.
    let sessions = a.sessions();
    let state: mcp_session::LegacyState = serde_json::from_value(json!({
        "protocol_version": "1999-01-01", "client_capabilities": {}, "client_info": null,
        "log_level": null, "initialized": false, "subscriptions": []}))
    .unwrap();
    let rec = serde_json::to_string(&SessionRecord { owner: None, state }).unwrap();
    let _: () = redis::cmd("HSET").arg("mcp:test:sess:s1").arg("rec").arg(rec).query_async(&mut conn).await.unwrap();
    let e = sessions.load("s1", Duration::from_secs(60)).await.unwrap_err();
    assert!(e.to_string().contains("unknown protocol version"), "{e}");
}

#[tokio::test]
async fn session_changes_reach_the_other_instance_in_order() {
    let Some(r) = redis() else { return };
    let (a, b) = two(&r, RedisOptions::default()).await;
    let (sa, sb) = (a.sessions(), b.sessions());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    sb.attach(Box::new(move |e| s.lock().unwrap().push(e)));
    let state: mcp_session::LegacyState = serde_json::from_value(json!({
        "protocol_version": "2025-11-25", "client_capabilities": {}, "client_info": {"name": "c", "version": "1"},
        "log_level": null, "initialized": false, "subscriptions": []}))
    .unwrap();
    let idle = Duration::from_secs(60);
    sa.create("s2", &SessionRecord { owner: Some("alice".into()), state }, idle).await.unwrap();
    assert!(sa.change("s2", SessionChange::Subscribe("a://x".into()), idle).await.unwrap());
    assert!(sa.change("s2", SessionChange::LogLevel(3), idle).await.unwrap());
    let loaded = sb.load("s2", idle).await.unwrap().unwrap();
    assert_eq!(loaded.owner.as_deref(), Some("alice"));
    assert_eq!((loaded.state.log_level(), loaded.state.subscribed_uris()), (Some(3), vec!["a://x".to_owned()]));
    assert!(sa.delete("s2").await.unwrap());
    assert!(!sa.change("s2", SessionChange::Initialized, idle).await.unwrap(), "a deleted session changes no more");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while seen.lock().unwrap().len() < 3 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen = seen.lock().unwrap().clone();
    assert!(
        matches!(&seen[0], SessionEvent::Changed { subscriptions, log_level: None, .. } if subscriptions == &["a://x"]),
        "{seen:?}"
    );
    assert!(matches!(&seen[1], SessionEvent::Changed { log_level: Some(3), .. }), "{seen:?}");
    assert_eq!(seen[2], SessionEvent::Ended("s2".into()));
}

/// Calls `tools/call` for `name` as a task on `server`; the task's id.
async fn start_task(server: &mcp_server::Server, name: &str) -> String {
    use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION, TASKS_EXTENSION};
    let mut params = json!({ "name": name, "arguments": {} }).as_object().cloned().unwrap();
    let caps = json!({ "extensions": { TASKS_EXTENSION: {} } });
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: caps }));
    let req = mcp_protocol::Request { id: json!(1), method: "tools/call".into(), params };
    let env = mcp_server::RequestEnv::new(Default::default());
    let created = server.handle(req, env).await.unwrap();
    created["taskId"].as_str().unwrap().to_owned()
}

/// A TCP relay to the Redis at `url` that holds every chunk for `delay` each way: an instance
/// farther from Redis than the others. Its URL.
async fn slow_relay(url: &str, delay: Duration) -> String {
    use tokio::net::{TcpListener, TcpStream};
    let target = url.trim_start_matches("redis://").to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((near, _)) = listener.accept().await {
            let Ok(redis) = TcpStream::connect(&target).await else { continue };
            let ((near_r, near_w), (redis_r, redis_w)) = (near.into_split(), redis.into_split());
            tokio::spawn(hold_and_pass(near_r, redis_w, delay));
            tokio::spawn(hold_and_pass(redis_r, near_w, delay));
        }
    });
    format!("redis://{addr}")
}

async fn hold_and_pass(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Duration,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 64 << 10];
    while let Ok(n @ 1..) = from.read(&mut buf).await {
        tokio::time::sleep(delay).await;
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

// Regression (found by mcp-crossing): a task cancelled from another instance while its handler
// was inside `ctx.status()` never ended. The work loop kept the cut-short round (holding this
// instance's update turn for the task) alive while it stored the end, so both waited forever,
// and so did every later task whose id shared that turn.
//
// And: a handler calling `ctx.status()` back to back used to write the record on every call, so
// the other instance's cancel lost every compare-and-set and failed ("changed too often"). Status
// writes are coalesced and spaced now: the cancel goes through at its first try.
#[tokio::test]
async fn a_task_cancelled_elsewhere_mid_status_update_ends() {
    let Some(r) = redis() else { return };
    let a = RedisBackend::connect_with(&r.url(), "test", RedisOptions::default()).await.unwrap();
    // The other instance is farther from Redis (2 ms each way): its compare-and-set has a wider
    // window to lose than the handler's writes.
    let far = slow_relay(&r.url(), Duration::from_millis(2)).await;
    let b = RedisBackend::connect_with(&far, "test", RedisOptions::default()).await.unwrap();
    let sb = b.task_store(TaskLimits::default());
    let chatty = mcp_server::Tool::new("chatty").task_support(mcp_server::TaskSupport::Required).handler(
        |ctx: mcp_server::Context| async move {
            // Status updates back to back until the work is stopped: a cancel almost always
            // lands during one.
            for i in 0u64.. {
                ctx.status(format!("step {i}")).await;
            }
            "done"
        },
    );
    let config = mcp_server::tasks::TaskConfig::new().store(a.task_store(TaskLimits::default()));
    let server = mcp_server::Server::builder("t", "1").tasks(config).tool(chatty).build().unwrap();
    for round in 0..8 {
        let started = tokio::time::Instant::now();
        let id = start_task(&server, "chatty").await;
        // Let a few updates through, then cancel from the other instance.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while sb.get(&id, now_ms()).await.unwrap().unwrap().revision < 3 {
            assert!(tokio::time::Instant::now() < deadline, "task {id} made no progress");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The first try must do: a client is never told to retry because the handler is chatty.
        match sb.update(&id, TaskChange::Cancel, now_ms()).await {
            Ok(Some(u)) => assert_eq!(u.applied, Applied::Changed, "round {round}"),
            other => panic!("round {round}: the cancel from the other instance failed: {other:?}"),
        }
        loop {
            let t = sb.get(&id, now_ms()).await.unwrap().unwrap();
            if t.status.is_terminal() {
                assert_eq!(t.status, TaskStatus::Cancelled);
                // One status write per 100 ms (the default interval), the cancel and the end.
                let most = started.elapsed().as_millis() / 100 + 4;
                assert!(u128::from(t.revision) <= most, "{} writes, at most {most} expected", t.revision);
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "task {id} never ended after its cancel: {t:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

fn legacy_record(initialized: bool, pad: usize) -> SessionRecord {
    let state: mcp_session::LegacyState = serde_json::from_value(json!({
        "protocol_version": "2025-11-25", "client_capabilities": {"experimental": {"pad": "x".repeat(pad)}},
        "client_info": {"name": "c", "version": "1"},
        "log_level": null, "initialized": initialized, "subscriptions": []}))
    .unwrap();
    SessionRecord { owner: None, state }
}

#[tokio::test]
async fn stored_sessions_are_capped_and_ids_are_checked_before_any_key() {
    let Some(r) = redis() else { return };
    let (a, b) = two(&r, RedisOptions::default().max_sessions(3)).await;
    let (sa, sb) = (a.sessions(), b.sessions());
    let ended = Arc::new(Mutex::new(Vec::new()));
    let e = ended.clone();
    sb.attach(Box::new(move |ev| {
        if let SessionEvent::Ended(id) = ev {
            e.lock().unwrap().push(id)
        }
    }));
    tokio::time::sleep(Duration::from_millis(200)).await; // subscribed
    let idle = Duration::from_secs(60);
    // The first expires first: it is the one a session past the cap ends, on every instance.
    sa.create("c1", &legacy_record(true, 0), Duration::from_secs(30)).await.unwrap();
    sb.create("c2", &legacy_record(true, 0), idle).await.unwrap();
    sa.create("c3", &legacy_record(true, 0), idle).await.unwrap();
    sb.create("c4", &legacy_record(true, 0), idle).await.unwrap();
    assert!(sa.load("c1", idle).await.unwrap().is_none(), "the least recently used session was ended");
    for id in ["c2", "c3", "c4"] {
        assert!(sb.load(id, idle).await.unwrap().is_some(), "{id}");
    }
    let mut conn = redis::Client::open(r.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let n: usize = redis::cmd("ZCARD").arg("mcp:test:sess-index").query_async(&mut conn).await.unwrap();
    assert_eq!(n, 3, "the global cap holds");
    for _ in 0..50 {
        if ended.lock().unwrap().contains(&"c1".to_owned()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ended.lock().unwrap().contains(&"c1".to_owned()), "the other instance drops its replica");

    // An uninitialized session keeps the short life it was created with, however it is used.
    sa.create("u1", &legacy_record(false, 0), Duration::from_secs(5)).await.unwrap();
    assert!(sa.load("u1", idle).await.unwrap().is_some());
    sa.touch("u1", idle).await.unwrap();
    let ttl: i64 = redis::cmd("PTTL").arg("mcp:test:sess:u1").query_async(&mut conn).await.unwrap();
    assert!(ttl > 0 && ttl <= 5_000, "{ttl}");
    assert!(sa.change("u1", SessionChange::Initialized, idle).await.unwrap());
    let ttl: i64 = redis::cmd("PTTL").arg("mcp:test:sess:u1").query_async(&mut conn).await.unwrap();
    assert!(ttl > 5_000, "initialized: it lives the idle time ({ttl})");

    // Oversized records are refused; ids that are not ids never become key names.
    assert!(sa.create("big", &legacy_record(true, 300 << 10), idle).await.is_err());
    let long = "a".repeat(10_000);
    for id in ["../../x", "a b", long.as_str(), ""] {
        assert!(sa.create(id, &legacy_record(true, 0), idle).await.is_err());
        assert!(sa.load(id, idle).await.unwrap().is_none());
        assert!(!sa.delete(id).await.unwrap());
    }
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(&mut conn).await.unwrap();
    assert!(
        keys.iter().all(|k| !k.contains("..") && !k.contains(' ') && k.len() < 200 && !k.contains("big")),
        "{keys:?}"
    );
}

#[tokio::test]
async fn two_instances_spend_one_rate_limit_budget() {
    let Some(r) = redis() else { return };
    let (a, b) = two(&r, RedisOptions::default()).await;
    let (sa, sb) = (a.rate_limit_store(), b.rate_limit_store());
    let quota = mcp_server::rate_limit::Quota::new(5, Duration::from_secs(10));
    let mut allowed = 0;
    for i in 0..12 {
        let store = if i % 2 == 0 { &sa } else { &sb };
        if store.acquire("c:p:ann", quota).await.unwrap().is_ok() {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 5, "one budget across both instances");
    let wait = sb.acquire("c:p:ann", quota).await.unwrap().unwrap_err();
    assert!(wait > Duration::from_millis(1500) && wait <= Duration::from_secs(2), "{wait:?}");
    assert!(sa.acquire("c:p:bob", quota).await.unwrap().is_ok(), "another caller has its own bucket");
    // A short quota refills on Redis's clock, and its key expires once full.
    let fast = mcp_server::rate_limit::Quota::new(1, Duration::from_millis(200));
    assert!(sa.acquire("fast", fast).await.unwrap().is_ok());
    assert!(sb.acquire("fast", fast).await.unwrap().is_err());
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(sb.acquire("fast", fast).await.unwrap().is_ok());
}

#[tokio::test]
async fn a_result_cached_by_one_instance_is_served_by_the_other_until_it_expires() {
    let Some(r) = redis() else { return };
    let (a, b) = two(&r, RedisOptions::default()).await;
    let (ca, cb) = (a.cache_store(), b.cache_store());
    let key = "tools/call\u{0}forecast\u{0}{\"city\":\"paris\"}\u{0}*";
    assert!(cb.get(key).await.is_none());
    ca.put(key, Arc::from(&b"{\"content\":[]}"[..]), Duration::from_millis(300)).await;
    assert_eq!(cb.get(key).await.as_deref(), Some(&b"{\"content\":[]}"[..]));
    assert!(cb.get("another key").await.is_none());
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(cb.get(key).await.is_none(), "expired on Redis");
    // A result larger than the per-entry cap is not stored.
    ca.put("big", Arc::from(vec![b'x'; (1 << 20) + 1]), Duration::from_secs(5)).await;
    assert!(cb.get("big").await.is_none());
}
