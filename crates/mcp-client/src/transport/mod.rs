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
use tokio::sync::{mpsc, oneshot};

/// The request id a message names (`None` for a value that is no id: not a string, not an
/// integer in `i64`). Read straight from the value: deserializing the untagged `RequestId`
/// builds an error for every integer id.
pub(crate) fn request_key(v: &Value) -> Option<RequestId> {
    match v {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => n.as_i64().map(RequestId::Integer),
        _ => None,
    }
}

/// Everything the server sends about one request: notifications (and, in legacy sessions,
/// server-to-client requests) in order, then the response. Dropping it cancels the request
/// (HTTP: the response stream is closed; stdio: `notifications/cancelled` is sent).
///
/// A transport makes one with [`Exchange::stream`] (messages still to come, in order),
/// [`Exchange::once`] (only the response is to come: no channel of many slots for it; or
/// [`Exchange::once_text`], the same as JSON text) or
/// [`Exchange::ready`] (everything has arrived), then [`Exchange::on_cancel`].
pub struct Exchange {
    messages: Messages,
    on_cancel: Option<Box<dyn FnOnce() + Send>>,
}

/// Where an exchange's messages come from.
enum Messages {
    Stream(mpsc::UnboundedReceiver<Result<Value, TransportError>>),
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
    /// Messages that arrive on `rx`; the final JSON-RPC response is the last.
    pub fn stream(rx: mpsc::UnboundedReceiver<Result<Value, TransportError>>) -> Self {
        Self { messages: Messages::Stream(rx), on_cancel: None }
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
            Messages::Once(rx) => {
                let r = rx.as_mut()?.await.ok();
                *rx = None;
                r
            }
            Messages::OnceText(rx) => {
                let r = rx.as_mut()?.await.ok();
                *rx = None;
                r.map(|text| {
                    serde_json::from_slice(&text?).map_err(|e| TransportError::Malformed(format!("invalid JSON: {e}")))
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

    /// Messages not tied to any request of ours (legacy: server requests and notifications on
    /// stdio or on the standalone GET stream). Can be taken once.
    fn take_unsolicited(&self) -> Option<mpsc::UnboundedReceiver<Value>>;

    /// Switches to the legacy session mode after a successful `initialize`: HTTP remembers the
    /// `Mcp-Session-Id` it received and may open the standalone GET stream. Default: nothing.
    fn begin_legacy_session(&self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Ok(()) })
    }

    /// Falls back to the deprecated HTTP+SSE transport (2024-11-05). Only HTTP implements it.
    fn fallback_to_sse(&self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Err(TransportError::Connect("this transport has no HTTP+SSE fallback".into(), None)) })
    }

    /// Closes the transport (stdio: terminates the whole process tree; HTTP: ends the
    /// legacy session, if any).
    fn close(&self) -> BoxFuture<'_, ()>;
}
