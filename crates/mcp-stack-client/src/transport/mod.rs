//! The transport interface the client core drives, and its implementations.
//!
//! A transport moves JSON-RPC messages; it knows nothing of eras, `_meta` or MRTR. The core
//! computes every header a request needs (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`) and passes them along; transports without headers (stdio) ignore them.

pub mod http;
mod outgoing;
pub mod stdio;

pub use outgoing::OutgoingRequest;
pub(crate) use outgoing::{ClientMeta, Parts};

use crate::error::TransportError;
use futures::future::BoxFuture;
use mcp_protocol::types::RequestId;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{mpsc, oneshot};

/// Most unsolicited messages (server requests and notifications tied to no request of ours) a
/// transport holds for its consumer. Past it they are dropped (counted, logged at `warn` on the
/// 1st, 2nd, 4th... drop) and a dropped server request is answered with a `-32603` error.
pub const UNSOLICITED_CAP: usize = 256;

/// Most notifications held for one exchange whose caller has not taken them. Past it they are
/// dropped (counted, logged at `warn` on the 1st, 2nd, 4th... drop); the response itself is
/// never dropped.
pub const EXCHANGE_CAP: usize = 256;

/// What became of a transport's unsolicited messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnsolicitedStats {
    /// Held now, waiting for the consumer (at most [`UNSOLICITED_CAP`]).
    pub queued: usize,
    /// Dropped so far: the queue was full, or nobody consumes them.
    pub dropped: u64,
}

/// Where a transport's unsolicited messages go: bounded, never blocking. Until
/// [`Unsolicited::route`] names a consumer they wait in a queue of [`UNSOLICITED_CAP`].
pub(crate) struct Unsolicited {
    state: parking_lot::Mutex<Route>,
    dropped: AtomicU64,
}

struct Route {
    /// Where messages go now; `None`: dropped as they come (no consumer, or closed).
    tx: Option<mpsc::Sender<Value>>,
    /// Where `notifications/message` go, when not to `tx`: the client's log handler.
    logs: Option<mpsc::Sender<Value>>,
    /// The queue of what came before a consumer was named.
    early: Option<mpsc::Receiver<Value>>,
    /// The transport closed: a consumer named later gets what was queued, then the end.
    closed: bool,
}

impl Unsolicited {
    /// Messages wait (at most [`UNSOLICITED_CAP`]) for a consumer to be named.
    pub(crate) fn new() -> Self {
        let (tx, rx) = mpsc::channel(UNSOLICITED_CAP);
        let route = Route { tx: Some(tx), logs: None, early: Some(rx), closed: false };
        Self { state: parking_lot::Mutex::new(route), dropped: AtomicU64::new(0) }
    }

    /// Sends messages to `sink` from now on, those queued so far first (in order: deliveries
    /// wait meanwhile); `None` drops them as they come. Replaces any earlier sink.
    pub(crate) fn route(&self, sink: Option<mpsc::Sender<Value>>) {
        let mut st = self.lock();
        st.tx = None;
        if let Some(mut early) = st.early.take() {
            while let Ok(m) = early.try_recv() {
                if sink.as_ref().is_none_or(|s| s.try_send(m).is_err()) {
                    self.count_drop("nobody consumes unsolicited messages");
                }
            }
        }
        if !st.closed {
            st.tx = sink;
        }
    }

    /// Sends log messages (`notifications/message`) that belong to no request to `sink` from
    /// now on (a bounded queue: when it is full they are dropped, counted), rather than with
    /// the other unsolicited messages; `None`: with them again.
    pub(crate) fn route_logs(&self, sink: Option<mpsc::Sender<Value>>) {
        let mut st = self.lock();
        st.logs = sink.filter(|_| !st.closed);
    }

    /// Hands `m` to the consumer (a log message to the log sink, if there is one). When its
    /// queue is full, or there is none (nobody consumes unsolicited messages: a modern
    /// session), `m` is dropped; for a server request the error response it is owed is
    /// returned, for the transport to send.
    pub(crate) fn deliver(&self, m: Value) -> Option<Value> {
        let is_log = m.get("method").and_then(Value::as_str) == Some("notifications/message");
        let sent = match &*self.lock() {
            Route { logs: Some(logs), .. } if is_log => logs.try_send(m),
            Route { tx: Some(tx), .. } => tx.try_send(m),
            _ => Err(mpsc::error::TrySendError::Closed(m)),
        };
        let (m, why) = match sent {
            Ok(()) => return None,
            Err(mpsc::error::TrySendError::Full(m)) if is_log => {
                (m, "the client's log handler is behind: too many log messages are queued")
            }
            Err(mpsc::error::TrySendError::Full(m)) => (m, "the client is busy: too many server messages are queued"),
            Err(mpsc::error::TrySendError::Closed(m)) => {
                let why = if m.get("id").is_some() {
                    "the client takes no server requests outside a request"
                } else if is_log {
                    "a log message for no single request in flight, and no log handler \
                     (ClientBuilder::on_log) to take it"
                } else {
                    "a notification for no request in flight, and nothing listens for it"
                };
                (m, why)
            }
        };
        self.count_drop(why);
        refusal(&m, why)
    }

    fn count_drop(&self, why: &str) {
        let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        if dropped.is_power_of_two() {
            tracing::warn!(
                dropped,
                cap = UNSOLICITED_CAP,
                reason = why,
                "dropping server messages that belong to no request"
            );
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Route> {
        self.state.lock()
    }

    /// Ends the queue (the transport closed): the consumer gets what is queued, then the end.
    pub(crate) fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        st.tx = None;
        st.logs = None;
    }

    /// Queued and dropped counts.
    pub(crate) fn stats(&self) -> UnsolicitedStats {
        let queued = match &self.lock().tx {
            Some(tx) if !tx.is_closed() => tx.max_capacity() - tx.capacity(),
            _ => 0,
        };
        UnsolicitedStats { queued, dropped: self.dropped.load(Ordering::Relaxed) }
    }
}

impl Default for Unsolicited {
    /// No queue and no consumer: everything is dropped as it arrives.
    fn default() -> Self {
        let route = Route { tx: None, logs: None, early: None, closed: false };
        Self { state: parking_lot::Mutex::new(route), dropped: AtomicU64::new(0) }
    }
}

/// The `-32603` error response a dropped server request `m` is owed (`None` for anything that
/// is not a request).
pub(crate) fn refusal(m: &Value, why: &str) -> Option<Value> {
    let id = m.get("id").filter(|id| id.is_string() || id.is_number())?;
    m.get("method")?;
    let error = mcp_protocol::types::Error {
        code: mcp_protocol::error::code::INTERNAL_ERROR,
        message: why.to_owned(),
        data: None,
    };
    let mut response = serde_json::Map::new();
    response.insert("jsonrpc".into(), "2.0".into());
    response.insert("id".into(), id.clone());
    response.insert("error".into(), serde_json::to_value(error).expect("an error object serializes"));
    Some(Value::Object(response))
}

/// The `notifications/cancelled` of request `id` (a string or an integer; `None` otherwise).
pub(crate) fn cancelled(id: &Value, reason: Option<&str>) -> Option<Value> {
    let params = mcp_protocol::types::CancelledNotificationParams {
        meta: None,
        request_id: RequestId::from_id(id)?,
        reason: reason.map(str::to_owned),
    };
    let params = serde_json::to_value(params).expect("notification params serialize");
    Some(mcp_protocol::jsonrpc::notification("notifications/cancelled", params))
}

/// Counts notifications dropped because an exchange's queue was full (all exchanges of all
/// transports together), logging on the 1st, 2nd, 4th... drop. For transports: call it for
/// each notification dropped for want of room.
pub fn note_dropped() {
    static DROPPED: AtomicU64 = AtomicU64::new(0);
    let dropped = DROPPED.fetch_add(1, Ordering::Relaxed) + 1;
    if dropped.is_power_of_two() {
        tracing::warn!(dropped, cap = EXCHANGE_CAP, "dropping notifications a caller does not read");
    }
}

/// The sending end of a split exchange (see [`Exchange::split`]): notifications into a bounded
/// queue that drops when full, the response through a one-shot that never does.
pub(crate) struct SplitTx {
    notes: mpsc::Sender<Value>,
    done: oneshot::Sender<Result<Value, TransportError>>,
}

impl SplitTx {
    /// Queues a notification; drops it (counted) when the caller lets the queue fill.
    pub(crate) fn note(&self, m: Value) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.notes.try_send(m) {
            note_dropped();
        }
    }

    /// Delivers the response (or the failure) and ends the exchange.
    pub(crate) fn finish(self, r: Result<Value, TransportError>) {
        let _ = self.done.send(r);
    }
}

/// Everything the server sends about one request: notifications (and, in legacy sessions,
/// server-to-client requests) in order, then the response. Dropping it cancels the request
/// (HTTP: the response stream is closed; stdio: `notifications/cancelled` is sent).
///
/// A transport makes one with [`Exchange::stream`] (messages still to come, in order),
/// [`Exchange::once`] (only the response is to come: no channel of many slots for it; or
/// [`Exchange::once_text`], the same as JSON text) or
/// [`Exchange::ready`] (everything has arrived), then [`Exchange::on_cancel`]. Every queue of
/// messages is bounded (at most [`EXCHANGE_CAP`] for the transports of this crate).
pub struct Exchange {
    messages: Messages,
    on_cancel: Option<Box<dyn FnOnce() + Send>>,
}

/// Where an exchange's messages come from.
enum Messages {
    Stream(mpsc::Receiver<Result<Value, TransportError>>),
    /// Notifications on a queue, the response on a one-shot (taken after the notifications
    /// sent before it).
    Split {
        notes: mpsc::Receiver<Value>,
        done: Option<oneshot::Receiver<Result<Value, TransportError>>>,
        last: Option<Result<Value, TransportError>>,
    },
    Once(Option<oneshot::Receiver<Result<Value, TransportError>>>),
    OnceText(Option<oneshot::Receiver<Result<Vec<u8>, TransportError>>>),
    Ready(std::collections::VecDeque<Value>),
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange").finish_non_exhaustive()
    }
}

impl Exchange {
    /// Messages that arrive on `rx` (a bounded channel: the transport waits for room or drops
    /// notifications); the final JSON-RPC response is the last.
    pub fn stream(rx: mpsc::Receiver<Result<Value, TransportError>>) -> Self {
        Self { messages: Messages::Stream(rx), on_cancel: None }
    }

    /// An exchange fed by a [`SplitTx`] that never waits: notifications up to [`EXCHANGE_CAP`]
    /// (then dropped), the response apart.
    pub(crate) fn split() -> (SplitTx, Self) {
        let (notes_tx, notes) = mpsc::channel(EXCHANGE_CAP);
        let (done_tx, done) = oneshot::channel();
        let messages = Messages::Split { notes, done: Some(done), last: None };
        (SplitTx { notes: notes_tx, done: done_tx }, Self { messages, on_cancel: None })
    }

    /// Exactly one message to come on `rx`: the response (or the transport's failure). A
    /// dropped sender ends the exchange.
    pub fn once(rx: oneshot::Receiver<Result<Value, TransportError>>) -> Self {
        Self { messages: Messages::Once(Some(rx)), on_cancel: None }
    }

    /// Like [`Exchange::once`], with the response as JSON text, parsed when it is taken (on the
    /// caller's thread, not the transport's reader).
    pub fn once_text(rx: oneshot::Receiver<Result<Vec<u8>, TransportError>>) -> Self {
        Self { messages: Messages::OnceText(Some(rx)), on_cancel: None }
    }

    /// Messages that have all arrived already, the response last.
    pub fn ready(messages: impl IntoIterator<Item = Value>) -> Self {
        Self { messages: Messages::Ready(messages.into_iter().collect()), on_cancel: None }
    }

    /// Runs `f` if the exchange is dropped before [`Exchange::complete`] (cancellation).
    pub fn on_cancel(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.on_cancel = Some(Box::new(f));
        self
    }

    /// Next message, or `None` when the transport has nothing more for this request.
    pub async fn next(&mut self) -> Option<Result<Value, TransportError>> {
        match &mut self.messages {
            Messages::Stream(rx) => rx.recv().await,
            Messages::Split { notes, done, last } => {
                if let Some(d) = done.as_mut() {
                    tokio::select! {
                        biased;
                        Some(n) = notes.recv() => return Some(Ok(n)),
                        r = d => {
                            *done = None;
                            *last = r.ok();
                        }
                    }
                }
                // The response is in: what was queued before it goes first.
                match notes.try_recv() {
                    Ok(n) => Some(Ok(n)),
                    Err(_) => last.take(),
                }
            }
            Messages::Once(rx) => {
                let r = rx.as_mut()?.await.ok();
                *rx = None;
                r
            }
            Messages::OnceText(rx) => {
                let r = rx.as_mut()?.await.ok();
                *rx = None;
                r.map(|text| {
                    crate::elicit::order::parse(&text?)
                        .map_err(|e| TransportError::Malformed(format!("invalid JSON: {e}")))
                })
            }
            Messages::Ready(q) => q.pop_front().map(Ok),
        }
    }

    /// Marks the exchange complete: dropping it will no longer cancel.
    pub fn complete(&mut self) {
        self.on_cancel = None;
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if let Some(f) = self.on_cancel.take() {
            f();
        }
    }
}

/// Which wire a transport speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// A child process speaking newline-delimited JSON.
    Stdio,
    /// Streamable HTTP (or the deprecated HTTP+SSE when in legacy fallback).
    Http,
}

/// A message transport. Implementations: [`stdio::StdioTransport`], [`http::HttpTransport`].
pub trait Transport: Send + Sync + 'static {
    /// Which wire this is.
    fn kind(&self) -> TransportKind;

    /// Sends a request and returns the exchange carrying its messages.
    ///
    /// On HTTP a 4xx/5xx answer whose body is a JSON-RPC error is delivered as that error
    /// response (so the core can recognise modern errors); any other failure status is
    /// `TransportError::Http`.
    /// The request's JSON is written straight into the transport's buffer
    /// ([`OutgoingRequest::write_json`]); it borrows from the caller until the future is done.
    fn request<'a>(&'a self, req: OutgoingRequest<'a>) -> BoxFuture<'a, Result<Exchange, TransportError>>;

    /// Sends a notification, or a response to a server-to-client request (legacy sessions).
    fn send(&self, message: Value, headers: Vec<(String, String)>) -> BoxFuture<'_, Result<(), TransportError>>;

    /// Where the messages not tied to any request of ours (legacy: server requests and
    /// notifications on stdio or on the standalone GET stream) go from now on: to `sink`, those
    /// that came before first; with `None` they are dropped as they arrive (a modern session),
    /// and server requests among them answered with an error. A later call replaces the sink.
    /// Until the first call they wait in a queue of [`UNSOLICITED_CAP`]; a sink that is full
    /// loses messages (counted), never memory. Default: nothing (no such messages).
    fn route_unsolicited(&self, sink: Option<mpsc::Sender<Value>>) {
        drop(sink);
    }

    /// Where the log messages (`notifications/message`) that belong to no request of ours go
    /// from now on: to `sink` (bounded: when it is full they are dropped, counted), or, with
    /// `None`, with the other unsolicited messages. Default: nothing (they stay with them).
    fn route_logs(&self, sink: Option<mpsc::Sender<Value>>) {
        drop(sink);
    }

    /// How many unsolicited messages are queued and how many were dropped. Default: none.
    fn unsolicited_stats(&self) -> UnsolicitedStats {
        UnsolicitedStats::default()
    }

    /// Closes the transport (stdio: terminates the whole process tree; HTTP: ends the
    /// legacy session, if any).
    fn close(&self) -> BoxFuture<'_, ()>;
}
