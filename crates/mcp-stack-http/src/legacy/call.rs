//! Serving the POSTs of a legacy session: `initialize`, requests, notifications and the client's
//! answers to server-to-client requests, all fed to the session's core; one call's events
//! (its rounds, its server-to-client requests, its response) come back to the POST serving it.

use super::sessions::{
    check_version_header, route_key, session_stream, with_session, Core, Delivery, HttpSession, Sessions,
};
use super::store::{SessionEvent, SessionRecord};
use crate::config::RequestBody;
use crate::endpoint::Endpoint;
use crate::notes::{NoteLimits, NoteQueue};
use crate::response::{
    accepted, bytes_response, error_response, method_not_allowed, sse_response, status_only, with_stream_owner, Resp,
};
use crate::validate::tool_scope_refusal;
use http::{Method, Request, StatusCode};
use mcp_auth::{AuthConfig, Principal};
use mcp_protocol::jsonrpc::{parse_incoming, Incoming};
use mcp_protocol::{Cancellation, ProtocolError};
use mcp_server::RequestEnv;
use mcp_session::{now, Call, Event, LegacySession, SessionConfig, SessionCore};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Cancels the call in the session core if the POST serving it goes away before it streams.
struct CancelOnDrop {
    core: Option<Arc<Core>>,
    id: Value,
}

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.core = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(core) = self.core.take() {
            core.run(|s, now| s.cancel(&self.id, now));
        }
    }
}

/// Starts one round of a call, tracked so that the client can cancel it.
fn start(core: &Arc<Core>, mut call: Call, env: &RequestEnv) -> Call {
    let env = env.with_cancel(call.cancellation().clone());
    core.start(&mut call, env);
    core.track(&mut call);
    call
}

/// The legacy sessions of an endpoint, serving their requests.
pub(crate) struct Legacy<'a> {
    pub(crate) ep: Endpoint<'a>,
    pub(crate) sessions: &'a Arc<Sessions>,
}

impl Legacy<'_> {
    /// Splits a legacy session's POST into its head and a future reading its body within the
    /// size, time and memory limits (413, 408, 503). The bytes stay counted against the body
    /// budget until the returned hold is dropped. (A modern POST's `route` splits the request
    /// before its future is made, and reads the body the same way.)
    fn read_body<B: RequestBody>(
        &self,
        req: Request<B>,
    ) -> (
        http::request::Parts,
        impl std::future::Future<Output = Result<(bytes::Bytes, crate::body_read::Reserved), ProtocolError>> + Send + '_,
    ) {
        let declared = crate::body_read::declared_length(req.body());
        let (parts, body) = req.into_parts();
        (parts, crate::body_read::read_body(body, declared, self.ep.config, self.ep.budget))
    }

    /// The settings of a session core here (with a shared store, its server-to-client request
    /// ids name this instance, so that answers POSTed elsewhere find their way back).
    fn session_config(&self) -> SessionConfig {
        let config = SessionConfig::default()
            .max_depth(self.ep.config.max_depth)
            .accept_legacy(self.ep.config.max_sessions > 0)
            .max_client_params_bytes(self.ep.config.max_initialize_params_bytes);
        match &self.sessions.store {
            Some(store) => config.outbound_prefix(format!("{}-s", store.instance())),
            None => config,
        }
    }

    /// A legacy client's `initialize`: opens a session (owned by `owner`, the authenticated
    /// subject, if any) and answers with its id. With a shared store the session is stored
    /// before the answer goes out, so the next request may land on any instance.
    pub(crate) async fn open_session(
        &self,
        req: mcp_protocol::Request,
        owner: Option<String>,
        peer: Option<std::net::IpAddr>,
    ) -> Resp {
        let mut core = LegacySession::new(self.ep.server.clone(), self.session_config());
        let id = req.id.clone();
        core.handle_request(req, owner.clone(), now());
        let Some(Event::Transmit(answer)) = core.poll_event() else {
            let e = ProtocolError::InvalidResult { message: "initialize produced no answer".into() };
            return error_response(&e, Some(&id));
        };
        let status = answer.error.as_ref().map_or(StatusCode::OK, ProtocolError::http_status);
        let response = bytes_response(status, answer.message);
        let Some(state) = core.legacy() else {
            return response; // refused: the error is the answer
        };
        // What the shared store keeps (nothing to copy without one).
        let record = self.sessions.store.as_ref().map(|_| SessionRecord { owner: owner.clone(), state: state.clone() });
        let key = super::sessions::client_key(owner.as_deref(), peer);
        let Some((sid, _)) = self.sessions.open(core, owner, key) else {
            let e = ProtocolError::unavailable("sessions", "too many open sessions; try again later");
            return error_response(&e, Some(&id));
        };
        if let (Some(store), Some(record)) = (&self.sessions.store, record) {
            // Until `notifications/initialized` the stored session lives only the short time.
            if let Err(e) = store.create(&sid, &record, self.sessions.init_timeout()).await {
                self.sessions.close(&sid);
                return error_response(&super::store::store_failure(&e), Some(&id));
            }
        }
        with_session(response, &sid)
    }

    /// The session `sid` (from the shared store when there is one), if `subject` owns it.
    async fn find_session(&self, sid: &str, subject: Option<&str>) -> Result<Option<Arc<HttpSession>>, Resp> {
        let found = match &self.sessions.store {
            None => self.sessions.get(sid),
            Some(_) => {
                let make = |state| Some(LegacySession::restore(self.ep.server.clone(), self.session_config(), state));
                match self.sessions.load(sid, make).await {
                    Ok(s) => s,
                    Err(e) => return Err(error_response(&super::store::store_failure(&e), None)),
                }
            }
        };
        Ok(found.filter(|s| s.owner.as_deref() == subject))
    }

    /// Writes what `f` changed in the session to the shared store (before the request is
    /// answered), and returns what `f` returned.
    async fn persisting<R>(&self, s: &HttpSession, f: impl FnOnce() -> R) -> Result<R, ProtocolError> {
        let Some(store) = &self.sessions.store else { return Ok(f()) };
        let before = s.snapshot();
        let r = f();
        if let (Some(before), Some(after)) = (before, s.snapshot()) {
            for change in super::store::changes(&before, &after) {
                store.change(&s.id, change, self.sessions.idle).await.map_err(|e| super::store::store_failure(&e))?;
            }
        }
        Ok(r)
    }

    /// A request carrying `Mcp-Session-Id`: served in that legacy session. A session belongs to
    /// the subject that opened it: to anyone else it does not exist (404).
    pub(crate) async fn session_call<B: RequestBody>(
        &self,
        req: Request<B>,
        sid: &str,
        auth: Option<&AuthConfig>,
        (principal, peer): (Option<Principal>, Option<std::net::SocketAddr>),
    ) -> Resp {
        let subject = principal.as_ref().map(|p| p.subject.as_str());
        let s = match self.find_session(sid, subject).await {
            Ok(Some(s)) => s,
            Ok(None) => return error_response(&ProtocolError::SessionNotFound, None),
            Err(r) => return r,
        };
        let store = self.sessions.store.clone();
        match *req.method() {
            Method::DELETE => {
                self.sessions.close(sid);
                if let Some(store) = &store {
                    if let Err(e) = store.delete(sid).await {
                        return error_response(&super::store::store_failure(&e), None);
                    }
                }
                return status_only(StatusCode::OK);
            }
            Method::GET => {
                let Some(last) = req.headers().get("last-event-id") else {
                    return session_stream(self.ep.server, self.sessions, s, self.ep.config.keep_alive);
                };
                let last = last.to_str().unwrap_or("");
                // An unknown stream is 400, not 404: 404 would tell the client the session ended.
                let resumed = match (&store, s.streams.has(last)) {
                    (Some(store), false) => {
                        super::resume::resume_shared(store.clone(), sid.to_owned(), last, s.ended.clone()).await
                    }
                    _ => s.streams.resume(last),
                };
                return match resumed {
                    // A resumed GET stream counts as a listen stream (per peer address).
                    Some(rx) => with_session(with_stream_owner(sse_response(rx), None), sid),
                    None => status_only(StatusCode::BAD_REQUEST),
                };
            }
            Method::POST => {}
            _ => return method_not_allowed("GET, POST, DELETE"),
        }
        let (parts, read) = self.read_body(req);
        let (bytes, _held) = match read.await {
            Ok(x) => x,
            Err(e) => return error_response(&e, None),
        };
        if let Err(e) = check_version_header(&parts.headers, &s) {
            return error_response(&e, None);
        }
        let req = match parse_incoming(&bytes, self.ep.config.max_depth) {
            Ok(Incoming::Request(r)) => r,
            Ok(Incoming::Notification(n)) => {
                // A cancellation may be for a call another instance serves: tell them all.
                let cancelled =
                    (n.method == mcp_protocol::method::names::CANCELLED).then(|| n.params.get("requestId").cloned());
                if let Err(e) = self.persisting(&s, || s.core.run(|c, now| c.handle_notification(n, now))).await {
                    return error_response(&e, None);
                }
                if let (Some(store), Some(Some(request))) = (&store, cancelled) {
                    let _ = store.broadcast(SessionEvent::Cancelled { id: sid.to_owned(), request }).await;
                }
                return accepted();
            }
            Err(rej) => {
                // The client's answer to one of our requests (or another instance's).
                if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(&bytes) {
                    if let Some(r) = self.forward_answer(&s, &m).await {
                        return r;
                    }
                    if s.core.run(|c, now| c.handle_response(&m, now)) {
                        return accepted();
                    }
                }
                return error_response(&rej.error, rej.id.as_ref());
            }
        };
        if let Some(refusal) = tool_scope_refusal(auth, principal.as_ref(), &req) {
            return refusal;
        }
        let id = req.id.clone();
        let (tx, rx) = mpsc::channel(super::sessions::DELIVERY_CAP);
        {
            let mut routes = s.routes.lock();
            if routes.contains_key(&route_key(&id)) {
                drop(routes);
                return error_response(&mcp_session::id_in_use(&id), Some(&id));
            }
            routes.insert(route_key(&id), tx);
        }
        let scopes: Arc<[String]> = principal.as_ref().map_or_else(Arc::default, |p| p.scopes.clone().into());
        let subject = principal.map(|p| p.subject);
        let sub = subject.clone();
        if let Err(e) = self.persisting(&s, || s.core.run(|c, now| c.handle_request(req, sub, now))).await {
            s.routes.lock().remove(&route_key(&id));
            return error_response(&e, Some(&id));
        }
        // The session core cancels legacy calls; the queue's token only tells the handler.
        let (note_rx, sink) = NoteQueue::new(NoteLimits::of(self.ep.config), CancellationToken::new());
        let close = CancellationToken::new();
        let env = RequestEnv {
            principal: subject,
            scopes,
            peer,
            sink: Some(sink),
            close_stream: Some(close.clone()),
            http: Some(Arc::new(parts)),
            ..RequestEnv::default()
        };
        with_session(self.respond_legacy(s, id, rx, note_rx, env, close).await, sid)
    }

    /// With a shared store, an answer to a question another instance asked goes to it (202).
    async fn forward_answer(&self, s: &HttpSession, m: &serde_json::Map<String, Value>) -> Option<Resp> {
        let store = self.sessions.store.as_ref()?;
        if !m.contains_key("result") && !m.contains_key("error") {
            return None;
        }
        let asker = super::store::asking_instance(m.get("id")?)?;
        if asker == store.instance() {
            return None;
        }
        let event = SessionEvent::Answer { id: s.id.clone(), message: m.clone() };
        Some(match store.send_to(asker, event).await {
            Ok(()) => accepted(),
            Err(e) => error_response(&super::store::store_failure(&e), None),
        })
    }

    /// Serves one legacy call from the core's deliveries: one JSON response if it finishes
    /// without anything else to send (the rule of both eras, `NoteQueue::answer_alone`), else a
    /// resumable SSE stream (see `resume.rs`) of its
    /// notifications, server-to-client requests and response. Once streaming, a disconnect does
    /// not cancel the call (the client may resume); `notifications/cancelled` does.
    async fn respond_legacy(
        &self,
        s: Arc<HttpSession>,
        id: Value,
        rx: mpsc::Receiver<Delivery>,
        note_rx: NoteQueue,
        env: RequestEnv,
        close: CancellationToken,
    ) -> Resp {
        let mut guard = CancelOnDrop { core: Some(s.core.clone()), id: id.clone() };
        let mut call = LiveCall { core: s.core.clone(), id: id.clone(), rx, note_rx, env, round: None };
        // What was already taken that the stream must still carry out, in order: the first
        // notification, or a message and what followed it.
        let mut first_note = None;
        let mut pending = Vec::new();
        loop {
            tokio::select! {
                biased;
                n = call.note_rx.recv() => {
                    // `None`: the call overflowed its lag budget; the stream ends it.
                    first_note = n;
                    break;
                }
                outcome = async { call.round.as_mut().expect("guarded").await }, if call.round.is_some() => {
                    call.round = None;
                    call.core.finish(outcome);
                }
                d = call.rx.recv() => match d {
                    Some(Delivery::Serve(job)) => call.round = Some(start(&call.core, job, &call.env)),
                    Some(Delivery::Message(m)) => match call.rx.try_recv() {
                        Ok(Delivery::Finished) if call.note_rx.answer_alone() => {
                            guard.disarm();
                            return bytes_response(StatusCode::OK, m);
                        }
                        next => {
                            pending.push(Delivery::Message(m));
                            pending.extend(next.ok());
                            break;
                        }
                    },
                    Some(Delivery::Finished) | None => {
                        guard.disarm();
                        let e = ProtocolError::Cancelled { reason: Cancellation::ByClient };
                        return error_response(&e, Some(&id));
                    }
                },
                _ = close.cancelled() => break,
            }
        }
        guard.disarm();
        call.stream(&s, close, first_note, pending).await
    }
}

/// A legacy call being served: its deliveries from the session core, its handler's
/// notifications, and the round running now.
struct LiveCall {
    core: Arc<Core>,
    /// The call's request id.
    id: Value,
    rx: mpsc::Receiver<Delivery>,
    note_rx: NoteQueue,
    env: RequestEnv,
    round: Option<Call>,
}

impl LiveCall {
    /// Carries out one delivery on the call's stream; returns whether the call is over.
    /// Notifications the handler emitted before a message go out before it.
    fn deliver(&mut self, d: Option<Delivery>, stream: &super::resume::Stream) -> bool {
        match d {
            Some(Delivery::Serve(job)) => self.round = Some(start(&self.core, job, &self.env)),
            Some(Delivery::Message(m)) => {
                while let Some(n) = self.note_rx.try_recv() {
                    stream.push_message(&n);
                }
                stream.push(&m);
            }
            Some(Delivery::Finished) | None => return true,
        }
        false
    }

    /// Switches the call to a resumable SSE stream, served by a task of its own, starting with
    /// what was already taken.
    async fn stream(
        mut self,
        s: &HttpSession,
        close: CancellationToken,
        first_note: Option<Value>,
        pending: Vec<Delivery>,
    ) -> Resp {
        let (stream, live) = s.streams.open().await;
        if let Some(n) = &first_note {
            stream.push_message(n);
        }
        let mut closed = close.is_cancelled();
        if closed {
            stream.detach(); // the priming event is already queued: the response carries just it
        }
        tokio::spawn(async move {
            let mut finished = false;
            for d in pending {
                finished = finished || self.deliver(Some(d), &stream);
            }
            while !finished {
                tokio::select! {
                    biased;
                    n = self.note_rx.recv() => match n {
                        Some(n) => stream.push_message(&n),
                        None => {
                            // Past the lag budget: cancel the call and end it with the error.
                            self.core.run(|c, now| c.cancel(&self.id, now));
                            stream.push_message(&self.note_rx.overflow_error(&self.id));
                            break;
                        }
                    },
                    outcome = async { self.round.as_mut().expect("guarded").await }, if self.round.is_some() => {
                        self.round = None;
                        self.core.finish(outcome);
                    }
                    d = self.rx.recv() => finished = self.deliver(d, &stream),
                    _ = close.cancelled(), if !closed => {
                        closed = true;
                        stream.detach();
                    }
                }
            }
            stream.finish();
        });
        sse_response(live)
    }
}
