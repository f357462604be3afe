//! Serving legacy (initialize-based, 2025-11-25 and earlier) clients: the dual-era server.
//!
//! An `initialize` request opens a [`LegacySession`] (one per stdio process, one per
//! `Mcp-Session-Id` on HTTP). The session remembers what the handshake negotiated (version,
//! client capabilities, client info) plus the legacy session state (`logging/setLevel`,
//! `resources/subscribe`), and serves each later request with the same handlers as modern
//! requests: the per-request fields come from the session instead of `_meta`.
//!
//! Handlers are written once. When one needs client input (`ctx.inputs()`), a modern client gets
//! an `input_required` result; a legacy session instead sends each input request to the client
//! as a server-to-client request through the transport's [`ClientPeer`], then runs the handler
//! again with the answers, exactly as a modern client's retry would.

use crate::context::RequestEnv;
use crate::server::{method_not_found, ChangeEvent, Preset, Server};
use mcp_protocol::meta::{log_level_rank, RequestMeta, PROGRESS_TOKEN};
use mcp_protocol::outbound::{Answer, Matched, Outbound};
use mcp_protocol::types::RequestId;
use mcp_protocol::{version, ProtocolError, Request};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// How many rounds of client input one legacy request may take before it is refused.
const MAX_INPUT_ROUNDS: usize = 16;

/// No `logging/setLevel` yet: log messages are not sent.
const NO_LEVEL: u8 = u8::MAX;

/// Sends requests to the client of a legacy session (elicitation, sampling, roots) and waits for
/// the answers. Transports implement it: stdio writes to stdout and matches responses read from
/// stdin; HTTP sends on the open SSE stream and matches responses POSTed back.
pub trait ClientPeer: Send + Sync {
    /// Sends `method` with `params` to the client; resolves to the response's `result`, or to an
    /// error when the client answered with one or went away.
    fn request(&self, method: &str, params: Value) -> crate::BoxFuture<Result<Value, ProtocolError>>;
}

/// Server-to-client requests waiting for the client's answers: the sans-IO table
/// ([`Outbound`]) behind a lock, with a oneshot channel per waiter. The part of a [`ClientPeer`]
/// every transport shares. Cheap to clone.
#[derive(Clone)]
pub struct PendingRequests {
    table: Arc<Mutex<Outbound<oneshot::Sender<Answer>>>>,
}

impl Default for PendingRequests {
    fn default() -> Self {
        Self { table: Arc::new(Mutex::new(Outbound::new("s"))) }
    }
}

impl std::fmt::Debug for PendingRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRequests").field("waiting", &self.table.lock().map(|t| t.len()).ok()).finish()
    }
}

/// Forgets a waiter when its future is dropped (answered, timed out or cancelled).
struct Forget {
    table: Arc<Mutex<Outbound<oneshot::Sender<Answer>>>>,
    id: RequestId,
}

impl Drop for Forget {
    fn drop(&mut self) {
        self.table.lock().expect("pending lock").forget(&self.id);
    }
}

fn gone() -> ProtocolError {
    ProtocolError::Internal("the client is gone".into())
}

impl PendingRequests {
    /// Starts a request: the JSON-RPC message to send, and the future of its answer. Dropping
    /// the future forgets the request (a late answer is then ignored).
    pub fn start(&self, method: &str, params: Value) -> (Value, crate::BoxFuture<Answer>) {
        let (tx, rx) = oneshot::channel();
        let started = self.table.lock().expect("pending lock").start(method, params.clone(), tx, None);
        let Ok((id, message)) = started else {
            // The session ended: nothing will answer.
            let message = mcp_protocol::jsonrpc::request(&Value::Null, method, params);
            return (message, Box::pin(async { Err(gone()) }));
        };
        let forget = Forget { table: self.table.clone(), id };
        let answer = Box::pin(async move {
            let _forget = forget;
            rx.await.unwrap_or_else(|_| Err(gone()))
        });
        (message, answer)
    }

    /// Hands a JSON-RPC response from the client to the request waiting for it. Returns false
    /// when `msg` is not a response (one nobody waits for is dropped).
    pub fn resolve(&self, msg: &Map<String, Value>) -> bool {
        let matched = self.table.lock().expect("pending lock").handle_response(msg);
        match matched {
            Matched::Answer { token, answer, .. } => {
                let _ = token.send(answer);
                true
            }
            Matched::NotAResponse => false,
            _ => true,
        }
    }

    /// Fails every waiting request and every later one (the client can no longer answer).
    pub fn fail_all(&self) {
        let waiting = self.table.lock().expect("pending lock").close();
        drop(waiting);
    }
}

/// The state of one legacy session. Cheap to clone.
#[derive(Clone)]
pub struct LegacySession {
    inner: Arc<SessionInner>,
}

struct SessionInner {
    server: Server,
    protocol_version: String,
    client_capabilities: Map<String, Value>,
    client_info: Option<Value>,
    log_level: AtomicU8,
    initialized: AtomicBool,
    subscriptions: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for LegacySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySession").field("protocol_version", &self.inner.protocol_version).finish()
    }
}

/// Whether a request carries the modern per-request `_meta` (so is served statelessly even when
/// a legacy session exists on the same connection).
pub fn is_modern_request(params: &Map<String, Value>) -> bool {
    params.get("_meta").and_then(Value::as_object).is_some_and(|m| m.contains_key(mcp_protocol::meta::PROTOCOL_VERSION))
}

impl Server {
    /// Answers a legacy `initialize` request: negotiates the version (the client's if it is a
    /// legacy version we speak, else our newest legacy version, as the legacy handshake says)
    /// and returns the new session with the `InitializeResult`.
    pub fn initialize(&self, params: &Map<String, Value>) -> Result<(LegacySession, Value), ProtocolError> {
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| ProtocolError::invalid_params("initialize requires a string `protocolVersion`"))?;
        let capabilities = match params.get("capabilities") {
            Some(Value::Object(c)) => c.clone(),
            None => Map::new(),
            Some(_) => return Err(ProtocolError::invalid_params("`capabilities` must be an object")),
        };
        let client_info = match params.get("clientInfo") {
            None => None,
            Some(v) if mcp_protocol::meta::is_implementation(v) => Some(v.clone()),
            Some(_) => return Err(ProtocolError::invalid_params("`clientInfo` must be an Implementation object")),
        };
        let negotiated = if version::LEGACY.contains(&requested) { requested } else { version::LEGACY[0] };
        let mut result = Map::new();
        result.insert("protocolVersion".into(), json!(negotiated));
        result.insert("capabilities".into(), self.capabilities());
        result.insert("serverInfo".into(), self.server_info().clone());
        if let Some(i) = &self.inner.config.instructions {
            result.insert("instructions".into(), json!(i));
        }
        let session = LegacySession {
            inner: Arc::new(SessionInner {
                server: self.clone(),
                protocol_version: negotiated.to_owned(),
                client_capabilities: capabilities,
                client_info,
                log_level: AtomicU8::new(NO_LEVEL),
                initialized: AtomicBool::new(false),
                subscriptions: Mutex::default(),
            }),
        };
        Ok((session, Value::Object(result)))
    }
}

impl LegacySession {
    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &str {
        &self.inner.protocol_version
    }

    /// The capabilities the client declared in `initialize`.
    pub fn client_capabilities(&self) -> &Map<String, Value> {
        &self.inner.client_capabilities
    }

    /// Whether the client has sent `notifications/initialized`.
    pub fn is_initialized(&self) -> bool {
        self.inner.initialized.load(Ordering::Relaxed)
    }

    /// Takes a notification from the client (`notifications/initialized`; others are ignored,
    /// except `notifications/cancelled`, which transports handle).
    pub fn notification(&self, method: &str) {
        if method == "notifications/initialized" {
            self.inner.initialized.store(true, Ordering::Relaxed);
        }
    }

    /// Serves one request of this session. `peer` carries server-to-client requests; without
    /// one, a handler that needs client input fails with `-32603`.
    pub async fn handle(
        &self,
        req: Request,
        env: RequestEnv,
        peer: Option<Arc<dyn ClientPeer>>,
    ) -> Result<Value, ProtocolError> {
        let params = &req.params;
        match req.method.as_str() {
            "ping" => return Ok(json!({})),
            "initialize" => return Err(ProtocolError::InvalidRequest("the session is already initialized".into())),
            "logging/setLevel" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ProtocolError::invalid_params("logging/setLevel requires a string `level`"))?;
                let rank = log_level_rank(level)
                    .ok_or_else(|| ProtocolError::invalid_params(format!("invalid log level {level:?}")))?;
                self.inner.log_level.store(rank, Ordering::Relaxed);
                return Ok(json!({}));
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ProtocolError::invalid_params(format!("{} requires a string `uri`", req.method)))?;
                let mut subs = self.inner.subscriptions.lock().expect("subscriptions lock");
                if req.method == "resources/subscribe" {
                    subs.insert(uri.to_owned());
                } else {
                    subs.remove(uri);
                }
                return Ok(json!({}));
            }
            // Modern-only methods do not exist in a legacy session.
            "server/discover" | "subscriptions/listen" => return Err(method_not_found(&req.method)),
            _ => {}
        }
        let server = &self.inner.server;
        let mut req = req;
        let mut state = None;
        for _ in 0..MAX_INPUT_ROUNDS {
            let preset = Preset { meta: self.request_meta(&req.params), state: state.take() };
            let mut result = server.process_with(req.clone(), env.clone(), Some(Box::new(preset))).await?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                strip_modern_fields(&mut result);
                return Ok(result);
            }
            let peer = peer.as_ref().ok_or_else(|| {
                ProtocolError::Internal("the handler needs client input, which this transport cannot ask for".into())
            })?;
            // The state never leaves the server: keep it in memory for the next round, however
            // long the user takes to answer (its expiry is for state a client carries).
            if let Some(sealed) = result.get_mut("requestState").map(Value::take) {
                let mut probe = req.clone();
                probe.params.insert("requestState".into(), sealed);
                state = Some(server.open_state_at(&probe, &env, 0)?);
            }
            let limit = server.inner.config.request_timeout;
            let responses =
                tokio::time::timeout(limit, ask_client(peer.as_ref(), &mut result)).await.map_err(|_| {
                    ProtocolError::Internal(format!("the client did not answer within {} s", limit.as_secs()))
                })??;
            req.params.insert("inputResponses".into(), Value::Object(responses));
        }
        Err(ProtocolError::Internal(format!("the handler asked for client input more than {MAX_INPUT_ROUNDS} times")))
    }

    /// Serializes the JSON-RPC response for an outcome of [`LegacySession::handle`] (legacy
    /// results carry no `resultType` and no `serverInfo`).
    pub fn encode_response(&self, id: &Value, outcome: &Result<Value, ProtocolError>) -> Vec<u8> {
        encode_plain(id, outcome)
    }

    /// The notification a change event means for this session, if any: list changes always,
    /// `notifications/resources/updated` only for subscribed URIs.
    pub fn notification_for(&self, event: &ChangeEvent) -> Option<Value> {
        if let ChangeEvent::ResourceUpdated(uri) = event {
            if !self.inner.subscriptions.lock().expect("subscriptions lock").contains(uri) {
                return None;
            }
        }
        let (method, params) = event.notification();
        Some(mcp_protocol::jsonrpc::notification(method, params))
    }

    /// The resource URIs this session subscribed to.
    pub fn subscribed_uris(&self) -> Vec<String> {
        self.inner.subscriptions.lock().expect("subscriptions lock").iter().cloned().collect()
    }

    /// The per-request fields a modern request would carry, from the session.
    fn request_meta(&self, params: &Map<String, Value>) -> RequestMeta {
        let level = self.inner.log_level.load(Ordering::Relaxed);
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get(PROGRESS_TOKEN))
            .filter(|t| t.is_string() || t.as_i64().is_some() || t.as_u64().is_some())
            .cloned();
        RequestMeta {
            protocol_version: self.inner.protocol_version.clone(),
            client_capabilities: self.inner.client_capabilities.clone(),
            client_info: self.inner.client_info.clone(),
            log_level: (level != NO_LEVEL).then_some(level),
            progress_token,
        }
    }
}

/// Sends every input request of an `input_required` result to the client; returns the answers
/// keyed like the requests.
async fn ask_client(peer: &dyn ClientPeer, result: &mut Value) -> Result<Map<String, Value>, ProtocolError> {
    let requests = match result.get_mut("inputRequests").map(Value::take) {
        Some(Value::Object(r)) => r,
        _ => Map::new(),
    };
    let mut responses = Map::new();
    for (key, request) in requests {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .ok_or_else(|| ProtocolError::Internal(format!("input request {key} has no method")))?;
        let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
        let answer = peer.request(method, params).await?;
        responses.insert(key, answer);
    }
    Ok(responses)
}

/// A JSON-RPC response with the result as it is.
pub(crate) fn encode_plain(id: &Value, outcome: &Result<Value, ProtocolError>) -> Vec<u8> {
    let message = match outcome {
        Ok(v) => mcp_protocol::jsonrpc::result_response(id, v.clone()),
        Err(e) => e.to_response(Some(id)),
    };
    serde_json::to_vec(&message).expect("JSON serializes")
}

/// Drops what only modern results carry: `resultType` and the caching hints.
fn strip_modern_fields(result: &mut Value) {
    if let Value::Object(o) = result {
        o.remove("resultType");
        o.remove("ttlMs");
        o.remove("cacheScope");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(id: &Value, result: Value) -> Map<String, Value> {
        mcp_protocol::jsonrpc::result_response(id, result).as_object().cloned().unwrap()
    }

    #[tokio::test]
    async fn answers_reach_their_request_and_dropped_requests_are_forgotten() {
        let pending = PendingRequests::default();
        let (msg, answer) = pending.start("roots/list", json!({}));
        assert_eq!((msg["method"].as_str(), msg["jsonrpc"].as_str()), (Some("roots/list"), Some("2.0")));
        assert!(pending.resolve(&ok(&msg["id"], json!({"roots": []}))));
        assert_eq!(answer.await.unwrap(), json!({"roots": []}));

        let (msg, answer) = pending.start("sampling/createMessage", json!({}));
        let refusal =
            ProtocolError::Custom { code: -1, message: "no".into(), data: None }.to_response(Some(&msg["id"]));
        assert!(pending.resolve(refusal.as_object().unwrap()));
        let e = answer.await.unwrap_err();
        assert!(matches!(&e, ProtocolError::Internal(m) if m.contains("no")), "{e:?}");

        // Not a response: a request or a notification.
        assert!(!pending.resolve(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).as_object().unwrap()));
        // A timed-out or cancelled request leaves nothing behind; its late answer is dropped.
        let (msg, answer) = pending.start("elicitation/create", json!({}));
        drop(answer);
        assert!(pending.table.lock().unwrap().is_empty());
        assert!(pending.resolve(&ok(&msg["id"], json!({}))));
        // Ending the session fails whoever still waits, and whoever asks later.
        let (_, answer) = pending.start("roots/list", json!({}));
        pending.fail_all();
        assert!(answer.await.is_err());
        assert!(pending.start("roots/list", json!({})).1.await.is_err());
    }
}
