//! Shared state on Redis, so that many instances of one MCP server behind a plain round-robin
//! load balancer behave like a single instance.
//!
//! One [`RedisBackend`] per process holds a multiplexed command connection (redis-rs
//! `ConnectionManager`, which reconnects by itself) and one pub/sub connection (reconnected by
//! this crate, with a catch-up after each reconnect). From it come:
//! - [`RedisBackend::bus`]: the change bus ([`mcp_server::ChangeBus`]) on pub/sub;
//! - [`RedisBackend::task_store`]: the tasks extension's store, with atomic updates, owner
//!   leases and TTL by key expiry;
//! - [`RedisBackend::rate_limit_store`]: rate-limit buckets every instance spends from;
//! - [`RedisBackend::cache_store`]: the result cache every instance serves from;
//! - [`RedisBackend::sessions`]: legacy (2025-era) Streamable HTTP sessions, for
//!   [`mcp_http::EndpointConfig::session_store`].
//!
//! Every key lives under `mcp:{namespace}:` (the namespace is usually the server's name), so
//! several services can share one Redis. Nothing read from Redis is trusted: records are
//! parsed into typed values and checked like client input.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_redis::RedisBackend;
//! use mcp_server::{tasks::TaskConfig, Server};
//!
//! let redis = RedisBackend::connect("redis://127.0.0.1:6379", "my-service").await?;
//! let server = Server::builder("my-service", "1.0.0")
//!     .bus(redis.bus())
//!     .tasks(TaskConfig::new().store(redis.task_store(Default::default())))
//!     .build()?;
//! # drop(server); Ok(()) }
//! ```

mod backend;
mod bus;
mod cache;
mod keys;
mod pubsub;
mod rate_limit;
mod sessions;
mod tasks;

pub use backend::{RedisBackend, RedisBackendError, RedisOptions};
pub use bus::RedisBus;
pub use cache::RedisCacheStore;
pub use rate_limit::RedisRateLimitStore;
pub use sessions::RedisSessions;
pub use tasks::RedisTaskStore;

use std::sync::Arc;

/// The stores on one backend, each ready for the server or endpoint setting it is named for.
impl RedisBackend {
    /// The change bus on Redis pub/sub, for [`mcp_server::ServerBuilder::bus`].
    pub fn bus(&self) -> Arc<dyn mcp_server::ChangeBus> {
        Arc::new(RedisBus::new(self.clone()))
    }

    /// The task store, for [`mcp_server::tasks::TaskConfig::store`], with these caps (across
    /// every instance).
    pub fn task_store(&self, limits: mcp_tasks::TaskLimits) -> Arc<dyn mcp_tasks::TaskStore> {
        Arc::new(RedisTaskStore::new(self.clone(), limits))
    }

    /// Rate-limit buckets shared by every instance, for
    /// [`mcp_server::ServerBuilder::rate_limit_store`]: N replicas enforce one budget.
    pub fn rate_limit_store(&self) -> Arc<dyn mcp_server::rate_limit::RateLimitStore> {
        Arc::new(RedisRateLimitStore::new(self.clone()))
    }

    /// Cached results shared by every instance, for [`mcp_server::cache::ResultCache::store`].
    pub fn cache_store(&self) -> Arc<dyn mcp_server::cache::CacheStore> {
        Arc::new(RedisCacheStore::new(self.clone()))
    }

    /// Legacy sessions, for [`mcp_http::EndpointConfig::session_store`].
    pub fn sessions(&self) -> Arc<dyn mcp_http::SessionStore> {
        Arc::new(RedisSessions::new(self.clone()))
    }
}

/// The decoders of what other instances wrote, for the fuzz targets; not a stable API.
#[doc(hidden)]
pub mod __fuzz {
    /// A change cue from another instance.
    pub fn bus_cue(payload: &[u8]) -> Option<mcp_server::ChangeEvent> {
        crate::bus::Cue::decode(payload, "this-instance")
    }

    /// A message on the sessions channel.
    pub fn session_message(payload: &[u8]) -> Option<mcp_http::SessionEvent> {
        crate::sessions::decode(payload)
    }

    /// A stored task record for task `id`.
    pub fn task_record(id: &str, raw: &str) -> Option<mcp_tasks::TaskRecord> {
        crate::tasks::parse(id, raw).ok()
    }

    /// A stored session record with its shared fields.
    pub fn session_record(
        fields: std::collections::HashMap<String, String>,
        subs: Vec<String>,
    ) -> Option<mcp_http::SessionRecord> {
        crate::sessions::parse("s", fields, subs).ok().flatten()
    }
}
