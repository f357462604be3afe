//! The MRTR-to-legacy bridge: a legacy client cannot retry a request with `inputResponses`, so
//! when a handler answers `input_required` the session asks the client itself, one
//! server-to-client request per input request, and runs the handler again with the answers,
//! exactly as a modern client's retry would. The round's state never leaves the server: it is
//! kept here between rounds, however long the user takes to answer (each question has the
//! answer timeout as its deadline).

use super::legacy::LegacySession;
use super::{Event, Transmit};
use crate::context::RequestEnv;
use mcp_protocol::outbound::Matched;
use mcp_protocol::types::RequestId;
use mcp_protocol::{ProtocolError, Request};
use serde_json::{Map, Value};

/// One question asked on behalf of a call: the call's key and the input request's key.
#[derive(Debug)]
pub(super) struct Asked {
    pub(super) call: RequestId,
    input: String,
}

/// The bridge state of one legacy call.
#[derive(Debug)]
pub(super) struct Bridge {
    /// The request as the client sent it; each round adds that round's `inputResponses`.
    request: Request,
    principal: Option<String>,
    rounds: usize,
    /// The state the last round carried to the next (with the keys it asked).
    state: Option<crate::server::RoundState>,
    /// Questions of this round still unanswered (outbound ids).
    asked: Vec<RequestId>,
    responses: Map<String, Value>,
}

impl Bridge {
    pub(super) fn new(request: Request, principal: Option<String>) -> Self {
        Self { request, principal, rounds: 0, state: None, asked: Vec::new(), responses: Map::new() }
    }
}

/// Drops what only modern results carry: `resultType` and the caching hints.
fn strip_modern_fields(result: &mut Value) {
    if let Value::Object(o) = result {
        o.remove("resultType");
        o.remove("ttlMs");
        o.remove("cacheScope");
    }
}

impl LegacySession {
    /// A legacy call's round ended: answer the client, or ask it for the input the handler needs.
    pub(super) fn legacy_outcome(
        &mut self,
        key: RequestId,
        result: Result<Value, ProtocolError>,
        now: std::time::Instant,
    ) {
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
        let server = self.modern.server().clone();
        let Some(call) = self.calls.get_mut(&key) else { return };
        let bridge = &mut call.bridge;
        bridge.rounds += 1;
        if bridge.rounds > max_rounds {
            let e = ProtocolError::Internal(format!("the handler asked for client input more than {max_rounds} times"));
            return self.fail_call(&key, e);
        }
        if let Some(sealed) = result.get_mut("requestState").map(Value::take) {
            let mut probe = bridge.request.clone();
            probe.params.insert("requestState".into(), sealed);
            let env = RequestEnv { principal: bridge.principal.clone(), ..RequestEnv::default() };
            // 0: the state never left the server, so its expiry does not apply.
            match server.open_state_at(&probe, &env, Some(0)) {
                Ok(state) => bridge.state = Some(state),
                Err(e) => return self.fail_call(&key, e),
            }
        }
        let requests = match result.get_mut("inputRequests").map(Value::take) {
            Some(Value::Object(r)) if !r.is_empty() => r,
            _ => return self.fail_call(&key, ProtocolError::Internal("input_required without input requests".into())),
        };
        let id = call.id.clone();
        bridge.responses.clear();
        let mut messages = Vec::with_capacity(requests.len());
        for (input, request) in requests {
            let Some(method) = request.get("method").and_then(Value::as_str) else {
                let e = ProtocolError::Internal(format!("input request {input} has no method"));
                return self.fail_call(&key, e);
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
                Err(_) => return self.fail_call(&key, ProtocolError::Internal("the client is gone".into())),
            }
        }
        for m in messages {
            self.modern.push(Event::Transmit(Transmit {
                call: Some(id.clone()),
                message: super::encode(&m),
                error: None,
            }));
        }
    }

    /// Takes a JSON-RPC response from the client: the answer to one of the session's questions.
    /// Returns false when `msg` is not a response (a response to nothing is dropped).
    pub fn handle_response(&mut self, msg: &Map<String, Value>, _now: std::time::Instant) -> bool {
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
    pub(super) fn answer_timeout(&self) -> std::time::Duration {
        self.modern.config.answer_timeout.unwrap_or(self.modern.server().inner.config.request_timeout)
    }

    /// Fails every call with a question overdue at `now`.
    pub(super) fn expire_questions(&mut self, now: std::time::Instant) {
        for (_, asked) in self.outbound.handle_timeout(now) {
            let limit = self.answer_timeout();
            let e = ProtocolError::Internal(format!("the client did not answer within {} s", limit.as_secs()));
            self.fail_call(&asked.call, e);
        }
    }

    /// Nothing can answer any more: every call waiting for an answer fails.
    pub(super) fn drop_questions(&mut self) {
        for asked in self.outbound.close() {
            self.fail_call(&asked.call, ProtocolError::Internal("the client is gone".into()));
        }
    }

    /// Ends a call with an error: its open questions are forgotten.
    pub(super) fn fail_call(&mut self, key: &RequestId, e: ProtocolError) {
        self.finish_call(key, Err(e));
    }

    /// Ends a legacy call with this response.
    fn finish_call(&mut self, key: &RequestId, result: Result<Value, ProtocolError>) {
        let Some(call) = self.calls.remove(key) else { return };
        self.forget_asked(&call.bridge);
        let message = super::legacy::encode_plain(&call.id, &result);
        self.modern.push(Event::Transmit(Transmit { call: Some(call.id.clone()), message, error: None }));
        self.modern.push(Event::Finished(call.id));
    }

    /// Stops waiting for the answers of a call's open questions (late answers are dropped).
    pub(super) fn forget_asked(&mut self, bridge: &Bridge) {
        for oid in &bridge.asked {
            self.outbound.forget(oid);
        }
    }
}
