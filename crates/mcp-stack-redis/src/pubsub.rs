//! The backend's pub/sub side: one subscriber connection for every channel of the namespace
//! (reconnected with backoff; each reconnect tells every handler that messages may have been
//! missed), and one publisher task fed by a bounded queue (publishing never blocks a request;
//! a full queue drops the cue, which is at-most-once anyway).

use crate::{Inner, Keys};
use futures::StreamExt;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

/// Cues waiting to be published; past this, new ones are dropped.
const QUEUE: usize = 4096;
/// Longest accepted message; longer ones are ignored.
pub(crate) const MAX_MESSAGE: usize = 64 * 1024;

/// What a channel handler is told: a message, or that messages may have been lost.
#[derive(Clone, Copy)]
pub(crate) enum Delivery<'a> {
    /// One message's payload.
    Message(&'a [u8]),
    /// The subscriber reconnected: whatever was published meanwhile is lost.
    Resync,
}

type Handler = Arc<dyn Fn(Delivery<'_>) + Send + Sync>;
/// A cue to publish: channel and payload.
type Cue = (String, Vec<u8>);

/// The channels, their handlers and the publish queue.
pub(crate) struct Hub {
    client: redis::Client,
    pub(crate) channels: Channels,
    handlers: Mutex<HashMap<String, Vec<Handler>>>,
    queue: mpsc::Sender<Cue>,
    queued: Mutex<Option<mpsc::Receiver<Cue>>>,
}

/// The namespace's channels.
#[derive(Debug, Clone)]
pub(crate) struct Channels {
    /// Change events (the bus).
    pub(crate) bus: String,
    /// Task record changes (ids), for workers and pollers.
    pub(crate) tasks: String,
    /// Legacy session events (state changes, ends, cancellations).
    pub(crate) sessions: String,
    /// Messages for this instance only (answers to its questions).
    pub(crate) mine: String,
    prefix: String,
}

impl Channels {
    /// The channel of instance `id`.
    pub(crate) fn instance(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }
}

impl Hub {
    pub(crate) fn new(client: redis::Client, keys: &Keys, instance: &str) -> Self {
        let prefix = keys.key(&["ch", "inst", ""]);
        let channels = Channels {
            bus: keys.key(&["ch", "bus"]),
            tasks: keys.key(&["ch", "tasks"]),
            sessions: keys.key(&["ch", "sessions"]),
            mine: format!("{prefix}{instance}"),
            prefix,
        };
        let (queue, rx) = mpsc::channel(QUEUE);
        Self { client, channels, handlers: Mutex::default(), queue, queued: Mutex::new(Some(rx)) }
    }

    /// Calls `handler` with every message on `channel` (one of [`Channels`]), in order, and
    /// with [`Delivery::Resync`] after each reconnect.
    pub(crate) fn on(&self, channel: &str, handler: impl Fn(Delivery<'_>) + Send + Sync + 'static) {
        self.handlers.lock().entry(channel.to_owned()).or_default().push(Arc::new(handler));
    }

    /// Queues `payload` for `channel`; false when the queue is full (the cue is dropped).
    pub(crate) fn publish(&self, channel: &str, payload: Vec<u8>) -> bool {
        self.queue.try_send((channel.to_owned(), payload)).is_ok()
    }

    /// Hands `d` to every handler of `channel`, in the order they registered.
    fn dispatch(&self, channel: &str, d: Delivery<'_>) {
        let handlers = self.handlers.lock().get(channel).cloned().unwrap_or_default();
        for h in handlers {
            h(d);
        }
    }

    fn resync_all(&self) {
        let channels: Vec<String> = self.handlers.lock().keys().cloned().collect();
        for c in channels {
            self.dispatch(&c, Delivery::Resync);
        }
    }

    fn names(&self) -> [String; 4] {
        let c = &self.channels;
        [c.bus.clone(), c.tasks.clone(), c.sessions.clone(), c.mine.clone()]
    }

    async fn subscribe(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let mut ps = self.client.get_async_pubsub().await?;
        for name in self.names() {
            ps.subscribe(name).await?;
        }
        Ok(ps)
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
