//! The session core: everything a connection to one client needs to remember, as a deterministic
//! machine with no IO, no runtime and no clock of its own (the quinn-proto shape).
//!
//! A transport feeds it what the client sent (`handle_*`, with the time passed in) and drains
//! what it wants done (`poll_event`): run a handler ([`Event::Serve`]), open a listen stream
//! ([`Event::Listen`]), write a message ([`Event::Transmit`]). When a handler finishes, the
//! transport hands its [`Outcome`] back with [`Session::handle_outcome`]; [`Session::poll_timeout`]
//! says when to call [`Session::handle_timeout`].
//!
//! What lives here and nowhere else:
//! - **era routing**: a legacy client's `initialize` opens the legacy session; later requests
//!   without modern `_meta` are served in it, every other request statelessly;
//! - **legacy session state**: negotiated version, client capabilities and info, log level,
//!   resource subscriptions, `notifications/initialized`;
//! - **the calls in flight**, and their cancellation by `notifications/cancelled`;
//! - **the MRTR-to-legacy bridge**: a legacy request whose handler answers `input_required` has
//!   its input requests sent to the client as server-to-client requests (with deadlines), and
//!   runs again with the answers, as a modern client's retry would;
//! - **encoding by era**: modern results get `resultType` and `serverInfo`, legacy ones neither.
//!
//! stdio drives one `Session` per process; Streamable HTTP drives one per legacy
//! `Mcp-Session-Id` (its modern requests need no session at all).
//!
//! ```
//! use mcp_server::session::{Event, Session, SessionConfig};
//! use mcp_server::{RequestEnv, Server};
//! use std::time::Instant;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = Server::builder("demo", "1").build().unwrap();
//! let mut session = Session::new(server, SessionConfig::default());
//! session.handle_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#);
//! let Some(Event::Transmit(t)) = session.poll_event() else { panic!() };
//! assert!(std::str::from_utf8(&t.message).unwrap().contains("\"protocolVersion\":\"2025-11-25\""));
//! assert!(matches!(session.poll_event(), Some(Event::LegacyOpened)));
//!
//! session.handle_bytes(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
//! let Some(Event::Serve(job)) = session.poll_event() else { panic!() };
//! let outcome = job.run(&RequestEnv::default()).await; // the transport runs handlers
//! session.handle_outcome(outcome, &Instant::now());
//! let Some(Event::Transmit(t)) = session.poll_event() else { panic!() };
//! assert!(!std::str::from_utf8(&t.message).unwrap().contains("resultType")); // legacy encoding
//! # });
//! ```

#[cfg(feature = "legacy")]
mod bridge;
#[cfg(feature = "legacy")]
mod legacy;
mod shared;
#[cfg(all(test, feature = "legacy"))]
mod tests;

#[cfg(feature = "legacy")]
pub use legacy::LegacyState;
pub use shared::{now, SharedSession};

use crate::context::RequestEnv;
use crate::server::{Preset, Server};
use futures::Stream;
use mcp_protocol::jsonrpc::{parse_incoming, Incoming, Notification, Request};
use mcp_protocol::strict::DEFAULT_MAX_DEPTH;
use mcp_protocol::types::RequestId;
use mcp_protocol::version::Era;
use mcp_protocol::ProtocolError;
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

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
}

/// What the session wants its transport to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// Run this request's handler ([`Job::run`]) and hand the outcome to
    /// [`Session::handle_outcome`].
    Serve(Job),
    /// Open this `subscriptions/listen` stream ([`Job::listen`]); report its end with
    /// [`Session::handle_stream_end`].
    Listen(Job),
    /// Write this message to the client.
    Transmit(Transmit),
    /// The call with this JSON-RPC id is over (answered, or cancelled without an answer): a
    /// transport with a stream per call closes it.
    Finished(Value),
    /// A legacy session was opened: the transport starts sending it change notifications
    /// (`LegacyState::notification_for`).
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

/// A request to serve: run it with [`Job::run`] (or [`Job::listen`]).
pub struct Job {
    key: RequestId,
    request: Request,
    era: Era,
    preset: Option<Box<Preset>>,
    cancel: CancellationToken,
    server: Server,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("id", &self.request.id).field("method", &self.request.method).finish()
    }
}

impl Job {
    /// The request's JSON-RPC id.
    pub fn id(&self) -> &Value {
        &self.request.id
    }

    /// The request being served.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The era the request is served in.
    pub fn era(&self) -> Era {
        self.era
    }

    /// Cancelled when the client cancels the call or the session ends.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Runs the handler with what the transport knows about the request (`env`: principal,
    /// notification sink, HTTP parts; its `cancel` is ignored: the job's own token is used,
    /// which `notifications/cancelled` fires). A cancelled call stops at once: its handler
    /// future is dropped.
    ///
    /// A modern call is tracked (for `notifications/cancelled` and for duplicate ids) only once
    /// its transport says it is still running: a transport that cannot finish it at once hands
    /// it to [`Session::handle_pending`] before reading more input. Most calls finish on their
    /// first poll and so are never tracked.
    pub fn run(self, env: &RequestEnv) -> Running {
        let env = env.with_cancel(self.cancel.clone());
        let Job { key, request, era, preset, cancel, server } = self;
        let id = request.id.clone();
        let fut = Box::pin(async move { server.process_with(request, env, preset).await });
        Running { fut, key: Some(key), id, era, cancel, tracked: false, cancelled: None }
    }

    /// Opens the listen stream with `env` (as for [`Job::run`]): the acknowledgement, then
    /// change notifications, then the closing response at shutdown.
    pub fn listen(self, env: &RequestEnv) -> Result<impl Stream<Item = Value> + Send + 'static, ProtocolError> {
        self.server.listen(self.request, env.with_cancel(self.cancel))
    }
}

type Handling =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<crate::Reply, ProtocolError>> + Send + 'static>>;

/// A running job: the future of its [`Outcome`] (see [`Job::run`]).
pub struct Running {
    fut: Handling,
    key: Option<RequestId>,
    id: Value,
    era: Era,
    cancel: CancellationToken,
    /// Whether the session tracks it ([`Session::handle_pending`]), so it can be cancelled.
    tracked: bool,
    /// Set up on the first poll that does not finish (most never need it).
    cancelled: Option<std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("key", &self.key).field("era", &self.era).finish_non_exhaustive()
    }
}

impl std::future::Future for Running {
    type Output = Outcome;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Outcome> {
        use std::task::Poll;
        let this = &mut *self;
        let (result, cancelled) = match this.fut.as_mut().poll(cx) {
            // Only a tracked job can have been cancelled (the check takes a lock).
            Poll::Ready(r) => (r, this.tracked && this.cancel.is_cancelled()),
            Poll::Pending => {
                let cancel = &this.cancel;
                let cancelled = this.cancelled.get_or_insert_with(|| Box::pin(cancel.clone().cancelled_owned()));
                if cancelled.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                (Err(ProtocolError::Internal("request cancelled by the client".into())), true)
            }
        };
        let key = this.key.take().expect("polled after completion");
        let (id, era) = (std::mem::take(&mut this.id), this.era);
        Poll::Ready(Outcome { key, id, era, cancelled, result })
    }
}

/// The time, read only when the session needs it (most calls never do): an [`Instant`] is one,
/// and so is a closure returning one.
pub trait Clock {
    /// The current time.
    fn now(&self) -> Instant;
}

impl Clock for Instant {
    fn now(&self) -> Instant {
        *self
    }
}

impl<F: Fn() -> Instant> Clock for F {
    fn now(&self) -> Instant {
        self()
    }
}

/// A handler's outcome, to hand back to [`Session::handle_outcome`].
#[derive(Debug)]
pub struct Outcome {
    key: RequestId,
    id: Value,
    era: Era,
    cancelled: bool,
    result: Result<crate::Reply, ProtocolError>,
}

/// A call in flight.
struct Call {
    id: Value,
    cancel: CancellationToken,
    /// The MRTR-to-legacy bridge state of a legacy call (boxed: most calls are modern).
    #[cfg(feature = "legacy")]
    bridge: Option<Box<bridge::Bridge>>,
}

impl Call {
    fn modern(id: Value, cancel: CancellationToken) -> Self {
        Self {
            id,
            cancel,
            #[cfg(feature = "legacy")]
            bridge: None,
        }
    }
}

/// The state of one connection (see the module docs).
pub struct Session {
    server: Server,
    config: SessionConfig,
    #[cfg(feature = "legacy")]
    legacy: Option<LegacyState>,
    /// foldhash: seeded per process (ids come from the client), faster than SipHash.
    calls: HashMap<RequestId, Call, foldhash::fast::RandomState>,
    /// The questions the MRTR-to-legacy bridge asked and waits on.
    #[cfg(feature = "legacy")]
    outbound: mcp_protocol::outbound::Outbound<bridge::Asked>,
    events: VecDeque<Event>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Session");
        #[cfg(feature = "legacy")]
        d.field("legacy", &self.legacy).field("asked", &self.outbound.len());
        d.field("calls", &self.calls.len()).finish()
    }
}

/// The key a JSON-RPC id is tracked under (ids are strings or integers).
fn key_of(id: &Value) -> RequestId {
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

/// Whether a request carries the modern per-request `_meta` (so is served statelessly even when
/// a legacy session exists on the same connection).
pub fn is_modern_request(params: &Map<String, Value>) -> bool {
    params.get("_meta").and_then(Value::as_object).is_some_and(|m| m.contains_key(mcp_protocol::meta::PROTOCOL_VERSION))
}

impl Session {
    /// A session of `server` with nothing negotiated yet.
    pub fn new(server: Server, config: SessionConfig) -> Self {
        Self {
            #[cfg(feature = "legacy")]
            outbound: mcp_protocol::outbound::Outbound::new(config.outbound_prefix.clone()),
            server,
            config,
            #[cfg(feature = "legacy")]
            legacy: None,
            calls: HashMap::default(),
            events: VecDeque::new(),
        }
    }

    /// A session that continues a legacy session opened elsewhere (another process sharing
    /// the session store), with the state it negotiated.
    #[cfg(feature = "legacy")]
    pub fn restore(server: Server, config: SessionConfig, state: LegacyState) -> Self {
        let mut s = Self::new(server, config);
        s.legacy = Some(state);
        s
    }

    /// The legacy session's state, to update it from a shared store.
    #[cfg(feature = "legacy")]
    pub fn legacy_mut(&mut self) -> Option<&mut LegacyState> {
        self.legacy.as_mut()
    }

    /// The server this session serves.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The legacy session opened by `initialize`, if any.
    #[cfg(feature = "legacy")]
    pub fn legacy(&self) -> Option<&LegacyState> {
        self.legacy.as_ref()
    }

    /// The next thing the transport should do, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// How many calls are in flight (served, or waiting for the client's input).
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    /// Takes one message from the client as bytes: a request, a notification, or (in a legacy
    /// session) the answer to a server-to-client request. Malformed input is answered with the
    /// JSON-RPC error it deserves.
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        match parse_incoming(bytes, self.config.max_depth) {
            Ok(Incoming::Request(req)) => self.handle_request(req, None),
            Ok(Incoming::Notification(n)) => self.handle_notification(n),
            Err(rejected) => {
                #[cfg(feature = "legacy")]
                if self.legacy.is_some() {
                    if let Ok(Value::Object(msg)) = serde_json::from_slice::<Value>(bytes) {
                        if self.handle_response(&msg) {
                            return;
                        }
                    }
                }
                let message = encode(&rejected.error.to_response(rejected.id.as_ref()));
                let error = Some(rejected.error);
                self.events.push_back(Event::Transmit(Transmit { call: None, message, error }));
            }
        }
    }

    /// Takes one request from the client, authenticated as `principal` (if the transport did).
    pub fn handle_request(&mut self, req: Request, principal: Option<String>) {
        #[cfg(feature = "legacy")]
        if req.method == "initialize" && !is_modern_request(&req.params) {
            return self.initialize(req);
        }
        #[cfg(feature = "legacy")]
        if self.legacy.is_some() && !is_modern_request(&req.params) {
            return self.legacy_request(req, principal);
        }
        let _ = principal; // modern calls carry their principal in the transport's env
        let key = key_of(&req.id);
        if self.calls.contains_key(&key) {
            return self.transmit_error(&req.id, &id_in_use(&req.id));
        }
        let cancel = CancellationToken::new();
        let listen = req.method == "subscriptions/listen";
        if listen {
            // Streams are tracked from the start; other calls once pending (see `Job::run`).
            self.calls.insert(key.clone(), Call::modern(req.id.clone(), cancel.clone()));
        }
        let job = Job { key, request: req, era: Era::Modern, preset: None, cancel, server: self.server.clone() };
        self.events.push_back(if listen { Event::Listen(job) } else { Event::Serve(job) });
    }

    /// Takes one notification from the client: `notifications/cancelled` cancels its call;
    /// `notifications/initialized` completes a legacy handshake; others mean nothing here.
    pub fn handle_notification(&mut self, n: Notification) {
        match n.method.as_str() {
            "notifications/cancelled" => {
                if let Some(id) = n.params.get("requestId") {
                    self.cancel(id);
                }
            }
            #[cfg(feature = "legacy")]
            "notifications/initialized" => {
                if let Some(l) = &mut self.legacy {
                    l.initialized = true;
                }
            }
            _ => {}
        }
    }

    /// Cancels the call `id`, if it is in flight: its handler stops, nothing is sent for it.
    pub fn cancel(&mut self, id: &Value) {
        if let Some(call) = self.calls.remove(&key_of(id)) {
            call.cancel.cancel();
            #[cfg(feature = "legacy")]
            if let Some(b) = call.bridge {
                self.forget_asked(&b);
            }
            self.events.push_back(Event::Finished(call.id));
        }
    }

    /// A job that did not finish at once: from now on `notifications/cancelled` stops it and its
    /// id counts as in use (see [`Job::run`]). Legacy calls are tracked from the start.
    pub fn handle_pending(&mut self, running: &mut Running) {
        running.tracked = true;
        let Some(key) = &running.key else { return };
        if running.era == Era::Modern && !self.calls.contains_key(key) {
            let id = running.id.clone();
            self.calls.insert(key.clone(), Call::modern(id, running.cancel.clone()));
        }
    }

    /// Takes a handler's outcome: the response goes out (encoded for the call's era), or, for a
    /// legacy call that needs client input, the input requests go to the client.
    pub fn handle_outcome(&mut self, outcome: Outcome, now: &impl Clock) {
        let Outcome { key, id, era, cancelled, result } = outcome;
        #[cfg(feature = "legacy")]
        if era == Era::Legacy {
            if cancelled || !self.calls.contains_key(&key) {
                return; // cancelled: no response
            }
            return self.legacy_outcome(key, result.map(crate::Reply::into_value), now.now());
        }
        let _ = (era, now);
        if !self.calls.is_empty() {
            self.calls.remove(&key);
        }
        if cancelled {
            return; // no response for a cancelled call
        }
        let message = self.server.encode_response(&id, &result);
        self.events.push_back(Event::Transmit(Transmit { call: Some(id.clone()), message, error: None }));
        self.events.push_back(Event::Finished(id));
    }

    /// A listen stream opened from [`Event::Listen`] ended.
    pub fn handle_stream_end(&mut self, id: &Value) {
        self.calls.remove(&key_of(id));
    }

    /// When [`Session::handle_timeout`] should next be called, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        #[cfg(feature = "legacy")]
        return self.outbound.poll_timeout();
        #[cfg(not(feature = "legacy"))]
        None
    }

    /// Fails every call whose client input is overdue at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        #[cfg(feature = "legacy")]
        self.expire_questions(now);
        #[cfg(not(feature = "legacy"))]
        let _ = now;
    }

    /// The client can no longer answer (its input ended): calls waiting for its answers fail,
    /// calls still running go on (their responses may still reach it).
    pub fn handle_peer_gone(&mut self) {
        #[cfg(feature = "legacy")]
        self.drop_questions();
    }

    /// The session ends (the client went away, or it was deleted): every call is cancelled,
    /// nothing waits for the client any more.
    pub fn close(&mut self) {
        for (_, call) in self.calls.drain() {
            call.cancel.cancel();
            self.events.push_back(Event::Finished(call.id));
        }
        #[cfg(feature = "legacy")]
        self.outbound.close();
    }

    fn transmit_error(&mut self, id: &Value, e: &ProtocolError) {
        let message = encode(&e.to_response(Some(id)));
        self.events.push_back(Event::Transmit(Transmit { call: Some(id.clone()), message, error: Some(e.clone()) }));
    }
}

fn encode(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("JSON serializes")
}
