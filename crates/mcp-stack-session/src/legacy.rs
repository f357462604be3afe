//! [`LegacySession`]: the core of a session that also serves legacy (initialize-based,
//! 2025-11-25 and earlier) clients. Handlers are written once: a legacy request is served by
//! the same handlers as a modern one, with the per-request fields taken from the session
//! ([`LegacyState`]) instead of `_meta`. A legacy call's `input_required` goes through the
//! MRTR-to-legacy bridge (`bridge.rs`): the session asks the client itself and runs the handler
//! again with the answers.

use crate::bridge::{strip_modern_fields, Asked, Bridge};
use crate::call::Call;
use crate::config::SessionConfig;
use crate::event::{Event, SessionCore, Transmit};
use crate::host::Host;
use crate::legacy_state::LegacyState;
use crate::modern::Session;
use crate::routing::{encode, id_in_use, is_modern_request, key_of, Seeded};
use mcp_protocol::jsonrpc::{parse_incoming, Incoming, Notification, Rejected};
use mcp_protocol::method::names;
use mcp_protocol::outbound::{Matched, Outbound};
use mcp_protocol::types::RequestId;
use mcp_protocol::version::Era;
use mcp_protocol::{Cancellation, InputFailure, ProtocolError, Request};
use mcp_server::internal::{Preset, RoundState};
use mcp_server::{Reply, Server};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A JSON-RPC response with the result as it is (no `resultType`, no `serverInfo`).
pub(crate) fn encode_plain(id: &Value, outcome: &Result<Value, ProtocolError>) -> Vec<u8> {
    let message = match outcome {
        Ok(v) => mcp_protocol::jsonrpc::result_response(id, v.clone()),
        Err(e) => e.to_response(Some(id)),
    };
    serde_json::to_vec(&message).expect("JSON serializes")
}

/// A legacy call in flight: its id and its MRTR-to-legacy bridge.
#[derive(Debug)]
struct LegacyCall {
    id: Value,
    bridge: Bridge,
    /// Fires when the call is cancelled (every round runs under it).
    cancel: CancellationToken,
}

/// A session that also serves legacy clients: it wraps the modern [`Session`], opens the legacy
/// session on a legacy `initialize`, serves the requests without modern `_meta` in it, and
/// hands every other message to the modern core. Same methods as [`Session`].
pub struct LegacySession {
    modern: Session,
    state: Option<LegacyState>,
    /// The legacy calls in flight (tracked from the start: their questions need them).
    calls: HashMap<RequestId, LegacyCall, Seeded>,
    /// The questions the MRTR-to-legacy bridge asked and waits on.
    outbound: Outbound<Asked>,
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
        let host: Arc<dyn Host> = Arc::new(server);
        Self { modern: Session::with_host(host, config), state: None, calls, outbound }
    }

    /// A session that continues a legacy session opened elsewhere (another process sharing
    /// the session store), with the state it negotiated.
    pub fn restore(server: Server, config: SessionConfig, state: LegacyState) -> Self {
        let mut s = Self::new(server, config);
        s.state = Some(state);
        s
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

    /// How many calls are in flight (served, or waiting for the client's input).
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len() + self.modern.calls_in_flight()
    }

    /// Whether the call `key` is tracked in flight.
    pub(crate) fn is_in_flight(&self, key: &RequestId) -> bool {
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
            return self.modern.transmit_error(&req.id, &id_in_use(&req.id));
        }
        self.modern.handle_request(req, principal, now);
    }

    /// Takes one notification from the client: `notifications/cancelled` cancels its call;
    /// `notifications/initialized` completes a legacy handshake.
    pub fn handle_notification(&mut self, n: Notification, now: Instant) {
        if n.method == names::INITIALIZED {
            if let Some(l) = &mut self.state {
                l.mark_initialized();
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
                call.cancel.cancel();
                self.modern.push(Event::Finished(call.id));
            }
            None => self.modern.cancel(id, now),
        }
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
        for (_, call) in calls {
            call.cancel.cancel();
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
        match LegacyState::initialize(self.modern.host(), &req.params, config.max_client_params_bytes) {
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
            return self.modern.transmit_error(&req.id, &id_in_use(&req.id));
        }
        let bridge = Bridge::new(req.clone(), principal);
        let call = LegacyCall { id: req.id.clone(), bridge, cancel: CancellationToken::new() };
        self.calls.insert(key.clone(), call);
        self.serve_legacy(key, req, None);
    }

    /// Queues one round of a legacy call, with `state` carried from the previous round.
    fn serve_legacy(&mut self, key: RequestId, request: Request, state: Option<RoundState>) {
        let default_level = self.modern.host().legacy_log_level();
        let meta = self.state.as_ref().expect("a legacy session").request_meta(&request.params, default_level);
        let preset = Some(Box::new(Preset { meta, state }));
        let Some(cancel) = self.calls.get(&key).map(|c| c.cancel.clone()) else { return };
        self.modern.push(Event::Call(Call::new(key, request, Era::Legacy, preset, cancel)));
    }

    // The MRTR-to-legacy bridge: a round that needs client input asks the client.

    /// A legacy call's round ended: answer the client, or ask it for the input the handler needs.
    fn legacy_outcome(&mut self, key: RequestId, result: Result<Value, ProtocolError>, now: Instant) {
        let mut result = match result {
            Ok(v) if v.get("resultType").and_then(Value::as_str) == Some("input_required") => v,
            Ok(mut v) => {
                strip_modern_fields(&mut v);
                return self.finish_call(&key, Ok(v));
            }
            Err(e) => return self.fail_call(&key, e),
        };
        let max_rounds = self.modern.config.max_input_rounds;
        let deadline = now + self.answer_timeout();
        let Some(call) = self.calls.get_mut(&key) else { return };
        let bridge = &mut call.bridge;
        bridge.rounds += 1;
        if bridge.rounds > max_rounds {
            return self.fail_call(&key, ProtocolError::Input(InputFailure::TooManyRounds { max: max_rounds }));
        }
        if let Some(sealed) = result.get_mut("requestState").map(Value::take) {
            let mut probe = bridge.request.clone();
            probe.params.insert("requestState".into(), sealed);
            match self.modern.host().open_round_state(&probe, bridge.principal.clone()) {
                Ok(state) => bridge.state = Some(state),
                Err(e) => return self.fail_call(&key, e),
            }
        }
        let requests = match result.get_mut("inputRequests").map(Value::take) {
            Some(Value::Object(r)) if !r.is_empty() => r,
            _ => return self.fail_call(&key, ProtocolError::Input(InputFailure::NoRequests)),
        };
        let id = call.id.clone();
        bridge.responses.clear();
        let mut messages = Vec::with_capacity(requests.len());
        for (input, request) in requests {
            let Some(method) = request.get("method").and_then(Value::as_str) else {
                return self.fail_call(&key, ProtocolError::Input(InputFailure::NoMethod { key: input }));
            };
            let params = request.get("params").cloned().unwrap_or_else(|| Value::Object(Map::new()));
            let asked = Asked { call: key.clone(), input };
            match self.outbound.start(method, params, asked, Some(deadline)) {
                Ok((oid, message)) => {
                    if let Some(c) = self.calls.get_mut(&key) {
                        c.bridge.asked.push(oid);
                    }
                    messages.push(message);
                }
                Err(_) => return self.fail_call(&key, ProtocolError::Cancelled { reason: Cancellation::PeerGone }),
            }
        }
        for m in messages {
            self.modern.push(Event::Transmit(Transmit { call: Some(id.clone()), message: encode(&m), error: None }));
        }
    }

    /// Takes a JSON-RPC response from the client: the answer to one of the session's questions.
    /// Returns false when `msg` is not a response (a response to nothing is dropped).
    pub fn handle_response(&mut self, msg: &Map<String, Value>, _now: Instant) -> bool {
        let (oid, asked, answer) = match self.outbound.handle_response(msg) {
            Matched::NotAResponse => return false,
            Matched::Answer { id, token, answer } => (id, token, answer),
            _ => return true,
        };
        let Some(call) = self.calls.get_mut(&asked.call) else { return true };
        let bridge = &mut call.bridge;
        bridge.asked.retain(|a| *a != oid);
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                self.fail_call(&asked.call, e);
                return true;
            }
        };
        bridge.responses.insert(asked.input, answer);
        if bridge.asked.is_empty() {
            let mut request = bridge.request.clone();
            request.params.insert("inputResponses".into(), Value::Object(std::mem::take(&mut bridge.responses)));
            let state = bridge.state.take();
            self.serve_legacy(asked.call, request, state);
        }
        true
    }

    /// How long the client has to answer a question.
    fn answer_timeout(&self) -> Duration {
        self.modern.config.answer_timeout.unwrap_or_else(|| self.modern.host().answer_timeout())
    }

    /// Fails every call with a question overdue at `now`.
    fn expire_questions(&mut self, now: Instant) {
        for (_, asked) in self.outbound.handle_timeout(now) {
            let limit = self.answer_timeout();
            self.fail_call(&asked.call, ProtocolError::Input(InputFailure::NoAnswer { limit }));
        }
    }

    /// Nothing can answer any more: every call waiting for an answer fails.
    fn drop_questions(&mut self) {
        for asked in self.outbound.close() {
            self.fail_call(&asked.call, ProtocolError::Cancelled { reason: Cancellation::PeerGone });
        }
    }

    /// Ends a call with an error: its open questions are forgotten.
    fn fail_call(&mut self, key: &RequestId, e: ProtocolError) {
        self.finish_call(key, Err(e));
    }

    /// Ends a legacy call with this response.
    fn finish_call(&mut self, key: &RequestId, result: Result<Value, ProtocolError>) {
        let Some(call) = self.calls.remove(key) else { return };
        self.forget_asked(&call.bridge);
        let message = encode_plain(&call.id, &result);
        self.modern.push(Event::Transmit(Transmit { call: Some(call.id.clone()), message, error: None }));
        self.modern.push(Event::Finished(call.id));
    }

    /// Stops waiting for the answers of a call's open questions (late answers are dropped).
    fn forget_asked(&mut self, bridge: &Bridge) {
        for oid in &bridge.asked {
            self.outbound.forget(oid);
        }
    }
}

impl SessionCore for LegacySession {
    fn poll_event(&mut self) -> Option<Event> {
        self.modern.poll_event()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.outbound.poll_timeout()
    }
    fn handle_timeout(&mut self, now: Instant) {
        self.expire_questions(now);
    }
    fn handle_pending(&mut self, call: &Call, now: Instant) {
        if !self.calls.contains_key(&call.key) {
            self.modern.handle_pending(call, now);
        }
    }
    fn handle_outcome(&mut self, id: &Value, result: Result<Reply, ProtocolError>, now: Instant) {
        if !self.calls.is_empty() {
            let key = key_of(id);
            if self.calls.contains_key(&key) {
                return self.legacy_outcome(key, result.map(Reply::into_value), now);
            }
        }
        self.modern.handle_outcome(id, result, now);
    }
    fn handle_stream_end(&mut self, key: &RequestId, now: Instant) {
        self.modern.handle_stream_end(key, now);
    }
}
