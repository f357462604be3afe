//! The task-store contract of MCP servers (the tasks extension, SEP-2663).
//!
//! What a store keeps ([`TaskRecord`], its [`TaskStatus`] and the [`TaskChange`]s it goes
//! through, with their rules in one place: [`TaskRecord::apply`]) and what a store implements
//! ([`TaskStore`]; [`InMemoryTaskStore`] is the default). No server, no runtime and no clock:
//! a store is told the time (`now_ms`).
//!
//! Servers name these types through `mcp_server::tasks`, which re-exports them; a store
//! implementation (Redis, or a user's own) depends on this crate alone.
//!
//! ```
//! use mcp_tasks::{InMemoryTaskStore, TaskChange, TaskLimits, TaskRecord, TaskStatus, TaskStore};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let store = InMemoryTaskStore::new(TaskLimits::default());
//! store.create(TaskRecord::new("t1".into(), None, 0, Some(60_000), 1_000), 0).await.unwrap();
//! store.update("t1", TaskChange::Cancel, 10).await.unwrap();
//! let task = store.get("t1", 20).await.unwrap().unwrap();
//! assert_eq!(task.status, TaskStatus::Working);
//! assert!(task.cancel_requested);
//! # });
//! ```

mod record;
mod store;

pub use record::{iso8601, Applied, TaskChange, TaskRecord, TaskStatus, Terminal};
pub use store::{
    InMemoryTaskStore, TaskCapacity, TaskLimits, TaskStore, TaskStoreError, TaskStoreFuture, UpdateFuture, Updated,
};
