//! The session core: what a connection to one client must remember, as a deterministic machine
//! with no IO, no runtime, no clock and no randomness of its own (the quinn-proto shape). This
//! module and its `legacy`/`bridge` parts import nothing from tokio; [`driver`] is the one part
//! of the session layer that knows a runtime.
//!
//! A transport feeds the core what the client sent (`handle_*`, each with the time passed in)
//! and drains what the core wants done ([`Session::poll_event`]): run a handler
//! ([`Event::Dispatch`]), open a listen stream ([`Event::Listen`]), stop a handler
//! ([`Event::Cancel`]), write a message ([`Event::Transmit`]). When a handler finishes, the
//! transport hands its result back with [`Session::handle_outcome`]; [`Session::poll_timeout`]
//! says when to call [`Session::handle_timeout`].
//!
//! [`Session`] is the modern core: the calls in flight, their cancellation by
//! `notifications/cancelled`, unique ids, and encoding. The legacy era (feature `legacy`) is a
//! type that wraps it, [`LegacySession`]: a legacy client's `initialize` opens its session;
//! later requests without modern `_meta` are served in it (with the MRTR-to-legacy bridge:
//! `input_required` becomes server-to-client requests), every other request goes on to the
//! modern core. [`DualSession`] names whichever of the two the build serves with.
//!
//! stdio drives one [`DualSession`] per process (through [`driver::SharedSession`]);
//! Streamable HTTP one per legacy `Mcp-Session-Id`, and for each modern POST the core's routing
//! on its own ([`stateless`], run as a [`Job::stateless`]).
//!
//! ```
//! use mcp_server::session::{Event, Session, SessionConfig};
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
//! let Some(Event::Dispatch(d)) = session.poll_event() else { panic!() };
//! // The transport runs the handler (here: a made-up result) and hands the result back.
//! session.handle_outcome(&d.request.id, Ok(json!({"tools": []}).into()), now);
//! let Some(Event::Transmit(t)) = session.poll_event() else { panic!() };
//! assert!(std::str::from_utf8(&t.message).unwrap().contains(r#""resultType":"complete""#));
//! ```

pub mod after_write;
#[cfg(feature = "legacy")]
mod bridge;
pub mod driver;
#[cfg(feature = "legacy")]
mod legacy;
#[cfg(all(test, feature = "legacy"))]
mod tests;

#[cfg(feature = "legacy")]
pub use legacy::{LegacySession, LegacyState};

#[cfg(feature = "legacy")]
pub use driver::legacy_changes;
pub use driver::{now, pump, Action, Call, Job, Outcome, PumpEnd, Running, SharedSession};

use crate::server::{Preset, Server};
use crate::Reply;
use mcp_protocol::jsonrpc::{parse_incoming, Incoming, Notification, Rejected, Request};
use mcp_protocol::method::names;
use mcp_protocol::strict::DEFAULT_MAX_DEPTH;
use mcp_protocol::types::RequestId;
use mcp_protocol::version::Era;
use mcp_protocol::{Method, ProtocolError};
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The session type a transport drives: [`LegacySession`] when the build serves legacy
/// clients (feature `legacy`), else the modern [`Session`]. Both have the same `handle_*`,
/// `poll_*` and `close` methods.
#[cfg(feature = "legacy")]
pub type DualSession = LegacySession;
/// The session type a transport drives: [`LegacySession`] when the build serves legacy
/// clients (feature `legacy`), else the modern [`Session`].
#[cfg(not(feature = "legacy"))]
pub type DualSession = Session;

/// Limits of one session.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionConfig {
    /// Whether a legacy client's `initialize` opens a session (default true); when false it gets
    /// `-32601` naming the supported versions.
    pub accept_legacy: bool,
    /// Deepest accepted JSON nesting in [`Session::handle_bytes`] (default 64).
    pub max_depth: usize,
    /// How many rounds of client input one legacy request may take (default 16).
    pub max_input_rounds: usize,
    /// How long the client has to answer a server-to-client request (default: the server's
    /// request timeout).
    pub answer_timeout: Option<Duration>,
    /// What the ids of server-to-client requests start with (default `s`): a transport whose
    /// sessions span several processes names the process here, so that an answer reaching
    /// another process can be routed to the one that asked.
    pub outbound_prefix: String,
    /// Most bytes of `capabilities` and `clientInfo` (serialized) a legacy `initialize` may
    /// carry (default 64 KiB): the session keeps them for its whole life. Over it the
    /// `initialize` is refused with `-32602`.
    pub max_client_params_bytes: usize,
    /// The seed of the session's hash tables (the ids in them come from the client). The
    /// default draws one from the operating system; a test passes its own for a repeatable run.
    pub seed: u64,
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
    pub fn answer_timeout(mut self, limit: Duration) -> Self {
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
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

/// What the session wants its transport to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// Run this request's handler and hand its result to [`Session::handle_outcome`] under
    /// the request's id. A handler that does not finish at once is reported with
    /// [`Session::handle_pending`] before the transport reads more input.
    Dispatch(Dispatch),
    /// Open this `subscriptions/listen` stream; report its end with
    /// [`Session::handle_stream_end`].
    Listen(Dispatch),
    /// Stop the handler (or stream) of this call: the client cancelled it, or the session
    /// ended. Nothing is to be sent for it: the transport drops the handler and hands no
    /// outcome back for this key (the core, which keeps no record of untracked calls, would
    /// otherwise answer it).
    Cancel(RequestId),
    /// Write this message to the client.
    Transmit(Transmit),
    /// The call with this JSON-RPC id is over (answered, or cancelled without an answer): a
    /// transport with a stream per call closes it.
    Finished(Value),
    /// A legacy session was opened: the transport starts sending it change notifications
    /// (`LegacyState::notification_for`).
    #[cfg(feature = "legacy")]
    LegacyOpened,
}

/// A request to serve: what [`Event::Dispatch`] and [`Event::Listen`] carry.
pub struct Dispatch {
    /// The key the call is tracked under (its JSON-RPC id, normalised).
    pub key: RequestId,
    /// The request.
    pub request: Request,
    /// The era it is served in (its result is encoded for it).
    pub era: Era,
    /// What a legacy session supplies in place of `_meta` and `requestState`.
    pub(crate) preset: Option<Box<Preset>>,
}

impl std::fmt::Debug for Dispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatch")
            .field("key", &self.key)
            .field("method", &self.request.method)
            .field("era", &self.era)
            .finish_non_exhaustive()
    }
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

/// The hash tables' state: seeded per session (ids come from the client), faster than SipHash.
pub(crate) type Seeded = foldhash::fast::FixedState;

/// The modern session core (see the module docs).
pub struct Session {
    server: Server,
    pub(crate) config: SessionConfig,
    /// Calls in flight, by key, with their JSON-RPC ids: listen streams from the start, other
    /// calls once their transport says they did not finish at once.
    calls: HashMap<RequestId, Value, Seeded>,
    events: VecDeque<Event>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("calls", &self.calls.len()).finish_non_exhaustive()
    }
}

/// The key a JSON-RPC id is tracked under (ids are strings or integers).
pub fn key_of(id: &Value) -> RequestId {
    match id {
        Value::Number(n) => n.as_i64().map_or_else(|| RequestId::String(format!("#{n}")), RequestId::Integer),
        Value::String(s) => RequestId::String(s.clone()),
        other => RequestId::String(other.to_string()),
    }
}

/// The error for a request whose id is already in flight on the same session.
pub fn id_in_use(id: &Value) -> ProtocolError {
    ProtocolError::InvalidRequest(format!("request id {id} is already in use"))
}

/// One request as the modern core serves it on its own ([`stateless`]).
#[derive(Debug)]
pub enum Stateless {
    /// A call: run its handler ([`Event::Dispatch`]).
    Call(Dispatch),
    /// A `subscriptions/listen` stream ([`Event::Listen`]).
    Listen(Dispatch),
}

/// How the modern core serves one request on its own. [`Session::handle_request`] does this for
/// every request whose id is not in use; a transport with one request per exchange (a modern
/// Streamable HTTP POST, where ids cannot collide and cancellation is the connection's) calls it
/// directly and runs the result as a [`Job::stateless`].
pub fn stateless(request: Request) -> Stateless {
    route(key_of(&request.id), request)
}

fn route(key: RequestId, request: Request) -> Stateless {
    let dispatch = Dispatch { key, request, era: Era::Modern, preset: None };
    if Method::parse(&dispatch.request.method) == Some(Method::SubscriptionsListen) {
        Stateless::Listen(dispatch)
    } else {
        Stateless::Call(dispatch)
    }
}

/// Whether a request carries the modern per-request `_meta` (so is served statelessly even when
/// a legacy session exists on the same connection).
pub fn is_modern_request(params: &Map<String, Value>) -> bool {
    params.get("_meta").and_then(Value::as_object).is_some_and(|m| m.contains_key(mcp_protocol::meta::PROTOCOL_VERSION))
}

impl Session {
    /// A session of `server` with no call in flight.
    pub fn new(server: Server, config: SessionConfig) -> Self {
        let calls = HashMap::with_hasher(Seeded::with_seed(config.seed));
        Self { server, config, calls, events: VecDeque::new() }
    }

    /// The server this session serves.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The session's limits.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// The next thing the transport should do, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// How many calls are tracked in flight.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    /// Whether the call `key` is tracked in flight.
    pub fn is_in_flight(&self, key: &RequestId) -> bool {
        self.calls.contains_key(key)
    }

    /// Takes one message from the client as bytes: a request or a notification. Malformed
    /// input is answered with the JSON-RPC error it deserves.
    pub fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        match parse_incoming(bytes, self.config.max_depth) {
            Ok(Incoming::Request(req)) => self.handle_request(req, None, now),
            Ok(Incoming::Notification(n)) => self.handle_notification(n, now),
            Err(rejected) => self.handle_rejected(rejected, now),
        }
    }

    /// Answers input that is not a JSON-RPC request or notification.
    pub fn handle_rejected(&mut self, rejected: Rejected, _now: Instant) {
        let message = encode(&rejected.error.to_response(rejected.id.as_ref()));
        let error = Some(rejected.error);
        self.push(Event::Transmit(Transmit { call: None, message, error }));
    }

    /// Takes one request from the client. The modern core serves it statelessly: the principal
    /// travels in the transport's environment, so `_principal` is only for the legacy wrapper.
    pub fn handle_request(&mut self, req: Request, _principal: Option<String>, _now: Instant) {
        let key = key_of(&req.id);
        if self.calls.contains_key(&key) {
            return self.transmit_error(&req.id, &id_in_use(&req.id));
        }
        match route(key.clone(), req) {
            Stateless::Listen(d) => {
                // Streams are tracked from the start; other calls once pending.
                self.calls.insert(key, d.request.id.clone());
                self.push(Event::Listen(d));
            }
            Stateless::Call(d) => self.push(Event::Dispatch(d)),
        }
    }

    /// Takes one notification from the client: `notifications/cancelled` cancels its call;
    /// others mean nothing to the modern core.
    pub fn handle_notification(&mut self, n: Notification, now: Instant) {
        if n.method == names::CANCELLED {
            if let Some(id) = n.params.get("requestId") {
                self.cancel(id, now);
            }
        }
    }

    /// Cancels the call `id`, if it is in flight: [`Event::Cancel`] stops its handler, nothing
    /// is sent for it.
    pub fn cancel(&mut self, id: &Value, _now: Instant) {
        let key = key_of(id);
        if let Some(id) = self.calls.remove(&key) {
            self.push(Event::Cancel(key));
            self.push(Event::Finished(id));
        }
    }

    /// A dispatched call did not finish at once: from now on `notifications/cancelled` stops
    /// it and its id counts as in use. Most calls finish on their first poll and so are never
    /// tracked.
    pub fn handle_pending(&mut self, key: &RequestId, id: &Value, _now: Instant) {
        if !self.calls.contains_key(key) {
            self.calls.insert(key.clone(), id.clone());
        }
    }

    /// Takes a handler's result for the call `id`: the response goes out, encoded by the server
    /// (`resultType`, `serverInfo`). Never called for a call the core cancelled
    /// ([`Event::Cancel`]). Most calls were never tracked: then there is nothing to look up.
    pub fn handle_outcome(&mut self, id: &Value, result: Result<Reply, ProtocolError>, _now: Instant) {
        if !self.calls.is_empty() {
            self.calls.remove(&key_of(id));
        }
        let message = self.server.encode_response(id, &result);
        self.push(Event::Transmit(Transmit { call: Some(id.clone()), message, error: None }));
        self.push(Event::Finished(id.clone()));
    }

    /// A listen stream opened from [`Event::Listen`] ended.
    pub fn handle_stream_end(&mut self, key: &RequestId, _now: Instant) {
        self.calls.remove(key);
    }

    /// When [`Session::handle_timeout`] should next be called, if ever (never: the modern core
    /// waits on nobody).
    pub fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    /// Fails what is overdue at `now` (nothing, in the modern core).
    pub fn handle_timeout(&mut self, _now: Instant) {}

    /// The client can no longer answer (its input ended). Calls still running go on: their
    /// responses may still reach it.
    pub fn handle_peer_gone(&mut self, _now: Instant) {}

    /// The session ends (the client went away, or it was deleted): every call is cancelled.
    pub fn close(&mut self, _now: Instant) {
        let calls: Vec<_> = self.calls.drain().collect();
        for (key, id) in calls {
            self.push(Event::Cancel(key));
            self.push(Event::Finished(id));
        }
    }

    pub(crate) fn push(&mut self, event: Event) {
        self.events.push_back(event);
    }

    pub(crate) fn transmit_error(&mut self, id: &Value, e: &ProtocolError) {
        let message = encode(&e.to_response(Some(id)));
        self.push(Event::Transmit(Transmit { call: Some(id.clone()), message, error: Some(e.clone()) }));
    }
}

pub(crate) fn encode(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("JSON serializes")
}
