//! Where tasks live: the [`TaskStore`] trait and the in-memory default.
//!
//! A store keeps [`TaskRecord`]s and applies [`TaskChange`]s atomically through
//! [`TaskRecord::apply`]; it is told the time (`now_ms`) rather than reading a clock. A shared
//! store (Redis) implements the same trait: `create` returns once every instance's `get` sees
//! the task, `update` is one atomic read-apply-write, `watch` wakes local waiters when another
//! instance changes the record.

use crate::record::{Applied, TaskChange, TaskRecord};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use tokio::sync::watch;

/// A boxed future borrowing the store.
pub type TaskStoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What [`TaskStore::update`] returns: the record after the change, `None` if unknown.
pub type UpdateFuture<'a> = TaskStoreFuture<'a, Result<Option<Updated>, TaskStoreError>>;

/// Why a store refused or failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// A cap on live tasks was reached.
    #[error("task capacity reached: {0}")]
    Capacity(TaskCapacity),
    /// A task with this id exists already.
    #[error("task id {0} is already in use")]
    Duplicate(String),
    /// The store cannot be reached or answered with something invalid.
    #[error("task store unavailable: {message}")]
    Unavailable {
        /// What failed, in words.
        message: String,
        /// The store's own error (connection, encoding...), if any.
        #[source]
        source: Option<mcp_protocol::ErrorSource>,
    },
}

impl TaskStoreError {
    /// [`TaskStoreError::Unavailable`] with `message` and no source.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::Unavailable { message: message.into(), source: None }
    }

    /// [`TaskStoreError::Unavailable`] caused by the store's own error `source`.
    pub fn unavailable_from(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Unavailable { message: source.to_string(), source: Some(mcp_protocol::ErrorSource::new(source)) }
    }
}

/// Which cap on live tasks a [`TaskStoreError::Capacity`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskCapacity {
    /// [`TaskLimits::max_tasks`], across all principals.
    #[error("the server holds {max} tasks")]
    Total {
        /// The cap.
        max: usize,
    },
    /// [`TaskLimits::max_tasks_per_principal`].
    #[error("{max} live tasks for this principal; let some finish and expire")]
    PerPrincipal {
        /// The cap.
        max: usize,
    },
}

/// Caps on live (unexpired) tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLimits {
    /// Across all principals.
    pub max_tasks: usize,
    /// Per principal (the anonymous bucket counts as one).
    pub max_tasks_per_principal: usize,
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self { max_tasks: 10_000, max_tasks_per_principal: 1_000 }
    }
}

/// The record after an [`TaskStore::update`], and what the change did.
#[derive(Debug, Clone, PartialEq)]
pub struct Updated {
    /// The record as stored now.
    pub record: TaskRecord,
    /// What the change did.
    pub applied: Applied,
}

/// Durable task state, shared by every worker and request handler of a server.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task, enforcing the limits; returns once `get` (on any instance) sees it.
    fn create(&self, record: TaskRecord, now_ms: u64) -> TaskStoreFuture<'_, Result<(), TaskStoreError>>;

    /// The task `id`, `None` if unknown or expired at `now_ms`.
    fn get<'a>(&'a self, id: &'a str, now_ms: u64) -> TaskStoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Applies `change` atomically (see [`TaskRecord::apply`]); `None` if unknown or expired.
    fn update<'a>(&'a self, id: &'a str, change: TaskChange, now_ms: u64) -> UpdateFuture<'a>;

    /// Deletes every task expired at `now_ms`; returns their ids.
    fn purge_expired(&self, now_ms: u64) -> TaskStoreFuture<'_, Result<Vec<String>, TaskStoreError>>;

    /// A receiver of the task's revision: it changes whenever the record does (on any
    /// instance, for a shared store). `None` if unknown.
    fn watch(&self, id: &str) -> Option<watch::Receiver<u64>>;

    /// The owner lease of a shared store: how long a task's work may go without a
    /// [`TaskStore::heartbeat`] before [`TaskStore::orphans`] reports it. `None` (the default,
    /// right for a store inside one process): work never outlives its store.
    fn lease(&self) -> Option<std::time::Duration> {
        None
    }

    /// Renews the lease of the tasks whose work runs in this process (`ids`).
    fn heartbeat<'a>(&'a self, ids: &'a [String], now_ms: u64) -> TaskStoreFuture<'a, Result<(), TaskStoreError>> {
        let _ = (ids, now_ms);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Unfinished tasks whose lease lapsed at `now_ms`: the process running their work is gone.
    /// The caller fails each one (the store forgets the lease once the task is terminal).
    fn orphans(&self, now_ms: u64) -> TaskStoreFuture<'_, Result<Vec<String>, TaskStoreError>> {
        let _ = now_ms;
        Box::pin(std::future::ready(Ok(Vec::new())))
    }
}

struct Slot {
    record: TaskRecord,
    revision: watch::Sender<u64>,
}

#[derive(Default)]
struct Tables {
    tasks: HashMap<String, Slot>,
    per_owner: HashMap<Option<String>, usize>,
}

impl Tables {
    fn remove(&mut self, id: &str) -> Option<Slot> {
        let slot = self.tasks.remove(id)?;
        if let Some(n) = self.per_owner.get_mut(&slot.record.owner) {
            *n -= 1;
            if *n == 0 {
                self.per_owner.remove(&slot.record.owner);
            }
        }
        Some(slot)
    }

    fn purge(&mut self, now_ms: u64) -> Vec<String> {
        let expired: Vec<String> =
            self.tasks.values().filter(|s| s.record.is_expired(now_ms)).map(|s| s.record.task_id.clone()).collect();
        for id in &expired {
            self.remove(id);
        }
        expired
    }

    /// The live slot `id`, dropping it first if it expired.
    fn live(&mut self, id: &str, now_ms: u64) -> Option<&mut Slot> {
        if self.tasks.get(id).is_some_and(|s| s.record.is_expired(now_ms)) {
            self.remove(id);
        }
        self.tasks.get_mut(id)
    }
}

/// The default store: a map behind a mutex (no await happens while it is held).
pub struct InMemoryTaskStore {
    limits: TaskLimits,
    tables: Mutex<Tables>,
}

impl InMemoryTaskStore {
    /// An empty store with these caps.
    pub fn new(limits: TaskLimits) -> Self {
        Self { limits, tables: Mutex::new(Tables::default()) }
    }

    /// How many tasks are stored (expired ones included until purged).
    pub fn len(&self) -> usize {
        self.tables.lock().tasks.len()
    }

    /// Whether the store holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn create_now(&self, record: TaskRecord, now_ms: u64) -> Result<(), TaskStoreError> {
        let mut t = self.tables.lock();
        let owned = |t: &Tables| t.per_owner.get(&record.owner).copied().unwrap_or(0);
        if t.tasks.len() >= self.limits.max_tasks || owned(&t) >= self.limits.max_tasks_per_principal {
            t.purge(now_ms);
        }
        if t.tasks.len() >= self.limits.max_tasks {
            return Err(TaskStoreError::Capacity(TaskCapacity::Total { max: self.limits.max_tasks }));
        }
        if owned(&t) >= self.limits.max_tasks_per_principal {
            return Err(TaskStoreError::Capacity(TaskCapacity::PerPrincipal {
                max: self.limits.max_tasks_per_principal,
            }));
        }
        if t.tasks.contains_key(&record.task_id) {
            return Err(TaskStoreError::Duplicate(record.task_id));
        }
        *t.per_owner.entry(record.owner.clone()).or_default() += 1;
        let (revision, _) = watch::channel(record.revision);
        t.tasks.insert(record.task_id.clone(), Slot { record, revision });
        Ok(())
    }

    fn update_now(&self, id: &str, change: TaskChange, now_ms: u64) -> Option<Updated> {
        let mut t = self.tables.lock();
        let slot = t.live(id, now_ms)?;
        let applied = slot.record.apply(change, now_ms);
        slot.revision.send_replace(slot.record.revision);
        Some(Updated { record: slot.record.clone(), applied })
    }
}

impl std::fmt::Debug for InMemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryTaskStore").field("limits", &self.limits).field("tasks", &self.len()).finish()
    }
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        Self::new(TaskLimits::default())
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, record: TaskRecord, now_ms: u64) -> TaskStoreFuture<'_, Result<(), TaskStoreError>> {
        let r = self.create_now(record, now_ms);
        Box::pin(std::future::ready(r))
    }

    fn get<'a>(&'a self, id: &'a str, now_ms: u64) -> TaskStoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let r = self.tables.lock().live(id, now_ms).map(|s| s.record.clone());
        Box::pin(std::future::ready(Ok(r)))
    }

    fn update<'a>(&'a self, id: &'a str, change: TaskChange, now_ms: u64) -> UpdateFuture<'a> {
        Box::pin(std::future::ready(Ok(self.update_now(id, change, now_ms))))
    }

    fn purge_expired(&self, now_ms: u64) -> TaskStoreFuture<'_, Result<Vec<String>, TaskStoreError>> {
        let r = self.tables.lock().purge(now_ms);
        Box::pin(std::future::ready(Ok(r)))
    }

    fn watch(&self, id: &str) -> Option<watch::Receiver<u64>> {
        self.tables.lock().tasks.get(id).map(|s| s.revision.subscribe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, owner: Option<&str>) -> TaskRecord {
        TaskRecord::new(id.into(), owner.map(str::to_owned), 0, Some(1_000), 100)
    }

    #[tokio::test]
    async fn caps_hold_per_principal_and_in_total_and_expiry_frees_room() {
        let store = InMemoryTaskStore::new(TaskLimits { max_tasks: 3, max_tasks_per_principal: 2 });
        store.create(record("a1", Some("alice")), 0).await.unwrap();
        store.create(record("a2", Some("alice")), 0).await.unwrap();
        let e = store.create(record("a3", Some("alice")), 10).await.unwrap_err();
        assert!(matches!(e, TaskStoreError::Capacity(_)), "{e}");
        store.create(record("b1", Some("bob")), 10).await.unwrap();
        assert!(matches!(store.create(record("n1", None), 10).await, Err(TaskStoreError::Capacity(_))));
        assert_eq!(
            store.create(record("b1", Some("bob")), 10).await,
            Err(TaskStoreError::Capacity(TaskCapacity::Total { max: 3 }))
        );
        // At 1 s every task above has expired: creation purges and succeeds.
        store.create(record("a3", Some("alice")), 1_000).await.unwrap();
        assert_eq!(store.len(), 1);
        assert!(store.get("a1", 1_000).await.unwrap().is_none());
        assert!(store.update("a1", TaskChange::Cancel, 1_000).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn updates_bump_the_watched_revision() {
        let store = InMemoryTaskStore::default();
        store.create(record("t", None), 0).await.unwrap();
        let mut rx = store.watch("t").unwrap();
        let u = store.update("t", TaskChange::Message("half way".into()), 5).await.unwrap().unwrap();
        assert_eq!(u.applied, Applied::Changed);
        rx.changed().await.unwrap();
        assert_eq!(*rx.borrow(), 1);
        assert_eq!(store.get("t", 5).await.unwrap().unwrap().status_message.as_deref(), Some("half way"));
        assert_eq!(store.purge_expired(2_000).await.unwrap(), vec!["t".to_owned()]);
        assert!(store.is_empty());
    }
}
