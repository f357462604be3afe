//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the server.
//!
//! A tool declares whether it may run as a task ([`crate::TaskSupport`]). When a `tools/call`
//! declares the extension in its own `_meta` client capabilities and the tool allows it, the
//! server creates a task (stored before the `CreateTaskResult` is returned), runs the same
//! handler detached from the request, and answers `tasks/get`, `tasks/update` and
//! `tasks/cancel`. Inside a task the handler's [`crate::Context`] still gives cancellation,
//! status messages ([`crate::Context::status`]) and client input: a round that returns
//! `input_required` parks the task with its `inputRequests` until `tasks/update` brings every
//! answer, then the handler runs again with them (the MRTR contract, without retries).
//!
//! A handler that must ask before its task exists (MRTR first, then a task) is registered with
//! [`TaskStart::Handler`] and calls [`crate::Context::start_task`] once its questions are
//! answered: everything before runs synchronously, everything after in the task.

pub(crate) mod binding;
mod status;
pub(crate) mod wire;
pub(crate) mod worker;

#[cfg(test)]
mod tests;

// The task-store contract (crate `mcp-stack-tasks`): what a store keeps and implements.
pub use mcp_tasks::{
    iso8601, Applied, InMemoryTaskStore, TaskCapacity, TaskChange, TaskLimits, TaskRecord, TaskStatus, TaskStore,
    TaskStoreError, TaskStoreFuture, Terminal, UpdateFuture, Updated,
};

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// `-32021` for a request that needs the tasks extension and did not declare it (with the
/// `data.requiredCapabilities` the schema requires).
pub(crate) fn extension_required() -> mcp_protocol::ProtocolError {
    let required = serde_json::json!({ "extensions": { mcp_protocol::meta::TASKS_EXTENSION: {} } });
    mcp_protocol::ProtocolError::MissingRequiredClientCapability { required }
}

pub use crate::catalog::TaskStart;

/// How a server runs tasks: lifetimes, polling hint, caps and the store.
#[derive(Clone)]
pub struct TaskConfig {
    pub(crate) ttl: Option<Duration>,
    pub(crate) poll_interval: Duration,
    pub(crate) limits: TaskLimits,
    pub(crate) max_input_rounds: usize,
    pub(crate) sweep_interval: Duration,
    pub(crate) status_interval: Duration,
    pub(crate) store: Option<Arc<dyn TaskStore>>,
}

impl std::fmt::Debug for TaskConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskConfig")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("limits", &self.limits)
            .field("max_input_rounds", &self.max_input_rounds)
            .field("status_interval", &self.status_interval)
            .finish_non_exhaustive()
    }
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            ttl: Some(Duration::from_secs(3600)),
            poll_interval: Duration::from_secs(1),
            limits: TaskLimits::default(),
            max_input_rounds: 16,
            sweep_interval: Duration::from_secs(30),
            status_interval: Duration::from_millis(100),
            store: None,
        }
    }
}

impl TaskConfig {
    /// The defaults: 1 h TTL, 1 s poll interval, [`TaskLimits::default`], 16 input rounds,
    /// 100 ms between status writes, the in-memory store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long a task lives after creation (`None`: until the server stops).
    pub fn ttl(mut self, ttl: Option<Duration>) -> Self {
        self.ttl = ttl;
        self
    }

    /// The `pollIntervalMs` suggested to clients.
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll_interval = every.max(Duration::from_millis(1));
        self
    }

    /// Caps on live tasks (used by the in-memory store; a custom store enforces its own).
    pub fn limits(mut self, limits: TaskLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How many times one task may ask for input before it fails.
    pub fn max_input_rounds(mut self, n: usize) -> Self {
        self.max_input_rounds = n.max(1);
        self
    }

    /// How often expired tasks are purged (and their work stopped).
    pub fn sweep_interval(mut self, every: Duration) -> Self {
        self.sweep_interval = every.max(Duration::from_millis(10));
        self
    }

    /// The least time between two writes of one task's `statusMessage` (default 100 ms).
    ///
    /// Inside a task, [`crate::Context::status`] does not write every message: at most one
    /// write per task is in flight and writes start at least this far apart; a message sent
    /// meanwhile replaces the one waiting, and only the newest is written once the interval has
    /// passed (the handler does not wait for it). So a handler may report in a tight loop
    /// without flooding the store and every `notifications/tasks` listener, and on a shared
    /// store (Redis, where each write is a compare-and-set) the record stays quiet long enough
    /// for the changes that matter, a `tasks/cancel` or input answers from any instance, to go
    /// through at their first try. 100 ms (10 writes a second at most) is quicker than a person
    /// reading the message notices and well below the polling interval clients are told, so
    /// nobody watching sees staler messages than before. `Duration::ZERO` keeps the
    /// coalescing (one write in flight, newest wins) without spacing.
    pub fn status_interval(mut self, every: Duration) -> Self {
        self.status_interval = every;
        self
    }

    /// Where tasks are stored (default: [`InMemoryTaskStore`] with [`TaskConfig::limits`]).
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }
}

/// Wall-clock milliseconds that follow tokio's clock (so a paused test clock moves them).
#[derive(Debug, Clone, Copy)]
struct WallClock {
    base_ms: u64,
    base: tokio::time::Instant,
}

impl WallClock {
    fn new() -> Self {
        let base_ms =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        Self { base_ms, base: tokio::time::Instant::now() }
    }

    fn now_ms(&self) -> u64 {
        self.base_ms + tokio::time::Instant::now().duration_since(self.base).as_millis() as u64
    }
}

/// A server's task machinery: config, store, clock, and the cancellation tokens of the work
/// running in this process.
pub(crate) struct TaskRuntime {
    config: TaskConfig,
    store: Arc<dyn TaskStore>,
    clock: WallClock,
    live: Mutex<HashMap<String, CancellationToken>>,
    sweeper: OnceLock<()>,
    /// The task work spawned by this process (what [`TaskRuntime::drain`] waits for).
    running: tokio_util::task::TaskTracker,
    /// Fired when the drain time is over: the work still running fails, and the sweeper and
    /// lease renewal stop. Not [`crate::Server::shutdown`]: tasks outlive the listener.
    abort: CancellationToken,
}

impl TaskRuntime {
    pub(crate) fn new(config: TaskConfig) -> Self {
        let store = config.store.clone().unwrap_or_else(|| Arc::new(InMemoryTaskStore::new(config.limits)));
        Self {
            config,
            store,
            clock: WallClock::new(),
            live: Mutex::default(),
            sweeper: OnceLock::new(),
            running: tokio_util::task::TaskTracker::new(),
            abort: CancellationToken::new(),
        }
    }

    /// Waits up to `within` for the task work running in this process to end, then fails what
    /// is left ("the server shut down before the task finished") and waits (at most a second)
    /// for those ends to be recorded. Returns how many were cut short.
    pub(crate) async fn drain(&self, within: Duration) -> usize {
        let running = self.running.len();
        if running > 0 {
            tracing::info!(tasks = running, drain_secs = within.as_secs_f64(), "shutting down: draining tasks");
        }
        // `wait` resolves once the tracker is closed and empty. One way: after the drain every
        // task fails at once (the abort token stays fired).
        self.running.close();
        let ended = tokio::time::timeout(within, self.running.wait());
        let cut = if ended.await.is_err() { self.running.len() } else { 0 };
        self.abort.cancel();
        if cut > 0 {
            tracing::warn!(tasks = cut, "drain time over: failing the tasks still running");
            let _ = tokio::time::timeout(Duration::from_secs(1), self.running.wait()).await;
        }
        cut
    }

    pub(crate) fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// A fresh `working` record owned by `principal`, with an unguessable id (128 random bits).
    fn new_record(&self, principal: Option<&str>) -> TaskRecord {
        use rand::RngCore;
        let mut bytes = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut bytes);
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let id: String =
            bytes.iter().flat_map(|b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]).map(char::from).collect();
        let ttl = self.config.ttl.map(|d| d.as_millis() as u64);
        let poll = self.config.poll_interval.as_millis() as u64;
        TaskRecord::new(id, principal.map(str::to_owned), self.now_ms(), ttl, poll)
    }

    fn register(&self, id: &str, token: CancellationToken) {
        self.live.lock().insert(id.to_owned(), token);
    }

    fn unregister(&self, id: &str) {
        self.live.lock().remove(id);
    }

    fn cancel_local(&self, id: &str) {
        if let Some(t) = self.live.lock().get(id) {
            t.cancel();
        }
    }

    /// How many tasks run (or wait for input) in this process.
    pub(crate) fn running(&self) -> usize {
        self.live.lock().len()
    }
}
