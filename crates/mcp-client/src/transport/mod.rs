//! The transport interface the client core drives, and its implementations.
//!
//! A transport moves JSON-RPC messages; it knows nothing of eras, `_meta` or MRTR. The core
//! computes every header a request needs (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`) and passes them along; transports without headers (stdio) ignore them.

pub mod http;
pub mod stdio;

use crate::error::TransportError;
use futures::future::BoxFuture;
use mcp_protocol::types::RequestId;
use serde_json::Value;
use tokio::sync::mpsc;

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

/// One outgoing request.
#[derive(Debug, Clone)]
pub struct OutgoingRequest {
    /// The whole JSON-RPC request (`jsonrpc`, `id`, `method`, `params`).
    pub message: Value,
    /// HTTP headers to send with it (lower-case names). Ignored by stdio.
    pub headers: Vec<(String, String)>,
}

/// Everything the server sends about one request: notifications (and, in legacy sessions,
/// server-to-client requests) in order, then the response. Dropping it cancels the request
/// (HTTP: the response stream is closed; stdio: `notifications/cancelled` is sent).
pub struct Exchange {
    /// Messages for this request; the final JSON-RPC response is the last item.
    pub messages: mpsc::UnboundedReceiver<Result<Value, TransportError>>,
    /// Runs on drop unless the response was received (cancellation).
    pub on_cancel: Option<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange").finish_non_exhaustive()
    }
}

impl Exchange {
    /// Next message, or `None` when the transport has nothing more for this request.
    pub async fn next(&mut self) -> Option<Result<Value, TransportError>> {
        self.messages.recv().await
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
    fn request(&self, req: OutgoingRequest) -> BoxFuture<'_, Result<Exchange, TransportError>>;

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
