//! [`ServerBuilder`]: declare what a server offers, then [`ServerBuilder::build`] it once.

use crate::catalog::*;
use crate::change_feed::ChangeEvent;
use crate::change_feed::ChangeFeed;
use crate::context::Context;
use crate::context::RequestEnv;
use crate::definitions::{first_error, CheckFn, Prompt, Resource, ResourceDef, Tool};
use crate::error::{BuildError, HandlerError, ItemKind};
use crate::server::{Server, ServerConfig, ServerInner};
use crate::template::UriTemplate;
use mcp_protocol::headers::header_params;
use mcp_protocol::state::KeyRing;
use mcp_protocol::types::CacheScope;
use mcp_protocol::{ProtocolError, Request};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

/// Builds a [`Server`]. Every registration is checked when [`ServerBuilder::build`] runs.
pub struct ServerBuilder {
    pub(crate) config: ServerConfig,
    pub(crate) catalog: Catalog,
    completion: Option<CompletionFn>,
    pub(crate) errors: Vec<BuildError>,
    /// Each registered handler's state check, run by `build()` against the state given by
    /// then (whatever the order of `.state(..)` and `.tool(..)`).
    state_checks: Vec<CheckFn>,
    eager_schemas: bool,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder").field("server_info", &self.config.server_info).finish_non_exhaustive()
    }
}

impl ServerBuilder {
    pub(crate) fn new(name: &str, version: &str) -> Self {
        Self {
            config: ServerConfig::new(name, version),
            catalog: Catalog::default(),
            completion: None,
            errors: Vec::new(),
            state_checks: Vec::new(),
            eager_schemas: false,
        }
    }

    /// Sets the human-readable title in `serverInfo`.
    pub fn title(mut self, title: &str) -> Self {
        self.config.server_info["title"] = Value::from(title);
        self
    }

    /// Sets the icons of `serverInfo`.
    pub fn icons(mut self, icons: Vec<mcp_protocol::types::Icon>) -> Self {
        self.config.server_info["icons"] = serde_json::to_value(icons).expect("icons serialize");
        self
    }

    /// Sets `instructions`, returned by `server/discover`.
    pub fn instructions(mut self, text: &str) -> Self {
        self.config.instructions = Some(text.to_owned());
        self
    }

    /// Page size of list results (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.config.lists.page_size = n.max(1);
        self
    }

    /// `ttlMs` and `cacheScope` for list and discover results (default 60 s, public).
    pub fn list_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.config.lists.list_ttl_ms = ttl_ms;
        self.config.lists.list_public = scope == CacheScope::Public;
        self
    }

    /// `ttlMs` and `cacheScope` for `resources/read` results without hints of their own
    /// (default 0, private).
    pub fn read_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.config.lists.read_ttl_ms = ttl_ms;
        self.config.lists.read_public = scope == CacheScope::Public;
        self
    }

    /// Key ring that seals MRTR `requestState` (default: one random key per process).
    /// Share secrets across instances behind a load balancer ([`KeyRing::from_base64_lines`]),
    /// so that a retry landing on another instance opens the state sealed by the first.
    pub fn state_keys(mut self, ring: KeyRing) -> Self {
        self.config.rounds.keys = ring;
        self
    }

    /// Carries change events to and from the other instances of this service (list changes,
    /// resource updates, task status), so that a listen stream held by one instance hears of a
    /// change made on another. Default: none (this process only).
    pub fn bus(mut self, bus: Arc<dyn crate::change_bus::ChangeBus>) -> Self {
        self.config.extensions.bus = Some(bus);
        self
    }

    /// The audience bound into sealed `requestState` (default: the server's name). Only a
    /// server with the same audience opens it: two services sharing a key ring cannot replay
    /// each other's state.
    pub fn state_audience(mut self, audience: &str) -> Self {
        self.config.rounds.state_audience = audience.to_owned();
        self
    }

    /// Lifetime of sealed `requestState` in seconds for rounds that may wait on a person
    /// (elicitation, sampling; default 600). Within its lifetime a `requestState` can be
    /// presented again (it is not single-use): the lifetime is the replay window.
    pub fn state_ttl_secs(mut self, secs: u64) -> Self {
        self.config.rounds.state_ttl_secs = secs;
        self
    }

    /// Lifetime of sealed `requestState` in seconds for rounds no person answers (only
    /// `roots/list` input requests, or none; default 60, at most the
    /// [`ServerBuilder::state_ttl_secs`] lifetime): the client answers those at once, so their
    /// replay window is kept short.
    pub fn automatic_state_ttl_secs(mut self, secs: u64) -> Self {
        self.config.rounds.automatic_state_ttl_secs = secs;
        self
    }

    /// Whether clients are told internal error details (default false): the `source()` chain of
    /// an error a handler returned with `?`, and the message of a handler panic. Off, a tool
    /// error's own message still reaches the model (an `Err("text")` or [`HandlerError::tool`] is
    /// sent as it is), a panic is answered `-32603` with `the handler failed (ref ID)`, and the details are logged
    /// under that id. Turn it on for development only.
    pub fn expose_internal_errors(mut self, on: bool) -> Self {
        self.config.expose_internal_errors = on;
        self
    }

    /// Caps on each `subscriptions/listen` filter (default [`crate::ListenLimits::default`]:
    /// 1,024 resource URIs and 1,024 task ids per stream, URIs and ids at most 2 KiB each).
    /// A listen request over them is refused with `-32602`.
    pub fn listen_limits(mut self, limits: crate::listen_limits::ListenLimits) -> Self {
        self.config.extensions.listen_limits = limits;
        self
    }

    /// Longest a request handler may run before it is cancelled with `-32603` (default 5 minutes;
    /// `subscriptions/listen` streams are not limited).
    pub fn request_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// The log messages a legacy (2025-era) client gets before it sends `logging/setLevel`:
    /// those at `level` or above; `None` sends none until it asks. Default: `debug`, every
    /// message, as the official TypeScript SDK and FastMCP do (the 2025-11-25 revision leaves
    /// it to the server, and many clients never send `logging/setLevel`). A `logging/setLevel`
    /// replaces it for the session. Modern requests are not affected: they get log messages
    /// only at the `io.modelcontextprotocol/logLevel` they carry.
    pub fn legacy_log_level(mut self, level: Option<mcp_protocol::types::LoggingLevel>) -> Self {
        self.config.legacy_log_level = level.map(|l| l as u8);
        self
    }

    /// Whether to put `serverInfo` in every result's `_meta` (default true).
    pub fn server_info_in_results(mut self, on: bool) -> Self {
        self.config.server_info_in_results = on;
        self
    }

    /// Adds a capability entry of the server's own (e.g. `extensions`), merged into `capabilities`.
    /// A value of the wrong shape for a capability the schema names (`tools`, `extensions`, ...)
    /// is a [`BuildError::InvalidCapability`].
    pub fn capability(mut self, name: &str, value: Value) -> Self {
        let mut one = serde_json::Map::new();
        one.insert(name.to_owned(), value);
        let one = Value::Object(one);
        if let Err(e) = serde_json::from_value::<mcp_protocol::types::ServerCapabilities>(one.clone()) {
            self.errors.push(BuildError::InvalidCapability { name: name.to_owned(), reason: e.to_string() });
        }
        let Value::Object(one) = one else { return self };
        self.config.extra_capabilities.extend(one);
        self
    }

    /// Gives the handlers application state of type `T`, read with the [`crate::State<T>`]
    /// extractor (one value per type; a later call replaces an earlier one). Before or after
    /// the handlers that ask for it: [`ServerBuilder::build`] checks that every `State<T>` a
    /// handler asks for was given ([`BuildError::MissingState`]).
    pub fn state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.config.state.insert(value);
        self
    }

    /// Registers a tool (see [`Tool`]; `#[mcp::tool]` functions give one with `name::tool()`).
    pub fn tool(mut self, tool: Tool) -> Self {
        self.state_checks.push(tool.check);
        match first_error(&tool.errors).and_then(|()| tool_entry(tool)) {
            Ok(t) if self.catalog.tools.iter().any(|x| x.name == t.name) => {
                self.errors.push(BuildError::Duplicate { kind: ItemKind::Tool, name: t.name })
            }
            Ok(t) => self.catalog.tools.push(Arc::new(t)),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers every tool of `tools`.
    pub fn tools(self, tools: impl IntoIterator<Item = Tool>) -> Self {
        tools.into_iter().fold(self, Self::tool)
    }

    /// Registers a resource or resource template (see [`Resource`]).
    pub fn resource(mut self, resource: Resource) -> Self {
        self.state_checks.push(resource.check);
        if let Err(e) = first_error(&resource.errors) {
            self.errors.push(e);
            return self;
        }
        let (handler, access) = (resource.handler.0, resource.access);
        match resource.def {
            ResourceDef::Static(d) => {
                if self.catalog.resources.iter().any(|r| r.uri == d.uri) {
                    self.errors.push(BuildError::Duplicate { kind: ItemKind::Resource, name: d.uri });
                } else {
                    self.catalog.resources.push(Arc::new(ResourceEntry {
                        uri: d.uri.clone(),
                        def: d,
                        access,
                        handler,
                        mounted: false,
                    }));
                }
            }
            ResourceDef::Template(d) => match UriTemplate::parse(&d.uri_template) {
                Err(e) => self.errors.push(BuildError::InvalidTemplate(e.to_string())),
                Ok(_) if self.catalog.templates.iter().any(|t| t.template.as_str() == d.uri_template) => {
                    self.errors.push(BuildError::Duplicate { kind: ItemKind::ResourceTemplate, name: d.uri_template })
                }
                Ok(template) => self.catalog.templates.push(Arc::new(TemplateEntry {
                    template,
                    def: d,
                    access,
                    handler,
                    mounted: false,
                })),
            },
        }
        self
    }

    /// Registers every resource of `resources`.
    pub fn resources(self, resources: impl IntoIterator<Item = Resource>) -> Self {
        resources.into_iter().fold(self, Self::resource)
    }

    /// Registers a prompt (see [`Prompt`]).
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.state_checks.push(prompt.check);
        if let Err(e) = first_error(&prompt.errors) {
            self.errors.push(e);
            return self;
        }
        let name = prompt.def.name.clone();
        let handler = prompt.handler.0;
        if self.catalog.prompts.iter().any(|p| p.name == name) {
            self.errors.push(BuildError::Duplicate { kind: ItemKind::Prompt, name });
            return self;
        }
        let required_args = prompt
            .def
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| a.name.clone())
            .collect();
        let def = prompt.def;
        self.catalog.prompts.push(Arc::new(PromptEntry {
            name,
            def,
            required_args,
            completers: prompt.completers,
            access: prompt.access,
            handler,
            mounted: false,
        }));
        self
    }

    /// Registers every prompt of `prompts`.
    pub fn prompts(self, prompts: impl IntoIterator<Item = Prompt>) -> Self {
        prompts.into_iter().fold(self, Self::prompt)
    }

    /// Sets the `completion/complete` handler: `(ctx, ref, argument, context)` -> `completion` object
    /// (`{values, total?, hasMore?}`). Declares the `completions` capability.
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Context, Value, Value, Option<Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.completion = Some(Arc::new(move |ctx, r, a, c| {
            let handler = handler.clone();
            Box::pin(async move { handler(ctx, r, a, c).await })
        }));
        self
    }

    /// Compiles every tool's `inputSchema`/`outputSchema` when the server is built, so an
    /// invalid schema is a [`BuildError`] instead of an error on the tool's first call.
    /// Off by default: validators are compiled on first use, which keeps start-up fast and idle
    /// memory small. (Dialects and `x-mcp-header` annotations are always checked at build.)
    pub fn compile_schemas_at_build(mut self, on: bool) -> Self {
        self.eager_schemas = on;
        self
    }

    /// Rate limits per caller, per tool and for the whole server (see [`crate::rate_limit`]);
    /// per-caller limits of one tool are set on it ([`Tool::rate_limit`]). A quota that cannot
    /// work fails [`ServerBuilder::build`]. Replaces earlier limits but keeps a store set with
    /// [`ServerBuilder::rate_limit_store`].
    pub fn rate_limits(mut self, limits: crate::rate_limit::RateLimits) -> Self {
        let store = self.config.stages.rate_limits.take_store();
        self.config.stages.rate_limits = limits;
        if let Some(store) = store {
            self.config.stages.rate_limits.set_store_if_none(store);
        }
        self
    }

    /// Keeps rate-limit buckets in `store` (e.g. Redis, so that every replica enforces one
    /// budget) unless the limits given to [`ServerBuilder::rate_limits`] name their own.
    pub fn rate_limit_store(mut self, store: Arc<dyn crate::rate_limit::RateLimitStore>) -> Self {
        self.config.stages.rate_limits.set_store_if_none(store);
        self
    }

    /// Caches the results of read-only tools and of resources (see [`crate::cache`]). A tool
    /// named in `cache` that is not marked read-only fails [`ServerBuilder::build`].
    pub fn result_cache(mut self, cache: crate::cache::ResultCache) -> Self {
        self.config.stages.result_cache = Some(cache);
        self
    }

    /// Runs tasks (the tasks extension) with this configuration. Without this call a server
    /// whose tools allow tasks runs them with [`crate::tasks::TaskConfig::default`].
    pub fn tasks(mut self, config: crate::tasks::TaskConfig) -> Self {
        self.config.extensions.tasks = Some(config);
        self
    }

    /// Adds an operation layer around every request (see [`crate::layers`]). The first layer
    /// added is the outermost.
    pub fn layer(mut self, layer: impl crate::layers::OperationLayer) -> Self {
        self.config.stages.layers.push(Arc::new(layer));
        self
    }

    /// Serves the catalog methods ([`crate::fallback::FALLBACK_METHODS`]) through `fallback`
    /// first. Capabilities are not derived from it: declare them with
    /// [`ServerBuilder::capability`].
    pub fn fallback(mut self, fallback: Arc<dyn crate::fallback::Fallback>) -> Self {
        self.config.extensions.fallback = Some(fallback);
        self
    }

    /// Serves `server`'s tools, prompts, resources and templates as part of this server, tool
    /// and prompt names prefixed with `prefix`.
    ///
    /// Composition: [`ServerBuilder::mount`](crate::ServerBuilder::mount) serves another server's tools, prompts, resources and
    /// resource templates as part of this one.
    ///
    /// - Tool and prompt names get the prefix (`weather_` + `forecast`); resource URIs and URI
    ///   templates are left as they are (a URI names its resource wherever it is served), so two
    ///   mounted servers must not offer the same URI.
    /// - A name or URI that the server already has is a [`BuildError::Duplicate`] at build; one that
    ///   appears later (a tool added at run time on either side) is left out, the server's own item
    ///   winning, with a warning in the log.
    /// - The mounted server's list changes (`add_tool`, `remove_tool`, `notify`) reach this server's
    ///   catalog and its listeners; its resource updates too.
    /// - Requests run through this server: its layers, access rules, rate limits, cache, MRTR state
    ///   (sealed with this server's keys) and tasks apply to mounted items as to its own. A mounted
    ///   item's handler sees the mounted server as [`crate::Context::server`] (its state, its
    ///   catalog). What the mounted server itself configured around its items (its layers, limits,
    ///   completion handler, fallback) is not used.
    ///
    /// ```
    /// use mcp_server::{Server, Tool};
    ///
    /// let weather = Server::builder("weather", "1")
    ///     .tool(Tool::new("forecast").handler(|| async { "sunny" }))
    ///     .build()
    ///     .unwrap();
    /// let hub = Server::builder("hub", "1").mount("weather_", weather).build().unwrap();
    /// assert!(hub.tool("weather_forecast").is_some());
    /// ```
    pub fn mount(mut self, prefix: impl Into<String>, server: Server) -> Self {
        self.config.extensions.mounts.push(crate::server::Mount { prefix: prefix.into(), server });
        self
    }

    /// Serves the skills in `set` (see [`ServerBuilder::skills_dir`]).
    pub fn skills(mut self, set: mcp_skills::SkillSet) -> Self {
        if self.config.extensions.skills.is_some() {
            self.errors.push(BuildError::Skills("skills are given once: one SkillSet or one folder".into()));
            return self;
        }
        match crate::skills::register(&mut self.catalog, &set) {
            Ok(()) => self.config.extensions.skills = Some(Arc::new(set)),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Serves every skill in the folder `dir` (each subfolder with a `SKILL.md`). The folder is
    /// read and checked now; what the SEP forbids (bad names, missing frontmatter, over the
    /// limits, symbolic links out of the folder) fails [`ServerBuilder::build`] with an error
    /// naming the file.
    pub fn skills_dir(mut self, dir: impl AsRef<std::path::Path>) -> Self {
        match mcp_skills::SkillSet::from_dir(dir) {
            Ok(set) => self.skills(set),
            Err(e) => {
                self.errors.push(BuildError::Skills(e.to_string()));
                self
            }
        }
    }

    /// Registers an HTML view ([`crate::apps::UiResource`]).
    pub fn ui_resource(self, view: crate::apps::UiResource) -> Self {
        self.resource(view.into_resource())
    }

    /// Checks every registration and builds the server.
    pub fn build(mut self) -> Result<Server, BuildError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        for check in &self.state_checks {
            check(&self.config.state).map_err(BuildError::MissingState)?;
        }
        if self.eager_schemas {
            for t in &self.catalog.tools {
                t.input.compile_now()?;
                if let Some(o) = &t.output {
                    o.compile_now()?;
                }
            }
        }
        crate::mount::compose(&mut self.catalog, &self.config.extensions.mounts, true)?;
        self.catalog.reindex();
        crate::apps::check_links(&self.catalog)?;
        if self.config.extensions.tasks.is_none()
            && self.catalog.tools.iter().any(|t| t.task_support != crate::catalog::TaskSupport::Forbidden)
        {
            self.config.extensions.tasks = Some(crate::tasks::TaskConfig::default());
        }
        let server = Server::from_inner(ServerInner::new(self.config, self.catalog, self.completion)?);
        crate::mount::attach(&server);
        Ok(server)
    }
}

/// The user API of a built server that reaches into the extensions (the engine's own is in
/// `server.rs`, the request path in `dispatch.rs`).
impl Server {
    /// Starts building a server named `name` at `version`.
    pub fn builder(name: &str, version: &str) -> ServerBuilder {
        ServerBuilder::new(name, version)
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

    /// Whether requests should carry the peer's address ([`RequestEnv::peer`]): operation
    /// layers may read it ([`crate::layers::Operation::peer`]), and rate limits key anonymous
    /// callers by it. Transports that pay for the address read this once per connection.
    pub fn needs_peer_address(&self) -> bool {
        !self.inner.config.stages.layers.is_empty()
            || self.inner.stages.limiter.keys_callers()
            || self.catalog().tool_quotas
    }

    /// Opens a `subscriptions/listen` stream.
    ///
    /// The stream yields the acknowledgement first, then every matching change notification
    /// (each tagged with the subscription id), and ends with the graceful-closure response when
    /// the server shuts down or `env.cancel` fires (the latter without a response: the client left).
    pub fn listen(
        &self,
        req: Request,
        env: RequestEnv,
    ) -> Result<impl futures::Stream<Item = Value> + Send + 'static, ProtocolError> {
        crate::listen::open(self, req, env)
    }

    /// Opens a `subscriptions/listen` stream after the layers (see [`crate::layers`]); what the
    /// transports call. [`Server::listen`] opens one without them.
    pub async fn listen_layered(
        &self,
        request: Request,
        env: RequestEnv,
    ) -> Result<impl futures::Stream<Item = Value> + Send + 'static, ProtocolError> {
        use futures::future::Either;
        if self.inner.config.stages.layers.is_empty() {
            return self.listen(request, env).map(Either::Left);
        }
        crate::dispatch::listen_layered(self, request, env).await.map(Either::Right)
    }

    /// Subscribes to change events, with the lag policy of [`ChangeFeed::next`].
    pub fn change_feed(&self) -> ChangeFeed {
        ChangeFeed::new(self.events())
    }

    /// The skills this server serves, if any.
    pub fn skill_set(&self) -> Option<&mcp_skills::SkillSet> {
        self.inner.config.extensions.skills.as_deref()
    }

    /// How many tasks run (or wait for input) in this process.
    pub fn running_tasks(&self) -> usize {
        self.tasks().map_or(0, |rt| rt.running())
    }

    /// Announces that task `id` changed (for custom stores that change records themselves).
    pub fn notify_task_changed(&self, id: &str) {
        self.notify(ChangeEvent::TaskStatus(id.to_owned()));
    }
}

/// Validates a tool definition and compiles its schemas.
pub(crate) fn tool_entry(tool: Tool) -> Result<ToolEntry, BuildError> {
    let name = tool.def.name.clone();
    let handler = tool.handler.0;
    let input_schema = Value::Object(tool.def.input_schema.clone());
    let input = Arc::new(SchemaValidator::new(&name, &input_schema)?);
    let output = match &tool.def.output_schema {
        Some(s) => Some(Arc::new(SchemaValidator::new(&name, &Value::Object(s.clone()))?)),
        None => None,
    };
    let hp = header_params(&tool.def.input_schema)
        .map_err(|reason| BuildError::InvalidHeaderAnnotation { tool: name.clone(), reason })?;
    // MCP Apps: an app-only tool exists only for clients that render apps.
    let ui = crate::apps::tool_ui(&tool.def);
    let access = match &ui {
        Some(ui) if !ui.model_visible() => Some(crate::access::Access::apps(tool.access)),
        _ => tool.access,
    };
    Ok(ToolEntry {
        name,
        def: tool.def,
        input,
        output,
        header_params: hp.into(),
        task_support: tool.task_support,
        task_start: tool.task_start,
        access,
        ui_linked: ui.is_some_and(|ui| ui.resource_uri.is_some()),
        rate_limit: tool.rate_limit,
        handler,
        mounted: false,
    })
}
