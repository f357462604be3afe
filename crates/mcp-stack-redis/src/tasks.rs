//! The tasks extension's store on Redis.
//!
//! - `task:{id}`: the [`TaskRecord`] as JSON, expiring with the task's TTL (key expiry);
//! - `tasks` and `tasks:owner:{hash}`: sorted sets of ids by expiry, for the caps (across every
//!   instance) and for the sweeper;
//! - `tasks:lease`: ids of unfinished tasks by lease deadline, renewed by the instance running
//!   the work; a lapsed lease means that instance died, and any instance then fails the task.
//!
//! Every change is a compare-and-set: read the record, apply the [`TaskChange`] with the same
//! rules as in memory ([`TaskRecord::apply`]), and write it in a Lua script only if the record
//! is still what was read; the script also publishes the id, so that watchers on every
//! instance wake (workers waiting for answers, a worker whose task was cancelled elsewhere).

use crate::backend::RedisBackend;
use crate::pubsub::Delivery;
use mcp_tasks::{
    TaskCapacity, TaskChange, TaskLimits, TaskRecord, TaskStore, TaskStoreError, TaskStoreFuture, UpdateFuture, Updated,
};
use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::watch;

/// Largest record accepted from Redis.
const MAX_RECORD: usize = 32 << 20;
/// Expiry score of a task without TTL.
const NEVER: u64 = 1 << 52;
/// How long expired ids stay listed, so that every instance's sweeper sees them.
const FORGET_AFTER_MS: u64 = 10 * 60 * 1000;
/// Attempts of one compare-and-set under contention.
const CAS_ATTEMPTS: usize = 32;

const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[9])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[2])
if redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[2], '+inf') >= tonumber(ARGV[5]) then return -1 end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return -2 end
local ok
if tonumber(ARGV[4]) > 0 then
  ok = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[4])
else
  ok = redis.call('SET', KEYS[1], ARGV[1], 'NX')
end
if not ok then return -3 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[7])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[7])
redis.call('ZADD', KEYS[4], ARGV[8], ARGV[7])
return 1
";

const CAS: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if ARGV[3] == '1' then redis.call('ZREM', KEYS[2], ARGV[4]) end
redis.call('PUBLISH', ARGV[5], ARGV[4])
return 1
";

const ORPHANS: &str = r"
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 100)
local out = {}
for _, id in ipairs(ids) do
  local v = redis.call('GET', ARGV[2] .. id)
  local live = false
  if v then
    local ok, rec = pcall(cjson.decode, v)
    live = ok and type(rec) == 'table' and (rec['status'] == 'working' or rec['status'] == 'input_required')
  end
  if live then table.insert(out, id) else redis.call('ZREM', KEYS[1], id) end
end
return out
";

/// The task store of a [`RedisBackend`] (see [`RedisBackend::task_store`]).
pub struct RedisTaskStore {
    backend: RedisBackend,
    /// Updates of one task from this process take turns (striped by id), so compare-and-set
    /// contends only with other instances.
    turns: Vec<tokio::sync::Mutex<()>>,
    limits: TaskLimits,
    watchers: Arc<Mutex<HashMap<String, watch::Sender<u64>>>>,
    create: redis::Script,
    cas: redis::Script,
    orphans: redis::Script,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore").field("limits", &self.limits).finish_non_exhaustive()
    }
}

/// Wakes the local watchers of `id` (all of them for `None`), forgetting unwatched ones.
fn bump(watchers: &Mutex<HashMap<String, watch::Sender<u64>>>, id: Option<&str>) {
    let mut w = watchers.lock();
    match id {
        Some(id) => {
            if let Some(tx) = w.get(id) {
                tx.send_modify(|r| *r += 1);
            }
        }
        None => w.values().for_each(|tx| tx.send_modify(|r| *r += 1)),
    }
    w.retain(|_, tx| tx.receiver_count() > 0);
}

impl RedisTaskStore {
    /// The store on `backend`, with caps counted across every instance.
    pub fn new(backend: RedisBackend, limits: TaskLimits) -> Self {
        let watchers: Arc<Mutex<HashMap<String, watch::Sender<u64>>>> = Arc::default();
        let w = watchers.clone();
        let hub = &backend.inner.hub;
        hub.on(&hub.channels.tasks, move |d| match d {
            Delivery::Message(id) => {
                if let Ok(id) = std::str::from_utf8(id) {
                    bump(&w, Some(id));
                }
            }
            Delivery::Resync => bump(&w, None),
        });
        Self {
            backend,
            turns: (0..64).map(|_| tokio::sync::Mutex::new(())).collect(),
            limits,
            watchers,
            create: redis::Script::new(CREATE),
            cas: redis::Script::new(CAS),
            orphans: redis::Script::new(ORPHANS),
        }
    }

    fn key(&self, id: &str) -> String {
        self.backend.inner.keys.key(&["task", id])
    }

    fn all_key(&self) -> String {
        self.backend.inner.keys.key(&["tasks"])
    }

    fn lease_key(&self) -> String {
        self.backend.inner.keys.key(&["tasks", "lease"])
    }

    fn owner_key(&self, owner: Option<&str>) -> String {
        let bucket = match owner {
            None => "-".to_owned(),
            Some(o) => Sha256::digest(o.as_bytes())[..16].iter().map(|b| format!("{b:02x}")).collect(),
        };
        self.backend.inner.keys.key(&["tasks", "owner", &bucket])
    }

    fn lease_ms(&self) -> u64 {
        self.backend.inner.options.task_lease.as_millis() as u64
    }

    /// The record stored under `id` as raw JSON and parsed, validated like client input.
    async fn read(&self, id: &str, now_ms: u64) -> Result<Option<(String, TaskRecord)>, TaskStoreError> {
        let mut conn = self.backend.conn();
        let raw: Option<String> = self
            .backend
            .run(redis::cmd("GET").arg(self.key(id)).query_async(&mut conn))
            .await
            .map_err(TaskStoreError::unavailable)?;
        let Some(raw) = raw else { return Ok(None) };
        let record = parse(id, &raw)?;
        Ok((!record.is_expired(now_ms)).then_some((raw, record)))
    }
}

/// A record from Redis: bounded, well-formed, and the one asked for.
pub(crate) fn parse(id: &str, raw: &str) -> Result<TaskRecord, TaskStoreError> {
    let bad = |why: &str| TaskStoreError::unavailable(format!("the stored task {id} is invalid: {why}"));
    if raw.len() > MAX_RECORD {
        return Err(bad("too large"));
    }
    let record: TaskRecord = serde_json::from_str(raw).map_err(|e| bad(&e.to_string()))?;
    if record.task_id != id {
        return Err(bad("it names another task"));
    }
    if record.poll_interval_ms == 0 || record.updated_at_ms < record.created_at_ms {
        return Err(bad("inconsistent fields"));
    }
    Ok(record)
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord, now_ms: u64) -> TaskStoreFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(&record).map_err(TaskStoreError::unavailable_from)?;
            let expiry = record.ttl_ms.map_or(NEVER, |t| record.created_at_ms.saturating_add(t));
            let px = record.ttl_ms.map_or(0, |_| expiry.saturating_sub(now_ms).max(1));
            let mut inv = self.create.prepare_invoke();
            inv.key(self.key(&record.task_id))
                .key(self.all_key())
                .key(self.owner_key(record.owner.as_deref()))
                .key(self.lease_key())
                .arg(json)
                .arg(now_ms)
                .arg(expiry)
                .arg(px)
                .arg(self.limits.max_tasks)
                .arg(self.limits.max_tasks_per_principal)
                .arg(&record.task_id)
                .arg(now_ms + self.lease_ms())
                .arg(now_ms.saturating_sub(FORGET_AFTER_MS));
            let mut conn = self.backend.conn();
            let code: i64 = self.backend.run(inv.invoke_async(&mut conn)).await.map_err(TaskStoreError::unavailable)?;
            match code {
                1 => Ok(()),
                -1 => Err(TaskStoreError::Capacity(TaskCapacity::Total { max: self.limits.max_tasks })),
                -2 => Err(TaskStoreError::Capacity(TaskCapacity::PerPrincipal {
                    max: self.limits.max_tasks_per_principal,
                })),
                _ => Err(TaskStoreError::Duplicate(record.task_id)),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str, now_ms: u64) -> TaskStoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move { Ok(self.read(id, now_ms).await?.map(|(_, r)| r)) })
    }

    fn update<'a>(&'a self, id: &'a str, change: TaskChange, now_ms: u64) -> UpdateFuture<'a> {
        Box::pin(async move {
            let stripe = id.bytes().fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b)));
            let _turn = self.turns[stripe % self.turns.len()].lock().await;
            for attempt in 0..CAS_ATTEMPTS {
                if attempt > 0 {
                    // Another instance won: back off a little (random, growing) and read again.
                    let ms = rand::random::<u64>() % (1 + attempt as u64).min(8);
                    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                }
                let Some((raw, mut record)) = self.read(id, now_ms).await? else { return Ok(None) };
                let before = record.revision;
                let applied = record.apply(change.clone(), now_ms);
                if record.revision == before {
                    return Ok(Some(Updated { record, applied }));
                }
                let json = serde_json::to_string(&record).map_err(TaskStoreError::unavailable_from)?;
                let mut inv = self.cas.prepare_invoke();
                inv.key(self.key(id))
                    .key(self.lease_key())
                    .arg(raw)
                    .arg(json)
                    .arg(if record.status.is_terminal() { "1" } else { "0" })
                    .arg(id)
                    .arg(&self.backend.inner.hub.channels.tasks);
                let mut conn = self.backend.conn();
                let written: i64 =
                    self.backend.run(inv.invoke_async(&mut conn)).await.map_err(TaskStoreError::unavailable)?;
                if written == 1 {
                    bump(&self.watchers, Some(id));
                    return Ok(Some(Updated { record, applied }));
                }
            }
            Err(TaskStoreError::unavailable(format!("task {id} changed too often to update; try again")))
        })
    }

    fn purge_expired(&self, now_ms: u64) -> TaskStoreFuture<'_, Result<Vec<String>, TaskStoreError>> {
        Box::pin(async move {
            let mut conn = self.backend.conn();
            let from = now_ms.saturating_sub(FORGET_AFTER_MS);
            let ids: Vec<String> = self
                .backend
                .run(redis::cmd("ZRANGEBYSCORE").arg(self.all_key()).arg(from).arg(now_ms).query_async(&mut conn))
                .await
                .map_err(TaskStoreError::unavailable)?;
            Ok(ids)
        })
    }

    fn watch(&self, id: &str) -> Option<watch::Receiver<u64>> {
        let mut w = self.watchers.lock();
        Some(w.entry(id.to_owned()).or_insert_with(|| watch::channel(0).0).subscribe())
    }

    fn lease(&self) -> Option<std::time::Duration> {
        Some(self.backend.inner.options.task_lease)
    }

    fn heartbeat<'a>(&'a self, ids: &'a [String], now_ms: u64) -> TaskStoreFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            if ids.is_empty() {
                return Ok(());
            }
            let deadline = now_ms + self.lease_ms();
            let mut cmd = redis::cmd("ZADD");
            cmd.arg(self.lease_key()).arg("XX");
            for id in ids {
                cmd.arg(deadline).arg(id);
            }
            let mut conn = self.backend.conn();
            let _: i64 = self.backend.run(cmd.query_async(&mut conn)).await.map_err(TaskStoreError::unavailable)?;
            Ok(())
        })
    }

    fn orphans(&self, now_ms: u64) -> TaskStoreFuture<'_, Result<Vec<String>, TaskStoreError>> {
        Box::pin(async move {
            let mut inv = self.orphans.prepare_invoke();
            inv.key(self.lease_key()).arg(now_ms).arg(self.key(""));
            let mut conn = self.backend.conn();
            let ids: Vec<String> =
                self.backend.run(inv.invoke_async(&mut conn)).await.map_err(TaskStoreError::unavailable)?;
            Ok(ids)
        })
    }
}
