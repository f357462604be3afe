//! The backend's pub/sub side: one subscriber connection for every channel of the namespace
//! (reconnected with backoff; each reconnect tells every handler that messages may have been
//! missed), and one publisher task fed by a bounded queue (publishing never blocks a request;
//! a full queue drops the cue, which is at-most-once anyway).

use crate::keys::Keys;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
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
    pub(crate) queued: Mutex<Option<mpsc::Receiver<Cue>>>,
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
    pub(crate) fn dispatch(&self, channel: &str, d: Delivery<'_>) {
        let handlers = self.handlers.lock().get(channel).cloned().unwrap_or_default();
        for h in handlers {
            h(d);
        }
    }

    pub(crate) fn resync_all(&self) {
        let channels: Vec<String> = self.handlers.lock().keys().cloned().collect();
        for c in channels {
            self.dispatch(&c, Delivery::Resync);
        }
    }

    fn names(&self) -> [String; 4] {
        let c = &self.channels;
        [c.bus.clone(), c.tasks.clone(), c.sessions.clone(), c.mine.clone()]
    }

    pub(crate) async fn subscribe(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let mut ps = self.client.get_async_pubsub().await?;
        for name in self.names() {
            ps.subscribe(name).await?;
        }
        Ok(ps)
    }
}
