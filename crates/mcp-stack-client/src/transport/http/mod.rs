//! Streamable HTTP client transport.
//!
//! - Modern servers (2026-07-28): every request is its own POST, answered by one JSON object or
//!   by an SSE stream scoped to that request; closing the stream cancels the request.
//! - Legacy Streamable HTTP servers (2025-03-26 to 2025-11-25): the same, plus the
//!   `Mcp-Session-Id` minted by `initialize`, the standalone GET stream, SSE resumption with
//!   `Last-Event-ID` after the server's `retry:` delay, `notifications/cancelled` on cancellation
//!   and a DELETE that ends the session on close.
//! - Deprecated HTTP+SSE servers (2024-11-05), when the server refuses an `initialize` POST (or after
//!   [`HttpTransport::fallback_to_sse`]): one GET
//!   stream whose `endpoint` event names the POST URL; every answer arrives on that stream.
//!
//! Header values given to the builder (such as `Authorization`) are never logged or echoed.
//!
//! Requests go through hyper's HTTP/1.1 connections, over TLS (rustls) for `https://`, with a
//! keep-alive pool of our own (see `wire`).

mod builder;
mod fallback;
pub(crate) mod fuzz;
mod pool;
mod proxy;
mod redirect;
mod stream;
mod wire;

pub use builder::HttpTransportBuilder;
use builder::{display_url, is_sensitive};

use super::{
    Exchange, OutgoingRequest, SplitTx, Transport, TransportKind, Unsolicited, UnsolicitedStats, EXCHANGE_CAP,
};
use crate::auth::{AuthChallenge, AuthProvider};
use crate::error::TransportError;
use bytes::Bytes;
use futures::future::BoxFuture;
use http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{Method, StatusCode};
use mcp_protocol::headers as h;
use mcp_protocol::types::RequestId;
use parking_lot::{Mutex, MutexGuard};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use url::Url;
use wire::{Req, Resp};

/// The legacy session header.
const SESSION_ID: &str = "mcp-session-id";
/// How much of an error body is kept for diagnostics.
const ERROR_BODY_BYTES: usize = 2048;
/// How much of an error body is read to look for a JSON-RPC error.
const ERROR_BODY_READ: usize = 64 * 1024;
/// Time allowed for reading an error body.
const ERROR_BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// Time allowed for the DELETE that ends a session.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);
/// Challenges an auth provider may handle for one POST (a DPoP nonce after a fresh token
/// needs two).
const MAX_AUTH_ROUNDS: usize = 2;

/// Where a per-request SSE stream delivers (bounded: the stream is read no faster than the
/// caller takes its messages).
type Route = mpsc::Sender<Result<Value, TransportError>>;

/// Answers to dropped server requests being POSTed at once; past it they are dropped too.
const MAX_REFUSALS_IN_FLIGHT: usize = 8;

/// An error with its causes, as one line.
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = Some(e);
    while let Some(err) = cur {
        let text = err.to_string();
        if !parts.last().is_some_and(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = err.source();
    }
    parts.join(": ")
}

/// The media type of a response, lower-cased, without parameters.
fn mime(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
        .unwrap_or_default()
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn is_error_response(m: &Value) -> bool {
    m.is_object() && m.get("method").is_none() && m.get("error").is_some_and(Value::is_object)
}

/// Whether `m` is the response to request `id`.
fn is_response_to(m: &Value, id: &Value) -> bool {
    m.get("method").is_none() && m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
}

/// An error response that names no request (`id` absent or null) answers the HTTP request it
/// came with: give it that request's id.
fn adopt(mut m: Value, id: &Value) -> Value {
    if is_error_response(&m) && m.get("id").is_none_or(Value::is_null) {
        m["id"] = id.clone();
    }
    m
}

/// Splits a JSON body into messages (a JSON-RPC batch is an array).
fn parse_messages(bytes: &[u8]) -> Result<Vec<Value>, TransportError> {
    match crate::elicit::order::parse(bytes) {
        Ok(Value::Array(items)) if items.iter().all(Value::is_object) => Ok(items),
        Ok(v @ Value::Object(_)) => Ok(vec![v]),
        Ok(_) => Err(TransportError::Malformed("the server sent JSON that is not a JSON-RPC message".into())),
        Err(e) => Err(TransportError::Malformed(format!("the server sent invalid JSON: {e}"))),
    }
}

/// What a 4xx/5xx answer with `body` means (see [`Inner::failure`]); `in_session`: a legacy
/// session is open.
fn error_answer(
    status: u16,
    www_authenticate: Option<String>,
    body: &[u8],
    in_session: bool,
    req_id: Option<&Value>,
) -> Result<Value, TransportError> {
    if status == StatusCode::NOT_FOUND.as_u16() && in_session {
        return Err(TransportError::Closed("session expired".into()));
    }
    // Authorization failures stay HTTP errors: the challenge matters more than the body.
    let auth = status == StatusCode::UNAUTHORIZED.as_u16() || www_authenticate.is_some();
    if let (Some(id), false, Ok(mut m)) = (req_id, auth, serde_json::from_slice::<Value>(body)) {
        if is_error_response(&m) {
            // It answers this HTTP request, whatever id it names (servers use null or
            // placeholders such as "server-error" when they could not read the request).
            m["id"] = id.clone();
            return Ok(m);
        }
    }
    let body = truncate(String::from_utf8_lossy(body).trim(), ERROR_BODY_BYTES);
    Err(TransportError::Http { status, body, www_authenticate })
}

/// Only the `MCP-Protocol-Version` header of a request (for GET and DELETE).
fn protocol_of(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(h::PROTOCOL_VERSION)).cloned().collect()
}

#[derive(Default)]
struct State {
    /// The legacy session (from the `initialize` response).
    session_id: Option<String>,
    /// A legacy session: an `initialize` POST was answered.
    legacy: bool,
    /// The standalone GET stream was started.
    get_stream: bool,
    /// The last `MCP-Protocol-Version` the core sent.
    protocol: Option<String>,
    /// HTTP+SSE fallback: where to POST.
    endpoint: Option<Url>,
    /// Requests waiting for messages from a shared GET stream (HTTP+SSE fallback).
    pending: HashMap<RequestId, SplitTx>,
    /// Background tasks to stop on close.
    tasks: Vec<AbortHandle>,
    /// Why the transport can no longer be used.
    closed: Option<String>,
}

struct Inner {
    wire: wire::Wire,
    url: Url,
    display_url: String,
    headers: HeaderMap,
    request_timeout: Option<Duration>,
    max_event_bytes: usize,
    state: Mutex<State>,
    unsolicited: Unsolicited,
    /// Room for answers to dropped server requests (see [`MAX_REFUSALS_IN_FLIGHT`]).
    refusals: Arc<tokio::sync::Semaphore>,
    auth: Option<Arc<dyn AuthProvider>>,
    /// Follow 307/308 to other origins (with the protocol's headers only).
    cross_origin_redirects: bool,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    fn check_open(&self) -> Result<(), TransportError> {
        match &self.lock().closed {
            Some(why) => Err(TransportError::Closed(why.clone())),
            None => Ok(()),
        }
    }

    fn has_session(&self) -> bool {
        self.lock().session_id.is_some()
    }

    fn remember_protocol(&self, headers: &[(String, String)]) {
        if let Some((_, v)) = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(h::PROTOCOL_VERSION)) {
            self.lock().protocol = Some(v.clone());
        }
    }

    fn track(&self, task: AbortHandle) {
        let mut st = self.lock();
        st.tasks.retain(|t| !t.is_finished());
        st.tasks.push(task);
    }

    /// Ends every exchange waiting on a shared stream, and the transport with them.
    fn fail_all(&self, why: &str) {
        let pending: Vec<SplitTx> = {
            let mut st = self.lock();
            st.closed.get_or_insert_with(|| why.to_owned());
            st.pending.drain().map(|(_, tx)| tx).collect()
        };
        for tx in pending {
            tx.finish(Err(TransportError::Closed(why.to_owned())));
        }
    }

    /// A request with the configured headers, `extra` (lower-case names; they replace configured
    /// ones of the same name) and, if `with_session`, the legacy session id.
    fn builder(
        &self,
        method: Method,
        url: Url,
        extra: &[(String, String)],
        with_session: bool,
    ) -> Result<Req, TransportError> {
        let mut headers = self.headers.clone();
        for (k, v) in extra {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| TransportError::Malformed(format!("invalid header name {k:?}")))?;
            let mut value = HeaderValue::from_str(v)
                .map_err(|_| TransportError::Malformed(format!("invalid value for header {name}")))?;
            if is_sensitive(&name) {
                value.set_sensitive(true);
            }
            headers.insert(name, value);
        }
        if with_session {
            if let Some(sid) = self.lock().session_id.clone() {
                headers.insert(
                    SESSION_ID,
                    HeaderValue::from_str(&sid).map_err(|_| TransportError::Malformed("invalid session id".into()))?,
                );
            }
        }
        Ok(Req { method, url, headers, body: None })
    }

    /// A POST of one JSON-RPC message.
    fn post(&self, url: Url, extra: &[(String, String)], body: &Bytes) -> Result<Req, TransportError> {
        let mut req = self.builder(Method::POST, url, extra, true)?;
        req.headers.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        req.headers.append(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        req.body = Some(body.clone());
        Ok(req)
    }

    /// `extra` plus the auth provider's headers for `method` on `url`.
    async fn with_auth<'a>(
        &self,
        method: &Method,
        url: &Url,
        extra: &'a [(String, String)],
    ) -> Result<Cow<'a, [(String, String)]>, TransportError> {
        let Some(auth) = &self.auth else {
            return Ok(Cow::Borrowed(extra));
        };
        let mut headers = extra.to_vec();
        headers.extend(auth.headers(method.as_str(), url.as_str()).await?);
        Ok(Cow::Owned(headers))
    }

    /// POSTs `body` with the auth provider's headers; after a 401/403 the provider handled,
    /// POSTs it again (at most [`MAX_AUTH_ROUNDS`] times). Returns the last response.
    async fn post_authorized(&self, url: Url, extra: &[(String, String)], body: Bytes) -> Result<Resp, TransportError> {
        let mut rounds = 0;
        loop {
            let headers = self.with_auth(&Method::POST, &url, extra).await?;
            let resp = self.execute(|| self.post(url.clone(), &headers, &body), true).await?;
            let status = resp.status().as_u16();
            // A challenge from another origin (after a redirect) is not for our credentials.
            let ours = redirect::same_origin(resp.url(), &self.url);
            let Some(auth) =
                self.auth.as_ref().filter(|_| ours && matches!(status, 401 | 403) && rounds < MAX_AUTH_ROUNDS)
            else {
                return Ok(resp);
            };
            rounds += 1;
            let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let challenge = AuthChallenge {
                status,
                www_authenticate: header(WWW_AUTHENTICATE.as_str()),
                dpop_nonce: header("dpop-nonce"),
                method: "POST".into(),
                url: url.to_string(),
                authorization: headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                    .map(|(_, v)| v.clone()),
            };
            if !auth.on_challenge(challenge).await? {
                return Ok(resp);
            }
        }
    }

    /// Sends, following same-origin redirects, and waits for the response head (bounded by
    /// the request timeout if `capped`).
    /// `make` builds the request (again for each redirect followed).
    async fn execute<F>(&self, make: F, capped: bool) -> Result<Resp, TransportError>
    where
        F: Fn() -> Result<Req, TransportError>,
    {
        let fut = self.send_following(make);
        match self.request_timeout.filter(|_| capped) {
            Some(t) => tokio::time::timeout(t, fut).await.map_err(|_| TransportError::Timeout)?,
            None => fut.await,
        }
    }

    /// Reads at most `limit` bytes of a body; `strict` makes a longer body an error. A body
    /// that arrives in one piece is not copied.
    async fn read_body(&self, mut resp: Resp, limit: usize, strict: bool) -> Result<Bytes, TransportError> {
        let read = async {
            let mut first: Option<Bytes> = None;
            let mut out: Vec<u8> = Vec::new();
            let mut len = 0;
            while let Some(mut chunk) = resp.chunk().await? {
                let over = len + chunk.len() > limit;
                if over {
                    if strict {
                        return Err(TransportError::Malformed(format!("response body exceeds {limit} bytes")));
                    }
                    chunk.truncate(limit - len);
                }
                len += chunk.len();
                match first.take() {
                    None if out.is_empty() => first = Some(chunk),
                    prev => {
                        if let Some(p) = prev {
                            let expected = resp.content_length().and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
                            out.reserve(expected.max(len).min(limit).min(1 << 20));
                            out.extend_from_slice(&p);
                        }
                        out.extend_from_slice(&chunk);
                    }
                }
                if over {
                    break;
                }
            }
            Ok(first.unwrap_or_else(|| Bytes::from(out)))
        };
        match self.request_timeout {
            Some(t) => tokio::time::timeout(t, read).await.map_err(|_| TransportError::Timeout)?,
            None => read.await,
        }
    }

    /// A 4xx/5xx answer: the JSON-RPC error response it carries (with the id of `req_id`), or
    /// the matching transport error: `Closed("session expired")` for a 404 in a session, `Http`
    /// otherwise (always for 401 and for answers with a `WWW-Authenticate` challenge).
    async fn failure(&self, resp: Resp, req_id: Option<&Value>) -> Result<Value, TransportError> {
        let status = resp.status();
        let www_authenticate = resp.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = tokio::time::timeout(ERROR_BODY_TIMEOUT, self.read_body(resp, ERROR_BODY_READ, false)).await;
        let body = body.ok().and_then(Result::ok).unwrap_or_default();
        error_answer(status.as_u16(), www_authenticate, &body, self.has_session(), req_id)
    }

    /// Remembers the session id of an `initialize` response.
    fn capture_session(&self, headers: &HeaderMap) {
        let Some(raw) = headers.get(SESSION_ID) else {
            return;
        };
        match raw.to_str() {
            Ok(sid) if !sid.is_empty() && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)) => {
                self.lock().session_id = Some(sid.to_owned());
            }
            _ => tracing::warn!("ignoring an Mcp-Session-Id that is not visible ASCII"),
        }
    }

    /// POSTs a notification or a response; expects 202 (or any 2xx).
    async fn send_message(
        self: &Arc<Self>,
        message: &Value,
        headers: &[(String, String)],
    ) -> Result<(), TransportError> {
        self.check_open()?;
        self.remember_protocol(headers);
        let url = self.lock().endpoint.clone().unwrap_or_else(|| self.url.clone());
        let body = serde_json::to_vec(message).map_err(|e| TransportError::Malformed(e.to_string()))?;
        let resp = self.post_authorized(url, headers, Bytes::from(body)).await?;
        let status = resp.status();
        if !status.is_success() {
            let www_authenticate =
                resp.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned);
            return Err(match self.failure(resp, Some(&Value::Null)).await {
                Ok(m) => TransportError::Http {
                    status: status.as_u16(),
                    body: truncate(&m.to_string(), ERROR_BODY_BYTES),
                    www_authenticate,
                },
                Err(e) => e,
            });
        }
        drop(resp);
        if let Some(ready) = self.maybe_start_get_stream(headers) {
            // Servers route their requests to the standalone stream only once it is open: wait
            // for its answer (bounded) before the session carries on.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), ready).await;
        }
        Ok(())
    }

    /// In a legacy Streamable HTTP session, opens the standalone GET stream once the first
    /// message after `initialize` (the `initialized` notification) was accepted.
    /// Returns a receiver that fires once the GET has been answered (or refused).
    fn maybe_start_get_stream(
        self: &Arc<Self>,
        headers: &[(String, String)],
    ) -> Option<tokio::sync::oneshot::Receiver<()>> {
        {
            let mut st = self.lock();
            if !st.legacy || st.get_stream || st.endpoint.is_some() || st.closed.is_some() {
                return None;
            }
            st.get_stream = true;
        }
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(stream::standalone(self.clone(), protocol_of(headers), ready_tx));
        self.track(task.abort_handle());
        Some(ready_rx)
    }

    /// Legacy cancellation: `notifications/cancelled` for request `id`, sent in the background.
    fn notify_cancelled(self: &Arc<Self>, id: Value, headers: Vec<(String, String)>) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let inner = self.clone();
        rt.spawn(async move {
            let Some(note) = super::cancelled(&id, Some("cancelled by the client")) else { return };
            if let Err(e) = inner.send_message(&note, &headers).await {
                tracing::debug!(error = %e, "could not send notifications/cancelled");
            }
        });
    }

    /// Delivers a message from a shared stream (standalone GET, HTTP+SSE): responses and
    /// progress to their request, everything else to the unsolicited channel.
    fn route(self: &Arc<Self>, m: Value) {
        let is_response = m.get("method").is_none()
            && m.get("id").is_some()
            && (m.get("result").is_some() || m.get("error").is_some());
        let mut st = self.lock();
        if is_response {
            match RequestId::from_id(&m["id"]).and_then(|k| st.pending.remove(&k)) {
                Some(tx) => tx.finish(Ok(m)),
                None => tracing::debug!(id = %m["id"], "dropping a response to no pending request"),
            }
            return;
        }
        if m.get("id").is_none() {
            if let Some(tx) =
                m.pointer("/params/progressToken").and_then(RequestId::from_id).and_then(|k| st.pending.get(&k))
            {
                tx.note(m);
                return;
            }
        }
        drop(st);
        if let Some(reply) = self.unsolicited.deliver(m) {
            self.refuse(reply);
        }
    }

    /// POSTs the error a dropped server request is owed, in the background, at most
    /// [`MAX_REFUSALS_IN_FLIGHT`] at once (past that the answer is dropped too).
    pub(super) fn refuse(self: &Arc<Self>, reply: Value) {
        let (Ok(permit), Ok(rt)) = (self.refusals.clone().try_acquire_owned(), tokio::runtime::Handle::try_current())
        else {
            super::note_dropped();
            return;
        };
        let inner = self.clone();
        let headers: Vec<(String, String)> =
            self.lock().protocol.clone().map(|v| (h::PROTOCOL_VERSION.to_owned(), v)).into_iter().collect();
        rt.spawn(async move {
            if let Err(e) = inner.send_message(&reply, &headers).await {
                tracing::debug!(error = %e, "could not refuse a server request");
            }
            drop(permit);
        });
    }
}

/// Sends `notifications/cancelled` for a legacy request when dropped still armed.
struct CancelNote(Option<LegacyRequest>);

/// What `notifications/cancelled` needs: the transport, the request id and its headers.
type LegacyRequest = (Arc<Inner>, Value, Vec<(String, String)>);

impl Drop for CancelNote {
    fn drop(&mut self) {
        if let Some((inner, id, headers)) = self.0.take() {
            inner.notify_cancelled(id, headers);
        }
    }
}

/// Streamable HTTP transport (with the legacy HTTP+SSE fallback).
pub struct HttpTransport {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.inner.lock();
        f.debug_struct("HttpTransport")
            .field("url", &self.inner.display_url)
            .field("session", &st.session_id.is_some())
            .field("legacy_sse", &st.endpoint.is_some())
            .finish_non_exhaustive()
    }
}

impl HttpTransport {
    /// A transport for the MCP endpoint at `url` (http or https), with default settings.
    pub fn new(url: &str) -> Result<Self, TransportError> {
        Self::builder(url).build()
    }

    /// Configures a transport for the MCP endpoint at `url`.
    pub fn builder(url: &str) -> HttpTransportBuilder {
        HttpTransportBuilder::new(url)
    }

    /// The legacy session id, if the server assigned one.
    pub fn session_id(&self) -> Option<String> {
        self.inner.lock().session_id.clone()
    }

    /// Switches to the deprecated HTTP+SSE transport (2024-11-05) now: opens the GET stream and
    /// waits for its `endpoint` event. [`Transport::request`] does it by itself when the server
    /// refuses an `initialize` POST with 400, 404 or 405.
    pub async fn fallback_to_sse(&self) -> Result<(), TransportError> {
        fallback::open(&self.inner).await
    }

    /// Counters of the unsolicited queue (for tests and diagnostics).
    #[doc(hidden)]
    pub fn unsolicited_stats(&self) -> UnsolicitedStats {
        self.inner.unsolicited.stats()
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }

    fn request<'a>(&'a self, req: OutgoingRequest<'a>) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        Box::pin(async move {
            let inner = &self.inner;
            let id = req.id().clone();
            let initialize = req.is_initialize();
            // One lock for everything the request needs to know (calls contend for it).
            let (endpoint, legacy) = {
                let mut st = inner.lock();
                if let Some(why) = &st.closed {
                    return Err(TransportError::Closed(why.clone()));
                }
                if let Some((_, v)) = req.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(h::PROTOCOL_VERSION)) {
                    if st.protocol.as_deref() != Some(v.as_str()) {
                        st.protocol = Some(v.clone());
                    }
                }
                (st.endpoint.clone(), st.legacy && !initialize)
            };
            if let Some(endpoint) = endpoint {
                return fallback::request(inner, endpoint, req).await;
            }
            let body = Bytes::from(req.to_json()?);
            let resp = inner.post_authorized(inner.url.clone(), &req.headers, body).await?;
            let status = resp.status();
            if !status.is_success() {
                let m = match inner.failure(resp, Some(&id)).await {
                    // A server of the deprecated HTTP+SSE transport (2024-11-05) refuses the
                    // POST: open its GET stream and send `initialize` there.
                    Err(TransportError::Http { status: 400 | 404 | 405, .. }) if initialize => {
                        tracing::info!("the server refused initialize over POST: trying HTTP+SSE");
                        fallback::open(inner).await?;
                        let endpoint = inner.lock().endpoint.clone();
                        let endpoint = endpoint.ok_or_else(|| TransportError::Closed("no HTTP+SSE endpoint".into()))?;
                        return fallback::request(inner, endpoint, req).await;
                    }
                    m => m?,
                };
                return Ok(Exchange::ready([m]));
            }
            if initialize {
                // A legacy session begins with the answer to `initialize`: its session id (if
                // any) goes on every request, a dropped request is cancelled by notification, and
                // the standalone GET stream opens after the next message.
                inner.capture_session(resp.headers());
                inner.lock().legacy = true;
            }
            if status == StatusCode::ACCEPTED {
                return Err(TransportError::Malformed("the server answered a request with 202 Accepted".into()));
            }
            let sse = match mime(resp.headers()).as_str() {
                "application/json" => false,
                "text/event-stream" => true,
                other => {
                    return Err(TransportError::Malformed(format!(
                        "unexpected Content-Type {other:?} in the answer to a request"
                    )))
                }
            };
            if !sse {
                // A JSON answer is read right here: no task, no channel hop. Dropping this
                // future drops the response, which cancels on HTTP; a legacy server is told.
                let mut note = CancelNote(legacy.then(|| (inner.clone(), id.clone(), req.headers)));
                let body = inner.read_body(resp, inner.max_event_bytes, true).await;
                note.0 = None;
                let messages = parse_messages(&body?)?;
                return Ok(Exchange::ready(messages.into_iter().map(|m| adopt(m, &id))));
            }
            let (tx, rx) = mpsc::channel(EXCHANGE_CAP);
            let mut get_headers = protocol_of(&req.headers);
            if get_headers.is_empty() {
                get_headers.extend(inner.lock().protocol.clone().map(|v| (h::PROTOCOL_VERSION.to_owned(), v)));
            }
            let task = tokio::spawn(stream::deliver(inner.clone(), resp, id.clone(), get_headers, tx));
            let abort = task.abort_handle();
            let note = legacy.then(|| (inner.clone(), id, req.headers));
            Ok(Exchange::stream(rx).on_cancel(move || {
                // Aborting drops the response: the connection closes, which cancels on HTTP.
                abort.abort();
                // Legacy servers do not take a disconnect for cancellation: tell them.
                if let Some((inner, id, headers)) = note {
                    inner.notify_cancelled(id, headers);
                }
            }))
        })
    }

    fn send(&self, message: Value, headers: Vec<(String, String)>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move { self.inner.send_message(&message, &headers).await })
    }

    fn route_unsolicited(&self, sink: Option<mpsc::Sender<Value>>) {
        self.inner.unsolicited.route(sink);
    }

    fn route_logs(&self, sink: Option<mpsc::Sender<Value>>) {
        self.inner.unsolicited.route_logs(sink);
    }

    fn unsolicited_stats(&self) -> UnsolicitedStats {
        self.inner.unsolicited.stats()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let inner = &self.inner;
            let (sid, tasks, protocol) = {
                let mut st = inner.lock();
                st.closed.get_or_insert_with(|| "the client closed the transport".into());
                (st.session_id.take(), std::mem::take(&mut st.tasks), st.protocol.clone())
            };
            for t in tasks {
                t.abort();
            }
            inner.fail_all("the client closed the transport");
            inner.unsolicited.close();
            let Some(sid) = sid else { return };
            let mut extra = vec![(SESSION_ID.to_owned(), sid)];
            extra.extend(protocol.map(|v| (h::PROTOCOL_VERSION.to_owned(), v)));
            let extra = match inner.with_auth(&Method::DELETE, &inner.url, &extra).await {
                Ok(with) => with.into_owned(),
                Err(_) => extra,
            };
            let delete = || inner.builder(Method::DELETE, inner.url.clone(), &extra, false);
            match tokio::time::timeout(DELETE_TIMEOUT, inner.send_following(delete)).await {
                Ok(Ok(resp)) => tracing::debug!(status = resp.status().as_u16(), "ended the legacy session"),
                Ok(Err(e)) => tracing::debug!(error = %e, "could not end the legacy session"),
                Err(_) => tracing::debug!("ending the legacy session timed out"),
            }
        })
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        for t in self.inner.lock().tasks.drain(..) {
            t.abort();
        }
    }
}
