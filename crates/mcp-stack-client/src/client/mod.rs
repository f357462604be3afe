//! The client core: era detection, version negotiation, request metadata, MRTR rounds.

mod call_tool;
mod tasks;

pub use call_tool::CallTool;
pub use tasks::{Started, TaskHandle};

use crate::cache::Cache;
use crate::error::{ClientError, TransportError};
use crate::handlers::{boxed, typed, Handlers};
use crate::list::{DEFAULT_MAX_LIST_BYTES, DEFAULT_MAX_LIST_ITEMS};
use crate::protocol::{Negotiation, Probed, Step};
use crate::transport::{ClientMeta, OutgoingRequest, Parts, Transport, TransportKind};
use crate::typed::Typed;
use mcp_protocol::headers::{self as h, encode_value, HeaderParam};
use mcp_protocol::types::{
    CreateMessageRequestParams, CreateMessageResult, DiscoverResult, ElicitRequestParams, ElicitResult, Implementation,
    JsonObject, ListRootsResult, LoggingLevel, Root, ServerCapabilities,
};
use mcp_protocol::version;
use parking_lot::RwLock;
use serde::Deserialize as _;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// What the client learned when it connected.
#[derive(Debug, Clone)]
pub enum ServerEra {
    /// A modern (stateless) server.
    Modern {
        /// The protocol version in use.
        version: String,
        /// The `server/discover` result.
        discover: Box<Typed<DiscoverResult>>,
    },
    /// A legacy (initialize-based) server.
    Legacy {
        /// The negotiated protocol version.
        version: String,
        /// The `initialize` result, as it came (legacy revisions only: the current schema has no
        /// type for it; [`Client::discover`] reads it as a `DiscoverResult`).
        initialize: Value,
    },
}

/// A callback receiving a notification's `params`.
pub type NotificationCallback = Arc<dyn Fn(&Value) + Send + Sync>;

/// Per-call options.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Called with each `notifications/progress` params object; setting it sends a progress token.
    pub on_progress: Option<NotificationCallback>,
    /// Called with each `notifications/message` params object.
    pub on_log: Option<NotificationCallback>,
    /// Minimum log level to ask for (`io.modelcontextprotocol/logLevel`).
    pub log_level: Option<LoggingLevel>,
    /// Overrides the client's request timeout.
    pub timeout: Option<Duration>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions").field("log_level", &self.log_level).field("timeout", &self.timeout).finish()
    }
}

/// The elicitation modes an application handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElicitationModes {
    /// Form mode: the user fills in a `requestedSchema`.
    pub form: bool,
    /// URL mode: the user is sent to a URL.
    pub url: bool,
}

impl ElicitationModes {
    /// Form mode only.
    pub const FORM: Self = Self { form: true, url: false };
    /// URL mode only.
    pub const URL: Self = Self { form: false, url: true };
    /// Both modes.
    pub const FORM_AND_URL: Self = Self { form: true, url: true };
}

/// What kind of sampling an application handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sampling {
    /// Messages in, a message out.
    Text,
    /// Also tool use inside sampling (`sampling.tools`).
    WithTools,
}

/// Configures and connects a [`Client`].
pub struct ClientBuilder {
    pub(crate) info: Implementation,
    pub(crate) handlers: Handlers,
    pub(crate) timeout: Duration,
    pub(crate) max_timeout: Duration,
    pub(crate) probe_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) max_rounds: usize,
    pub(crate) legacy_version: String,
    pub(crate) allow_legacy: bool,
    pub(crate) force_legacy: bool,
    pub(crate) tasks: bool,
    /// Sees every JSON-RPC message of a request exchange ([`ClientBuilder::on_traffic`]).
    pub(crate) traffic: Option<TrafficTap>,
    /// Takes the log messages no call takes ([`ClientBuilder::on_log`]).
    pub(crate) log_handler: Option<NotificationCallback>,
    /// The log level asked of the server ([`ClientBuilder::log_level`]).
    pub(crate) log_level: Option<LoggingLevel>,
    /// Whether a log message that names no request goes to the one call in flight
    /// ([`ClientBuilder::log_attribution`]).
    pub(crate) log_attribution: bool,
    /// Most bytes and items of one paginated list ([`ClientBuilder::max_list`]).
    pub(crate) max_list_bytes: usize,
    pub(crate) max_list_items: usize,
}

/// Which way a message went (see [`ClientBuilder::on_traffic`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Direction {
    /// From this client to the server.
    Sent,
    /// From the server to this client.
    Received,
}

/// A callback seeing the client's JSON-RPC traffic.
pub type TrafficTap = Arc<dyn Fn(Direction, &Value) + Send + Sync>;

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder").field("info", &self.info).field("handlers", &self.handlers).finish()
    }
}

impl ClientBuilder {
    /// A client named `name` at `version` (sent as `clientInfo`).
    pub fn new(name: &str, version: &str) -> Self {
        Self {
            info: Implementation::new(name, version),
            handlers: Handlers::default(),
            timeout: Duration::from_secs(60),
            max_timeout: Duration::from_secs(600),
            probe_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(60),
            max_rounds: 8,
            legacy_version: version::LEGACY[0].to_owned(),
            allow_legacy: true,
            force_legacy: false,
            tasks: false,
            traffic: None,
            log_handler: None,
            log_level: None,
            log_attribution: true,
            max_list_bytes: DEFAULT_MAX_LIST_BYTES,
            max_list_items: DEFAULT_MAX_LIST_ITEMS,
        }
    }

    /// Handles elicitation in the given `modes` (declared as the `elicitation` capability):
    /// the handler gets the request's params and returns the user's answer. Defaults from
    /// `requestedSchema` are filled in and accepted content is validated against it before it
    /// is sent. Params that are not `ElicitRequestParams` are refused without calling it.
    pub fn on_elicitation<F, Fut>(self, modes: ElicitationModes, f: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ClientError>> + Send + 'static,
    {
        self.elicitation_handler(modes, typed("elicitation/create", f))
    }

    /// [`ClientBuilder::on_elicitation`] with the params and the result as JSON, unchecked
    /// (for a proxy passing questions on as they came). Form answers are still completed and
    /// validated.
    pub fn on_elicitation_raw<F, Fut>(self, modes: ElicitationModes, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ClientError>> + Send + 'static,
    {
        self.elicitation_handler(modes, boxed(f))
    }

    fn elicitation_handler(mut self, modes: ElicitationModes, h: crate::InputHandler) -> Self {
        self.handlers.elicitation = Some(h);
        self.handlers.elicitation_form = modes.form;
        self.handlers.elicitation_url = modes.url;
        self
    }

    /// Handles sampling (`CreateMessageRequestParams` in, `CreateMessageResult` out), with or
    /// without tool use. Params of another shape are refused without calling it.
    pub fn on_sampling<F, Fut>(mut self, support: Sampling, f: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ClientError>> + Send + 'static,
    {
        self.handlers.sampling = Some(typed("sampling/createMessage", f));
        self.handlers.sampling_tools = support == Sampling::WithTools;
        self
    }

    /// [`ClientBuilder::on_sampling`] with the params and the result as JSON, unchecked (for a
    /// proxy).
    pub fn on_sampling_raw<F, Fut>(mut self, support: Sampling, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ClientError>> + Send + 'static,
    {
        self.handlers.sampling = Some(boxed(f));
        self.handlers.sampling_tools = support == Sampling::WithTools;
        self
    }

    /// Answers `roots/list` with a fixed list of roots.
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        let result = Arc::new(ListRootsResult { roots, extra: JsonObject::new() });
        self.handlers.roots = Some(typed("roots/list", move |_: Value| {
            let result = ListRootsResult::clone(&result);
            async move { Ok(result) }
        }));
        self
    }

    /// Time a request may wait for its next message (progress resets it; default 60 s).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    /// Upper bound on a request's total time, whatever progress arrives (default 10 min).
    pub fn max_timeout(mut self, t: Duration) -> Self {
        self.max_timeout = t;
        self
    }

    /// How long the stdio era probe waits before assuming a legacy server (default 10 s; at
    /// most half of what is left of [`ClientBuilder::connect_timeout`], so that the legacy
    /// handshake keeps the other half).
    pub fn probe_timeout(mut self, t: Duration) -> Self {
        self.probe_timeout = t;
        self
    }

    /// Bound on connecting as a whole (default 60 s): the `server/discover` probes and, for a
    /// legacy server, the `initialize` handshake (with its HTTP+SSE fallback) share it. When it
    /// runs out, [`ClientBuilder::connect`] fails with [`ClientError::Timeout`] naming it.
    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }

    /// Most MRTR rounds per call (default 8).
    pub fn max_rounds(mut self, n: usize) -> Self {
        self.max_rounds = n.max(1);
        self
    }

    /// Skips the era probe and opens a legacy session with `initialize` at `version` (for
    /// servers known to be legacy, where even a probe would be unwelcome).
    pub fn force_legacy(mut self, version: &str) -> Self {
        self.legacy_version = version.to_owned();
        self.force_legacy = true;
        self
    }

    /// Declares the tasks extension on every modern request (default off): the server may then
    /// answer a `tools/call` with a task, which [`Client::call_tool`] follows to its end
    /// (see [`TaskHandle`]).
    pub fn tasks(mut self, on: bool) -> Self {
        self.tasks = on;
        self
    }

    /// Declares that this client renders MCP Apps views (`io.modelcontextprotocol/ui` with the
    /// HTML profile), on every modern request and in a legacy `initialize`: servers then list
    /// their app-only tools to it (see [`mcp_protocol::apps`], and `Tool::ui` for a tool's view).
    pub fn apps(self, on: bool) -> Self {
        let settings = on.then(|| match mcp_protocol::apps::client_capability() {
            Value::Object(m) => m,
            _ => unreachable!("the capability is an object"),
        });
        self.extension_settings(mcp_protocol::apps::EXTENSION, settings)
    }

    /// Declares the extension `name` with `settings` in the client's capabilities (what
    /// [`ClientBuilder::apps`] does for MCP Apps), for extensions this library has no switch for.
    pub fn extension(self, name: &str, settings: JsonObject) -> Self {
        self.extension_settings(name, Some(settings))
    }

    fn extension_settings(mut self, name: &str, settings: Option<JsonObject>) -> Self {
        match settings {
            Some(s) => self.handlers.extensions.insert(name.to_owned(), s),
            None => self.handlers.extensions.remove(name),
        };
        self
    }

    /// Calls `tap` with every JSON-RPC message a request exchange sends or receives: requests
    /// (with their `_meta`), responses, the notifications and server requests that arrive on
    /// them, and the answers a legacy session sends back (what an inspector's traffic pane or a
    /// debug log shows). Keep it quick: it runs on the request's task. Without a tap nothing is
    /// copied.
    pub fn on_traffic(mut self, tap: impl Fn(Direction, &Value) + Send + Sync + 'static) -> Self {
        self.traffic = Some(Arc::new(tap));
        self
    }

    /// Bounds every paginated list read in full ([`Client::list_tools`] and the other `list_*`):
    /// at most `bytes` of items (as JSON) and `items` items, all pages together (defaults
    /// [`DEFAULT_MAX_LIST_BYTES`], [`DEFAULT_MAX_LIST_ITEMS`]). Past a bound the list fails with
    /// [`ClientError::ListTooLarge`] and no further page is asked for.
    pub fn max_list(mut self, bytes: usize, items: usize) -> Self {
        self.max_list_bytes = bytes;
        self.max_list_items = items;
        self
    }

    /// Whether to fall back to legacy (initialize-based) servers (default true).
    pub fn allow_legacy(mut self, on: bool) -> Self {
        self.allow_legacy = on;
        self
    }

    /// Connects over `transport`: detects the server's era and negotiates a version.
    pub async fn connect(self, transport: impl Transport) -> Result<Client, ClientError> {
        Client::connect(self, Arc::new(transport)).await
    }
}

pub(crate) struct Inner {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) config: ClientBuilder,
    /// Written once while connecting, read by every request: a read lock does not contend.
    pub(crate) era: RwLock<Option<ServerEra>>,
    pub(crate) next_id: AtomicI64,
    pub(crate) tool_headers: RwLock<HashMap<String, Arc<[HeaderParam]>>>,
    /// When the tool list was last read in full for an unknown tool name, whatever came of
    /// the read (one such read at a time).
    pub(crate) tools_relisted: tokio::sync::Mutex<Option<Instant>>,
    /// Whether a `tools/list` change was announced since that read began (the next unknown
    /// name reads the list again at once).
    pub(crate) tools_stale: std::sync::atomic::AtomicBool,
    pub(crate) cache: Cache,
    /// The `clientCapabilities` of modern requests, as JSON text (computed once: every
    /// request sends it).
    pub(crate) modern_caps: Box<RawValue>,
    /// The `clientInfo` of modern requests, as JSON text.
    pub(crate) info_json: Box<RawValue>,
    /// Legacy sessions: where server notifications go ([`Client::listen`] on a legacy server).
    pub(crate) listeners: Listeners,
}

/// The open legacy subscriptions of a client: each gets every server notification, on a queue
/// of [`crate::transport::UNSOLICITED_CAP`] (a subscription left unread loses notifications,
/// counted and logged, rather than growing).
pub(crate) type Listeners = parking_lot::Mutex<Vec<tokio::sync::mpsc::Sender<Value>>>;

/// An MCP client connected to one server. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("era", &self.era()).finish()
    }
}

impl Client {
    async fn connect(config: ClientBuilder, transport: Arc<dyn Transport>) -> Result<Self, ClientError> {
        let mut modern_caps = config.handlers.capabilities();
        if config.tasks {
            let extensions = modern_caps.extensions.get_or_insert_with(Default::default);
            extensions.insert(mcp_protocol::meta::TASKS_EXTENSION.to_owned(), JsonObject::new());
        }
        let raw = |text: serde_json::Result<String>| {
            RawValue::from_string(text.expect("a schema type serializes")).expect("a serialized value is JSON text")
        };
        let client = Client {
            inner: Arc::new(Inner {
                modern_caps: raw(serde_json::to_string(&modern_caps)),
                info_json: raw(serde_json::to_string(&config.info)),
                transport,
                config,
                era: RwLock::new(None),
                next_id: AtomicI64::new(1),
                tool_headers: RwLock::new(HashMap::new()),
                tools_relisted: tokio::sync::Mutex::new(None),
                tools_stale: std::sync::atomic::AtomicBool::new(false),
                cache: Cache::default(),
                listeners: Default::default(),
            }),
        };
        client.route_logs();
        let budget = client.inner.config.connect_timeout;
        let deadline = Instant::now() + budget;
        // One deadline for the whole handshake. Every exchange inside waits at most `budget`
        // for a message, so any timeout in there is this one.
        match tokio::time::timeout_at(deadline, client.detect_era(deadline)).await {
            Ok(Ok(())) => Ok(client),
            Ok(Err(ClientError::Timeout(_))) | Err(_) => Err(ClientError::Timeout(budget)),
            Ok(Err(e)) => Err(e),
        }
    }

    /// Probes the server's era (or runs `initialize` when forced legacy) before `deadline`.
    async fn detect_era(&self, deadline: Instant) -> Result<(), ClientError> {
        let opts = CallOptions { timeout: Some(self.inner.config.connect_timeout), ..CallOptions::default() };
        if self.inner.config.force_legacy {
            return self.initialize(&opts).await;
        }
        let allow_legacy = self.inner.config.allow_legacy;
        let mut negotiation = Negotiation::new(allow_legacy);
        loop {
            let version = negotiation.version().to_owned();
            let left = deadline.saturating_duration_since(Instant::now());
            // Silence means "legacy" only if the legacy handshake still has time to run.
            let wait = match self.inner.transport.kind() {
                _ if !allow_legacy => left,
                TransportKind::Stdio => self.inner.config.probe_timeout.min(left / 2),
                TransportKind::Http => self.inner.config.timeout.min(left / 2),
            };
            let response = self.probe(&version, wait, &opts).await?;
            let probed = match &response {
                Some(Ok(r)) => Probed::Response(r),
                Some(Err(status)) => Probed::HttpStatus(*status),
                None if !allow_legacy => return Err(ClientError::Timeout(self.inner.config.connect_timeout)),
                None => Probed::Silence,
            };
            match negotiation.handle(probed)? {
                Step::Probe => {}
                Step::Modern { version, discover } => {
                    *self.inner.era.write() = Some(ServerEra::Modern { version, discover });
                    // Nothing consumes unasked messages in a modern session: they are dropped
                    // as they come (server requests answered with an error), not queued.
                    self.inner.transport.route_unsolicited(None);
                    return Ok(());
                }
                Step::Legacy(why) => {
                    tracing::info!(reason = %why, "falling back to the legacy initialize handshake");
                    return self.initialize(&opts).await;
                }
            }
        }
    }

    /// Sends `server/discover` with `version`: the response, an HTTP 4xx status, or `None`
    /// when the server stays silent for `wait`.
    async fn probe(
        &self,
        version: &str,
        wait: Duration,
        opts: &CallOptions,
    ) -> Result<Option<Result<Value, u16>>, ClientError> {
        let (id, method, params) = (self.next_id(), "server/discover", Map::new());
        let headers = self.modern_headers(version, method, &params);
        let req = OutgoingRequest::from_parts(
            Parts { id, method, params: &params, meta: self.modern_meta(version) },
            headers,
        );
        // The shared exchange loop (401/403 already become `AuthRequired` there); its own idle
        // timeout is the whole connect budget, past the probe's, so that silence means
        // "legacy", not an error.
        match tokio::time::timeout(wait, self.exchange(req, opts)).await {
            Err(_) => Ok(None),
            Ok(Err(ClientError::Transport(TransportError::Http { status, .. }))) if (400..500).contains(&status) => {
                Ok(Some(Err(status)))
            }
            Ok(r) => r.map(|v| Some(Ok(v))),
        }
    }

    /// The era and negotiated version.
    pub fn era(&self) -> Option<ServerEra> {
        self.inner.era.read().clone()
    }

    /// How many unsolicited server messages wait for this client and how many were dropped
    /// (for tests and diagnostics).
    #[doc(hidden)]
    pub fn unsolicited_stats(&self) -> crate::transport::UnsolicitedStats {
        self.inner.transport.unsolicited_stats()
    }

    /// Whether the server is modern (stateless).
    pub fn is_modern(&self) -> bool {
        matches!(*self.inner.era.read(), Some(ServerEra::Modern { .. }))
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> String {
        self.negotiated().map_or_else(|| version::LATEST.to_owned(), |(_, v)| v)
    }

    /// Whether the server is legacy, and the negotiated version, without copying the
    /// `server/discover` or `initialize` result as [`Client::era`] does (every request needs
    /// these).
    pub(crate) fn negotiated(&self) -> Option<(bool, String)> {
        match &*self.inner.era.read() {
            Some(ServerEra::Modern { version, .. }) => Some((false, version.clone())),
            Some(ServerEra::Legacy { version, .. }) => Some((true, version.clone())),
            None => None,
        }
    }

    /// The server's capabilities (from `server/discover` or `initialize`; empty before the
    /// connection, or when a legacy server's are not `ServerCapabilities`, with a warning).
    pub fn server_capabilities(&self) -> ServerCapabilities {
        match &*self.inner.era.read() {
            Some(ServerEra::Modern { discover, .. }) => discover.capabilities.clone(),
            Some(ServerEra::Legacy { initialize, .. }) => {
                let caps = initialize.get("capabilities").map(ServerCapabilities::deserialize).transpose();
                caps.unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "the server's capabilities are not ServerCapabilities");
                    None
                })
                .unwrap_or_default()
            }
            None => ServerCapabilities::default(),
        }
    }

    pub(crate) fn next_id(&self) -> i64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The `_meta` fields of a modern request with `version`.
    pub(crate) fn modern_meta<'a>(&'a self, version: &'a str) -> ClientMeta<'a> {
        ClientMeta { modern: Some((version, &self.inner.modern_caps, &self.inner.info_json)), ..ClientMeta::default() }
    }

    /// The Streamable HTTP headers of a modern request (none on stdio, which has no headers).
    pub(crate) fn modern_headers(
        &self,
        version: &str,
        method: &str,
        params: &Map<String, Value>,
    ) -> Vec<(String, String)> {
        if self.inner.transport.kind() != TransportKind::Http {
            return Vec::new();
        }
        let mut out =
            vec![(h::PROTOCOL_VERSION.to_owned(), version.to_owned()), (h::METHOD.to_owned(), method.to_owned())];
        let name =
            mcp_protocol::Method::parse(method).and_then(mcp_protocol::Method::name_param).and_then(|f| params.get(f));
        if let Some(n) = name.and_then(Value::as_str) {
            out.push((h::NAME.to_owned(), encode_value(n)));
        }
        if mcp_protocol::Method::parse(method) == Some(mcp_protocol::Method::ToolsCall) {
            let tool = params.get("name").and_then(Value::as_str).unwrap_or_default();
            let known = self.inner.tool_headers.read().get(tool).cloned();
            if let (Some(hp), Some(args)) = (known, params.get("arguments").and_then(Value::as_object)) {
                for p in hp.iter() {
                    if let Some(v) = h::header_value_for(args, &p.path) {
                        let s = match &v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        out.push((format!("mcp-param-{}", p.header), encode_value(&s)));
                    }
                }
            }
        }
        out
    }

    /// Closes the connection (stdio: terminates the server's process tree).
    pub async fn close(&self) {
        self.inner.transport.close().await;
    }
}
