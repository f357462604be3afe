//! The legacy (initialize-based, 2025-11-25 and earlier) half of a session: what the handshake
//! negotiated and what the session's requests changed (log level, resource subscriptions).
//!
//! Handlers are written once: a legacy request is served by the same handlers as a modern one,
//! with the per-request fields taken from the session instead of `_meta`.

use super::bridge::{Asked, Bridge};
use super::{is_modern_request, key_of, Dispatch, Event, Seeded, Session, SessionConfig, Transmit};
use crate::server::{method_not_found, ChangeEvent, Preset, Server};
use mcp_protocol::jsonrpc::{parse_incoming, Incoming, Notification, Rejected};
use mcp_protocol::meta::{log_level_rank, RequestMeta, PROGRESS_TOKEN};
use mcp_protocol::method::names;
use mcp_protocol::outbound::Outbound;
use mcp_protocol::types::RequestId;
use mcp_protocol::version::Era;
use mcp_protocol::{version, Method, ProtocolError, Request};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// Most resources one legacy session may be subscribed to (`resources/subscribe` past it: -32602).
const MAX_SUBSCRIPTIONS: usize = 1024;
/// Longest URI a legacy session may subscribe to, in bytes.
const MAX_SUBSCRIBED_URI: usize = 2048;

/// What a legacy session negotiated and remembers. Serializable, so that a shared store can
/// hold it; [`LegacyState::check`] validates one read back.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LegacyState {
    protocol_version: String,
    client_capabilities: Map<String, Value>,
    client_info: Option<Value>,
    log_level: Option<u8>,
    initialized: bool,
    subscriptions: HashSet<String>,
}

impl LegacyState {
    /// Answers `initialize`: negotiates the version (the client's if it is a legacy version we
    /// speak, else our newest legacy version, as the legacy handshake says) and returns the new
    /// state with the `InitializeResult`.
    pub(super) fn initialize(
        server: &Server,
        params: &Map<String, Value>,
        max_bytes: usize,
    ) -> Result<(Self, Value), ProtocolError> {
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| ProtocolError::invalid_params("initialize requires a string `protocolVersion`"))?;
        let client_capabilities = match params.get("capabilities") {
            Some(Value::Object(c)) => c.clone(),
            None => Map::new(),
            Some(_) => return Err(ProtocolError::invalid_params("`capabilities` must be an object")),
        };
        let client_info = match params.get("clientInfo") {
            None => None,
            Some(v) if mcp_protocol::meta::is_implementation(v) => Some(v.clone()),
            Some(_) => return Err(ProtocolError::invalid_params("`clientInfo` must be an Implementation object")),
        };
        // The session keeps these for its whole life: bounded like any stored client input.
        let kept = serialized_len(&client_capabilities) + client_info.as_ref().map_or(0, serialized_len);
        if kept > max_bytes {
            return Err(ProtocolError::invalid_params(format!(
                "`capabilities` and `clientInfo` are {kept} bytes serialized; this server keeps at most {max_bytes}"
            )));
        }
        let negotiated = if version::LEGACY.contains(&requested) { requested } else { version::LEGACY[0] };
        let mut result = Map::new();
        result.insert("protocolVersion".into(), json!(negotiated));
        result.insert(
            "capabilities".into(),
            serde_json::to_value(server.capabilities()).expect("capabilities serialize"),
        );
        result.insert("serverInfo".into(), server.server_info().clone());
        if let Some(i) = &server.inner.config.instructions {
            result.insert("instructions".into(), json!(i));
        }
        let state = Self {
            protocol_version: negotiated.to_owned(),
            client_capabilities,
            client_info,
            log_level: None,
            initialized: false,
            subscriptions: HashSet::new(),
        };
        Ok((state, Value::Object(result)))
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }

    /// The capabilities the client declared in `initialize`.
    pub fn client_capabilities(&self) -> &Map<String, Value> {
        &self.client_capabilities
    }

    /// Whether the client has sent `notifications/initialized`.
    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// The rank of the level set by `logging/setLevel` (see `meta::log_level_rank`), if any.
    pub fn log_level(&self) -> Option<u8> {
        self.log_level
    }

    /// Replaces what the session's requests change (log level, `notifications/initialized`,
    /// resource subscriptions) with the shared store's view.
    pub fn set_shared(&mut self, log_level: Option<u8>, initialized: bool, subscriptions: Vec<String>) {
        self.log_level = log_level;
        self.initialized = initialized;
        self.subscriptions = subscriptions.into_iter().collect();
    }

    /// Checks a state read from outside the process like client input: a legacy version this
    /// server speaks, an `Implementation` as client info, a known log level, bounded sizes.
    pub fn check(&self) -> Result<(), String> {
        if !version::LEGACY.contains(&self.protocol_version.as_str()) {
            return Err(format!("unknown protocol version {:?}", self.protocol_version));
        }
        if self.client_info.as_ref().is_some_and(|i| !mcp_protocol::meta::is_implementation(i)) {
            return Err("clientInfo is not an Implementation".into());
        }
        if self.log_level.is_some_and(|l| l > 7) {
            return Err("unknown log level".into());
        }
        if self.subscriptions.len() > 10_000 || self.subscriptions.iter().any(|s| s.len() > 8192) {
            return Err("too many or too long resource subscriptions".into());
        }
        Ok(())
    }

    /// The resource URIs the session subscribed to.
    pub fn subscribed_uris(&self) -> Vec<String> {
        self.subscriptions.iter().cloned().collect()
    }

    /// The notification a change event means for this session, if any: list changes always,
    /// `notifications/resources/updated` only for subscribed URIs.
    pub fn notification_for(&self, event: &ChangeEvent) -> Option<Value> {
        match event {
            ChangeEvent::ResourceUpdated(uri) if !self.subscriptions.contains(uri) => return None,
            // Tasks are not part of 2025-era sessions.
            ChangeEvent::TaskStatus(_) => return None,
            _ => {}
        }
        let (method, params) = event.notification()?;
        Some(mcp_protocol::jsonrpc::notification(method, params))
    }

    /// The per-request fields a modern request would carry, from the session; the log level
    /// is `default_log_level` (a rank) until the client sends `logging/setLevel`.
    pub(super) fn request_meta(&self, params: &Map<String, Value>, default_log_level: Option<u8>) -> RequestMeta {
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get(PROGRESS_TOKEN))
            .filter(|t| t.is_string() || t.as_i64().is_some() || t.as_u64().is_some())
            .cloned();
        RequestMeta {
            protocol_version: version::known_or_owned(&self.protocol_version),
            client_capabilities: self.client_capabilities.clone(),
            client_info: self.client_info.clone(),
            log_level: self.log_level.or(default_log_level),
            progress_token,
        }
    }

    /// Serves the session-state methods; `None` for a method the handlers serve.
    fn handle_own(&mut self, req: &Request) -> Option<Result<Value, ProtocolError>> {
        let params = &req.params;
        Some(match req.method.as_str() {
            names::PING => Ok(json!({})),
            names::SET_LEVEL => (|| {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ProtocolError::invalid_params("logging/setLevel requires a string `level`"))?;
                let rank = log_level_rank(level)
                    .ok_or_else(|| ProtocolError::invalid_params(format!("invalid log level {level:?}")))?;
                self.log_level = Some(rank);
                Ok(json!({}))
            })(),
            names::SUBSCRIBE | names::UNSUBSCRIBE => match params.get("uri").and_then(Value::as_str) {
                None => Err(ProtocolError::invalid_params(format!("{} requires a string `uri`", req.method))),
                Some(uri) if uri.len() > MAX_SUBSCRIBED_URI => Err(ProtocolError::invalid_params(format!(
                    "the URI is {} bytes long; this server accepts at most {MAX_SUBSCRIBED_URI}",
                    uri.len()
                ))),
                Some(_)
                    if req.method == names::SUBSCRIBE
                        && self.subscriptions.len() >= MAX_SUBSCRIPTIONS
                        && !self.subscriptions.contains(params["uri"].as_str().unwrap_or_default()) =>
                {
                    Err(ProtocolError::invalid_params(format!(
                        "this session is subscribed to {MAX_SUBSCRIPTIONS} resources already (the most it may be)"
                    )))
                }
                Some(uri) => {
                    if req.method == names::SUBSCRIBE {
                        self.subscriptions.insert(uri.to_owned());
                    } else {
                        self.subscriptions.remove(uri);
                    }
                    Ok(json!({}))
                }
            },
            // Modern-only methods do not exist in a legacy session.
            m if m == Method::Discover.as_str() || m == Method::SubscriptionsListen.as_str() => {
                Err(method_not_found(&req.method))
            }
            _ => return None,
        })
    }
}

/// The length of `v` serialized as JSON, counted without building the text.
fn serialized_len(v: &(impl serde::Serialize + ?Sized)) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// A JSON-RPC response with the result as it is (no `resultType`, no `serverInfo`).
pub(super) fn encode_plain(id: &Value, outcome: &Result<Value, ProtocolError>) -> Vec<u8> {
    let message = match outcome {
        Ok(v) => mcp_protocol::jsonrpc::result_response(id, v.clone()),
        Err(e) => e.to_response(Some(id)),
    };
    serde_json::to_vec(&message).expect("JSON serializes")
}

/// A legacy call in flight: its id and its MRTR-to-legacy bridge.
#[derive(Debug)]
pub(super) struct LegacyCall {
    pub(super) id: Value,
    pub(super) bridge: Bridge,
}

/// A session that also serves legacy clients: it wraps the modern [`Session`], opens the legacy
/// session on a legacy `initialize`, serves the requests without modern `_meta` in it, and
/// hands every other message to the modern core. Same methods as [`Session`].
pub struct LegacySession {
    pub(super) modern: Session,
    pub(super) state: Option<LegacyState>,
    /// The legacy calls in flight (tracked from the start: their questions need them).
    pub(super) calls: HashMap<RequestId, LegacyCall, Seeded>,
    /// The questions the MRTR-to-legacy bridge asked and waits on.
    pub(super) outbound: Outbound<Asked>,
}

impl std::fmt::Debug for LegacySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySession")
            .field("legacy", &self.state)
            .field("calls", &self.calls.len())
            .field("asked", &self.outbound.len())
            .field("modern", &self.modern)
            .finish()
    }
}

impl LegacySession {
    /// A session of `server` with nothing negotiated yet.
    pub fn new(server: Server, config: SessionConfig) -> Self {
        let outbound = Outbound::new(config.outbound_prefix.clone());
        let calls = HashMap::with_hasher(Seeded::with_seed(config.seed.rotate_left(17)));
        Self { modern: Session::new(server, config), state: None, calls, outbound }
    }

    /// A session that continues a legacy session opened elsewhere (another process sharing
    /// the session store), with the state it negotiated.
    pub fn restore(server: Server, config: SessionConfig, state: LegacyState) -> Self {
        let mut s = Self::new(server, config);
        s.state = Some(state);
        s
    }

    /// The server this session serves.
    pub fn server(&self) -> &Server {
        self.modern.server()
    }

    /// The session's limits.
    pub fn config(&self) -> &SessionConfig {
        self.modern.config()
    }

    /// The legacy session opened by `initialize`, if any.
    pub fn legacy(&self) -> Option<&LegacyState> {
        self.state.as_ref()
    }

    /// The legacy session's state, to update it from a shared store.
    pub fn legacy_mut(&mut self) -> Option<&mut LegacyState> {
        self.state.as_mut()
    }

    /// The next thing the transport should do, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.modern.poll_event()
    }

    /// How many calls are in flight (served, or waiting for the client's input).
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len() + self.modern.calls_in_flight()
    }

    /// Whether the call `key` is tracked in flight.
    pub fn is_in_flight(&self, key: &RequestId) -> bool {
        self.calls.contains_key(key) || self.modern.is_in_flight(key)
    }

    /// Takes one message from the client as bytes: a request, a notification, or (in a legacy
    /// session) the answer to a server-to-client request.
    pub fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        match parse_incoming(bytes, self.modern.config.max_depth) {
            Ok(Incoming::Request(req)) => self.handle_request(req, None, now),
            Ok(Incoming::Notification(n)) => self.handle_notification(n, now),
            Err(rejected) => self.handle_rejected_bytes(bytes, rejected, now),
        }
    }

    /// Input that is no request or notification: in a legacy session, maybe the answer to one
    /// of its questions; otherwise answered with its error.
    fn handle_rejected_bytes(&mut self, bytes: &[u8], rejected: Rejected, now: Instant) {
        if self.state.is_some() {
            if let Ok(Value::Object(msg)) = serde_json::from_slice::<Value>(bytes) {
                if self.handle_response(&msg, now) {
                    return;
                }
            }
        }
        self.modern.handle_rejected(rejected, now);
    }

    /// Takes one request from the client, authenticated as `principal` (if the transport did):
    /// the legacy session's questions are bound to it.
    pub fn handle_request(&mut self, req: Request, principal: Option<String>, now: Instant) {
        let modern = is_modern_request(&req.params);
        if !modern && req.method == names::INITIALIZE {
            return self.initialize(req);
        }
        if !modern && self.state.is_some() {
            return self.legacy_request(req, principal);
        }
        if self.calls.contains_key(&key_of(&req.id)) {
            return self.modern.transmit_error(&req.id, &super::id_in_use(&req.id));
        }
        self.modern.handle_request(req, principal, now);
    }

    /// Takes one notification from the client: `notifications/cancelled` cancels its call;
    /// `notifications/initialized` completes a legacy handshake.
    pub fn handle_notification(&mut self, n: Notification, now: Instant) {
        if n.method == names::INITIALIZED {
            if let Some(l) = &mut self.state {
                l.initialized = true;
            }
            return;
        }
        if n.method == names::CANCELLED {
            if let Some(id) = n.params.get("requestId") {
                self.cancel(id, now);
            }
        }
    }

    /// Cancels the call `id`, if it is in flight: its handler stops, nothing is sent for it.
    pub fn cancel(&mut self, id: &Value, now: Instant) {
        let key = key_of(id);
        match self.calls.remove(&key) {
            Some(call) => {
                self.forget_asked(&call.bridge);
                self.modern.push(Event::Cancel(key));
                self.modern.push(Event::Finished(call.id));
            }
            None => self.modern.cancel(id, now),
        }
    }

    /// A dispatched call did not finish at once (see [`Session::handle_pending`]). Legacy
    /// calls are tracked from the start.
    pub fn handle_pending(&mut self, key: &RequestId, id: &Value, now: Instant) {
        if !self.calls.contains_key(key) {
            self.modern.handle_pending(key, id, now);
        }
    }

    /// Takes a handler's result for the call `id`: the response goes out (encoded for the
    /// call's era), or, for a legacy call that needs client input, the input requests go to the
    /// client.
    pub fn handle_outcome(&mut self, id: &Value, result: Result<crate::Reply, ProtocolError>, now: Instant) {
        if !self.calls.is_empty() {
            let key = key_of(id);
            if self.calls.contains_key(&key) {
                return self.legacy_outcome(key, result.map(crate::Reply::into_value), now);
            }
        }
        self.modern.handle_outcome(id, result, now);
    }

    /// A listen stream opened from [`Event::Listen`] ended.
    pub fn handle_stream_end(&mut self, key: &RequestId, now: Instant) {
        self.modern.handle_stream_end(key, now);
    }

    /// When [`LegacySession::handle_timeout`] should next be called: the earliest deadline of
    /// the questions waiting for the client.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.outbound.poll_timeout()
    }

    /// Fails every call whose client input is overdue at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.expire_questions(now);
    }

    /// The client can no longer answer (its input ended): calls waiting for its answers fail,
    /// calls still running go on (their responses may still reach it).
    pub fn handle_peer_gone(&mut self, _now: Instant) {
        self.drop_questions();
    }

    /// The session ends (the client went away, or it was deleted): every call is cancelled,
    /// nothing waits for the client any more.
    pub fn close(&mut self, now: Instant) {
        let calls: Vec<_> = self.calls.drain().collect();
        for (key, call) in calls {
            self.modern.push(Event::Cancel(key));
            self.modern.push(Event::Finished(call.id));
        }
        self.outbound.close();
        self.modern.close(now);
    }

    /// A legacy client's `initialize`: opens the legacy session (once).
    fn initialize(&mut self, req: Request) {
        if self.state.is_some() {
            let e = ProtocolError::InvalidRequest("the session is already initialized".into());
            return self.modern.transmit_error(&req.id, &e);
        }
        let config = &self.modern.config;
        if !config.accept_legacy {
            let versions = mcp_protocol::version::MODERN.join(", ");
            let e = ProtocolError::MethodNotFound {
                method: req.method.clone(),
                detail: Some(format!("initialize (legacy sessions are off; supported versions: {versions})")),
            };
            return self.modern.transmit_error(&req.id, &e);
        }
        match LegacyState::initialize(self.modern.server(), &req.params, config.max_client_params_bytes) {
            Ok((state, result)) => {
                self.state = Some(state);
                let message = encode_plain(&req.id, &Ok(result));
                self.modern.push(Event::Transmit(Transmit { call: Some(req.id), message, error: None }));
                self.modern.push(Event::LegacyOpened);
            }
            Err(e) => self.modern.transmit_error(&req.id, &e),
        }
    }

    /// A request of the legacy session (no modern `_meta`).
    fn legacy_request(&mut self, req: Request, principal: Option<String>) {
        let legacy = self.state.as_mut().expect("a legacy session");
        if let Some(result) = legacy.handle_own(&req) {
            let message = encode_plain(&req.id, &result);
            self.modern.push(Event::Transmit(Transmit { call: Some(req.id.clone()), message, error: None }));
            return self.modern.push(Event::Finished(req.id));
        }
        let key = key_of(&req.id);
        if self.is_in_flight(&key) {
            return self.modern.transmit_error(&req.id, &super::id_in_use(&req.id));
        }
        let call = LegacyCall { id: req.id.clone(), bridge: Bridge::new(req.clone(), principal) };
        self.calls.insert(key.clone(), call);
        self.serve_legacy(key, req, None);
    }

    /// Queues one round of a legacy call, with `state` carried from the previous round.
    pub(super) fn serve_legacy(&mut self, key: RequestId, request: Request, state: Option<crate::server::RoundState>) {
        let default_level = self.modern.server().inner.config.legacy_log_level;
        let meta = self.state.as_ref().expect("a legacy session").request_meta(&request.params, default_level);
        let preset = Some(Box::new(Preset { meta, state }));
        self.modern.push(Event::Dispatch(Dispatch { key, request, era: Era::Legacy, preset }));
    }
}
