//! [`Server`]: an immutable-by-default, shareable MCP server and its request dispatch.

use crate::builder::{tool_entry, ServerBuilder};
use crate::catalog::*;
use crate::context::{Context, ContextInner, RequestEnv};
use crate::definitions::Tool;
use crate::error::BuildError;
use crate::handler::StateMap;
use crate::inputs::InputRequired;
use crate::reply::{Reply, WriteResult};
use mcp_protocol::meta::{RequestMeta, SERVER_INFO};
use mcp_protocol::state::{request_digest, Expectation, KeyRing, StateClaims};
use mcp_protocol::types;
use mcp_protocol::{version, ProtocolError, Request};
use parking_lot::RwLock;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// What a legacy session supplies in place of a request's `_meta` and `requestState`.
pub(crate) struct Preset {
    pub(crate) meta: RequestMeta,
    /// MRTR state kept in memory between rounds (`None`: read `requestState` as usual).
    pub(crate) state: Option<RoundState>,
}

/// What the previous MRTR round handed to this one (through a verified `requestState`, or
/// kept in memory by a legacy session): the handler's state and the input keys that round
/// issued. Without either, the request is a first round: no answers at all are honoured.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RoundState {
    /// What the handler put in [`InputRequired::state`].
    pub(crate) app: Value,
    /// The `inputRequests` keys of the previous round.
    pub(crate) keys: Vec<String>,
}

/// A change the server announces on `subscriptions/listen` streams.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeEvent {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// The resource with this URI was updated.
    ResourceUpdated(String),
    /// The task with this id changed (status, message, input requests): `notifications/tasks`
    /// on listen streams that asked for it.
    TaskStatus(String),
    /// Anything may have changed: changes may have been missed (the change bus reconnected).
    /// Listeners re-announce every list, each subscribed resource and each watched task.
    Resync,
}

pub(crate) struct ServerConfig {
    pub(crate) server_info: Value,
    pub(crate) instructions: Option<String>,
    pub(crate) page_size: usize,
    pub(crate) list_ttl_ms: u64,
    pub(crate) list_public: bool,
    pub(crate) read_ttl_ms: u64,
    pub(crate) read_public: bool,
    pub(crate) keys: KeyRing,
    /// Bound into sealed state: who may open it (default: the server's name).
    pub(crate) state_audience: String,
    pub(crate) state_ttl_secs: u64,
    /// Lifetime of sealed state for rounds that wait on no person (only `roots/list`, or no
    /// input request at all): the client answers those at once.
    pub(crate) automatic_state_ttl_secs: u64,
    /// Whether handler error source chains and panic messages are sent to clients.
    pub(crate) expose_internal_errors: bool,
    /// Caps on one `subscriptions/listen` filter.
    pub(crate) listen_limits: crate::listen::ListenLimits,
    pub(crate) server_info_in_results: bool,
    pub(crate) request_timeout: std::time::Duration,
    pub(crate) extra_capabilities: Map<String, Value>,
    pub(crate) state: StateMap,
    pub(crate) tasks: Option<crate::tasks::TaskConfig>,
    pub(crate) skills: Option<Arc<mcp_skills::SkillSet>>,
    pub(crate) bus: Option<Arc<dyn crate::change_bus::ChangeBus>>,
    pub(crate) fallback: Option<Arc<dyn crate::fallback::Fallback>>,
    /// Operation layers, outermost first.
    pub(crate) layers: Vec<Arc<dyn crate::layers::OperationLayer>>,
    /// Rate limits (the limiter is made at build).
    pub(crate) rate_limits: crate::rate_limit::RateLimits,
    /// The result cache, if any (made at build).
    pub(crate) result_cache: Option<crate::cache::ResultCache>,
    /// Servers mounted into this one.
    pub(crate) mounts: Vec<crate::mount::Mount>,
    /// The log level of a legacy session whose client never sent `logging/setLevel` (rank;
    /// `None`: no log messages until it does).
    pub(crate) legacy_log_level: Option<u8>,
}

impl ServerConfig {
    pub(crate) fn new(name: &str, version: &str) -> Self {
        Self {
            server_info: serde_json::to_value(types::Implementation::new(name, version)).expect("serializes"),
            instructions: None,
            page_size: 100,
            list_ttl_ms: 60_000,
            list_public: true,
            read_ttl_ms: 0,
            read_public: false,
            keys: KeyRing::random(),
            state_audience: name.to_owned(),
            state_ttl_secs: 600,
            automatic_state_ttl_secs: 60,
            expose_internal_errors: false,
            listen_limits: crate::listen::ListenLimits::default(),
            server_info_in_results: true,
            request_timeout: std::time::Duration::from_secs(300),
            extra_capabilities: Map::new(),
            state: StateMap::default(),
            tasks: None,
            skills: None,
            bus: None,
            fallback: None,
            layers: Vec::new(),
            rate_limits: Default::default(),
            result_cache: None,
            mounts: Vec::new(),
            legacy_log_level: Some(types::LoggingLevel::Debug as u8),
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
    /// The rate limits.
    pub(crate) limiter: crate::rate_limit::Limiter,
    /// The result cache (empty without [`ServerBuilder::result_cache`]).
    pub(crate) cache: crate::cache::Cache,
    /// The servers this one is mounted in (their catalogs follow this one's changes).
    pub(crate) parents: parking_lot::Mutex<Vec<std::sync::Weak<ServerInner>>>,
}

impl ServerInner {
    pub(crate) fn new(
        mut config: ServerConfig,
        catalog: Catalog,
        completion: Option<CompletionFn>,
    ) -> Result<Self, BuildError> {
        let quotas = catalog.tools.iter().filter_map(|t| Some((t.name.as_str(), t.rate_limit?)));
        let limiter = std::mem::take(&mut config.rate_limits).build(quotas)?;
        let read_only = |name: &str| catalog.tool(name).map(|t| t.is_read_only());
        let cache = match config.result_cache.take() {
            Some(c) => c.build(read_only)?,
            None => Default::default(),
        };
        let (events, _) = broadcast::channel(1024);
        let (task_events, _) = broadcast::channel(256);
        let server_info_json = serde_json::to_vec(&config.server_info).expect("JSON serializes");
        let tasks = config.tasks.clone().map(|c| Arc::new(crate::tasks::TaskRuntime::new(c)));
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
            limiter,
            cache,
            parents: Default::default(),
        })
    }
}

/// An MCP server: cheap to clone, shared by every transport and connection.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("info", &self.inner.config.server_info).finish()
    }
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Server {
    /// Starts building a server named `name` at `version`.
    pub fn builder(name: &str, version: &str) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }

    pub(crate) fn from_inner(inner: ServerInner) -> Self {
        let inner = Arc::new(inner);
        if let Some(bus) = &inner.config.bus {
            bus.attach(crate::change_bus::BusInbox::new(&inner));
        }
        let server = Self { inner };
        server.attach_mounts();
        server
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

    /// Whether any registered tool has `x-mcp-header` parameters ([`ToolEntry::header_params`]):
    /// when none has, a transport skips looking the called tool up to check them.
    pub fn has_header_params(&self) -> bool {
        self.inner.catalog.read().header_params
    }

    /// The `x-mcp-header` parameters of the tool `name` as `caller` may see it: `None` when it
    /// has none, or is unknown or hidden from `caller` (checked like an unknown tool: not at all).
    pub fn header_params_of(
        &self,
        name: &str,
        caller: &crate::Caller<'_>,
    ) -> Option<Arc<[mcp_protocol::headers::HeaderParam]>> {
        let catalog = self.inner.catalog.read();
        let tool = catalog.tool(name)?;
        (!tool.header_params.is_empty() && tool.visible_to(caller)).then(|| tool.header_params.clone())
    }

    /// The server's capabilities, as declared in `server/discover` (and `initialize`): what is
    /// registered right now (tools, resources, prompts, completions), plus logging and the
    /// builder's extra entries ([`ServerBuilder::capability`], which replace an entry of the
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
        if self.inner.config.skills.is_some() {
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
        if let Some(bus) = &self.inner.config.bus {
            bus.publish(&event);
        }
        self.notify_local(event);
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
        *guard = Arc::new(next);
    }

    /// The application state given to [`ServerBuilder::state`].
    pub fn state_map(&self) -> &StateMap {
        &self.inner.config.state
    }

    /// Adds (or replaces) a tool at run time and announces the change.
    pub fn add_tool(&self, tool: Tool) -> Result<(), BuildError> {
        crate::definitions::admit(&tool.errors, tool.check, &self.inner.config.state)?;
        let entry = tool_entry(tool)?;
        self.update_catalog(|c| {
            c.tools.retain(|t| t.name != entry.name);
            c.tools.push(Arc::new(entry));
            c.versions[ListKind::Tools as usize] += 1;
        });
        self.notify(ChangeEvent::ToolsListChanged);
        Ok(())
    }

    /// Removes a tool at run time; returns whether it existed. Announces the change.
    pub fn remove_tool(&self, name: &str) -> bool {
        let mut found = false;
        self.update_catalog(|c| {
            let before = c.tools.len();
            c.tools.retain(|t| t.name != name);
            found = before != c.tools.len();
            c.versions[ListKind::Tools as usize] += 1;
        });
        if found {
            self.notify(ChangeEvent::ToolsListChanged);
        }
        found
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

    /// The second half of a graceful stop, after [`Server::shutdown`]: waits up to `within` for
    /// the tasks running in this process (the tasks extension) to finish, then fails the ones
    /// still running ("the server shut down before the task finished") and stops renewing their
    /// leases. Returns how many were cut short. A task parked on client input goes on too:
    /// an answer that reaches the task store in time (through any instance) resumes it.
    /// The transports' drains (`mcp_http::serve`, `mcp_stdio::serve`) call this themselves,
    /// with what is left of their drain time.
    pub async fn drain_tasks(&self, within: std::time::Duration) -> usize {
        match &self.inner.tasks {
            Some(rt) => rt.drain(within).await,
            None => 0,
        }
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

    /// Handles one request (every method except `subscriptions/listen`, see [`Server::listen`])
    /// and returns its `result` as the wire carries it (`resultType` and `serverInfo`
    /// included), or the protocol error. Handler panics become `-32603`. For tests and
    /// embedding; a transport uses [`Server::handle_reply`].
    pub async fn handle(&self, req: Request, env: RequestEnv) -> Result<Value, ProtocolError> {
        self.process_with(req, env, None).await.map(|r| self.finish_result(r.into_value()))
    }

    /// [`Server::handle`] for a transport: the result stays typed (or pre-serialised: list
    /// pages are shared between requests) until [`Server::encode_response`] writes it, once,
    /// adding `resultType` where absent and `serverInfo` to `_meta`.
    pub async fn handle_reply(&self, req: Request, env: RequestEnv) -> Result<Reply, ProtocolError> {
        self.process_with(req, env, None).await
    }

    /// [`Server::handle_reply`] with the per-request fields (and MRTR state) given by a legacy
    /// session instead of read from `_meta` (and `requestState`). Not an `async fn`, which would
    /// hold the arguments beside the future they are moved into.
    pub(crate) fn process_with(
        &self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> impl std::future::Future<Output = Result<Reply, ProtocolError>> + Send + 'static {
        // The one place requests are traced (with `process_boxed`). Untraced, this is one
        // disabled-span check; traced, the call is boxed, so the request future keeps its size
        // (an async block awaiting `serve` would hold it twice).
        use futures::future::Either;
        let call = crate::telemetry::ServerCall::start(&req, &env, preset.as_deref());
        let serve = self.clone().serve_request(req, env, preset);
        match call {
            Some(call) => Either::Right(Box::pin(call.observe(serve))),
            None => Either::Left(serve),
        }
    }

    /// [`Server::process_with`] boxed, for a transport, on a server the future keeps: each way
    /// (traced or not) is boxed as its own type, so no adapter is polled on the way in. The
    /// untraced future stays within glibc's per-thread cache (1032 bytes; see the test
    /// `a_call_future_fits_the_allocators_thread_cache`): a larger one costs several hundred
    /// instructions more per request to allocate and free.
    pub(crate) fn process_boxed(
        self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> crate::catalog::BoxFuture<Result<Reply, ProtocolError>> {
        match crate::telemetry::ServerCall::start(&req, &env, preset.as_deref()) {
            None => Box::pin(self.serve_request(req, env, preset)),
            Some(call) => Box::pin(call.observe(self.serve_request(req, env, preset))),
        }
    }

    /// [`Server::process_with`] without tracing: dispatch under the panic scope and timeout.
    pub(crate) fn serve_request(
        self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> impl std::future::Future<Output = Result<Reply, ProtocolError>> + Send + 'static {
        // Described only if it panics, from its context (`prepare` hands it over); operation
        // layers run before there is one, so a layered request is described by its method and
        // id until then.
        let info = match self.inner.config.layers.is_empty() {
            true => crate::panic::Describe::Pending,
            false => crate::panic::Describe::early(&req.method, &req.id),
        };
        let limit = self.inner.config.request_timeout;
        let start = move |server: &Server| server.dispatch_layered(req, env, preset);
        crate::deadline::Guarded::new(start, info, self, limit)
    }

    /// How many handler panics this server caught (each answered with `-32603`), in requests
    /// and in tasks. Counted with or without [`crate::panic::install_hook`].
    pub fn panic_count(&self) -> u64 {
        self.inner.panics.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts a caught panic and returns the error to answer with: `Internal error: the handler failed (ref ID)`,
    /// the id being the one in the log line (the panic message is not sent to the client unless
    /// [`ServerBuilder::expose_internal_errors`] is on). Logged here only when the one-line hook
    /// is not installed (otherwise the hook has written its line, with `ref=ID`, already).
    pub(crate) fn caught_panic(&self, panic: &(dyn std::any::Any + Send), task: Option<&str>) -> ProtocolError {
        self.inner.panics.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let msg = panic_message(panic);
        let reference = crate::panic::take_reference();
        let reference = match reference {
            Some(r) => r,
            None => {
                let r = crate::error::correlation_id();
                tracing::error!(panic = %msg, task, reference = %r, "handler panicked");
                r
            }
        };
        let message = match self.inner.config.expose_internal_errors {
            true => format!("handler panicked: {msg}"),
            false => "the handler failed".to_owned(),
        };
        ProtocolError::HandlerFailed { message, reference }
    }

    /// The text a client is told for a handler's tool error: its message, with the source chain
    /// only when the server exposes internal errors (the chain is logged at debug level).
    pub(crate) fn error_text(&self, e: &crate::HandlerError) -> String {
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

    /// Serializes the JSON-RPC response for an outcome of [`Server::handle_reply`], adding `resultType: "complete"` when absent and `serverInfo` to the
    /// result's `_meta`.
    pub fn encode_response<R: WriteResult>(&self, id: &Value, outcome: &Result<R, ProtocolError>) -> Vec<u8> {
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

    /// Validates the method and `_meta` and builds the handler context.
    pub(crate) fn prepare(
        &self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> Result<Context, ProtocolError> {
        if !crate::dispatch::is_known_method(&req.method) {
            return Err(method_not_found(&req.method));
        }
        let legacy = preset.is_some();
        let (meta, round) = match preset.map(|p| *p) {
            Some(Preset { meta, state: Some(state) }) => (meta, state),
            Some(Preset { meta, state: None }) => (meta, self.open_state(&req, &env)?),
            None => (RequestMeta::from_params(&req.params)?, self.open_state(&req, &env)?),
        };
        let mut params = req.params;
        if crate::dispatch::supports_mrtr(&req.method) {
            crate::inputs::bind_answers(&mut params, &round.keys);
        }
        let ctx = Context {
            inner: Arc::new(ContextInner {
                server: self.clone(),
                id: req.id,
                method: req.method,
                meta,
                params,
                env,
                state: round.app,
                asked: Default::default(),
                legacy,
                task: Default::default(),
                statuses: Default::default(),
                home: Default::default(),
            }),
        };
        // From here on, a panic in this request is described from its context.
        crate::panic::describe_with(&ctx);
        Ok(ctx)
    }

    fn open_state(&self, req: &Request, env: &RequestEnv) -> Result<RoundState, ProtocolError> {
        self.open_state_at(req, env, None)
    }

    /// Opens `requestState` as of `now` (seconds since the epoch; `Some(0)` ignores expiry, for
    /// state that never left the server; `None`: the clock, read only when there is state).
    pub(crate) fn open_state_at(
        &self,
        req: &Request,
        env: &RequestEnv,
        now: Option<u64>,
    ) -> Result<RoundState, ProtocolError> {
        use mcp_protocol::params::member;
        match member(&req.params, "inputResponses") {
            None | Some(Value::Object(_)) => {}
            Some(_) => return Err(ProtocolError::invalid_params("inputResponses must be an object")),
        }
        let sealed = match member(&req.params, "requestState") {
            None => return Ok(RoundState::default()),
            Some(Value::String(s)) => s,
            Some(_) => return Err(ProtocolError::invalid_params("requestState must be a string")),
        };
        if !crate::dispatch::supports_mrtr(&req.method) {
            return Err(ProtocolError::invalid_params(format!("{} does not accept requestState", req.method)));
        }
        let digest = request_digest(&req.method, &req.params);
        let expect = Expectation {
            audience: &self.inner.config.state_audience,
            principal: env.principal.as_deref(),
            method: &req.method,
            digest: &digest,
        };
        self.inner
            .config
            .keys
            .open(sealed, &expect, now.unwrap_or_else(now_secs))
            .map(|c| RoundState { app: c.app, keys: c.keys })
            .map_err(|e| ProtocolError::invalid_params(format!("Invalid requestState: {e}")))
    }

    /// How long the state sealed for `ir` lives: the short lifetime when no person answers the
    /// round (only `roots/list`, or no input request), the long one otherwise.
    fn state_ttl(&self, ir: &InputRequired) -> u64 {
        let c = &self.inner.config;
        let automatic = ir.requests.values().all(|r| r.get("method").and_then(Value::as_str) == Some("roots/list"));
        if automatic {
            c.automatic_state_ttl_secs.min(c.state_ttl_secs)
        } else {
            c.state_ttl_secs
        }
    }

    /// Turns a handler's `InputRequired` into an `input_required` result with sealed state.
    pub(crate) fn input_required(&self, ctx: &Context, ir: InputRequired) -> Reply {
        let claims = StateClaims {
            sub: ctx.principal().map(str::to_owned),
            aud: self.inner.config.state_audience.clone(),
            exp: now_secs() + self.state_ttl(&ir),
            method: ctx.method().to_owned(),
            digest: request_digest(ctx.method(), ctx.params()),
            app: ir.state,
            keys: ir.requests.keys().cloned().collect(),
        };
        let state = Some(self.inner.config.keys.seal(&claims));
        match serde_json::from_value::<types::InputRequests>(Value::Object(ir.requests.clone())) {
            Ok(requests) => types::InputRequiredResult::new(Some(requests), state).into(),
            // Requests the schema types do not describe (an extension's method): sent as given.
            Err(_) => {
                let mut out = Map::new();
                out.insert("resultType".into(), types::ResultType::InputRequired.as_str().into());
                out.insert("inputRequests".into(), Value::Object(ir.requests));
                out.insert("requestState".into(), state.into());
                Value::Object(out).into()
            }
        }
    }

    /// Where the page a cursor names starts (`None`: the first), among `total` items.
    fn page_start(cursor: Option<&str>, total: usize) -> Result<usize, ProtocolError> {
        match cursor {
            None => Ok(0),
            Some(c) => {
                decode_cursor(c).filter(|s| *s <= total).ok_or_else(|| ProtocolError::invalid_params("Invalid cursor"))
            }
        }
    }

    /// The `ttlMs` and `cacheScope` of list and discover results.
    fn list_cache(&self) -> (u64, types::CacheScope) {
        let c = &self.inner.config;
        (c.list_ttl_ms, if c.list_public { types::CacheScope::Public } else { types::CacheScope::Private })
    }

    /// A page of one of the catalog's lists, serialised once per catalog version and shared;
    /// per request, for `caller`, when an item of the list has an access rule.
    pub(crate) fn catalog_page(
        &self,
        kind: ListKind,
        cursor: Option<&str>,
        caller: &crate::access::Caller<'_>,
    ) -> Result<Reply, ProtocolError> {
        let c = self.catalog();
        if c.restricted[kind as usize] {
            return Ok(Reply::shared(self.page_bytes(&c, kind, cursor, Some(caller))?.into()));
        }
        let total = match kind {
            ListKind::Tools => c.tools.len(),
            ListKind::Resources => c.resources.len(),
            ListKind::Templates => c.templates.len(),
            ListKind::Prompts => c.prompts.len(),
        };
        let start = Self::page_start(cursor, total)?;
        let size = self.inner.config.page_size;
        let page = c.pages[kind as usize]
            .get(start, size, total, || self.page_bytes(&c, kind, cursor, None).expect("the cursor was checked above"));
        Ok(Reply::shared(page))
    }

    /// One page of list `kind` as its result: of every item (`caller` `None`: shared, with the
    /// configured cache hints), or of the items `caller` may see (a list that depends on the
    /// request's authorization, so `cacheScope: "private"` whoever the caller is).
    fn page_bytes(
        &self,
        c: &Catalog,
        kind: ListKind,
        cursor: Option<&str>,
        caller: Option<&crate::access::Caller<'_>>,
    ) -> Result<Vec<u8>, ProtocolError> {
        use crate::access::visible;
        let size = self.inner.config.page_size;
        let (ttl_ms, cache_scope) = match caller {
            None => self.list_cache(),
            Some(_) => (self.inner.config.list_ttl_ms, types::CacheScope::Private),
        };
        let (meta, result_type, extra) = (None, types::ResultType::Complete, Map::new());
        // One page of the visible entries of `$items` as the list result `$ty` (under `$field`).
        macro_rules! page {
            ($ty:ident, $field:ident, $items:expr) => {{
                let all: Vec<_> =
                    $items.iter().filter(|e| caller.is_none_or(|who| visible(e.access.as_ref(), who))).collect();
                let start = Self::page_start(cursor, all.len())?;
                let end = (start + size).min(all.len());
                serde_json::to_vec(&types::$ty {
                    $field: all[start..end].iter().map(|e| e.def.clone()).collect(),
                    meta,
                    result_type,
                    next_cursor: (end < all.len()).then(|| encode_cursor(end)),
                    ttl_ms,
                    cache_scope,
                    extra,
                })
            }};
        }
        let bytes = match kind {
            ListKind::Tools => page!(ListToolsResult, tools, c.tools),
            ListKind::Resources => page!(ListResourcesResult, resources, c.resources),
            ListKind::Templates => page!(ListResourceTemplatesResult, resource_templates, c.templates),
            ListKind::Prompts => page!(ListPromptsResult, prompts, c.prompts),
        };
        Ok(bytes.expect("definitions serialize"))
    }

    /// A page of a list kept as JSON (skills, directory entries) under `key`.
    pub(crate) fn list_page(
        &self,
        items: impl ExactSizeIterator<Item = Value>,
        key: &str,
        cursor: Option<&str>,
    ) -> Result<Value, ProtocolError> {
        let total = items.len();
        let start = Self::page_start(cursor, total)?;
        let size = self.inner.config.page_size;
        let page: Vec<Value> = items.skip(start).take(size).collect();
        let mut out = Map::new();
        out.insert(key.into(), Value::Array(page));
        if start + size < total {
            out.insert("nextCursor".into(), encode_cursor(start + size).into());
        }
        self.cache_hints(&mut out);
        Ok(Value::Object(out))
    }

    /// The list cache hints (`ttlMs`, `cacheScope`), set on `result`.
    pub(crate) fn cache_hints(&self, result: &mut Map<String, Value>) {
        let (ttl, scope) = self.list_cache();
        result.insert("ttlMs".into(), ttl.into());
        result.insert("cacheScope".into(), scope_str(scope).into());
    }

    /// The `resources/read` cache hints (`ttlMs`, `cacheScope`) a complete result lacks.
    pub(crate) fn read_hints(&self, result: &mut types::ReadResourceResult) {
        let c = &self.inner.config;
        result.ttl_ms.get_or_insert(c.read_ttl_ms);
        result.cache_scope.get_or_insert(if c.read_public {
            types::CacheScope::Public
        } else {
            types::CacheScope::Private
        });
    }

    /// The cache hints a complete JSON result (of a fallback) lacks: read hints or list hints.
    pub(crate) fn missing_hints(&self, result: &mut Value, read: bool) {
        let c = &self.inner.config;
        let (ttl, public) = if read { (c.read_ttl_ms, c.read_public) } else { (c.list_ttl_ms, c.list_public) };
        if let Value::Object(o) = result {
            if o.get("resultType").and_then(Value::as_str).unwrap_or("complete") == "complete" {
                o.entry("ttlMs").or_insert_with(|| ttl.into());
                o.entry("cacheScope").or_insert_with(|| if public { "public" } else { "private" }.into());
            }
        }
    }

    /// The `server/discover` result.
    pub fn discover_result(&self) -> types::DiscoverResult {
        let (ttl_ms, cache_scope) = self.list_cache();
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

fn scope_str(scope: types::CacheScope) -> &'static str {
    match scope {
        types::CacheScope::Public => "public",
        types::CacheScope::Private => "private",
    }
}

/// What a caught handler panic says (its `&str` or `String` payload).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "handler panicked".into())
}

#[cold]
pub(crate) fn method_not_found(method: &str) -> ProtocolError {
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

fn encode_cursor(offset: usize) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("o:{offset}"))
}

fn decode_cursor(c: &str) -> Option<usize> {
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(c).ok()?;
    std::str::from_utf8(&raw).ok()?.strip_prefix("o:")?.parse().ok()
}
