//! One request to the endpoint, top to bottom: the head's checks (Host/Origin, CORS preflight,
//! authorization), a legacy session's requests to `legacy/`, then a modern POST: its body, its
//! call (a one-request session: [`Session::route`]), and its answer as JSON or as an SSE stream.
//!
//! The hot path's one piece of care is here, in [`respond`]: a call is polled once in place, and
//! only one that waits gets the select, the drop guard and (boxed) the rest. The response body
//! owns the finished call, so that what it holds is freed once the answer is written.

use crate::auth_layer::{authenticate, Authenticated};
use crate::body::{sse_event, sse_event_bytes, McpBody};
use crate::config::RequestBody;
use crate::endpoint::Endpoint;
#[cfg(feature = "legacy")]
use crate::legacy::{has_modern_version_header, is_legacy_initialize, session_header, Legacy, Sessions};
use crate::notes::{NoteLimits, NoteQueue};
use crate::response::{
    accepted, bytes_response, error_response, method_not_allowed, sse_response, sse_response_headers,
    with_stream_owner, Resp,
};
use crate::validate::{check_host_origin, check_request_headers, tool_scope_refusal};
use bytes::Bytes;
use http::{Method, Request, StatusCode};
use mcp_auth::Principal;
use mcp_protocol::jsonrpc::{parse_incoming, Incoming};
use mcp_protocol::ProtocolError;
use mcp_server::internal::is_known_method;
use mcp_server::{Reply, RequestEnv};
use mcp_session::{pump, Call, Event, Session};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What `serve` knows of a request's peer (a service under another server reads the address
/// from the request's extensions instead).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Peer {
    /// The address, when the server needs it for every request (see
    /// `Server::needs_peer_address`).
    pub(crate) known: Option<std::net::SocketAddr>,
    /// The connection's peer (legacy sessions are counted per peer IP).
    #[cfg_attr(not(feature = "legacy"), allow(dead_code))]
    pub(crate) conn: Option<std::net::SocketAddr>,
}

/// Answers one request: the head's checks, then a legacy session's request or a modern POST.
pub(crate) async fn route<B: RequestBody>(
    ep: Endpoint<'_>,
    #[cfg(feature = "legacy")] sessions: &Arc<Sessions>,
    req: Request<B>,
    from: Peer,
) -> Resp {
    let declared = crate::body_read::declared_length(req.body());
    let (parts, body) = req.into_parts();
    let config = ep.config;
    if let Err(e) =
        check_host_origin(&parts.headers, parts.uri.authority(), &config.allowed_hosts, &config.allowed_origins)
    {
        return error_response(&e, None);
    }
    if let (Some(cors), &Method::OPTIONS) = (&config.cors, &parts.method) {
        return cors.preflight(&parts.headers);
    }
    // Authorization before anything else is read: an unauthenticated client cannot make the
    // server buffer a body, and no handler runs for it ... or by an `AuthLayer` in front of
    // this service, which left its verdict behind.
    let (auth, principal) = match &config.auth {
        Some(auth) => match authenticate(auth, &parts.headers, &parts.uri).await {
            Ok(a) => (Some(a.config), Some(a.principal)),
            Err(refusal) => return refusal,
        },
        None => match parts.extensions.get::<Authenticated>() {
            Some(a) => (Some(a.config.clone()), Some(a.principal.clone())),
            None => (None, None),
        },
    };
    #[cfg(feature = "legacy")]
    if let Some(sid) = session_header(&parts.headers).filter(|_| !has_modern_version_header(&parts.headers)) {
        let sid = sid.to_owned();
        let req = Request::from_parts(parts, body);
        let legacy = Legacy { ep, sessions };
        return Box::pin(legacy.session_call(req, &sid, auth.as_deref(), (principal, from.known))).await;
    }
    if parts.method != Method::POST {
        return method_not_allowed("POST");
    }
    // The body, within the size, time and memory limits (413, 408, 503).
    let (bytes, held) = match crate::body_read::read_body(body, declared, config, ep.budget).await {
        Ok(read) => read,
        Err(e) => return error_response(&e, None),
    };
    let msg = parse_incoming(&bytes, config.max_depth);
    drop((bytes, held));
    let req = match msg {
        Err(rej) => return error_response(&rej.error, rej.id.as_ref()),
        // No client notification has meaning over HTTP in this revision; accept and ignore.
        Ok(Incoming::Notification(_)) => return accepted(),
        #[cfg(feature = "legacy")]
        Ok(Incoming::Request(r)) if is_legacy_initialize(&parts.headers, &r) => {
            let peer = parts.extensions.get::<std::net::SocketAddr>().copied().or(from.conn);
            let legacy = Legacy { ep, sessions };
            return Box::pin(legacy.open_session(r, principal.map(|p| p.subject), peer.map(|a| a.ip()))).await;
        }
        Ok(Incoming::Request(r)) => r,
    };
    // The request's headers against its body, its tool's scopes, its method.
    let caller_scopes = principal.as_ref().map_or(&[][..], |p| &p.scopes[..]);
    let caller = mcp_server::Caller::new(principal.as_ref().map(|p| p.subject.as_str()), caller_scopes);
    if let Err(e) = check_request_headers(&parts.headers, &req, ep.server, &caller) {
        return error_response(&e, Some(&req.id));
    }
    if let Some(refusal) = tool_scope_refusal(auth.as_deref(), principal.as_ref(), &req) {
        return refusal;
    }
    if !is_known_method(&req.method) {
        let e = ProtocolError::method_not_found(req.method.clone());
        return error_response(&e, Some(&req.id));
    }
    // The call: a one-request session (ids cannot collide, and cancellation is the connection
    // going away, or the notification queue overflowing).
    let id = req.id.clone();
    let cancel = CancellationToken::new();
    let mut env = RequestEnv::new(cancel.clone());
    let owner = principal.as_ref().map(|p| Arc::from(p.subject.as_str()));
    set_caller(&mut env, principal);
    env.http = Some(Arc::new(parts));
    env.peer = from.known;
    match Session::route(req, cancel) {
        Event::Call(mut call) => {
            let (notes, sink) = NoteQueue::new(NoteLimits::of(config), call.cancellation().clone());
            env.sink = Some(sink);
            call.start(ep.server, env);
            respond(ep, id, call, notes).await
        }
        Event::Listen(call) => Box::pin(listen(ep, call, env, owner)).await,
        _ => error_response(&ProtocolError::method_not_found(id.to_string()), Some(&id)),
    }
}

/// Opens a `subscriptions/listen` stream: an SSE response fed by a task pumping the stream,
/// with keep-alive comments, until the client goes away or the stream ends.
async fn listen(ep: Endpoint<'_>, call: Call, env: RequestEnv, owner: Option<Arc<str>>) -> Resp {
    let id = call.id().clone();
    let cancel = call.cancellation().clone();
    let stream = match call.listen(ep.server, env).await {
        Ok(s) => s,
        Err(e) => return error_response(&e, Some(&id)),
    };
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let keep_alive = ep.config.keep_alive;
    tokio::spawn(async move {
        // Ends the server's side of the stream however the pump ends.
        let _guard = cancel.drop_guard();
        let gone = tx.clone();
        pump(stream, async move { gone.closed().await }, Some(keep_alive), |item| {
            let event = item.map_or(Bytes::from_static(b":\n\n"), |v| sse_event(&v));
            let tx = tx.clone();
            async move { tx.send(event).await.is_ok() }
        })
        .await;
    });
    with_stream_owner(sse_response(rx), owner)
}

/// Runs a started call: one JSON response if it finishes without notifying (the rule of both
/// eras, [`NoteQueue::answer_alone`]), else an SSE stream of the notifications, then the
/// response. Closing the stream cancels the handler.
///
/// Most handlers finish on their first poll: that poll is made here, and only a handler that
/// waits gets the rest ([`wait`], boxed).
async fn respond(ep: Endpoint<'_>, id: Value, mut call: Call, notes: NoteQueue) -> Resp {
    use std::task::Poll;
    // Polled once, in this future's own poll: it cannot be dropped half-way, so a call that
    // finishes here needs no guard to cancel it.
    match std::future::poll_fn(|cx| Poll::Ready(std::future::Future::poll(std::pin::Pin::new(&mut call), cx))).await {
        Poll::Ready(outcome) => {
            let answer = answer(ep, &id, &notes, &outcome.into_result());
            // The body owns the finished call: it is freed once the answer is written.
            answer.map(|body| body.owning(call))
        }
        Poll::Pending => Box::pin(wait(ep, id, call, notes)).await,
    }
}

/// The response to a call that finished: JSON when it did not notify, else SSE.
fn answer(ep: Endpoint<'_>, id: &Value, notes: &NoteQueue, r: &Result<Reply, ProtocolError>) -> Resp {
    if !notes.answer_alone() {
        return notes_then_response(ep, id, notes, r);
    }
    match r {
        Ok(_) => bytes_response(StatusCode::OK, ep.server.encode_response(id, r)),
        Err(e) => error_response(e, Some(id)),
    }
}

/// [`respond`] for a handler that waits: its response, or the SSE stream its first
/// notification starts.
async fn wait(ep: Endpoint<'_>, id: Value, mut call: Call, notes: NoteQueue) -> Resp {
    // Fires the cancellation token if this future (or the SSE task) is dropped before the
    // response is out: the client went away.
    let guard = notes.cancellation().drop_guard();
    let first = tokio::select! {
        biased;
        outcome = &mut call => {
            guard.disarm();
            return answer(ep, &id, &notes, &outcome.into_result());
        }
        n = notes.recv() => match n {
            Some(n) => n,
            // Cancelled for lag before anything was sent (a tiny budget): end with the error.
            None => return bytes_response(StatusCode::OK, notes.overflow_error(&id).to_string().into_bytes()),
        },
    };
    stream_rest(ep, id, call, notes, guard, first)
}

/// A call that finished after notifying: one SSE body with its notifications, then the
/// response (or the lag error, if the notifications overflowed).
fn notes_then_response(ep: Endpoint<'_>, id: &Value, notes: &NoteQueue, r: &Result<Reply, ProtocolError>) -> Resp {
    if notes.is_overflowed() {
        return bytes_response(StatusCode::OK, notes.overflow_error(id).to_string().into_bytes());
    }
    let mut body = Vec::new();
    while let Some(n) = notes.try_recv() {
        body.extend_from_slice(&sse_event(&n));
    }
    body.extend_from_slice(&sse_event_bytes(&ep.server.encode_response(id, r)));
    sse_response_headers(McpBody::full(body))
}

/// The rest of [`respond`] once a notification arrived while the handler still runs: an SSE
/// stream of the notifications, then the response.
fn stream_rest(
    ep: Endpoint<'_>,
    id: Value,
    mut call: Call,
    notes: NoteQueue,
    guard: tokio_util::sync::DropGuard,
    first: Value,
) -> Resp {
    // The handler's notifications wait in `notes` (bounded) while the client is slow to read.
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let server = ep.server.clone();
    tokio::spawn(async move {
        // The handler keeps running while the client is slow to read: what it notifies
        // meanwhile waits in `notes` (bounded), never in this task.
        let mut guard = Some(guard);
        // A slot kept for the last event (the response, or the error ending the call).
        let Ok(last) = tx.clone().reserve_owned().await else { return };
        let (mut next, mut outcome) = (Some(first), None);
        loop {
            if next.is_none() {
                next = notes.try_recv();
            }
            if next.is_none() {
                if let Some(r) = outcome.take() {
                    // Every notification is out: the response ends the stream.
                    last.send(sse_event_bytes(&server.encode_response(&id, &r)));
                    return;
                }
            }
            tokio::select! {
                biased;
                () = notes.overflowed() => break,
                p = tx.reserve(), if next.is_some() => match (p, next.take()) {
                    (Ok(p), Some(n)) => p.send(sse_event(&n)),
                    _ => return, // the client closed the stream: dropping `guard` cancels
                },
                o = &mut call, if outcome.is_none() => {
                    if let Some(g) = guard.take() {
                        g.disarm();
                    }
                    outcome = Some(o.into_result());
                }
                n = notes.recv(), if next.is_none() && outcome.is_none() => match n {
                    Some(n) => next = Some(n),
                    None => break,
                },
                // The client closed the stream: drop the handler (cancellation).
                _ = tx.closed() => return,
            }
        }
        // Past the lag budget: the call is cancelled (dropping the handler and `guard`);
        // its stream ends with the error.
        last.send(sse_event(&notes.overflow_error(&id)));
    });
    sse_response(rx)
}

/// Puts the token's subject and scopes into `env` (what handlers and access rules see).
fn set_caller(env: &mut RequestEnv, principal: Option<Principal>) {
    if let Some(p) = principal {
        env.principal = Some(p.subject);
        env.scopes = p.scopes.into();
    }
}
