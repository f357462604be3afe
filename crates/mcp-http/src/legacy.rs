//! Legacy (initialize-based) clients on the same endpoint: Streamable HTTP sessions.
//!
//! A POST of `initialize` without modern `_meta` opens a session and answers with its
//! `Mcp-Session-Id`. Requests carrying that header are served in the session (see
//! [`mcp_server::LegacySession`]); a handler's server-to-client requests (elicitation,
//! sampling, roots) go out on the request's SSE stream and the client POSTs the answers back
//! (202). GET with the header opens the session's stream of list-change and subscribed
//! resource-update notifications; DELETE ends the session. Unknown or ended sessions get 404.

use crate::body::{sse_event, McpBody};
use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Response, StatusCode};
use mcp_protocol::ProtocolError;
use mcp_server::{ClientPeer, LegacySession, NotificationSink, PendingRequests, Server};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The session header of legacy Streamable HTTP.
pub(crate) const SESSION_ID: http::HeaderName = http::HeaderName::from_static("mcp-session-id");

/// One legacy session.
pub(crate) struct HttpSession {
    pub(crate) session: LegacySession,
    /// The authenticated subject that opened the session (`None` without authorization).
    pub(crate) owner: Option<String>,
    /// Server-to-client requests waiting for the client's POSTed answer.
    pending: PendingRequests,
    last_used: Mutex<Instant>,
    /// Requests being served, by JSON-RPC id (for `notifications/cancelled`).
    in_flight: Arc<Mutex<HashMap<String, CancellationToken>>>,
    /// Resumable response streams.
    pub(crate) streams: crate::resume::Streams,
    /// Cancelled when the session ends (DELETE or expiry): its streams end, waits fail.
    ended: CancellationToken,
    /// The open notification stream (GET); a new GET replaces it.
    listener: Mutex<Option<CancellationToken>>,
}

/// Removes a request from its session's in-flight table when dropped.
pub(crate) struct InFlight {
    table: Arc<Mutex<HashMap<String, CancellationToken>>>,
    key: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.table.lock().expect("lock").remove(&self.key);
    }
}

impl HttpSession {
    /// Ends the session: waiting server-to-client requests fail, in-flight requests are
    /// cancelled, the notification stream closes.
    fn end(&self) {
        self.pending.fail_all();
        self.ended.cancel();
        for (_, token) in self.in_flight.lock().expect("lock").drain() {
            token.cancel();
        }
    }

    /// Marks the session as used now (an open stream keeps it alive).
    pub(crate) fn touch(&self) {
        *self.last_used.lock().expect("lock") = Instant::now();
    }

    /// Registers request `id` as in flight with its cancellation token; the entry goes when the
    /// returned guard is dropped.
    pub(crate) fn track(&self, id: &Value, cancel: CancellationToken) -> InFlight {
        let key = id.to_string();
        self.in_flight.lock().expect("lock").insert(key.clone(), cancel);
        InFlight { table: self.in_flight.clone(), key }
    }

    /// `notifications/cancelled`: cancels request `id` if it is still being served.
    pub(crate) fn cancel(&self, id: &Value) {
        if let Some(token) = self.in_flight.lock().expect("lock").remove(&id.to_string()) {
            token.cancel();
        }
    }

    /// A peer that sends this session's server-to-client requests through `sink` (the SSE
    /// stream of the POST being served).
    pub(crate) fn peer(&self, sink: NotificationSink) -> Arc<dyn ClientPeer> {
        Arc::new(StreamPeer { sink, pending: self.pending.clone() })
    }

    /// Hands a JSON-RPC response POSTed by the client to the request waiting for it. Returns
    /// false when the message is not a response.
    pub(crate) fn take_response(&self, msg: &Map<String, Value>) -> bool {
        self.pending.resolve(msg)
    }
}

struct StreamPeer {
    sink: NotificationSink,
    pending: PendingRequests,
}

impl ClientPeer for StreamPeer {
    fn request(&self, method: &str, params: Value) -> mcp_server::BoxFuture<Result<Value, ProtocolError>> {
        let (message, answer) = self.pending.start(method, params);
        self.sink.send(message);
        answer
    }
}

/// Every open session, bounded in number and idle time.
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
    max: usize,
    idle: Duration,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Self { map: Mutex::default(), max, idle }
    }

    /// Opens a session; `None` when the limit is reached even after dropping idle ones.
    pub(crate) fn open(&self, session: LegacySession, owner: Option<String>) -> Option<(String, Arc<HttpSession>)> {
        let mut map = self.map.lock().expect("sessions lock");
        if map.len() >= self.max {
            let idle = self.idle;
            map.retain(|_, s| {
                let live = s.last_used.lock().expect("lock").elapsed() < idle;
                if !live {
                    s.end();
                }
                live
            });
            if map.len() >= self.max {
                return None;
            }
        }
        let id = format!("{:032x}", rand::random::<u128>());
        let s = Arc::new(HttpSession {
            session,
            owner,
            pending: PendingRequests::default(),
            last_used: Mutex::new(Instant::now()),
            in_flight: Arc::default(),
            streams: Default::default(),
            ended: CancellationToken::new(),
            listener: Mutex::default(),
        });
        map.insert(id.clone(), s.clone());
        Some((id, s))
    }

    /// The live session `id`, marked as used now.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let mut map = self.map.lock().expect("sessions lock");
        let s = map.get(id)?.clone();
        let mut last = s.last_used.lock().expect("lock");
        if last.elapsed() >= self.idle {
            drop(last);
            map.remove(id);
            s.end();
            return None;
        }
        *last = Instant::now();
        drop(last);
        Some(s)
    }

    /// Ends session `id`; whether it existed. Waiting server-to-client requests fail.
    pub(crate) fn close(&self, id: &str) -> bool {
        let removed = self.map.lock().expect("sessions lock").remove(id);
        if let Some(s) = &removed {
            s.end();
        }
        removed.is_some()
    }
}

/// The `Mcp-Session-Id` header, if present.
pub(crate) fn session_header(h: &HeaderMap) -> Option<&str> {
    h.get(&SESSION_ID).map(|v| v.to_str().unwrap_or(""))
}

/// A legacy request's `MCP-Protocol-Version` header must be the negotiated version when sent.
pub(crate) fn check_version_header(h: &HeaderMap, session: &LegacySession) -> Result<(), ProtocolError> {
    match h.get(mcp_protocol::headers::PROTOCOL_VERSION).map(|v| v.to_str().unwrap_or("")) {
        None => Ok(()),
        Some(v) if v == session.protocol_version() => Ok(()),
        Some(v) => Err(ProtocolError::InvalidRequest(format!(
            "MCP-Protocol-Version {v:?} is not this session's version {}",
            session.protocol_version()
        ))),
    }
}

/// Whether the `MCP-Protocol-Version` header names a modern version (such a request is served
/// statelessly even if it carries a session id).
pub(crate) fn has_modern_version_header(h: &HeaderMap) -> bool {
    h.get(mcp_protocol::headers::PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(mcp_protocol::version::is_supported_modern)
}

/// Whether a POST is a legacy client's opening `initialize` (no modern `_meta`, and no modern
/// version in the header).
pub(crate) fn is_legacy_initialize(h: &HeaderMap, req: &mcp_protocol::Request) -> bool {
    req.method == "initialize" && !mcp_server::is_modern_request(&req.params) && !has_modern_version_header(h)
}

/// The session's standalone stream: list changes and subscribed resource updates, with SSE
/// keep-alive comments, until the client disconnects, the session ends or the server stops.
pub(crate) fn session_stream(server: &Server, session: Arc<HttpSession>, keep_alive: Duration) -> Response<McpBody> {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let mut feed = server.change_feed();
    let shutdown = server.shutdown_token();
    // One notification stream per session: each message goes out once.
    let replaced = CancellationToken::new();
    if let Some(old) = session.listener.lock().expect("lock").replace(replaced.clone()) {
        old.cancel();
    }
    let ended = session.ended.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive);
        loop {
            tokio::select! {
                changes = feed.next(|| session.session.subscribed_uris()) => {
                    let Some(changes) = changes else { return };
                    for n in changes.iter().filter_map(|e| session.session.notification_for(e)) {
                        if tx.send(sse_event(&n)).await.is_err() { return }
                    }
                }
                _ = tick.tick() => {
                    session.touch();
                    if tx.send(Bytes::from_static(b":\n\n")).await.is_err() { return }
                }
                _ = tx.closed() => return,
                _ = shutdown.cancelled() => return,
                _ = ended.cancelled() => return,
                _ = replaced.cancelled() => return,
            }
        }
    });
    crate::service::sse_response(rx)
}

/// `202 Accepted` with no body (notifications and responses POSTed by the client).
pub(crate) fn accepted() -> Response<McpBody> {
    status_only(StatusCode::ACCEPTED)
}

pub(crate) fn status_only(status: StatusCode) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = status;
    r
}

/// Adds the session id header to a response.
pub(crate) fn with_session(mut r: Response<McpBody>, id: &str) -> Response<McpBody> {
    if let Ok(v) = HeaderValue::from_str(id) {
        r.headers_mut().insert(SESSION_ID.clone(), v);
    }
    r.headers_mut().insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("Mcp-Session-Id"));
    r
}
