//! The per-request [`Context`] handed to every handler.

use crate::inputs::Inputs;
use mcp_protocol::jsonrpc::notification;
use mcp_protocol::meta::RequestMeta;
use mcp_protocol::types::{LoggingLevel, LoggingMessageNotificationParams, ProgressNotificationParams, ProgressToken};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Where request-scoped notifications (progress, log messages) go: the transport decides how to
/// deliver them (an SSE response stream on HTTP, stdout on stdio). Cheap to clone.
#[derive(Clone)]
pub struct NotificationSink(Arc<dyn Fn(Value) + Send + Sync>);

impl NotificationSink {
    /// A sink calling `f` with each notification message.
    pub fn new(f: impl Fn(Value) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Delivers one notification message.
    pub fn send(&self, message: Value) {
        (self.0)(message)
    }
}

impl std::fmt::Debug for NotificationSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NotificationSink")
    }
}

/// What a transport knows about a request besides its JSON-RPC body.
#[derive(Debug, Clone, Default)]
pub struct RequestEnv {
    /// The authenticated principal (e.g. the token subject), if the transport authenticated one.
    pub principal: Option<String>,
    /// The scopes the caller's access token grants (empty without one); with `principal`, what
    /// [`crate::Access`] rules decide on.
    pub scopes: Arc<[String]>,
    /// The address of the peer the request came from, when the transport gives it (HTTP served
    /// by `mcp_http::serve` when the server needs it: see [`crate::Server::needs_peer_address`]).
    pub peer: Option<std::net::SocketAddr>,
    /// Sink for request-scoped notifications; `None` drops them.
    pub sink: Option<NotificationSink>,
    /// Cancelled when the client cancels the request or goes away.
    pub cancel: CancellationToken,
    /// Set by transports whose response streams the client can resume (legacy Streamable HTTP
    /// sessions): [`Context::close_stream`] fires it and the transport ends the stream while the
    /// handler keeps running. `None` elsewhere.
    pub close_stream: Option<CancellationToken>,
    /// The HTTP request the call arrived in (Streamable HTTP only), for the
    /// [`crate::HttpRequest`] extractor.
    pub http: Option<Arc<http::request::Parts>>,
}

impl RequestEnv {
    /// The caller, as [`crate::Access`] rules see it.
    pub fn caller(&self) -> crate::access::Caller<'_> {
        crate::access::Caller::new(self.principal.as_deref(), &self.scopes)
    }

    /// The peer's address: [`RequestEnv::peer`], else a `SocketAddr` in the HTTP request's
    /// extensions (how a server other than `mcp_http::serve` may give it).
    pub fn peer_address(&self) -> Option<std::net::SocketAddr> {
        self.peer.or_else(|| self.http.as_ref()?.extensions.get::<std::net::SocketAddr>().copied())
    }

    /// An environment with only a cancellation token (no principal, sink or HTTP parts); set
    /// the other fields as the transport knows them.
    pub fn new(cancel: CancellationToken) -> Self {
        Self { principal: None, scopes: Arc::default(), peer: None, sink: None, cancel, close_stream: None, http: None }
    }

    /// This environment with another cancellation token (what a session's job runs with).
    pub fn with_cancel(&self, cancel: CancellationToken) -> Self {
        Self {
            principal: self.principal.clone(),
            scopes: self.scopes.clone(),
            peer: self.peer,
            sink: self.sink.clone(),
            cancel,
            close_stream: self.close_stream.clone(),
            http: self.http.clone(),
        }
    }
}

/// What a context holds. `S` is the server that serves the request, erased (`dyn Any`) in
/// [`Context`], so that this floor does not know the server type; the server's floor gives it
/// back typed ([`Context::server`]). It is the last field, for that unsized coercion.
pub(crate) struct ContextInner<S: ?Sized = dyn std::any::Any + Send + Sync> {
    pub(crate) id: Value,
    pub(crate) method: String,
    pub(crate) meta: RequestMeta,
    pub(crate) params: Map<String, Value>,
    pub(crate) env: RequestEnv,
    pub(crate) state: Value,
    /// Input requests issued so far by the typed `elicit`/`sample`/`roots` calls.
    pub(crate) asked: std::sync::atomic::AtomicU32,
    /// Served in a legacy (initialize-based) session.
    pub(crate) legacy: bool,
    /// The task this handler runs in, or the way to start one: set by the tasks extension
    /// before the handler runs (unset for a call that is no task).
    pub(crate) task: std::sync::OnceLock<Arc<dyn TaskScope>>,
    /// Status messages sent so far (the progress counter outside tasks).
    pub(crate) statuses: std::sync::atomic::AtomicU32,
    /// The server that registered the item being served, when it was mounted into this one
    /// ([`crate::ServerBuilder::mount`]): what [`Context::server`] names. Erased as `server`.
    pub(crate) home: std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>,
    /// The server serving the request.
    pub(crate) server: S,
}

impl<S> ContextInner<S> {
    /// A context of a request served by `server` (modern, with nothing yet asked or attached).
    pub(crate) fn new(
        server: S,
        id: Value,
        method: String,
        meta: RequestMeta,
        params: Map<String, Value>,
        env: RequestEnv,
        state: Value,
    ) -> Self {
        Self {
            id,
            method,
            meta,
            params,
            env,
            state,
            asked: Default::default(),
            legacy: false,
            task: Default::default(),
            statuses: Default::default(),
            home: Default::default(),
            server,
        }
    }
}

/// The task side of a call, as the tasks extension attaches it to the [`Context`] (the engine
/// knows no more of tasks than this).
pub(crate) trait TaskScope: Send + Sync {
    /// The id of the task the call runs in, once it runs in one.
    fn task_id(&self) -> Option<&str>;
    /// Creates the task now, if the call may run as one ([`Context::start_task`]).
    fn start_task(&self) -> ScopeFuture<'_, Result<(), crate::error::HandlerError>>;
    /// Sets the running task's status message ([`Context::status`]); only called once
    /// [`TaskScope::task_id`] is `Some`.
    fn set_status<'a>(&'a self, ctx: &'a Context, message: String) -> ScopeFuture<'a, ()>;
}

/// The future of a [`TaskScope`] method.
pub(crate) type ScopeFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// Everything a handler may know about the request it serves. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("id", &self.inner.id).field("method", &self.inner.method).finish()
    }
}

impl Context {
    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &Value {
        &self.inner.id
    }

    /// The method being served.
    pub fn method(&self) -> &str {
        &self.inner.method
    }

    /// The protocol version the request declared.
    pub fn protocol_version(&self) -> &str {
        &self.inner.meta.protocol_version[..]
    }

    /// The client capabilities the request declared.
    pub fn client_capabilities(&self) -> &Map<String, Value> {
        &self.inner.meta.client_capabilities
    }

    /// The client's self-reported `Implementation`, if sent.
    pub fn client_info(&self) -> Option<&Value> {
        self.inner.meta.client_info.as_ref()
    }

    /// The authenticated principal, if any.
    pub fn principal(&self) -> Option<&str> {
        self.inner.env.principal.as_deref()
    }

    /// The scopes the caller's access token grants (empty without one).
    pub fn scopes(&self) -> &[String] {
        &self.inner.env.scopes
    }

    /// The caller (principal, scopes, and whether its client renders MCP Apps), as
    /// [`crate::Access`] rules see it.
    pub fn caller(&self) -> crate::access::Caller<'_> {
        let apps = mcp_protocol::apps::renders_apps(&self.inner.meta.client_capabilities);
        self.inner.env.caller().with_apps(apps)
    }

    /// The request's raw `params`.
    pub fn params(&self) -> &Map<String, Value> {
        &self.inner.params
    }

    /// A token cancelled when the client cancels the request (or disconnects).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.env.cancel
    }

    /// Asks the transport to end this request's response stream now; the handler keeps running
    /// and the client picks up the rest by resuming the stream (`Last-Event-ID`). Only legacy
    /// Streamable HTTP sessions support this (long-running work behind proxies that cut idle
    /// connections); elsewhere it does nothing. (Feature `legacy`.)
    #[cfg(feature = "legacy")]
    pub fn close_stream(&self) {
        if let Some(t) = &self.inner.env.close_stream {
            t.cancel();
        }
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.env.cancel.is_cancelled()
    }

    /// Request-scoped MRTR state carried (sealed) from the previous round of this request
    /// (`Null` if none): what a handler put there with [`Inputs::set_state`]. Not application
    /// state; for that see [`crate::State`].
    pub fn round_state(&self) -> &Value {
        &self.inner.state
    }

    /// The input responses of an MRTR retry, if any: only answers to the input requests the
    /// previous round issued (recorded in its verified `requestState`). Answers sent without
    /// valid state, or under keys never asked, were dropped before the handler ran; they are not
    /// in [`Context::params`] either.
    pub fn input_responses(&self) -> Option<&Map<String, Value>> {
        self.inner.params.get("inputResponses").and_then(Value::as_object)
    }

    /// Fails with `MissingRequiredClientCapability` (`-32021`) unless the client declared every
    /// capability in `needed`, e.g. `json!({"sampling": {}})`.
    pub fn require_capability(&self, needed: Value) -> Result<(), mcp_protocol::ProtocolError> {
        if crate::inputs::declares(&self.inner.meta.client_capabilities, &needed) {
            Ok(())
        } else {
            Err(mcp_protocol::ProtocolError::MissingRequiredClientCapability { required: needed })
        }
    }

    /// Starts collecting input requests for this round (see [`Inputs`]).
    pub fn inputs(&self) -> Inputs<'_> {
        Inputs::new(self.input_responses(), &self.inner.meta.client_capabilities)
    }

    /// Whether the client asked for progress notifications (sent a `progressToken`). Never
    /// inside a task: the tasks extension has no progress notifications.
    pub fn wants_progress(&self) -> bool {
        self.inner.meta.progress_token.is_some() && self.inner.env.sink.is_some() && self.task_id().is_none()
    }

    /// Whether this request declared the tasks extension in its own `_meta` client capabilities
    /// (a legacy session never does).
    pub fn declares_tasks(&self) -> bool {
        !self.inner.legacy
            && self
                .inner
                .meta
                .client_capabilities
                .get("extensions")
                .and_then(|e| e.get(mcp_protocol::meta::TASKS_EXTENSION))
                .is_some_and(Value::is_object)
    }

    /// The id of the task this handler runs in, if it runs in one.
    pub fn task_id(&self) -> Option<&str> {
        self.inner.task.get()?.task_id()
    }

    /// For tools registered with [`crate::tasks::TaskStart::Handler`]: creates the task now, if
    /// this call may run as one, and returns once the rest of the handler runs in it (the
    /// client has its `CreateTaskResult`). Questions asked before this call were answered
    /// synchronously (MRTR); questions after it park the task. When the call cannot be a task
    /// (the client did not declare the extension, or the tool is not registered that way) it
    /// returns at once and the handler goes on synchronously.
    ///
    /// Fails when the tool requires a task and none can be created (capacity).
    pub async fn start_task(&self) -> Result<(), crate::error::HandlerError> {
        match self.inner.task.get() {
            Some(task) => task.start_task().await,
            None => Ok(()),
        }
    }

    /// Reports what the work is doing. Inside a task this sets the task's `statusMessage`
    /// (seen by `tasks/get` and `notifications/tasks`); otherwise it is sent as a progress
    /// notification when the client asked for progress, and dropped when it did not.
    ///
    /// Inside a task, messages are coalesced: at most one write per
    /// [`crate::tasks::TaskConfig::status_interval`], the newest message winning. The call
    /// waits for the store only when it writes at once (the first message after a quiet
    /// interval); otherwise it returns at once and the message is written later, or not at all
    /// if a newer one replaces it. A message still waiting when the task completes is written
    /// before the result; one sent after the task ended is dropped.
    pub async fn status(&self, message: impl Into<String>) {
        let message = message.into();
        if let Some(task) = self.inner.task.get().filter(|t| t.task_id().is_some()) {
            task.set_status(self, message).await;
            return;
        }
        let n = self.inner.statuses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.progress(f64::from(n + 1), None, Some(&message));
    }

    /// Sends `notifications/progress` if the request carried a progress token.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let (Some(token), Some(sink)) = (&self.inner.meta.progress_token, &self.inner.env.sink) else {
            return;
        };
        if self.task_id().is_some() {
            return;
        }
        let Ok(token) = ProgressToken::deserialize(token) else { return };
        let params = ProgressNotificationParams {
            total,
            message: message.map(str::to_owned),
            ..ProgressNotificationParams::new(token, progress)
        };
        sink.send(notification("notifications/progress", serde_json::to_value(params).expect("params serialize")));
    }

    /// The least severe level the request asked `notifications/message` for
    /// (`io.modelcontextprotocol/logLevel` in its `_meta`): `debug` ... `emergency`.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.inner.meta.log_level.and_then(LoggingLevel::from_rank)
    }

    /// Sends `notifications/message` when the request set a log level at or below `level`.
    ///
    /// Without `io.modelcontextprotocol/logLevel` in the request nothing is sent, nor inside a
    /// task (the tasks extension has no log notifications; use [`Context::status`]). A legacy
    /// session's requests carry the level its client set with `logging/setLevel`, or until it
    /// does the server's default ([`crate::ServerBuilder::legacy_log_level`]: every level).
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        let (Some(min), Some(sink)) = (self.inner.meta.log_level, &self.inner.env.sink) else {
            return;
        };
        if self.task_id().is_some() {
            return;
        }
        let rank = level as u8;
        if rank < min {
            return;
        }
        let params = LoggingMessageNotificationParams {
            logger: logger.map(str::to_owned),
            ..LoggingMessageNotificationParams::new(level, data)
        };
        sink.send(notification("notifications/message", serde_json::to_value(params).expect("params serialize")));
    }
}
