//! What a session core hands its transport ([`Event`], [`Transmit`]), and what a
//! [`Driver`](crate::Driver) needs of a core ([`SessionCore`]).

use crate::call::Call;
use mcp_protocol::types::RequestId;
use mcp_protocol::ProtocolError;
use mcp_server::Reply;
use serde_json::Value;
use std::time::Instant;

/// What a session core wants its transport to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// Run this call's handler ([`Call::start`], then poll it) and hand its [`Outcome`](crate::Outcome) back
    /// (`handle_outcome`, or [`Driver::finish`](crate::Driver::finish)). A call that does not finish at once is
    /// reported (`handle_pending`, or [`Driver::track`](crate::Driver::track)) before the transport reads more input.
    Call(Call),
    /// Open this `subscriptions/listen` stream ([`Call::listen`]); report its end
    /// (`handle_stream_end`, or [`Driver::end_stream`](crate::Driver::end_stream)).
    Listen(Call),
    /// Write this message to the client.
    Transmit(Transmit),
    /// The call with this JSON-RPC id is over (answered, or cancelled without an answer): a
    /// transport with a stream per call closes it.
    Finished(Value),
    /// A legacy session was opened: the transport starts sending it change notifications
    /// (`legacy_changes`). Only a `LegacySession` says this.
    LegacyOpened,
}

/// One message for the client.
#[derive(Debug)]
pub struct Transmit {
    /// The JSON-RPC id of the call the message belongs to (its response, or a server-to-client
    /// request made on its behalf); `None` for a message about no call.
    pub call: Option<Value>,
    /// The serialized JSON-RPC message (no trailing newline).
    pub message: Vec<u8>,
    /// The error, when the message is an error the session itself answered with (malformed
    /// input, a refused `initialize`, a reused id), for transports that map it to a status.
    pub error: Option<ProtocolError>,
}

/// What a [`Driver`](crate::Driver) needs of the session core it runs: the `poll_*` methods, and the
/// `handle_*` methods for what happens to calls. [`Session`](crate::Session) and `LegacySession` implement it;
/// each documents the rest of its methods.
pub trait SessionCore: Send + 'static {
    /// The next thing the transport should do, if any.
    fn poll_event(&mut self) -> Option<Event>;
    /// When `handle_timeout` should next be called, if ever.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Fails what is overdue at `now`.
    fn handle_timeout(&mut self, now: Instant);
    /// A call did not finish at once: from now on it can be cancelled.
    fn handle_pending(&mut self, call: &Call, now: Instant);
    /// Takes a handler's result for the call `id`.
    fn handle_outcome(&mut self, id: &Value, result: Result<Reply, ProtocolError>, now: Instant);
    /// A listen stream ended.
    fn handle_stream_end(&mut self, key: &RequestId, now: Instant);
}
