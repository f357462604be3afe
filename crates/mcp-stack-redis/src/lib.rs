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

mod bus;
mod cache;
mod pubsub;
mod rate_limit;
mod sessions;
mod tasks;

pub use bus::RedisBus;
pub use cache::RedisCacheStore;
pub use rate_limit::RedisRateLimitStore;
pub use sessions::RedisSessions;
pub use tasks::RedisTaskStore;

use redis::aio::ConnectionManager;
use std::sync::Arc;
use std::time::Duration;

/// Why the backend failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisBackendError {
    /// The URL is not a Redis URL.
    #[error("invalid Redis URL {url:?}: {source}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// What the client library said.
        source: redis::RedisError,
    },
    /// Redis could not be reached (at start: the server refuses to start).
    #[error("cannot reach Redis at {url}: {source}")]
    Unreachable {
        /// The URL given (without credentials).
        url: String,
        /// What the client library said.
        source: redis::RedisError,
    },
}

/// Settings of a [`RedisBackend`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RedisOptions {
    /// Longest wait for one command (default 2 s); past it the request needing Redis fails.
    pub command_timeout: Duration,
    /// How long the owner of a task's work may go silent before the task fails (default 6 s).
    pub task_lease: Duration,
    /// Most legacy sessions stored, across every instance (default 4,096). A new session at
    /// the cap ends the one that expires first (the least recently used; sessions not yet
    /// initialized expire soonest), on every instance.
    pub max_sessions: usize,
}

impl Default for RedisOptions {
    fn default() -> Self {
        Self { command_timeout: Duration::from_secs(2), task_lease: Duration::from_secs(6), max_sessions: 4096 }
    }
}

impl RedisOptions {
    /// The longest wait for one command.
    pub fn command_timeout(mut self, limit: Duration) -> Self {
        self.command_timeout = limit.max(Duration::from_millis(10));
        self
    }

    /// The most legacy sessions stored across every instance (at least 1).
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// How long a task's owner may go silent before the task fails.
    pub fn task_lease(mut self, lease: Duration) -> Self {
        self.task_lease = lease.max(Duration::from_millis(30));
        self
    }
}

pub(crate) struct Inner {
    pub(crate) conn: ConnectionManager,
    pub(crate) keys: Keys,
    /// This process, as the other instances address it (random, 64 bits).
    pub(crate) instance: String,
    pub(crate) options: RedisOptions,
    pub(crate) hub: pubsub::Hub,
}

/// Key and channel names under `mcp:{namespace}:`.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    fn new(namespace: &str) -> Self {
        Self { prefix: format!("mcp:{namespace}:") }
    }

    pub(crate) fn key(&self, parts: &[&str]) -> String {
        let mut k = self.prefix.clone();
        k.push_str(&parts.join(":"));
        k
    }
}

/// Shared state on one Redis (see the crate docs). Cheap to clone.
#[derive(Clone)]
pub struct RedisBackend {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for RedisBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBackend").field("instance", &self.inner.instance).finish_non_exhaustive()
    }
}

/// A URL without its password, for messages.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://***@{}", &url[..s], &url[at + 1..]),
        _ => url.to_owned(),
    }
}

impl RedisBackend {
    /// Connects to Redis at `url` (`redis://HOST:PORT[/DB]`, `rediss://`, `redis+unix://`) for
    /// the service `namespace`, with the default [`RedisOptions`]. Fails when Redis does not
    /// answer a PING now.
    pub async fn connect(url: &str, namespace: &str) -> Result<Self, RedisBackendError> {
        Self::connect_with(url, namespace, RedisOptions::default()).await
    }

    /// [`RedisBackend::connect`] with these options.
    pub async fn connect_with(url: &str, namespace: &str, options: RedisOptions) -> Result<Self, RedisBackendError> {
        let client =
            redis::Client::open(url).map_err(|source| RedisBackendError::InvalidUrl { url: redacted(url), source })?;
        let unreachable = |source| RedisBackendError::Unreachable { url: redacted(url), source };
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(options.command_timeout)
            .set_response_timeout(options.command_timeout)
            .set_number_of_retries(1)
            .set_max_delay(500);
        let mut conn =
            tokio::time::timeout(options.command_timeout * 2, client.get_connection_manager_with_config(config))
                .await
                .map_err(|_| unreachable(redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut))))?
                .map_err(unreachable)?;
        let _: String = redis::cmd("PING").query_async(&mut conn).await.map_err(unreachable)?;
        let instance = format!("{:016x}", rand::random::<u64>());
        let keys = Keys::new(namespace);
        let hub = pubsub::Hub::new(client, &keys, &instance);
        let inner = Arc::new(Inner { conn, keys, instance, options, hub });
        pubsub::start(&inner).await.map_err(unreachable)?;
        Ok(Self { inner })
    }

    /// This process's id among the instances.
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// The change bus on Redis pub/sub, for [`mcp_server::ServerBuilder::bus`].
    pub fn bus(&self) -> Arc<dyn mcp_server::ChangeBus> {
        Arc::new(RedisBus::new(self.clone()))
    }

    /// The task store, for [`mcp_server::tasks::TaskConfig::store`], with these caps (across
    /// every instance).
    pub fn task_store(&self, limits: mcp_server::tasks::TaskLimits) -> Arc<dyn mcp_server::tasks::TaskStore> {
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

    /// A command connection (clones share one multiplexed connection).
    pub(crate) fn conn(&self) -> ConnectionManager {
        self.inner.conn.clone()
    }

    /// Runs one command or pipeline within the command timeout.
    pub(crate) async fn run<T, F>(&self, f: F) -> Result<T, String>
    where
        F: std::future::Future<Output = redis::RedisResult<T>>,
    {
        match tokio::time::timeout(self.inner.options.command_timeout, f).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(format!("Redis: {e}")),
            Err(_) => Err(format!("Redis did not answer within {} ms", self.inner.options.command_timeout.as_millis())),
        }
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
    pub fn task_record(id: &str, raw: &str) -> Option<mcp_server::tasks::TaskRecord> {
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

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(super::redacted("redis://user:secret@h:6379/0"), "redis://***@h:6379/0");
        assert_eq!(super::redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
