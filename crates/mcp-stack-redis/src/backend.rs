//! The connection to Redis every store of this crate shares: its options, its keys and its
//! command timeout.

use crate::keys::Keys;
use crate::pubsub::{self, Delivery, MAX_MESSAGE};
use futures::StreamExt;
use redis::aio::ConnectionManager;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

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
        start(&inner).await.map_err(unreachable)?;
        Ok(Self { inner })
    }

    /// This process's id among the instances.
    pub fn instance(&self) -> &str {
        &self.inner.instance
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

/// Subscribes now (an error means Redis is unreachable) and starts the subscriber and
/// publisher tasks.
pub(crate) async fn start(inner: &Arc<Inner>) -> redis::RedisResult<()> {
    let first = inner.hub.subscribe().await?;
    let weak = Arc::downgrade(inner);
    tokio::spawn(subscriber(weak.clone(), first));
    let rx = inner.hub.queued.lock().take().expect("started once");
    tokio::spawn(publisher(weak, inner.conn.clone(), rx));
    Ok(())
}

async fn subscriber(weak: Weak<Inner>, first: redis::aio::PubSub) {
    let mut ps = Some(first);
    let mut backoff = Duration::from_millis(100);
    loop {
        if let Some(conn) = ps.take() {
            let mut stream = conn.into_on_message();
            while let Some(msg) = stream.next().await {
                let Some(inner) = weak.upgrade() else { return };
                let payload: &[u8] = msg.get_payload_bytes();
                if payload.len() <= MAX_MESSAGE {
                    inner.hub.dispatch(msg.get_channel_name(), Delivery::Message(payload));
                }
            }
            tracing::warn!("lost the Redis pub/sub connection; reconnecting");
        }
        let Some(inner) = weak.upgrade() else { return };
        tokio::time::sleep(backoff).await;
        match inner.hub.subscribe().await {
            Ok(conn) => {
                tracing::info!("Redis pub/sub reconnected; listeners catch up");
                backoff = Duration::from_millis(100);
                ps = Some(conn);
                inner.hub.resync_all();
            }
            Err(_) => backoff = (backoff * 2).min(Duration::from_secs(2)),
        }
    }
}

async fn publisher(
    weak: Weak<Inner>,
    mut conn: redis::aio::ConnectionManager,
    mut rx: mpsc::Receiver<(String, Vec<u8>)>,
) {
    while let Some((channel, payload)) = rx.recv().await {
        let Some(inner) = weak.upgrade() else { return };
        let timeout = inner.options.command_timeout;
        drop(inner);
        let mut cmd = redis::cmd("PUBLISH");
        cmd.arg(&channel).arg(payload);
        if !matches!(tokio::time::timeout(timeout, cmd.query_async::<i64>(&mut conn)).await, Ok(Ok(_))) {
            tracing::debug!(channel, "a change cue could not be published (Redis unavailable)");
        }
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
