//! The legacy sessions of an endpoint: each one's core ([`LegacySession`], run by a
//! [`Driver`] whose transport routes each event to the POST serving its call), bounded in
//! number (in all and per client) and idle time, and shared with other instances through a
//! [`SessionStore`] when there is one.

use super::store::{SessionEvent, SessionStore, SessionStoreError};
use crate::body::{sse_event, McpBody};
use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Response};
use mcp_protocol::ProtocolError;
use mcp_server::Server;
use mcp_session::{now, Call, Driver, Event, LegacySession, Transport};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The session header of legacy Streamable HTTP.
pub(crate) const SESSION_ID: http::HeaderName = http::HeaderName::from_static("mcp-session-id");

/// What the session core sends the POST serving one call.
pub(crate) enum Delivery {
    /// Run this round of the call.
    Serve(Call),
    /// A message for the call's stream: a server-to-client request, or the response.
    Message(Vec<u8>),
    /// The call is over.
    Finished,
}

/// The POSTs serving calls, by JSON-RPC id: where the core's events for each call go.
pub(crate) type Routes = Arc<Mutex<HashMap<String, mpsc::Sender<Delivery>>>>;

/// A legacy session's transport: each event of its core goes to the POST serving its call.
pub(crate) struct CallRoutes(Routes);

/// A legacy session's core, run for its POSTs.
pub(crate) type Core = Driver<CallRoutes>;

/// Deliveries queued for one call's POST. The POST takes each as it comes (pushing to a
/// resumable stream never waits), so a call reaches this only if its round asks the client
/// more than this many questions at once; at the bound the call is cancelled.
pub(crate) const DELIVERY_CAP: usize = 64;

/// One legacy session: the protocol state lives in its [`LegacySession`] core; this adds what only
/// HTTP has (owner, idle time, resumable streams, the GET stream).
pub(crate) struct HttpSession {
    pub(crate) id: String,
    pub(crate) core: Arc<Core>,
    /// The negotiated version (the `MCP-Protocol-Version` header must match it).
    pub(crate) version: String,
    /// The authenticated subject that opened the session (`None` without authorization).
    pub(crate) owner: Option<String>,
    /// Who the session counts against for the per-client cap: the owner, else the peer's IP
    /// address, else every unidentified client together.
    key: String,
    pub(crate) routes: Routes,
    /// The last request (eviction order: least recently used first).
    last_used: Mutex<Instant>,
    /// The last sign of life, a request or an open stream's keep-alive (idle expiry).
    alive: Mutex<Instant>,
    /// When it was opened (a session not initialized soon after is dropped).
    opened: Instant,
    /// Resumable response streams.
    pub(crate) streams: super::resume::Streams,
    /// Cancelled when the session ends (DELETE or expiry): its streams end.
    pub(crate) ended: CancellationToken,
    /// The open notification stream (GET); a new GET replaces it.
    listener: Mutex<Option<CancellationToken>>,
}

pub(crate) fn route_key(id: &Value) -> String {
    id.to_string()
}

impl Transport for CallRoutes {
    type Core = LegacySession;

    fn handle(&self, core: &Arc<Core>, event: Event) {
        route(&self.0, core, event)
    }
}

/// Carries out one event of a session core: each goes to the POST serving its call.
fn route(routes: &Routes, core: &Arc<Core>, event: Event) {
    let (id, delivery) = match event {
        Event::Call(call) => (call.id().clone(), Delivery::Serve(call)),
        Event::Transmit(t) => match t.call {
            Some(id) => (id, Delivery::Message(t.message)),
            None => return,
        },
        Event::Finished(id) => {
            // When the queue is full, dropping the sender ends the call all the same.
            if let Some(tx) = routes.lock().remove(&route_key(&id)) {
                let _ = tx.try_send(Delivery::Finished);
            }
            return;
        }
        Event::Listen(call) => {
            // A modern listen belongs on a modern request, not in a legacy session.
            let id = call.id().clone();
            let e = ProtocolError::InvalidRequest("subscriptions/listen is not served in a legacy session".into());
            let message = serde_json::to_vec(&e.to_response(Some(&id))).expect("JSON serializes");
            core.end_stream(call.key());
            (id, Delivery::Message(message))
        }
        _ => return,
    };
    let key = route_key(&id);
    let full = match routes.lock().get(&key) {
        Some(tx) => matches!(tx.try_send(delivery), Err(mpsc::error::TrySendError::Full(_))),
        None => false,
    };
    if full {
        // The call's POST stopped taking deliveries: end the call rather than queue more.
        routes.lock().remove(&key);
        tracing::warn!(request = %key, cap = DELIVERY_CAP, "a legacy call's delivery queue is full; the call is cancelled");
        core.run(|s, now| s.cancel(&id, now));
    }
}

impl HttpSession {
    /// Ends the session: every call is cancelled, nothing waits for the client any more, the
    /// notification stream closes.
    fn end(&self) {
        self.core.run(|s, now| s.close(now));
        self.ended.cancel();
    }

    /// Marks the session as alive now (an open stream keeps it from idling out, but does not
    /// count as use: past the cap it is evicted by its last request).
    pub(crate) fn touch(&self) {
        *self.alive.lock() = now();
    }

    /// Marks the session as used by a request now.
    fn used(&self, at: Instant) {
        *self.last_used.lock() = at;
        *self.alive.lock() = at;
    }

    fn last_used(&self) -> Instant {
        *self.last_used.lock()
    }

    /// Whether the session is over at `at`: idle too long, or not initialized in time.
    fn expired(&self, at: Instant, limits: &SessionLimits) -> bool {
        let alive = *self.alive.lock();
        at.saturating_duration_since(alive) >= limits.idle
            || (at.saturating_duration_since(self.opened) >= limits.init_timeout
                && !self.core.inspect(|c| c.legacy().is_some_and(|l| l.is_initialized())))
    }

    /// The session's legacy state now (what a request may change).
    pub(crate) fn snapshot(&self) -> Option<mcp_session::LegacyState> {
        self.core.inspect(|c| c.legacy().cloned())
    }

    /// Replaces the shared fields of this replica with the store's view.
    fn set_shared(&self, log_level: Option<u8>, initialized: bool, subscriptions: Vec<String>) {
        self.core.run(|c, _| {
            if let Some(l) = c.legacy_mut() {
                l.set_shared(log_level, initialized, subscriptions);
            }
        });
    }
}

/// The bounds on legacy sessions (from [`crate::EndpointConfig`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionLimits {
    /// Most sessions here.
    pub(crate) max: usize,
    /// Most sessions of one client (principal, else peer IP).
    pub(crate) per_client: usize,
    /// How long an unused session lives.
    pub(crate) idle: Duration,
    /// How long a session may wait for `notifications/initialized`.
    pub(crate) init_timeout: Duration,
}

/// Whether `id` has the form of the ids this server hands out (32 lowercase hex digits): any
/// other `Mcp-Session-Id` is unknown (404) without a lookup, and never becomes a store key.
pub(crate) fn is_session_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The key a client's sessions are counted under: its principal, else its peer IP address.
pub(crate) fn client_key(owner: Option<&str>, peer: Option<std::net::IpAddr>) -> String {
    match (owner, peer) {
        (Some(o), _) => format!("sub:{o}"),
        (None, Some(ip)) => format!("ip:{ip}"),
        (None, None) => "anonymous".into(),
    }
}

/// Every open session (or, with a shared store, every replica of one), bounded in number (in
/// all and per client) and idle time.
pub(crate) struct Sessions {
    server: Server,
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
    limits: SessionLimits,
    pub(crate) idle: Duration,
    pub(crate) store: Option<Arc<dyn SessionStore>>,
}

impl Sessions {
    pub(crate) fn new(server: Server, limits: SessionLimits, store: Option<Arc<dyn SessionStore>>) -> Arc<Self> {
        let sessions = Arc::new(Self { server, map: Mutex::default(), limits, idle: limits.idle, store });
        if let Some(store) = &sessions.store {
            let weak = Arc::downgrade(&sessions);
            store.attach(Box::new(move |e| {
                if let Some(s) = weak.upgrade() {
                    s.handle_event(e);
                }
            }));
        }
        sessions
    }

    /// How long a new session has to send `notifications/initialized`.
    pub(crate) fn init_timeout(&self) -> Duration {
        self.limits.init_timeout.min(self.limits.idle)
    }

    /// Opens a session around `core` (already initialized) for client `key`. At the client's
    /// cap its least recently used session is ended (with a shared store: everywhere); at the
    /// global cap expired sessions go first, then the least recently used one without a call
    /// in flight (with a shared store only its replica here ends: the store keeps its own cap).
    /// `None` when every session has a call in flight.
    pub(crate) fn open(
        &self,
        core: LegacySession,
        owner: Option<String>,
        key: String,
    ) -> Option<(String, Arc<HttpSession>)> {
        let id = format!("{:032x}", rand::random::<u128>());
        let mut evicted = Vec::new();
        {
            let mut map = self.map.lock();
            let at = now();
            let mine = map.values().filter(|s| s.key == key).count();
            if mine >= self.limits.per_client || map.len() >= self.limits.max {
                self.sweep(&mut map, at, &mut evicted);
            }
            loop {
                let mine: Vec<&Arc<HttpSession>> = map.values().filter(|s| s.key == key).collect();
                if mine.len() < self.limits.per_client.max(1) {
                    break;
                }
                let lru = mine.iter().min_by_key(|s| s.last_used()).map(|s| s.id.clone()).expect("not empty");
                tracing::info!(session = %lru, client = %key, "legacy session evicted: the client's session cap was reached");
                evicted.extend(map.remove(&lru).map(|s| (s, true)));
            }
            if map.len() >= self.limits.max {
                let lru = map
                    .values()
                    .filter(|s| s.core.inspect(|c| c.calls_in_flight()) == 0)
                    .min_by_key(|s| s.last_used())
                    .map(|s| s.id.clone());
                match lru {
                    Some(lru) => {
                        tracing::info!(session = %lru, "legacy session evicted: the session cap was reached");
                        evicted.extend(map.remove(&lru).map(|s| (s, false)));
                    }
                    None => {
                        drop(map);
                        self.end_all(evicted);
                        return None;
                    }
                }
            }
            let s = self.make(id.clone(), core, owner, key);
            map.insert(id.clone(), s.clone());
            drop(map);
            self.end_all(evicted);
            Some((id, s))
        }
    }

    /// Removes the sessions expired at `at` into `out` (a shared store expires its own).
    fn sweep(&self, map: &mut HashMap<String, Arc<HttpSession>>, at: Instant, out: &mut Vec<(Arc<HttpSession>, bool)>) {
        let expired: Vec<String> = map.values().filter(|s| s.expired(at, &self.limits)).map(|s| s.id.clone()).collect();
        out.extend(expired.iter().filter_map(|id| map.remove(id)).map(|s| (s, false)));
    }

    /// Ends sessions taken out of the map (outside its lock); those marked for it are deleted
    /// from a shared store too, so they end everywhere.
    fn end_all(&self, ended: Vec<(Arc<HttpSession>, bool)>) {
        for (s, everywhere) in ended {
            s.end();
            if let Some(store) = self.store.clone().filter(|_| everywhere) {
                tokio::spawn(async move {
                    if let Err(e) = store.delete(&s.id).await {
                        tracing::warn!(session = %s.id, error = %e, "an evicted session was not deleted from the store");
                    }
                });
            }
        }
    }

    /// Adds a replica of a shared session under `id`; `None` when the limit is reached even
    /// after dropping expired and unused ones.
    fn insert(&self, id: String, core: LegacySession, owner: Option<String>) -> Option<Arc<HttpSession>> {
        let mut map = self.map.lock();
        if map.len() >= self.limits.max {
            let at = now();
            let expired: Vec<String> =
                map.values().filter(|s| s.expired(at, &self.limits)).map(|s| s.id.clone()).collect();
            for id in expired {
                if let Some(s) = map.remove(&id) {
                    s.end();
                }
            }
            if map.len() >= self.limits.max && self.store.is_some() {
                // Shared sessions live on in the store: forget the least recently used replica
                // that nothing here uses (no call, no stream); it is loaded again if needed.
                let unused = map
                    .iter()
                    .filter(|(_, s)| Arc::strong_count(s) == 1 && s.core.inspect(|c| c.calls_in_flight()) == 0)
                    .min_by_key(|(_, s)| s.last_used())
                    .map(|(id, _)| id.clone());
                if let Some(id) = unused {
                    map.remove(&id);
                }
            }
            if map.len() >= self.limits.max {
                return None;
            }
        }
        let key = client_key(owner.as_deref(), None);
        let s = self.make(id.clone(), core, owner, key);
        map.insert(id, s.clone());
        Some(s)
    }

    /// A session (or replica) around `core`.
    fn make(&self, id: String, core: LegacySession, owner: Option<String>, key: String) -> Arc<HttpSession> {
        let version = core.legacy().map(|l| l.protocol_version().to_owned()).unwrap_or_default();
        let routes = Routes::default();
        let core = Driver::new(self.server.clone(), core, CallRoutes(routes.clone()));
        let streams = match &self.store {
            Some(store) => super::resume::Streams::mirrored(super::resume::Mirror {
                store: store.clone(),
                session: id.clone(),
                idle: self.idle,
            }),
            None => Default::default(),
        };
        let at = now();
        Arc::new(HttpSession {
            id,
            core,
            version,
            owner,
            key,
            routes,
            last_used: Mutex::new(at),
            alive: Mutex::new(at),
            opened: at,
            streams,
            ended: CancellationToken::new(),
            listener: Mutex::default(),
        })
    }

    /// Forgets the local replica `id` (the session ended elsewhere): its calls are cancelled.
    fn drop_local(&self, id: &str) {
        let removed = self.map.lock().remove(id);
        if let Some(s) = removed {
            s.end();
        }
    }

    fn local(&self, id: &str) -> Option<Arc<HttpSession>> {
        self.map.lock().get(id).cloned()
    }

    /// What the shared store says about sessions.
    fn handle_event(self: &Arc<Self>, e: SessionEvent) {
        match e {
            SessionEvent::Changed { id, log_level, initialized, subscriptions } => {
                if let Some(s) = self.local(&id) {
                    s.set_shared(log_level, initialized, subscriptions);
                }
            }
            SessionEvent::Ended(id) => self.drop_local(&id),
            SessionEvent::Cancelled { id, request } => {
                if let Some(s) = self.local(&id) {
                    s.core.run(|c, now| c.cancel(&request, now));
                }
            }
            SessionEvent::Answer { id, message } => {
                if let Some(s) = self.local(&id) {
                    s.core.run(|c, now| c.handle_response(&message, now));
                }
            }
            SessionEvent::Resync => {
                let ids: Vec<String> = self.map.lock().keys().cloned().collect();
                let me = self.clone();
                tokio::spawn(async move {
                    for id in ids {
                        let _ = me.load(&id, |_| None).await;
                    }
                });
            }
        }
    }

    /// With a shared store: the session `id` as the store has it now, its local replica
    /// refreshed (or made with `make`, from the stored state). `Ok(None)`: unknown or ended.
    pub(crate) async fn load(
        &self,
        id: &str,
        make: impl FnOnce(mcp_session::LegacyState) -> Option<LegacySession>,
    ) -> Result<Option<Arc<HttpSession>>, SessionStoreError> {
        if !is_session_id(id) {
            return Ok(None); // not an id of ours: never a store key
        }
        let store = self.store.as_ref().expect("a shared store");
        let Some(record) = store.load(id, self.idle).await? else {
            self.drop_local(id);
            return Ok(None);
        };
        record.state.check().map_err(|e| SessionStoreError::Unavailable(format!("stored session {id}: {e}")))?;
        let st = &record.state;
        if let Some(s) = self.local(id) {
            if s.owner != record.owner {
                return Err(SessionStoreError::Unavailable(format!("stored session {id} changed owner")));
            }
            s.set_shared(st.log_level(), st.is_initialized(), st.subscribed_uris());
            s.used(now());
            return Ok(Some(s));
        }
        let Some(core) = make(record.state) else { return Ok(None) };
        Ok(self.insert(id.to_owned(), core, record.owner))
    }

    /// The live session `id`, marked as used now.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        if !is_session_id(id) {
            return None;
        }
        let mut map = self.map.lock();
        let s = map.get(id)?.clone();
        let at = now();
        if s.expired(at, &self.limits) {
            map.remove(id);
            drop(map);
            s.end();
            return None;
        }
        s.used(at);
        Some(s)
    }

    /// Ends session `id`; whether it existed. Its calls are cancelled.
    pub(crate) fn close(&self, id: &str) -> bool {
        let removed = self.map.lock().remove(id);
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
pub(crate) fn check_version_header(h: &HeaderMap, session: &HttpSession) -> Result<(), ProtocolError> {
    match h.get(&crate::validate::names::PROTOCOL_VERSION).map(|v| v.to_str().unwrap_or("")) {
        None => Ok(()),
        Some(v) if v == session.version => Ok(()),
        Some(v) => Err(ProtocolError::InvalidRequest(format!(
            "MCP-Protocol-Version {v:?} is not this session's version {}",
            session.version
        ))),
    }
}

/// Whether the `MCP-Protocol-Version` header names a modern version (such a request is served
/// statelessly even if it carries a session id).
pub(crate) fn has_modern_version_header(h: &HeaderMap) -> bool {
    h.get(&crate::validate::names::PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(mcp_protocol::version::is_supported_modern)
}

/// Whether a POST is a legacy client's opening `initialize` (no modern `_meta`, and no modern
/// version in the header).
pub(crate) fn is_legacy_initialize(h: &HeaderMap, req: &mcp_protocol::Request) -> bool {
    req.method == mcp_protocol::method::names::INITIALIZE
        && !mcp_session::is_modern_request(&req.params)
        && !has_modern_version_header(h)
}

/// The session's standalone stream: list changes and subscribed resource updates, with SSE
/// keep-alive comments, until the client disconnects, the session ends or the server stops.
pub(crate) fn session_stream(
    server: &Server,
    sessions: &Sessions,
    session: Arc<HttpSession>,
    keep_alive: Duration,
) -> Response<McpBody> {
    let (store, idle) = (sessions.store.clone(), sessions.idle);
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let shutdown = server.shutdown_token();
    // One notification stream per session: each message goes out once.
    let replaced = CancellationToken::new();
    if let Some(old) = session.listener.lock().replace(replaced.clone()) {
        old.cancel();
    }
    let ended = session.ended.clone();
    let owner = session.owner.as_deref().map(Arc::from);
    let changes = mcp_session::legacy_changes(session.core.clone());
    tokio::spawn(async move {
        let gone = tx.clone();
        let stop = async move {
            tokio::select! {
                _ = gone.closed() => {}
                _ = shutdown.cancelled() => {}
                _ = ended.cancelled() => {}
                _ = replaced.cancelled() => {}
            }
        };
        mcp_session::pump(changes, stop, Some(keep_alive), |item| {
            let (tx, session, store) = (tx.clone(), session.clone(), store.clone());
            async move {
                let event = match item {
                    Some(n) => sse_event(&n),
                    None => {
                        // A quiet stream keeps its session alive.
                        session.touch();
                        if let Some(store) = &store {
                            let _ = store.touch(&session.id, idle).await;
                        }
                        Bytes::from_static(b":\n\n")
                    }
                };
                tx.send(event).await.is_ok()
            }
        })
        .await;
    });
    crate::response::with_stream_owner(crate::response::sse_response(rx), owner)
}

/// Adds the session id header to a response.
pub(crate) fn with_session(mut r: Response<McpBody>, id: &str) -> Response<McpBody> {
    if let Ok(v) = HeaderValue::from_str(id) {
        r.headers_mut().insert(SESSION_ID.clone(), v);
    }
    r.headers_mut().insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("Mcp-Session-Id"));
    r
}
