//! The hyper service for the MCP endpoint and the accept loop.

use crate::auth_layer::Authenticated;
use crate::body::{sse_event, sse_event_bytes, McpBody};
use crate::cors::CorsConfig;
#[cfg(feature = "legacy")]
use crate::legacy::{has_modern_version_header, is_legacy_initialize, session_header, Sessions};
use crate::notes::{NoteLimits, NoteQueue};
use crate::validate::{check_host_origin, check_request_headers};
use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use mcp_auth::{AuthConfig, AuthError, Principal};
use mcp_protocol::jsonrpc::{parse_incoming, Incoming};
use mcp_protocol::strict::DEFAULT_MAX_DEPTH;
use mcp_protocol::ProtocolError;
use mcp_server::session::{Call, Dispatch, Job, Stateless};
use mcp_server::{is_known_method, Reply, RequestEnv, Server};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Settings of the MCP endpoint ([`McpService`]): what it checks and how it answers, wherever it
/// is mounted (under [`crate::serve`], in an axum `Router`, behind tower layers). Defaults are
/// safe for a local server. The connection settings of [`crate::serve`] (connection cap,
/// header and idle timeouts, listen-stream caps, drain time, the path) are in
/// [`crate::ServeConfig`]; under axum the hosting server's own connection settings apply.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Largest accepted request body in bytes (default 2 MiB); larger gets 413.
    pub max_body_bytes: usize,
    /// Deepest accepted JSON nesting (default 64).
    pub max_depth: usize,
    /// Accepted `Host` names without port (default: `localhost`, `127.0.0.1`, `[::1]`); empty = any.
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin`s: exact origins (`https://app.example`) or `host:NAME` for any scheme
    /// and port on NAME (default: the loopback hosts). Requests without `Origin` are accepted.
    pub allowed_origins: Vec<String>,
    /// Interval of SSE keep-alive comments on listen streams (default 15 s).
    pub keep_alive: Duration,
    /// Longest time to receive a whole request body (default 30 s); past it, 408.
    pub body_read_timeout: Duration,
    /// Longest gap between two pieces of a request body (default 10 s); past it, 408.
    pub body_idle_timeout: Duration,
    /// Most request-body bytes held in memory by all requests together (default 64 MiB).
    pub max_body_bytes_in_flight: usize,
    /// How long a request waits for room in [`EndpointConfig::max_body_bytes_in_flight`] before it
    /// gets 503 with `Retry-After` (default 2 s).
    pub body_budget_wait: Duration,
    /// After a refused body (413) the rest of the body is read and discarded in the background,
    /// up to this many bytes (default 64 MiB), so a client still writing its body reads the
    /// answer instead of a connection reset.
    pub linger_bytes: usize,
    /// Longest time spent discarding in that lingering read (default 5 s).
    pub linger_time: Duration,
    /// OAuth 2.1 resource-server protection (default `None`: open). When set, every request
    /// needs a valid bearer token (checked right after Host/Origin, before the body is read) and
    /// handlers see the token subject as `ctx.principal()`. The protected-resource metadata is
    /// served by [`crate::serve`] and `router` (feature `axum`) or an [`crate::AuthLayer`]; the
    /// `auth()` setter also accepts the resource's host.
    pub auth: Option<Arc<AuthConfig>>,
    /// Most open legacy (initialize-based) sessions (default 1024; 0 refuses legacy clients).
    /// When full, expired sessions are dropped first, then the least recently used one (by
    /// last request; an open GET stream does not protect it) that has no call in flight.
    pub max_sessions: usize,
    /// Most open legacy sessions of one client (default 64): its principal when authenticated,
    /// else its peer IP address (the `std::net::SocketAddr` in the request's extensions, which
    /// [`crate::serve`] puts there; behind a proxy every client shares one). A new session past
    /// it ends that client's least recently used one.
    pub max_sessions_per_client: usize,
    /// How long a new legacy session may wait for `notifications/initialized` (default 60 s);
    /// a session not initialized by then is dropped.
    pub session_init_timeout: Duration,
    /// Most bytes of `capabilities` and `clientInfo` (serialized) a legacy `initialize` may
    /// carry (default 64 KiB): the session keeps them for its life. Over it: `-32602`.
    pub max_initialize_params_bytes: usize,
    /// How long an unused legacy session lives (default 30 minutes).
    pub session_idle: Duration,
    /// Cross-origin access for browser clients (default `None`: no CORS headers, `OPTIONS`
    /// gets 405). Its origins are accepted by the `Origin` check too.
    pub cors: Option<CorsConfig>,
    /// Where legacy sessions live when several instances serve the same clients (default
    /// `None`: in this process). With a shared store any instance serves any session's
    /// requests, streams and answers (see [`crate::SessionStore`]).
    #[cfg(feature = "legacy")]
    pub session_store: Option<Arc<dyn crate::SessionStore>>,
    /// Most notifications one call holds while its client has not read them (default 256).
    /// When full, a progress notification replaces the queued one of the same `progressToken`;
    /// any other is dropped, counted and logged (`warn`, on the 1st, 2nd, 4th... drop).
    pub max_queued_notifications: usize,
    /// Drops past which a call is cancelled (default 100 000): its handler's cancellation
    /// token fires and its response ends with a `-32603` error.
    pub max_dropped_notifications: u64,
    /// How long a call's notification queue may stay full, its client taking nothing, before
    /// the call is cancelled the same way (default 30 s).
    pub notification_stall: Duration,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        let hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "[::1]".to_owned()];
        Self {
            max_body_bytes: 2 << 20,
            max_depth: DEFAULT_MAX_DEPTH,
            allowed_origins: hosts.iter().map(|h| format!("host:{h}")).collect(),
            allowed_hosts: hosts,
            keep_alive: Duration::from_secs(15),
            body_read_timeout: Duration::from_secs(30),
            body_idle_timeout: Duration::from_secs(10),
            max_body_bytes_in_flight: 64 << 20,
            body_budget_wait: Duration::from_secs(2),
            linger_bytes: 64 << 20,
            linger_time: Duration::from_secs(5),
            auth: None,
            max_sessions: 1024,
            session_idle: Duration::from_secs(30 * 60),
            max_sessions_per_client: 64,
            session_init_timeout: Duration::from_secs(60),
            max_initialize_params_bytes: 64 << 10,
            cors: None,
            #[cfg(feature = "legacy")]
            session_store: None,
            max_queued_notifications: 256,
            max_dropped_notifications: 100_000,
            notification_stall: Duration::from_secs(30),
        }
    }
}

impl EndpointConfig {
    /// Accepts `host` (a name without port, any case) as a `Host` and, on any scheme and port,
    /// as an `Origin`: the name clients use for this server beside the loopback defaults.
    pub fn allow_host(mut self, host: impl AsRef<str>) -> Self {
        let host = host.as_ref().to_ascii_lowercase();
        if !self.allowed_hosts.contains(&host) {
            self.allowed_origins.push(format!("host:{host}"));
            self.allowed_hosts.push(host);
        }
        self
    }

    /// Requires bearer tokens checked by `auth` (the `auth` field), and accepts the host
    /// of its canonical resource URI (`https://mcp.example/mcp` -> `mcp.example`) as a `Host` and
    /// `Origin`: the name clients use for this server.
    pub fn auth(mut self, auth: Arc<AuthConfig>) -> Self {
        if let Some((_, authority, _)) = mcp_auth::metadata::split_uri(auth.resource()) {
            let host =
                authority.rsplit_once(':').filter(|(_, p)| p.parse::<u16>().is_ok()).map_or(authority, |(h, _)| h);
            let host = host.to_owned();
            self = self.allow_host(host);
        }
        self.auth = Some(auth);
        self
    }

    /// Cross-origin access for browser clients (the `cors` field).
    pub fn cors(mut self, cors: CorsConfig) -> Self {
        self.cors = Some(cors);
        self
    }

    /// The largest accepted request body (the `max_body_bytes` field).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Where legacy sessions live (the `session_store` field).
    #[cfg(feature = "legacy")]
    pub fn session_store(mut self, store: Arc<dyn crate::SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }
}

/// A request body the endpoint can read: any `http_body::Body` of bytes (hyper's `Incoming`,
/// `axum::body::Body`, `http_body_util::Full`, ...).
pub trait RequestBody:
    http_body::Body<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}

impl<B> RequestBody for B where
    B: http_body::Body<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}

/// The MCP endpoint: a `tower::Service<http::Request<B>>` for any [`RequestBody`], so it mounts
/// in an axum `Router` or under tower layers; [`crate::serve`] runs it on hyper. Cheap to clone.
#[derive(Clone)]
pub struct McpService {
    pub(crate) server: Server,
    pub(crate) config: Arc<EndpointConfig>,
    pub(crate) budget: crate::body_read::BodyBudget,
    #[cfg(feature = "legacy")]
    pub(crate) sessions: Arc<Sessions>,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService").field("server", &self.server).field("config", &self.config).finish_non_exhaustive()
    }
}

pub(crate) type Resp = Response<McpBody>;

/// `202 Accepted` with no body (notifications and responses POSTed by the client).
pub(crate) fn accepted() -> Response<McpBody> {
    status_only(StatusCode::ACCEPTED)
}

pub(crate) fn status_only(status: StatusCode) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = status;
    r
}

/// `405 Method Not Allowed` naming the methods the endpoint takes (`allow`).
pub(crate) fn method_not_allowed(allow: &'static str) -> Resp {
    let mut r = status_only(StatusCode::METHOD_NOT_ALLOWED);
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

pub(crate) fn bytes_response(status: StatusCode, body: Vec<u8>) -> Resp {
    let mut r = Response::new(McpBody::Full(Some(Bytes::from(body))));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn json_response(status: StatusCode, v: &Value) -> Resp {
    let body = serde_json::to_vec(v).expect("JSON serializes");
    let mut r = Response::new(McpBody::Full(Some(Bytes::from(body))));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// The HTTP response for a protocol error: its status, its JSON-RPC error body, and the
/// headers some errors carry. Cold: a request that succeeds never runs it, so its code stays
/// out of the request path's cache lines.
#[cold]
#[inline(never)]
pub(crate) fn error_response(e: &ProtocolError, id: Option<&Value>) -> Resp {
    let mut r = json_response(e.http_status(), &e.to_response(id));
    match e {
        ProtocolError::Unavailable { .. } => {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        // Whole seconds, rounded up (RFC 9110 §10.2.3).
        ProtocolError::RateLimited { retry_after, .. } => {
            let secs = retry_after.as_millis().div_ceil(1000).max(1);
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs as u64));
        }
        // The rest of the body is unread: the connection cannot carry another request.
        ProtocolError::PayloadTooLarge { .. } | ProtocolError::RequestTimeout { .. } => {
            r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        _ => {}
    }
    r
}

pub(crate) fn sse_response(rx: mpsc::Receiver<Bytes>) -> Resp {
    sse_response_headers(McpBody::Stream(rx))
}

/// Marks a listen stream (a `subscriptions/listen` response or a legacy session's GET stream),
/// with who it belongs to (its authenticated principal, if any): a response extension that
/// [`serve`](crate::serve()) reads to count listen streams, per principal rather than per peer
/// address when there is one.
#[derive(Clone, Debug)]
pub(crate) struct StreamOwner(pub(crate) Option<Arc<str>>);

/// `r` marked as a listen stream of `owner`.
pub(crate) fn with_stream_owner(mut r: Resp, owner: Option<Arc<str>>) -> Resp {
    r.extensions_mut().insert(StreamOwner(owner));
    r
}

fn sse_response_headers(body: McpBody) -> Resp {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

impl McpService {
    /// A service serving `server` with `config`.
    pub fn new(server: Server, mut config: EndpointConfig) -> Self {
        if let Some(cors) = &config.cors {
            let extra: Vec<String> =
                cors.allow_origins.iter().filter(|o| !config.allowed_origins.contains(o)).cloned().collect();
            config.allowed_origins.extend(extra);
        }
        Self {
            server,
            #[cfg(feature = "legacy")]
            sessions: Sessions::new(
                crate::legacy::SessionLimits {
                    max: config.max_sessions,
                    per_client: config.max_sessions_per_client,
                    idle: config.session_idle,
                    init_timeout: config.session_init_timeout,
                },
                config.session_store.clone(),
            ),
            budget: crate::body_read::BodyBudget::new(config.max_body_bytes_in_flight),
            config: Arc::new(config),
        }
    }

    /// Handles one HTTP request (any body type: hyper's, axum's, a test's `Full<Bytes>`). The
    /// peer's address, if wanted, is a `SocketAddr` in the request's extensions.
    pub async fn handle<B: RequestBody>(&self, req: Request<B>) -> Resp {
        self.handle_from(req, Peer::default()).await
    }

    /// [`McpService::handle`] for a request whose peer `serve` knows.
    ///
    /// Not an `async fn`, nor are `route`, `read_body` and `request`: an `async fn` keeps its
    /// arguments twice in its future (as captured and as moved into the body), and the request
    /// future is built on the stack and moved a few times per request.
    pub(crate) fn handle_from<B: RequestBody>(
        &self,
        req: Request<B>,
        peer: Peer,
    ) -> impl std::future::Future<Output = Resp> + Send + '_ {
        use futures::future::Either;
        let Some(cors) = &self.config.cors else {
            // Without CORS the route's own future: no adapter's code on the request path.
            return Either::Left(self.route(req, peer));
        };
        let origin = req.headers().get(header::ORIGIN).cloned();
        let origin = origin.filter(|o| crate::validate::origin_allowed(o, &self.config.allowed_origins));
        // A map, not an `async` block: one awaiting `route` would hold its future twice.
        Either::Right(futures::FutureExt::map(self.route(req, peer), move |mut resp| {
            if let Some(origin) = origin {
                cors.decorate(&mut resp, &origin);
            }
            resp
        }))
    }

    /// The settings this service runs with.
    pub fn config(&self) -> &EndpointConfig {
        &self.config
    }

    // Written out rather than `async fn`, which would keep `req` twice in the future. The request
    // is split into head and body before the future is made, and what follows the body (parse,
    // header checks, dispatch) is a plain function: only the head, the body's future and the
    // caller cross an await, so the request future stays small (it is moved whole, twice, per
    // request).
    #[allow(clippy::manual_async_fn)]
    fn route<B: RequestBody>(
        &self,
        req: Request<B>,
        from: Peer,
    ) -> impl std::future::Future<Output = Resp> + Send + '_ {
        let declared = crate::body_read::declared_length(req.body());
        let (parts, body) = req.into_parts();
        async move {
            let (allowed_hosts, allowed_origins) = (&self.config.allowed_hosts, &self.config.allowed_origins);
            if let Err(e) = check_host_origin(&parts.headers, parts.uri.authority(), allowed_hosts, allowed_origins) {
                return error_response(&e, None);
            }
            if let (Some(cors), &Method::OPTIONS) = (&self.config.cors, &parts.method) {
                return cors.preflight(&parts.headers);
            }
            // Authorization before anything else is read: an unauthenticated client cannot make the
            // server buffer a body, and no handler runs for it.
            // ... or by an `AuthLayer` in front of this service, which left its verdict behind.
            let (auth, principal) = match &self.config.auth {
                // Boxed, as every branch most requests do not take: the route future's poll keeps a
                // small stack frame (a deep request stack costs cache misses on every request).
                Some(auth) => match Box::pin(crate::auth_layer::authenticate(auth, &parts.headers, &parts.uri)).await {
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
                return Box::pin(self.session_call(req, &sid, auth.as_deref(), (principal, from.known))).await;
            }
            if parts.method != Method::POST {
                return method_not_allowed("POST");
            }
            let read = crate::body_read::read_body(body, declared, &self.config, &self.budget).await;
            match self.after_body(read, parts, auth.as_deref(), principal, from) {
                AfterBody::Answer(r) => r,
                AfterBody::Call(call) => call.await,
                AfterBody::Boxed(other) => other.await,
            }
        }
    }

    /// What follows a POST's body: parse it, check the headers against it, and start the call.
    /// A plain function, so none of this crosses an await of the request future.
    fn after_body(
        &self,
        read: Result<(Bytes, crate::body_read::Reserved), ProtocolError>,
        parts: http::request::Parts,
        auth: Option<&AuthConfig>,
        principal: Option<Principal>,
        from: Peer,
    ) -> AfterBody<'_, impl std::future::Future<Output = Resp> + Send + '_> {
        let (bytes, held) = match read {
            Ok(x) => x,
            Err(e) => return AfterBody::Answer(error_response(&e, None)),
        };
        let msg = parse_incoming(&bytes, self.config.max_depth);
        drop((bytes, held));
        let msg = match msg {
            Ok(m) => m,
            Err(rej) => return AfterBody::Answer(error_response(&rej.error, rej.id.as_ref())),
        };
        let req = match msg {
            // No client notification has meaning over HTTP in this revision; accept and ignore.
            Incoming::Notification(_) => return AfterBody::Answer(accepted()),
            #[cfg(feature = "legacy")]
            Incoming::Request(r) if is_legacy_initialize(&parts.headers, &r) => {
                let peer = parts.extensions.get::<std::net::SocketAddr>().copied().or(from.conn);
                let peer = peer.map(|a| a.ip());
                return AfterBody::Boxed(Box::pin(self.open_session(r, principal.map(|p| p.subject), peer)));
            }
            Incoming::Request(r) => r,
        };
        let caller_scopes = principal.as_ref().map_or(&[][..], |p| &p.scopes[..]);
        let caller = mcp_server::Caller::new(principal.as_ref().map(|p| p.subject.as_str()), caller_scopes);
        if let Err(e) = check_request_headers(&parts.headers, &req, &self.server, &caller) {
            return AfterBody::Answer(error_response(&e, Some(&req.id)));
        }
        // Per-tool scopes (the Mcp-Name header was just checked against this name).
        if let Some(refusal) = tool_scope_refusal(auth, principal.as_ref(), &req) {
            return AfterBody::Answer(refusal);
        }
        if !is_known_method(&req.method) {
            let e = ProtocolError::method_not_found(req.method.clone());
            return AfterBody::Answer(error_response(&e, Some(&req.id)));
        }
        // One request per POST: the modern core's stateless rules (ids cannot collide, and
        // cancellation is the connection going away).
        match mcp_server::session::stateless(req) {
            Stateless::Listen(d) => AfterBody::Boxed(Box::pin(self.listen(d, principal, parts, from.known))),
            Stateless::Call(d) => AfterBody::Call(self.request(d, principal, parts, from.known)),
        }
    }

    async fn listen(
        &self,
        d: Dispatch,
        principal: Option<Principal>,
        parts: http::request::Parts,
        peer: Option<std::net::SocketAddr>,
    ) -> Resp {
        let id = d.request.id.clone();
        let cancel = CancellationToken::new();
        let mut env = RequestEnv::new(cancel.clone());
        let owner = principal.as_ref().map(|p| Arc::from(p.subject.as_str()));
        set_caller(&mut env, principal);
        env.http = Some(Arc::new(parts));
        env.peer = peer;
        let stream = match Job::stateless(d, &self.server, cancel.clone()).listen(&env).await {
            Ok(s) => s,
            Err(e) => return error_response(&e, Some(&id)),
        };
        let (tx, rx) = mpsc::channel::<Bytes>(64);
        let keep_alive = self.config.keep_alive;
        tokio::spawn(async move {
            // Ends the server's side of the stream however the pump ends.
            let _guard = cancel.drop_guard();
            let gone = tx.clone();
            mcp_server::session::pump(stream, async move { gone.closed().await }, Some(keep_alive), |item| {
                let event = item.map_or(Bytes::from_static(b":\n\n"), |v| sse_event(&v));
                let tx = tx.clone();
                async move { tx.send(event).await.is_ok() }
            })
            .await;
        });
        with_stream_owner(sse_response(rx), owner)
    }

    /// Starts a modern call and returns the future answering it.
    fn request(
        &self,
        d: Dispatch,
        principal: Option<Principal>,
        parts: http::request::Parts,
        peer: Option<std::net::SocketAddr>,
    ) -> impl std::future::Future<Output = Resp> + Send + '_ {
        let id = d.request.id.clone();
        let (mut env, note_rx) = request_env(principal, Some(parts), NoteLimits::of(&self.config));
        env.peer = peer;
        let call = Job::call_stateless(d, &self.server, env);
        self.respond(id, call, note_rx)
    }

    /// Runs a modern request's handler future: one JSON response if it finishes without
    /// notifying (the rule of both eras, [`NoteQueue::answer_alone`]), else an SSE stream of the
    /// notifications, then the response. Closing the stream cancels the handler.
    ///
    /// Most handlers finish on their first poll: that poll is made here, and only a handler that
    /// waits gets the rest ([`McpService::wait`], boxed), so no select, drop guard or
    /// notification wait is on the path of the others.
    async fn respond(&self, id: Value, mut call: Call, notes: NoteQueue) -> Resp {
        use std::task::Poll;
        // Polled once, in this future's own poll: it cannot be dropped half-way, so a call that
        // finishes here needs no guard to cancel it.
        match std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await {
            Poll::Ready(r) => {
                let answer = self.answer(&id, &notes, &r);
                // What the call leaves (its context) is freed once the answer is out, when the
                // connection's poll writes it (`serve`); else now.
                mcp_server::session::after_write::drop_after_write(call);
                answer
            }
            Poll::Pending => Box::pin(self.wait(id, call, notes)).await,
        }
    }

    /// The response to a call that finished: JSON when it did not notify, else SSE.
    fn answer(&self, id: &Value, notes: &NoteQueue, r: &Result<Reply, ProtocolError>) -> Resp {
        if !notes.answer_alone() {
            return self.notes_then_response(id, notes, r);
        }
        match r {
            Ok(_) => bytes_response(StatusCode::OK, self.server.encode_response(id, r)),
            Err(e) => error_response(e, Some(id)),
        }
    }

    /// [`McpService::respond`] for a handler that waits: its response, or the SSE stream its
    /// first notification starts.
    async fn wait(&self, id: Value, mut call: Call, notes: NoteQueue) -> Resp {
        // Fires the cancellation token if this future (or the SSE task) is dropped before the
        // response is out: the client went away.
        let guard = notes.cancellation().drop_guard();
        let first = tokio::select! {
            biased;
            r = &mut call => {
                guard.disarm();
                return self.answer(&id, &notes, &r);
            }
            n = notes.recv() => match n {
                Some(n) => n,
                // Cancelled for lag before anything was sent (a tiny budget): end with the error.
                None => return bytes_response(StatusCode::OK, notes.overflow_error(&id).to_string().into_bytes()),
            },
        };
        self.stream_rest(id, call, notes, guard, first)
    }

    /// A call that finished after notifying: one SSE body with its notifications, then the
    /// response (or the lag error, if the notifications overflowed). Out of line, as
    /// [`McpService::stream_rest`].
    #[inline(never)]
    fn notes_then_response(&self, id: &Value, notes: &NoteQueue, r: &Result<Reply, ProtocolError>) -> Resp {
        if notes.is_overflowed() {
            return bytes_response(StatusCode::OK, notes.overflow_error(id).to_string().into_bytes());
        }
        let mut body = Vec::new();
        while let Some(n) = notes.try_recv() {
            body.extend_from_slice(&sse_event(&n));
        }
        body.extend_from_slice(&sse_event_bytes(&self.server.encode_response(id, r)));
        sse_response_headers(McpBody::Full(Some(Bytes::from(body))))
    }

    /// The rest of [`McpService::respond`] once a notification arrived while the handler still
    /// runs: an SSE stream of the notifications, then the response. Out of line: most calls
    /// answer at once, and this path's task would otherwise widen `respond`'s stack frame.
    #[inline(never)]
    fn stream_rest(
        &self,
        id: Value,
        mut fut: Call,
        notes: NoteQueue,
        guard: tokio_util::sync::DropGuard,
        first: Value,
    ) -> Resp {
        // The handler's notifications wait in `notes` (bounded) while the client is slow to read.
        let (tx, rx) = mpsc::channel::<Bytes>(64);
        let server = self.server.clone();
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
                    r = &mut fut, if outcome.is_none() => {
                        if let Some(g) = guard.take() {
                            g.disarm();
                        }
                        outcome = Some(r);
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
}

/// What follows a POST's body ([`McpService::after_body`]): the response now, the call's
/// future, or (boxed) a listen stream's or a legacy session's opening.
enum AfterBody<'a, F> {
    Answer(Resp),
    Call(F),
    Boxed(std::pin::Pin<Box<dyn std::future::Future<Output = Resp> + Send + 'a>>),
}

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

/// The environment of one request (its cancellation token in `cancel`) and its notification
/// queue (which holds a copy of the token, to cancel the call on overflow).
fn request_env(
    principal: Option<Principal>,
    http: Option<http::request::Parts>,
    limits: NoteLimits,
) -> (RequestEnv, NoteQueue) {
    let cancel = CancellationToken::new();
    let (notes, sink) = NoteQueue::new(limits, cancel.clone());
    let mut env = RequestEnv::new(cancel);
    set_caller(&mut env, principal);
    env.sink = Some(sink);
    env.http = http.map(Arc::new);
    (env, notes)
}

/// Puts the token's subject and scopes into `env` (what handlers and access rules see).
pub(crate) fn set_caller(env: &mut RequestEnv, principal: Option<Principal>) {
    if let Some(p) = principal {
        env.principal = Some(p.subject);
        env.scopes = p.scopes.into();
    }
}

/// The refusal of a `tools/call` the principal's scopes do not cover, if any.
pub(crate) fn tool_scope_refusal(
    auth: Option<&AuthConfig>,
    principal: Option<&Principal>,
    req: &mcp_protocol::Request,
) -> Option<Resp> {
    let (Some(auth), Some(p)) = (auth, principal) else { return None };
    if mcp_protocol::Method::parse(&req.method) != Some(mcp_protocol::Method::ToolsCall) {
        return None;
    }
    let name = req.params.get("name").and_then(Value::as_str)?;
    auth.check_tool(p, name).err().map(|e| auth_refusal(auth, &e))
}

pub(crate) fn auth_refusal(auth: &AuthConfig, e: &AuthError) -> Resp {
    let refusal = auth.refusal(e);
    let mut r = Response::new(McpBody::Full(Some(Bytes::from(refusal.body))));
    *r.status_mut() = refusal.status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(v) = refusal.www_authenticate.and_then(|v| HeaderValue::try_from(v).ok()) {
        h.insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

/// The protected-resource metadata document (GET/HEAD, no authentication, any origin).
pub(crate) fn metadata_response(auth: &AuthConfig, method: &Method) -> Resp {
    let (status, body) = match *method {
        Method::GET | Method::HEAD => (StatusCode::OK, McpBody::Full(Some(auth.metadata_json().clone()))),
        Method::OPTIONS => (StatusCode::NO_CONTENT, McpBody::empty()),
        _ => (StatusCode::METHOD_NOT_ALLOWED, McpBody::empty()),
    };
    let mut r = Response::new(body);
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    if status == StatusCode::OK {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
    } else {
        h.insert(header::ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
    }
    r
}
