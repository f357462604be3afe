//! Legacy sessions shared by several processes (instances behind a load balancer): the
//! [`SessionStore`] contract a shared store (Redis, in `mcp-stack-redis`) implements.
//!
//! Each instance serves a session's requests from a local replica of it (its own session core,
//! for the calls it runs), loaded from the store on the session's first request there and
//! refreshed on every later one. What a request changes (log level, subscriptions,
//! `notifications/initialized`) is written to the store before the request is answered, and
//! every instance holding a replica hears of it ([`SessionEvent::Changed`]). A server-to-client
//! request waits on the instance serving its call; its id names that instance, and an answer
//! POSTed anywhere else is sent there ([`SessionStore::send_to`]). DELETE anywhere ends the
//! session everywhere ([`SessionEvent::Ended`]); resumable response streams are mirrored to the
//! store so `Last-Event-ID` works on any instance.

use bytes::Bytes;
use mcp_session::LegacyState;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// A boxed future borrowing the store.
pub type SessionStoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, SessionStoreError>> + Send + 'a>>;

/// Why a session store failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStoreError {
    /// The store cannot be reached, or answered with something invalid.
    #[error("session store unavailable: {0}")]
    Unavailable(String),
}

/// A legacy session as a shared store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The authenticated subject that opened it (`None` without authorization).
    pub owner: Option<String>,
    /// What the handshake negotiated and the session's requests changed.
    pub state: LegacyState,
}

/// A change a request made to a session, applied atomically by the store.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionChange {
    /// `logging/setLevel` (the level's rank).
    LogLevel(u8),
    /// `resources/subscribe`.
    Subscribe(String),
    /// `resources/unsubscribe`.
    Unsubscribe(String),
    /// `notifications/initialized`.
    Initialized,
}

/// What the store tells this instance about sessions.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SessionEvent {
    /// A request changed the session (on any instance): its shared fields now.
    Changed {
        /// The session id.
        id: String,
        /// The log level's rank, if set.
        log_level: Option<u8>,
        /// Whether `notifications/initialized` arrived.
        initialized: bool,
        /// The subscribed resource URIs.
        subscriptions: Vec<String>,
    },
    /// The session ended (DELETE on some instance).
    Ended(String),
    /// The client cancelled one of the session's calls (`notifications/cancelled`).
    Cancelled {
        /// The session id.
        id: String,
        /// The cancelled request's id.
        request: Value,
    },
    /// The client's answer to a server-to-client request this instance sent.
    Answer {
        /// The session id.
        id: String,
        /// The JSON-RPC response.
        message: Map<String, Value>,
    },
    /// Events may have been missed (the store reconnected): reload every replica.
    Resync,
}

/// Where events for this instance go (given to [`SessionStore::attach`]).
pub type SessionSink = Box<dyn Fn(SessionEvent) + Send + Sync>;

/// One entry of a resumable stream in a shared store.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEntry {
    /// The stream exists (stored before its response starts, so that a resumption on another
    /// instance finds it however early it comes).
    Opened,
    /// One SSE event, as sent.
    Event(Bytes),
    /// The stream ended.
    Finished,
}

/// A resumable stream's events as stored: the SSE events in order, and whether it finished.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredStream {
    /// Each event as sent (`id: ...\nevent: message\ndata: ...\n\n`).
    pub events: Vec<Bytes>,
    /// Whether the stream ended.
    pub done: bool,
}

/// Legacy sessions in a store shared by every instance (see the module docs).
pub trait SessionStore: Send + Sync + std::fmt::Debug + 'static {
    /// This process's id among the instances (a prefix of the ids of its server-to-client
    /// requests: letters and digits only).
    fn instance(&self) -> &str;

    /// Stores a new session, living `idle` unless used again.
    fn create<'a>(&'a self, id: &'a str, record: &'a SessionRecord, idle: Duration) -> SessionStoreFuture<'a, ()>;

    /// The session `id` (`None`: unknown, ended or expired); its life starts over (`idle`).
    fn load<'a>(&'a self, id: &'a str, idle: Duration) -> SessionStoreFuture<'a, Option<SessionRecord>>;

    /// Applies `change` and tells every instance ([`SessionEvent::Changed`]); false when the
    /// session is gone.
    fn change<'a>(&'a self, id: &'a str, change: SessionChange, idle: Duration) -> SessionStoreFuture<'a, bool>;

    /// Keeps the session alive for `idle` more (an open stream uses it).
    fn touch<'a>(&'a self, id: &'a str, idle: Duration) -> SessionStoreFuture<'a, ()>;

    /// Ends the session everywhere ([`SessionEvent::Ended`]); whether it existed.
    fn delete<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, bool>;

    /// Sends `event` to instance `instance` only (an answer to its question).
    fn send_to<'a>(&'a self, instance: &'a str, event: SessionEvent) -> SessionStoreFuture<'a, ()>;

    /// Sends `event` to every instance (a cancellation).
    fn broadcast(&self, event: SessionEvent) -> SessionStoreFuture<'_, ()>;

    /// Starts handing this instance's events to `sink` (called once per service).
    fn attach(&self, sink: SessionSink);

    /// Appends one entry to stream `stream` of session `id` (in order).
    fn append<'a>(&'a self, id: &'a str, stream: u64, entry: StreamEntry, idle: Duration)
        -> SessionStoreFuture<'a, ()>;

    /// Stream `stream` of session `id` as stored (`None`: unknown).
    fn replay<'a>(&'a self, id: &'a str, stream: u64) -> SessionStoreFuture<'a, Option<StoredStream>>;
}

/// The answer for a request the session store failed: a fixed text and a correlation id for
/// the client (503, so it may retry), the store's own error logged under that id. Nothing of
/// the backend (addresses, its error text) reaches the client, authenticated or not.
pub(crate) fn store_failure(e: &SessionStoreError) -> mcp_protocol::ProtocolError {
    mcp_protocol::ProtocolError::unavailable(
        "session_store",
        mcp_server::reported("the session store is unavailable", e),
    )
}

/// The instance a server-to-client request id names, if it has the shared form
/// (`{instance}-s{n}`).
pub(crate) fn asking_instance(id: &Value) -> Option<&str> {
    let (instance, n) = id.as_str()?.split_once("-s")?;
    (!instance.is_empty() && instance.bytes().all(|b| b.is_ascii_alphanumeric()) && n.parse::<u64>().is_ok())
        .then_some(instance)
}

/// The changes between two views of a session (what a request did).
pub(crate) fn changes(before: &LegacyState, after: &LegacyState) -> Vec<SessionChange> {
    let mut out = Vec::new();
    if let (Some(l), true) = (after.log_level(), after.log_level() != before.log_level()) {
        out.push(SessionChange::LogLevel(l));
    }
    if after.is_initialized() && !before.is_initialized() {
        out.push(SessionChange::Initialized);
    }
    let (was, now) = (before.subscribed_uris(), after.subscribed_uris());
    out.extend(now.iter().filter(|u| !was.contains(u)).cloned().map(SessionChange::Subscribe));
    out.extend(was.iter().filter(|u| !now.contains(u)).cloned().map(SessionChange::Unsubscribe));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_shared_form_ids_name_an_instance() {
        assert_eq!(asking_instance(&json!("a1b2-s17")), Some("a1b2"));
        for other in [json!("s17"), json!(17), json!("-s1"), json!("a b-s1"), json!("ab-sx")] {
            assert_eq!(asking_instance(&other), None, "{other}");
        }
    }
}
