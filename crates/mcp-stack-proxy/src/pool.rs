//! The pool of upstream sessions, keyed by (input capabilities, principal).
//!
//! - A key's session **without** input capabilities is shared: any number of calls at once (the
//!   upstream cannot ask it anything).
//! - A legacy session **with** input capabilities serves one call at a time (its server-to-client
//!   requests then belong to that call without doubt); more calls of the key open more
//!   sessions. A modern session with input capabilities is shared like the others (questions
//!   are routed by the asking call's task, and a modern upstream holds nothing between rounds).
//! - At most `max_sessions` sessions exist; at the cap an idle session of any key is closed
//!   to make room, and when every session is busy a lease waits (bounded), then fails with
//!   "unavailable".
//! - Sessions with input capabilities (those a call waiting for input can hold) are at most
//!   `max_sessions - 1`: one place is kept for requests without input capabilities, so parked
//!   calls can never take every session (with `max_sessions` 1 nothing can be kept).
//! - One authenticated principal holds at most half of those exclusive sessions at once
//!   ([`Pool::principal_share`], `(max_sessions - 1) / 2`, at least 1; its next lease waits
//!   like any other), so one caller's calls waiting for input cannot take them all from the
//!   others. Without downstream auth every caller is the same one, and this share does not
//!   apply.
//! - A session whose transport failed (a crashed stdio process, a lost connection) is dropped
//!   and replaced on the next lease, after a backoff that doubles with each consecutive failure
//!   (100 ms up to 5 s); each loss and restart is logged on stderr.
//! - Every session watches its own change notifications (a legacy session's list changes, a
//!   modern one's `subscriptions/listen`) and feeds them to the proxy's change events.

use super::upstream::{Asker, InputCaps, Upstream};
use mcp_client::{Client, ListenEvent};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Which session a request may use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    /// What the downstream request declared.
    pub(crate) caps: InputCaps,
    /// The authenticated downstream principal (sessions are never shared between principals).
    pub(crate) principal: Option<String>,
    /// Whether the session declares the tasks extension upstream (for requests that declare it).
    pub(crate) tasks: bool,
}

/// Bounds of the pool.
#[derive(Debug, Clone)]
pub(crate) struct PoolLimits {
    /// Most sessions open at once (child processes for a stdio upstream).
    pub(crate) max_sessions: usize,
    /// How long a lease waits for a busy pool.
    pub(crate) lease_wait: Duration,
    /// Bound on connecting a session (era probe and handshake).
    pub(crate) connect_timeout: Duration,
    /// Skip era detection: open legacy sessions at this protocol version (`ProxyConfig::force_legacy`).
    pub(crate) force_legacy: Option<String>,
    /// The bounds of a list a session's client reads in full (`ProxyConfig::max_list_bytes`).
    pub(crate) list: crate::lists::ListLimits,
}

impl Default for PoolLimits {
    fn default() -> Self {
        Self {
            max_sessions: 16,
            lease_wait: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(30),
            force_legacy: None,
            list: crate::lists::ListLimits::default(),
        }
    }
}

/// How long opening a session's change notifications may take.
const WATCH_OPEN: Duration = Duration::from_secs(5);

/// A change notification from the upstream: `(method, params)`.
pub(crate) type Change = (String, Value);

/// Most distinct resources whose `notifications/resources/updated` wait to be announced.
pub(crate) const MAX_PENDING_UPDATES: usize = 256;

/// The upstream's change notifications waiting to be announced downstream, bounded by
/// coalescing: a list change is idempotent (one pending per list), a resource update is kept
/// once per URI, at most [`MAX_PENDING_UPDATES`] URIs (more are dropped, counted in the log).
/// Other notifications are not announced and not kept.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    pending: Mutex<Pending>,
    ready: Notify,
}

#[derive(Debug, Default)]
struct Pending {
    lists: BTreeSet<&'static str>,
    updated: VecDeque<String>,
    dropped: u64,
}

/// The list changes the proxy announces.
const LISTS: [&str; 3] =
    ["notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"];

impl Changes {
    /// Queues an upstream notification (see the type's docs).
    pub(crate) fn push(&self, method: &str, params: &Value) {
        let mut p = self.pending.lock();
        if let Some(list) = LISTS.iter().find(|l| **l == method) {
            p.lists.insert(*list);
        } else if method == "notifications/resources/updated" {
            let Some(uri) = params.get("uri").and_then(Value::as_str) else { return };
            if p.updated.iter().any(|u| u == uri) {
                return;
            }
            if p.updated.len() >= MAX_PENDING_UPDATES {
                p.dropped += 1;
                return;
            }
            p.updated.push_back(uri.to_owned());
        } else {
            return;
        }
        drop(p);
        self.ready.notify_one();
    }

    /// Everything pending now, in announcement form.
    fn take(&self) -> Vec<Change> {
        let mut p = self.pending.lock();
        if p.dropped > 0 {
            tracing::warn!(
                "{} upstream resource update(s) dropped (more than {MAX_PENDING_UPDATES} resources waiting)",
                p.dropped
            );
            p.dropped = 0;
        }
        let lists = std::mem::take(&mut p.lists).into_iter().map(|m| (m.to_owned(), Value::Null));
        let updated = std::mem::take(&mut p.updated)
            .into_iter()
            .map(|uri| ("notifications/resources/updated".to_owned(), json!({ "uri": uri })));
        lists.chain(updated).collect()
    }

    /// The next pending changes (waits for at least one).
    pub(crate) async fn next(&self) -> Vec<Change> {
        loop {
            let batch = self.take();
            if !batch.is_empty() {
                return batch;
            }
            self.ready.notified().await;
        }
    }
}

/// One upstream session.
pub(crate) struct Session {
    key: Key,
    client: Client,
    /// Where its questions go.
    pub(crate) asker: Arc<Asker>,
    leases: AtomicUsize,
    dead: AtomicBool,
    last_used: Mutex<Instant>,
    watchers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("key", &self.key).finish_non_exhaustive()
    }
}

impl Session {
    /// The client connected to the upstream.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    fn usable(&self) -> bool {
        !self.dead.load(Ordering::Relaxed)
    }

    /// Whether calls share the session: it cannot be asked anything, or it is modern (its
    /// questions are routed by call, see `upstream::asking`).
    fn shared(&self) -> bool {
        !self.key.caps.any() || self.client.is_modern()
    }

    /// Whether the session is still in service (not lost or retired).
    pub(crate) fn is_live(&self) -> bool {
        self.usable()
    }

    /// Marks the session used now (so the idle sweep keeps a session whose tasks are followed).
    pub(crate) fn touch(&self) {
        *self.last_used.lock() = Instant::now();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        for w in self.watchers.lock().drain(..) {
            w.abort();
        }
    }
}

/// The open sessions, and the keys of those being connected (a shared key's second request
/// waits for the first one's session instead of opening another).
#[derive(Default)]
struct Slots {
    sessions: Vec<Arc<Session>>,
    connecting: Vec<Key>,
}

/// The consecutive-failure count behind the restart backoff.
#[derive(Default)]
struct Backoff {
    failures: u32,
    not_before: Option<Instant>,
}

/// The pool (see the module docs).
pub(crate) struct Pool {
    upstream: Upstream,
    limits: PoolLimits,
    slots: Mutex<Slots>,
    backoff: Mutex<Backoff>,
    changes: Arc<Changes>,
    /// Whether the upstream answered modern (its sessions that can be asked are shared).
    modern: AtomicBool,
    /// Resource URIs the shared session subscribes to upstream (see [`Pool::subscribe`]).
    subscriptions: Mutex<Vec<String>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("upstream", &self.upstream).finish_non_exhaustive()
    }
}

/// A session lent to one request; dropping it gives the session back.
pub(crate) struct Lease {
    pool: Arc<Pool>,
    session: Arc<Session>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease").field("session", &self.session).finish()
    }
}

impl Lease {
    /// The leased session.
    pub(crate) fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Records the outcome of an upstream call: a transport failure means the session is lost.
    pub(crate) fn outcome<T>(&self, r: &Result<T, mcp_client::ClientError>) {
        match r {
            Err(mcp_client::ClientError::Transport(e)) => self.pool.lost(&self.session, &e.to_string()),
            Err(_) => {}
            Ok(_) => self.pool.backoff.lock().failures = 0,
        }
    }

    /// Closes the session instead of giving it back (its state is unknown, e.g. a call was
    /// abandoned while the upstream waited for an answer).
    pub(crate) fn retire(&self) {
        self.session.dead.store(true, Ordering::Relaxed);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.session.leases.fetch_sub(1, Ordering::AcqRel);
        *self.session.last_used.lock() = Instant::now();
        if !self.session.usable() {
            self.pool.slots.lock().sessions.retain(|s| !Arc::ptr_eq(s, &self.session));
        }
    }
}

/// What a lease attempt decided while holding the lock.
enum Pick {
    Got(Lease),
    Connect(Option<Arc<Session>>),
    Wait,
}

/// A key's place among the sessions being connected, given up when dropped.
struct Connecting<'a> {
    pool: &'a Pool,
    key: &'a Key,
}

impl Drop for Connecting<'_> {
    fn drop(&mut self) {
        let mut slots = self.pool.slots.lock();
        if let Some(i) = slots.connecting.iter().position(|k| k == self.key) {
            slots.connecting.remove(i);
        }
    }
}

impl Pool {
    /// A pool for `upstream`; change notifications of every session go to `changes`.
    pub(crate) fn new(upstream: Upstream, limits: PoolLimits, changes: Arc<Changes>) -> Arc<Self> {
        Arc::new(Self {
            upstream,
            limits,
            slots: Mutex::default(),
            backoff: Mutex::default(),
            changes,
            modern: AtomicBool::new(false),
            subscriptions: Mutex::default(),
        })
    }

    /// The upstream this pool connects to.
    pub(crate) fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    /// How many sessions are open (for tests and logs).
    pub(crate) fn len(&self) -> usize {
        self.slots.lock().sessions.len()
    }

    /// Closes sessions unused for `idle` (child processes exit), except the shared session of
    /// requests without input capabilities, which keeps watching for list changes.
    pub(crate) fn close_idle(&self, idle: Duration) {
        let now = Instant::now();
        self.slots.lock().sessions.retain(|s| {
            s.key == Key::default()
                || s.leases.load(Ordering::Acquire) > 0
                || now.duration_since(*s.last_used.lock()) < idle
        });
    }

    /// A session for `key`: shared when the key has no input capabilities, exclusive otherwise.
    pub(crate) async fn lease(self: &Arc<Self>, key: &Key) -> Result<Lease, mcp_client::ClientError> {
        self.lease_with(key, false).await
    }

    /// A session of `key` for a request that asks nothing of the caller (a list): any live
    /// session of the key serves it, busy or not, so it sees what a call of the key would see
    /// (an upstream may list some tools only to sessions that declare, e.g., elicitation).
    /// Its questions still go to the call the session serves, if any; a list has none.
    pub(crate) async fn lease_alongside(self: &Arc<Self>, key: &Key) -> Result<Lease, mcp_client::ClientError> {
        self.lease_with(key, true).await
    }

    async fn lease_with(self: &Arc<Self>, key: &Key, alongside: bool) -> Result<Lease, mcp_client::ClientError> {
        let deadline = Instant::now() + self.limits.lease_wait;
        loop {
            match self.pick(key, alongside) {
                Pick::Got(lease) => return Ok(lease),
                Pick::Connect(evicted) => {
                    drop(evicted);
                    // Connected, failed, or this request dropped half-way (the client hung up,
                    // a timeout): either way the key is no longer connecting.
                    let _connecting = Connecting { pool: self, key };
                    return self.open(key).await;
                }
                Pick::Wait if Instant::now() >= deadline => {
                    return Err(mcp_client::ClientError::handler(format!(
                        "no upstream session became free within {} s (the proxy opens at most {}); try again later",
                        self.limits.lease_wait.as_secs(),
                        self.limits.max_sessions
                    )))
                }
                Pick::Wait => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    /// How many exclusive (legacy, can be asked) sessions one authenticated principal may hold
    /// at once: half of those the pool may open for requests that can be asked, at least 1.
    pub(crate) fn principal_share(&self) -> usize {
        (self.limits.max_sessions.saturating_sub(1) / 2).max(1)
    }

    /// Picks for `key`; `alongside`: any live session of the key will do (see
    /// [`Pool::lease_alongside`]).
    fn pick(self: &Arc<Self>, key: &Key, alongside: bool) -> Pick {
        let mut guard = self.slots.lock();
        let Slots { sessions, connecting } = &mut *guard;
        sessions.retain(|s| s.usable());
        if alongside {
            if let Some(session) = sessions.iter().find(|s| s.key == *key).cloned() {
                session.leases.fetch_add(1, Ordering::AcqRel);
                return Pick::Got(Lease { pool: self.clone(), session });
            }
        }
        let asks = key.caps.any();
        let shared = !asks || self.modern.load(Ordering::Relaxed);
        if !shared && key.principal.is_some() {
            // A principal's share of the exclusive sessions (see the module docs).
            let mine = |k: &Key| k.caps.any() && k.principal == key.principal;
            let busy = sessions.iter().filter(|s| mine(&s.key) && !s.shared() && s.leases.load(Ordering::Acquire) > 0);
            if busy.count() + connecting.iter().filter(|k| mine(k)).count() >= self.principal_share() {
                return Pick::Wait;
            }
        }
        let found =
            sessions.iter().find(|s| s.key == *key && (s.shared() || s.leases.load(Ordering::Acquire) == 0)).cloned();
        if let Some(session) = found {
            session.leases.fetch_add(1, Ordering::AcqRel);
            return Pick::Got(Lease { pool: self.clone(), session });
        }
        if shared && connecting.contains(key) {
            return Pick::Wait;
        }
        // One place is kept for requests without input capabilities (see the module docs).
        let asking =
            sessions.iter().filter(|s| s.key.caps.any()).count() + connecting.iter().filter(|k| k.caps.any()).count();
        let room = !asks || self.limits.max_sessions <= 1 || asking < self.limits.max_sessions - 1;
        if sessions.len() + connecting.len() < self.limits.max_sessions && room {
            connecting.push(key.clone());
            return Pick::Connect(None);
        }
        // The shared session of requests without input capabilities is closed last: it holds
        // the resource subscriptions and feeds change notifications (the next request without
        // input capabilities opens it again). At the cap of sessions that can be asked, only
        // another of those makes room.
        let idle = sessions
            .iter()
            .enumerate()
            .filter(|(_, s)| s.leases.load(Ordering::Acquire) == 0 && (room || s.key.caps.any()))
            .min_by_key(|(_, s)| (s.key == Key::default(), *s.last_used.lock()))
            .map(|(i, _)| i);
        match idle {
            Some(i) => {
                connecting.push(key.clone());
                Pick::Connect(Some(sessions.remove(i)))
            }
            None => Pick::Wait,
        }
    }

    /// Connects a new session for `key` (after the restart backoff) and leases it.
    async fn open(self: &Arc<Self>, key: &Key) -> Result<Lease, mcp_client::ClientError> {
        let wait = self.backoff.lock().not_before;
        if let Some(at) = wait {
            tokio::time::sleep_until(at).await;
        }
        let asker = Arc::new(Asker::default());
        let (timeout, legacy) = (self.limits.connect_timeout, self.limits.force_legacy.as_deref());
        let list = self.limits.list;
        let client = match self.upstream.connect(key.caps, key.tasks, asker.clone(), timeout, legacy, list).await {
            Ok(c) => c,
            Err(e) => {
                self.failed(&format!("could not connect: {e}"));
                return Err(e);
            }
        };
        self.modern.store(client.is_modern(), Ordering::Relaxed);
        let restarted = self.backoff.lock().not_before.take().is_some();
        if restarted {
            tracing::info!("upstream {} restarted ({} era)", self.upstream.describe(), era(&client));
        }
        let session = Arc::new(Session {
            key: key.clone(),
            client,
            asker,
            leases: AtomicUsize::new(1),
            dead: AtomicBool::new(false),
            last_used: Mutex::new(Instant::now()),
            watchers: Mutex::default(),
        });
        self.watch(&session, self.filter(&session.key)).await;
        self.slots.lock().sessions.push(session.clone());
        Ok(Lease { pool: self.clone(), session })
    }

    /// Subscribes the shared session (requests without input capabilities: the one that
    /// stays open) to updates of `uris` upstream, now and after every reconnect; their
    /// `notifications/resources/updated` then reach downstream listeners.
    pub(crate) async fn subscribe(self: &Arc<Self>, uris: Vec<String>) {
        *self.subscriptions.lock() = uris;
        let shared: Vec<Arc<Session>> =
            self.slots.lock().sessions.iter().filter(|s| s.key == Key::default()).cloned().collect();
        // Sessions open already get a second subscription for the resources only (replacing
        // the first would race its unsubscribe against the new subscribe).
        let only = json!({ "resourceSubscriptions": *self.subscriptions.lock() });
        for s in shared {
            self.watch(&s, only.clone()).await;
        }
    }

    /// What a new session of `key` watches: every list change, and for the shared session the
    /// subscribed resources.
    fn filter(&self, key: &Key) -> Value {
        let mut filter = json!({ "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true });
        if *key == Key::default() {
            filter["resourceSubscriptions"] = json!(*self.subscriptions.lock());
        }
        filter
    }

    /// Feeds the session's change notifications (those `filter` asks for) to the pool's channel,
    /// until the subscription ends.
    /// The subscription is open (and a legacy upstream's `resources/subscribe` answered) when
    /// this returns; waits at most [`WATCH_OPEN`].
    async fn watch(self: &Arc<Self>, session: &Arc<Session>, filter: Value) {
        let Ok(filter) = serde_json::from_value(filter) else { return };
        let mut sub = match tokio::time::timeout(WATCH_OPEN, session.client.listen(filter)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                let e = super::upstream::loggable(&e.to_string());
                return tracing::debug!(error = %e, "upstream session has no change notifications");
            }
            Err(_) => return tracing::debug!("upstream session did not open its change notifications"),
        };
        let changes = self.changes.clone();
        let (pool, weak) = (Arc::downgrade(self), Arc::downgrade(session));
        let task = tokio::spawn(async move {
            while let Some(Ok(event)) = sub.next().await {
                if let ListenEvent::Notification { method, params } = event {
                    changes.push(&method, &params);
                }
            }
            // The stream ended under a live session: its upstream is gone (a stdio process
            // that died between calls, a dropped connection). Retire it now rather than fail
            // the next call on it; the shared session is reopened at once (after the backoff),
            // so change notifications and resource updates keep flowing.
            let (Some(pool), Some(session)) = (pool.upgrade(), weak.upgrade()) else { return };
            pool.lost(&session, "its notification stream ended");
            if session.key == Key::default() {
                drop(session);
                pool.reopen_shared().await;
            }
        });
        session.watchers.lock().push(task);
    }

    /// Opens the shared session again. Boxed with its `Send` bound spelled out: it is awaited
    /// inside the watcher that [`Pool::open`] spawns, which would make the future types cycle.
    fn reopen_shared(self: Arc<Self>) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(async move {
            if let Err(e) = self.lease(&Key::default()).await {
                let e = super::upstream::loggable(&e.to_string());
                tracing::warn!(error = %e, "could not reopen the upstream session that feeds notifications");
            }
        })
    }

    /// A session's transport failed: it is dropped, and the next one waits for the backoff.
    fn lost(&self, session: &Session, why: &str) {
        if !session.dead.swap(true, Ordering::AcqRel) {
            let what = if self.upstream.is_process() { "process" } else { "connection" };
            self.failed(&format!("{what} lost ({why})"));
        }
    }

    fn failed(&self, why: &str) {
        let mut b = self.backoff.lock();
        b.failures = b.failures.saturating_add(1);
        let delay = Duration::from_millis(100 * (1u64 << (b.failures - 1).min(6))).min(Duration::from_secs(5));
        b.not_before = Some(Instant::now() + delay);
        tracing::warn!(
            "upstream {}: {}; restarting it on the next request (attempt {}, after {} ms)",
            self.upstream.describe(),
            super::upstream::loggable(why),
            b.failures,
            delay.as_millis()
        );
    }
}

/// `modern` or `legacy`: the era a session speaks, for the proxy's log lines.
pub(super) fn era(client: &Client) -> &'static str {
    if client.is_modern() {
        "modern"
    } else {
        "legacy"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Regression (review): a request dropped while its session was still connecting left the
    // key "connecting" for ever; every later lease of the key waited and failed, and the
    // entries counted against the session cap.
    #[tokio::test]
    async fn a_lease_dropped_while_connecting_gives_its_place_back() {
        let upstream = Upstream::new(mcp_client::config::ServerSpec::Stdio {
            command: "sleep".into(),
            args: vec!["30".into()],
            env: Vec::new(),
            cwd: None,
        });
        let pool = Pool::new(upstream, PoolLimits::default(), Arc::default());
        let hung = tokio::time::timeout(Duration::from_millis(300), pool.lease(&Key::default())).await;
        assert!(hung.is_err(), "a server that never answers cannot connect");
        assert!(pool.slots.lock().connecting.is_empty(), "the dropped lease gave its place back");
    }

    #[tokio::test]
    async fn changes_coalesce_and_are_bounded() {
        let changes = Changes::default();
        for _ in 0..1000 {
            changes.push("notifications/tools/list_changed", &Value::Null);
            changes.push("notifications/message", &json!({}));
        }
        for i in 0..(MAX_PENDING_UPDATES + 5) {
            changes.push("notifications/resources/updated", &json!({ "uri": format!("mem://{i}") }));
            changes.push("notifications/resources/updated", &json!({ "uri": "mem://0" }));
        }
        let got = changes.next().await;
        assert_eq!(got.len(), 1 + MAX_PENDING_UPDATES, "one list change, each resource once, up to the bound");
        assert_eq!(got[0].0, "notifications/tools/list_changed");
        assert!(changes.take().is_empty());
    }
}
