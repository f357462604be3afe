//! The session core: what a connection to one client must remember, as a deterministic machine
//! with no IO, no runtime, no clock and no randomness of its own (the quinn-proto shape). The
//! cores ([`Session`], and [`LegacySession`] with feature `legacy`) import nothing from tokio and
//! hold no `Server`: only what they need of it (how to encode a result, what `initialize`
//! answers). [`Driver`] is the one part of the session layer that knows a runtime.
//!
//! A transport feeds a core what the client sent (`handle_*`, each with the time passed in)
//! and drains what the core wants done ([`SessionCore::poll_event`]): run a handler
//! ([`Event::Call`]), open a listen stream ([`Event::Listen`]), write a message
//! ([`Event::Transmit`]). When a handler finishes, the transport hands its result back with
//! [`SessionCore::handle_outcome`]; [`SessionCore::poll_timeout`] says when to call
//! [`SessionCore::handle_timeout`]. [`Session`] lists the method kinds and their order.
//!
//! [`Session`] is the modern core: the calls in flight, their cancellation by
//! `notifications/cancelled`, unique ids, and encoding. The legacy era (feature `legacy`) adds a
//! type that wraps it, `LegacySession`: a legacy client's `initialize` opens its session;
//! later requests without modern `_meta` are served in it (with the MRTR-to-legacy bridge:
//! `input_required` becomes server-to-client requests), every other request goes on to the
//! modern core. Both implement [`SessionCore`], what the [`Driver`] needs.
//!
//! One [`Driver`] runs a core for its transport: stdio drives one per process, Streamable HTTP
//! one per legacy `Mcp-Session-Id`; a modern POST is a one-request session
//! ([`Session::route`]), run as its [`Call`].
//!
//! ```
//! use mcp_server::internal::session::{Event, Session, SessionConfig, SessionCore};
//! use mcp_server::Server;
//! use serde_json::json;
//! use std::time::Instant;
//!
//! let server = Server::builder("demo", "1").build().unwrap();
//! let mut session = Session::new(server, SessionConfig::default());
//! let now = Instant::now();
//! let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
//! let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{meta}}}}}"#);
//! session.handle_bytes(line.as_bytes(), now);
//! let Some(Event::Call(call)) = session.poll_event() else { panic!() };
//! // The transport runs the handler (here: a made-up result) and hands the result back.
//! session.handle_outcome(call.id(), Ok(json!({"tools": []}).into()), now);
//! let Some(Event::Transmit(t)) = session.poll_event() else { panic!() };
//! assert!(std::str::from_utf8(&t.message).unwrap().contains(r#""resultType":"complete""#));
//! ```

#[cfg(feature = "legacy")]
mod bridge;
mod call;
mod driver;
mod host;
#[cfg(feature = "legacy")]
mod legacy;
#[cfg(feature = "legacy")]
mod legacy_state;
mod modern;
#[cfg(all(test, feature = "legacy"))]
mod tests;

pub use call::{Call, Outcome};
#[cfg(feature = "legacy")]
pub use driver::legacy_changes;
pub use driver::{now, pump, Driver, Transport};
#[cfg(feature = "legacy")]
pub use legacy::LegacySession;
#[cfg(feature = "legacy")]
pub use legacy_state::LegacyState;
pub use modern::Session;

use crate::Reply;
use mcp_protocol::strict::DEFAULT_MAX_DEPTH;
use mcp_protocol::types::RequestId;
use mcp_protocol::ProtocolError;
use serde_json::{Map, Value};
use std::time::{Duration, Instant};

/// Limits of one session.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionConfig {
    /// Whether a legacy client's `initialize` opens a session (default true); when false it gets
    /// `-32601` naming the supported versions.
    pub(crate) accept_legacy: bool,
    /// Deepest accepted JSON nesting in [`Session::handle_bytes`] (default 64).
    pub(crate) max_depth: usize,
    /// How many rounds of client input one legacy request may take (default 16).
    pub max_input_rounds: usize,
    /// How long the client has to answer a server-to-client request (default: the server's
    /// request timeout).
    pub answer_timeout: Option<Duration>,
    /// What the ids of server-to-client requests start with (default `s`): a transport whose
    /// sessions span several processes names the process here, so that an answer reaching
    /// another process can be routed to the one that asked.
    pub(crate) outbound_prefix: String,
    /// Most bytes of `capabilities` and `clientInfo` (serialized) a legacy `initialize` may
    /// carry (default 64 KiB): the session keeps them for its whole life. Over it the
    /// `initialize` is refused with `-32602`.
    pub(crate) max_client_params_bytes: usize,
    /// The seed of the session's hash tables (the ids in them come from the client). The
    /// default draws one from the operating system; a test passes its own for a repeatable run.
    pub(crate) seed: u64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            accept_legacy: true,
            max_depth: DEFAULT_MAX_DEPTH,
            max_input_rounds: 16,
            answer_timeout: None,
            outbound_prefix: "s".into(),
            max_client_params_bytes: 64 << 10,
            seed: rand::random(),
        }
    }
}

impl SessionConfig {
    /// Whether `initialize` may open a legacy session.
    pub fn accept_legacy(mut self, yes: bool) -> Self {
        self.accept_legacy = yes;
        self
    }

    /// The deepest accepted JSON nesting.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// How long the client has to answer a server-to-client request.
    #[cfg(test)]
    pub(crate) fn answer_timeout(mut self, limit: Duration) -> Self {
        self.answer_timeout = Some(limit);
        self
    }

    /// Most bytes of `capabilities` and `clientInfo` a legacy `initialize` may carry.
    pub fn max_client_params_bytes(mut self, bytes: usize) -> Self {
        self.max_client_params_bytes = bytes;
        self
    }

    /// What the ids of server-to-client requests start with.
    pub fn outbound_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.outbound_prefix = prefix.into();
        self
    }

    /// The seed of the session's hash tables.
    #[cfg(test)]
    pub(crate) fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

/// What a session core wants its transport to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// Run this call's handler ([`Call::start`], then poll it) and hand its [`Outcome`] back
    /// (`handle_outcome`, or [`Driver::finish`]). A call that does not finish at once is
    /// reported (`handle_pending`, or [`Driver::track`]) before the transport reads more input.
    Call(Call),
    /// Open this `subscriptions/listen` stream ([`Call::listen`]); report its end
    /// (`handle_stream_end`, or [`Driver::end_stream`]).
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

/// What a [`Driver`] needs of the session core it runs: the `poll_*` methods, and the
/// `handle_*` methods for what happens to calls. [`Session`] and `LegacySession` implement it;
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

/// The hash tables' state: seeded per session (ids come from the client), faster than SipHash.
pub(crate) type Seeded = foldhash::fast::FixedState;

/// The key a JSON-RPC id is tracked under (ids are strings or integers).
pub(crate) fn key_of(id: &Value) -> RequestId {
    // The one rule of `RequestId::from_id`; an id it has no key for never gets here (the
    // envelope check refuses it), but a key stays total.
    RequestId::from_id(id).unwrap_or_else(|| RequestId::String(id.to_string()))
}

/// The error for a request whose id is already in flight on the same session.
pub fn id_in_use(id: &Value) -> ProtocolError {
    ProtocolError::InvalidRequest(format!("request id {id} is already in use"))
}

/// Whether a request carries the modern per-request `_meta` (so is served statelessly even when
/// a legacy session exists on the same connection).
pub fn is_modern_request(params: &Map<String, Value>) -> bool {
    params.get("_meta").and_then(Value::as_object).is_some_and(|m| m.contains_key(mcp_protocol::meta::PROTOCOL_VERSION))
}

pub(crate) fn encode(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("JSON serializes")
}
