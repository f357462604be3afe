//! [`Server`]: an immutable-by-default, shareable MCP server and its request dispatch.

use crate::catalog::*;
use crate::change_feed::ChangeEvent;
use crate::error::BuildError;
use crate::reply::Reply;
use crate::state_map::StateMap;
use mcp_protocol::meta::SERVER_INFO;
use mcp_protocol::state::KeyRing;
use mcp_protocol::types;
use mcp_protocol::{version, ProtocolError};
use parking_lot::RwLock;
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// Everything [`ServerBuilder`](crate::ServerBuilder) sets, grouped by who reads it.
pub(crate) struct ServerConfig {
    pub(crate) server_info: Value,
    pub(crate) instructions: Option<String>,
    pub(crate) server_info_in_results: bool,
    pub(crate) extra_capabilities: Map<String, Value>,
    /// Application state for the `State<T>` extractor.
    pub(crate) state: StateMap,
    /// Whether handler error source chains and panic messages are sent to clients.
    pub(crate) expose_internal_errors: bool,
    pub(crate) request_timeout: std::time::Duration,
    /// The log level of a legacy session whose client never sent `logging/setLevel` (rank;
    /// `None`: no log messages until it does).
    pub(crate) legacy_log_level: Option<u8>,
    /// Paging and cache hints of results.
    pub(crate) lists: crate::pages::Lists,
    /// Sealed MRTR state.
    pub(crate) rounds: Rounds,
    /// The stages around every request (installed by `build()`).
    pub(crate) stages: Stages,
    /// The extensions that plug into the engine.
    pub(crate) extensions: Extensions,
}

/// How MRTR `requestState` is sealed and how long it lives.
pub(crate) struct Rounds {
    pub(crate) keys: KeyRing,
    /// Bound into sealed state: who may open it (default: the server's name).
    pub(crate) state_audience: String,
    pub(crate) state_ttl_secs: u64,
    /// Lifetime of sealed state for rounds that wait on no person (only `roots/list`, or no
    /// input request at all): the client answers those at once.
    pub(crate) automatic_state_ttl_secs: u64,
}

/// The stages a request passes before its handler: operation layers, rate limits, the result
/// cache (the last two are made into the limiter and the cache at build).
#[derive(Default)]
pub(crate) struct Stages {
    /// Operation layers, outermost first.
    pub(crate) layers: Vec<Arc<dyn crate::layers::OperationLayer>>,
    pub(crate) rate_limits: crate::rate_limit::RateLimits,
    pub(crate) result_cache: Option<crate::cache::ResultCache>,
}

/// The extensions configured on the server.
#[derive(Default)]
pub(crate) struct Extensions {
    pub(crate) tasks: Option<crate::tasks::TaskConfig>,
    pub(crate) skills: Option<Arc<mcp_skills::SkillSet>>,
    pub(crate) bus: Option<Arc<dyn crate::change_bus::ChangeBus>>,
    pub(crate) fallback: Option<Arc<dyn crate::fallback::Fallback>>,
    /// Servers mounted into this one.
    pub(crate) mounts: Vec<Mount>,
    /// Caps on one `subscriptions/listen` filter.
    pub(crate) listen_limits: crate::listen_limits::ListenLimits,
}

impl ServerConfig {
    pub(crate) fn new(name: &str, version: &str) -> Self {
        Self {
            server_info: serde_json::to_value(types::Implementation::new(name, version)).expect("serializes"),
            instructions: None,
            server_info_in_results: true,
            extra_capabilities: Map::new(),
            state: StateMap::default(),
            expose_internal_errors: false,
            request_timeout: std::time::Duration::from_secs(300),
            legacy_log_level: Some(types::LoggingLevel::Debug as u8),
            lists: Default::default(),
            rounds: Rounds {
                keys: KeyRing::random(),
                state_audience: name.to_owned(),
                state_ttl_secs: 600,
                automatic_state_ttl_secs: 60,
            },
            stages: Default::default(),
            extensions: Default::default(),
        }
    }
}

pub(crate) struct ServerInner {
    pub(crate) config: ServerConfig,
    /// `serverInfo`, serialized once.
    pub(crate) server_info_json: Vec<u8>,
    pub(crate) catalog: RwLock<Arc<Catalog>>,
    pub(crate) completion: Option<CompletionFn>,
    pub(crate) events: broadcast::Sender<ChangeEvent>,
    /// Task changes (ids; `None`: every task may have changed), apart from list changes: busy
    /// tasks never make list listeners lag.
    pub(crate) task_events: broadcast::Sender<Option<String>>,
    pub(crate) shutdown: CancellationToken,
    pub(crate) tasks: Option<Arc<crate::tasks::TaskRuntime>>,
    /// Handler panics caught ([`Server::panic_count`]).
    pub(crate) panics: std::sync::atomic::AtomicU64,
    /// Bytes of URIs and task ids the open listen streams' filters hold.
    pub(crate) listen_filter_bytes: Arc<std::sync::atomic::AtomicUsize>,
    /// The stages installed at build (rate limits, result cache, task decision).
    pub(crate) stages: crate::stage_set::Installed,
    /// The servers this one is mounted in (their catalogs follow this one's changes).
    pub(crate) parents: parking_lot::Mutex<Vec<Parent>>,
}

impl ServerInner {
    pub(crate) fn new(
        mut config: ServerConfig,
        catalog: Catalog,
        completion: Option<CompletionFn>,
    ) -> Result<Self, BuildError> {
        let quotas = catalog.tools.iter().filter_map(|t| Some((t.name.as_str(), t.rate_limit?)));
        let limiter = std::mem::take(&mut config.stages.rate_limits).build(quotas)?;
        let read_only = |name: &str| catalog.tool(name).map(|t| t.is_read_only());
        let cache = match config.stages.result_cache.take() {
            Some(c) => c.build(read_only)?,
            None => Default::default(),
        };
        let (events, _) = broadcast::channel(1024);
        let (task_events, _) = broadcast::channel(256);
        let server_info_json = serde_json::to_vec(&config.server_info).expect("JSON serializes");
        let tasks = config.extensions.tasks.clone().map(|c| Arc::new(crate::tasks::TaskRuntime::new(c)));
        let stages = crate::stage_set::Installed::new(limiter, cache, &catalog);
        Ok(Self {
            tasks,
            config,
            server_info_json,
            catalog: RwLock::new(Arc::new(catalog)),
            completion,
            events,
            task_events,
            shutdown: CancellationToken::new(),
            panics: Default::default(),
            listen_filter_bytes: Default::default(),
            stages,
            parents: Default::default(),
        })
    }
}

/// An MCP server: cheap to clone, shared by every transport and connection.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl crate::change_bus::Listeners for ServerInner {
    fn notify_local(self: Arc<Self>, event: ChangeEvent) {
        Server { inner: self }.notify_local(event);
    }
}

/// A server mounted into another under a prefix ([`ServerBuilder::mount`](crate::ServerBuilder::mount)).
#[derive(Clone)]
pub(crate) struct Mount {
    pub(crate) prefix: String,
    pub(crate) server: Server,
}

/// A server this one is mounted in, and what passes this server's changes on to it.
#[derive(Clone)]
pub(crate) struct Parent {
    pub(crate) server: std::sync::Weak<ServerInner>,
    pub(crate) relay: fn(&Server, &ChangeEvent),
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("info", &self.inner.config.server_info).finish()
    }
}

impl Server {
    pub(crate) fn from_inner(inner: ServerInner) -> Self {
        let inner = Arc::new(inner);
        if let Some(bus) = &inner.config.extensions.bus {
            let listeners: std::sync::Weak<ServerInner> = Arc::downgrade(&inner);
            bus.attach(crate::change_bus::BusInbox::new(listeners));
        }
        Self { inner }
    }

    /// The task runtime, when the server runs tasks.
    pub(crate) fn tasks(&self) -> Option<&Arc<crate::tasks::TaskRuntime>> {
        self.inner.tasks.as_ref()
    }

    /// Whether the server's fallback serves the tasks extension.
    pub(crate) fn fallback_serves_tasks(&self) -> bool {
        self.inner.config.extensions.fallback.as_ref().is_some_and(|f| f.serves_tasks())
    }

    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.inner.catalog.read().clone()
    }

    /// The server's `Implementation` (`serverInfo`).
    pub fn server_info(&self) -> &Value {
        &self.inner.config.server_info
    }

    /// The registered tool `name`, if any (the HTTP transport reads its header parameters).
    pub fn tool(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.catalog().tool(name).cloned()
    }

    /// The `x-mcp-header` parameters of the tool `name` as `caller` may see it: `None` when it
    /// has none, or is unknown or hidden from `caller` (checked like an unknown tool: not at all).
    /// Looks nothing up when no tool has any.
    pub(crate) fn header_params_of(
        &self,
        name: &str,
        caller: &crate::access::Caller<'_>,
    ) -> Option<Arc<[mcp_protocol::headers::HeaderParam]>> {
        let catalog = self.inner.catalog.read();
        if !catalog.header_params {
            return None;
        }
        let tool = catalog.tool(name)?;
        (!tool.header_params.is_empty() && tool.visible_to(caller)).then(|| tool.header_params.clone())
    }

    /// The server's capabilities, as declared in `server/discover` (and `initialize`): what is
    /// registered right now (tools, resources, prompts, completions), plus logging and the
    /// builder's extra entries ([`ServerBuilder::capability`](crate::ServerBuilder::capability), which replace an entry of the
    /// same name).
    pub fn capabilities(&self) -> types::ServerCapabilities {
        let catalog = self.catalog();
        let listed = Some(true);
        let mut caps = types::ServerCapabilities { logging: Some(Map::new()), ..Default::default() };
        if !catalog.tools.is_empty() {
            caps.tools = Some(types::ToolsCapability { list_changed: listed, ..Default::default() });
        }
        if !catalog.resources.is_empty() || !catalog.templates.is_empty() {
            caps.resources =
                Some(types::ResourcesCapability { list_changed: listed, subscribe: listed, ..Default::default() });
        }
        if !catalog.prompts.is_empty() {
            caps.prompts = Some(types::PromptsCapability { list_changed: listed, ..Default::default() });
        }
        if self.inner.completion.is_some() || catalog.prompts.iter().any(|p| !p.completers.is_empty()) {
            caps.completions = Some(Map::new());
        }
        if !self.inner.config.extra_capabilities.is_empty() {
            // Entries of the builder's own replace the ones above, named the same.
            let Ok(Value::Object(mut all)) = serde_json::to_value(&caps) else { unreachable!("an object") };
            all.extend(self.inner.config.extra_capabilities.iter().map(|(k, v)| (k.clone(), v.clone())));
            // Each entry was checked against its type by `ServerBuilder::capability`.
            caps = serde_json::from_value(Value::Object(all)).expect("capability entries fit their types");
        }
        let mut extension = |id: &str, settings: Map<String, Value>| {
            caps.extensions.get_or_insert_with(Default::default).insert(id.to_owned(), settings);
        };
        if self.inner.tasks.is_some() || self.fallback_serves_tasks() {
            extension(mcp_protocol::meta::TASKS_EXTENSION, Map::new());
        }
        if self.inner.config.extensions.skills.is_some() {
            let mut skills = Map::new();
            skills.insert("directoryRead".into(), Value::Bool(true));
            extension(mcp_skills::SKILLS_EXTENSION, skills);
        }
        caps
    }

    /// Subscribes to change events (what `subscriptions/listen` streams are fed from): list
    /// changes and resource updates. Task changes travel apart (listen streams that watch
    /// `taskIds` get them), so a busy task workload never makes list listeners lag.
    pub fn events(&self) -> broadcast::Receiver<ChangeEvent> {
        self.inner.events.subscribe()
    }

    /// Announces a change to every listening client (through the change bus, to those of the
    /// other instances too).
    pub fn notify(&self, event: ChangeEvent) {
        if let Some(bus) = &self.inner.config.extensions.bus {
            bus.publish(&event);
        }
        self.notify_local(event);
    }

    /// Passes a change of this server on to the servers it is mounted in.
    fn tell_parents(&self, event: &ChangeEvent) {
        let parents: Vec<Parent> = self.inner.parents.lock().clone();
        for p in &parents {
            if let Some(inner) = p.server.upgrade() {
                (p.relay)(&Server { inner }, event);
            }
        }
    }

    /// Announces a change to this instance's listeners only.
    pub(crate) fn notify_local(&self, event: ChangeEvent) {
        if !self.inner.parents.lock().is_empty() {
            self.tell_parents(&event);
        }
        // A send fails only when nobody listens, which is fine.
        match event {
            ChangeEvent::TaskStatus(id) => drop(self.inner.task_events.send(Some(id))),
            ChangeEvent::Resync => {
                let _ = self.inner.task_events.send(None);
                let _ = self.inner.events.send(ChangeEvent::Resync);
            }
            other => drop(self.inner.events.send(other)),
        }
    }

    /// Announces that the resource `uri` changed.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.notify(ChangeEvent::ResourceUpdated(uri.to_owned()));
    }

    pub(crate) fn update_catalog(&self, f: impl FnOnce(&mut Catalog)) {
        let mut guard = self.inner.catalog.write();
        let mut next = guard.next_version();
        f(&mut next);
        next.reindex();
        self.inner.stages.catalog_changed(&next);
        *guard = Arc::new(next);
    }

    /// The application state given to [`ServerBuilder::state`](crate::ServerBuilder::state).
    pub(crate) fn state_map(&self) -> &StateMap {
        &self.inner.config.state
    }

    /// Begins graceful shutdown: listen streams send their final response and end, and the
    /// transports stop taking new input. Calls and tasks in flight go on: see
    /// [`Server::drain_tasks`].
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }

    /// A token cancelled when [`Server::shutdown`] is called.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// Completes a result: `resultType` defaults to `complete`; `serverInfo` goes into `_meta`.
    pub(crate) fn finish_result(&self, mut result: Value) -> Value {
        if let Value::Object(o) = &mut result {
            o.entry("resultType").or_insert_with(|| Value::String("complete".into()));
            if self.inner.config.server_info_in_results {
                let meta = o.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(m) = meta {
                    m.entry(SERVER_INFO).or_insert_with(|| self.inner.config.server_info.clone());
                }
            }
        }
        result
    }

    /// How many handler panics this server caught (each answered with `-32603`), in requests
    /// and in tasks. Counted with or without [`crate::panic::install_hook`].
    pub fn panic_count(&self) -> u64 {
        self.inner.panics.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The text a client is told for a handler's tool error: its message, with the source chain
    /// only when the server exposes internal errors (the chain is logged at debug level).
    pub(crate) fn error_text(&self, e: &crate::error::HandlerError) -> String {
        let full = e.message_with_sources();
        if self.inner.config.expose_internal_errors {
            return full;
        }
        let top = e.to_string();
        if full.len() != top.len() {
            tracing::debug!(error = %full, "handler error (the source chain is not sent to the client)");
        }
        top
    }

    /// Serializes the JSON-RPC response for an outcome of [`Server::handle_reply`], adding
    /// `resultType: "complete"` when absent and `serverInfo` to the result's `_meta` (for a
    /// result built as JSON: `Reply::from(value)`).
    pub fn encode_response(&self, id: &Value, outcome: &Result<Reply, ProtocolError>) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        match outcome {
            Err(e) => serde_json::to_writer(&mut out, &e.to_response(Some(id))).expect("JSON serializes"),
            Ok(v) => {
                out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
                serde_json::to_writer(&mut out, id).expect("JSON serializes");
                out.extend_from_slice(b",\"result\":");
                let info = self.inner.config.server_info_in_results.then_some(self.inner.server_info_json.as_slice());
                v.write_result(&mut out, info);
                out.push(b'}');
            }
        }
        out
    }

    /// The `server/discover` result.
    pub fn discover_result(&self) -> types::DiscoverResult {
        let (ttl_ms, cache_scope) = self.inner.config.lists.list_cache();
        types::DiscoverResult {
            meta: None,
            result_type: types::ResultType::Complete,
            supported_versions: version::MODERN.iter().map(|v| (*v).to_owned()).collect(),
            capabilities: self.capabilities(),
            instructions: self.inner.config.instructions.clone(),
            ttl_ms,
            cache_scope,
            extra: Map::new(),
        }
    }

    /// The `server/discover` result, serialised once per catalog version.
    pub(crate) fn discover(&self) -> Reply {
        let c = self.catalog();
        let bytes =
            c.discover.get_or_init(|| serde_json::to_vec(&self.discover_result()).expect("discover serializes").into());
        Reply::shared(bytes.clone())
    }
}

/// The `-32601` error for `method` (for `initialize`, naming the supported versions).
#[cold]
pub fn method_not_found(method: &str) -> ProtocolError {
    if method == mcp_protocol::method::names::INITIALIZE {
        return ProtocolError::MethodNotFound {
            method: method.to_owned(),
            detail: Some(format!(
                "initialize (this server speaks the stateless protocol; supported versions: {})",
                version::MODERN.join(", ")
            )),
        };
    }
    ProtocolError::method_not_found(method)
}

impl crate::context::Context {
    /// The server whose item this request is served by (to read its state, announce changes,
    /// add tools...): for an item mounted from another server
    /// ([`ServerBuilder::mount`](crate::ServerBuilder::mount)), that server.
    pub fn server(&self) -> &Server {
        let home = self.inner.home.get().and_then(|h| h.downcast_ref::<Server>());
        home.unwrap_or_else(|| self.serving())
    }

    /// The server serving the request (the one the client called, mounted items or not).
    pub(crate) fn serving(&self) -> &Server {
        let server: &(dyn std::any::Any + Send + Sync) = &self.inner.server;
        server.downcast_ref().expect("every context is made by a `Server`")
    }
}
