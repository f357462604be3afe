//! Serve an upstream MCP server (a stdio command or a URL, of either era) as a dual-era server
//! of our own, on any transport: the library behind `mcp proxy`.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_proxy::{Proxy, ProxyConfig, ServerSpec, Upstream};
//! let upstream =
//!     Upstream::new(ServerSpec::Stdio { command: "my-server".into(), args: vec![], env: vec![], cwd: None });
//! let proxy = Proxy::connect(ProxyConfig::new(upstream).prefix("mine_")).await?;
//! mcp::stdio::serve_stdio(proxy.server().clone()).await?;
//! # Ok(()) }
//! ```
//!
//! The front is our ordinary [`mcp::server::Server`] with a forwarding fallback, so everything
//! the server framework guarantees holds for proxied requests too: `_meta` validation, sealed
//! `requestState`, legacy sessions and their MRTR bridge, auth, limits. Inside:
//! - `upstream`: reaching the upstream; one client session per input-capability set.
//! - `pool`: sessions keyed by (capabilities, principal), bounded, restarted with backoff.
//! - `flight`: upstream calls kept alive across MRTR rounds.
//! - `forward`: the fallback that forwards each catalog method.
//! - `filter`: [`ProxyConfig::tools`] and [`ProxyConfig::prefix`].
//! - `lists`: upstream lists read page by page within [`ProxyConfig::max_list_bytes`] and
//!   [`ProxyConfig::max_list_items`].
//! - `gateway`, `routes`: [`Gateway`], many upstreams as one, and how it keeps them apart.
//! - `tasks`: which upstream session owns each task (the tasks extension, passed through when
//!   a modern upstream offers it).
//!
//! **The proxy acts with the operator's access to the upstream**: its credentials (headers,
//! OAuth tokens), its network position (an internal URL), or its account (a stdio upstream runs
//! as the operator). Serve the front over HTTP only behind downstream auth
//! (`mcp::http::EndpointConfig::auth`); `mcp proxy --http` refuses to start without it unless
//! told otherwise. No downstream `_meta` is forwarded: the upstream request carries only what
//! the proxy's own client writes (its protocol version, capabilities, progress token, log
//! level and, when traced, the trace context of the proxy's own client span).
//!
//! Notices (upstream restarts, expired waits) are `tracing` events of target `mcp_proxy`.

mod filter;
mod flight;
mod forward;
mod gateway;
mod lists;
mod pool;
mod routes;
mod tasks;
mod upstream;

pub use gateway::{Gateway, GatewayConfig, UpstreamStats};
/// The default list bounds of [`ProxyConfig`] and [`GatewayConfig`]: the client's own.
pub use mcp_client::config::ServerSpec;
pub use mcp_client::{DEFAULT_MAX_LIST_BYTES, DEFAULT_MAX_LIST_ITEMS};
pub use routes::{MISSING_META, UPSTREAM_META};
pub use upstream::Upstream;

use pool::{Change, Key, Pool, PoolLimits};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// Most upstream resources whose updates the proxy follows.
const MAX_SUBSCRIPTIONS: usize = 100;

/// How long an unused upstream session stays open.
const IDLE_SESSION: Duration = Duration::from_secs(300);

/// What a proxy serves and how: the upstream, the names it exposes, and its bounds.
///
/// Plain data with safe defaults; [`ProxyConfig::new`] then the builder-style setters:
///
/// ```
/// use mcp_proxy::{ProxyConfig, ServerSpec, Upstream};
/// let config = ProxyConfig::new(Upstream::new(ServerSpec::Http {
///     url: "http://127.0.0.1:3000/mcp".into(),
///     headers: vec![],
/// }))
/// .tools(["search_*"])
/// .prefix("docs_");
/// assert_eq!(config.max_sessions, 16);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProxyConfig {
    /// The upstream server.
    pub upstream: Upstream,
    /// Expose only the upstream tools whose names, as clients see them ([`ProxyConfig::prefix`]
    /// included), match one of these globs (`*`, `?`); empty exposes every tool. A glob that
    /// matches no listed tool is logged once.
    pub tools: Vec<String>,
    /// Prefix every tool and prompt name with this (stripped again when forwarding).
    pub prefix: String,
    /// Most upstream sessions open at once (child processes for a stdio upstream). Default 16.
    pub max_sessions: usize,
    /// How long an upstream call waits for the downstream client's answers to its questions.
    /// Default 120 s.
    pub input_timeout: Duration,
    /// Most upstream calls waiting for answers at once. Default 256.
    pub max_waiting: usize,
    /// Most upstream calls of one downstream principal waiting for answers at once. Default 16.
    pub max_waiting_per_caller: usize,
    /// Bound on connecting an upstream session (era probe and handshake). Default 30 s.
    pub connect_timeout: Duration,
    /// Skip era detection: open legacy sessions upstream at this protocol version.
    pub force_legacy: Option<String>,
    /// Who may see and call which upstream tools: the first rule whose glob matches a tool's
    /// name as clients see it ([`ProxyConfig::prefix`] included, as with [`ProxyConfig::tools`])
    /// decides (no match: every caller). A tool hidden from a caller is left out of its lists
    /// and called as an unknown one. A glob that matches no listed tool is logged once.
    pub tool_access: Vec<(String, mcp::server::Access)>,
    /// Serve the upstream's MCP Apps views (`ui://` URIs) under `ui://NAME/...` (the upstream's
    /// `ui://x/view` becomes `ui://NAME/x/view` in tool links, resource lists and read results,
    /// and back when read), so views of several upstreams stay unique; the gateway sets it to
    /// each upstream's name when it prefixes names. `None` (the default) leaves URIs alone.
    pub view_authority: Option<String>,
    /// Where the globs' matches are reported (a gateway shares one among its upstreams, so a
    /// glob is reported only when it matches no tool of any of them).
    pub(crate) glob_check: Option<Arc<filter::GlobCheck>>,
    /// Most bytes (serialized JSON) of one upstream list, all pages together: the read stops
    /// at the page that passes it and the list is answered with an error naming the bound.
    /// Default [`DEFAULT_MAX_LIST_BYTES`] (16 MiB).
    pub max_list_bytes: usize,
    /// Most items of one upstream list, all pages together (as [`ProxyConfig::max_list_bytes`]).
    /// Default [`DEFAULT_MAX_LIST_ITEMS`] (100,000).
    pub max_list_items: usize,
}

impl ProxyConfig {
    /// A proxy of `upstream` with the default bounds.
    pub fn new(upstream: Upstream) -> Self {
        Self {
            upstream,
            tools: Vec::new(),
            prefix: String::new(),
            max_sessions: 16,
            input_timeout: Duration::from_secs(120),
            max_waiting: 256,
            max_waiting_per_caller: 16,
            connect_timeout: Duration::from_secs(30),
            force_legacy: None,
            tool_access: Vec::new(),
            view_authority: None,
            glob_check: None,
            max_list_bytes: DEFAULT_MAX_LIST_BYTES,
            max_list_items: DEFAULT_MAX_LIST_ITEMS,
        }
    }

    /// Sets [`ProxyConfig::max_list_bytes`] and [`ProxyConfig::max_list_items`].
    pub fn max_list(mut self, bytes: usize, items: usize) -> Self {
        self.max_list_bytes = bytes;
        self.max_list_items = items;
        self
    }

    /// Serves the upstream tools matching `glob` only to callers `access` allows (rules are
    /// checked in the order given; see [`ProxyConfig::tool_access`]).
    pub fn tool_access(mut self, glob: impl Into<String>, access: mcp::server::Access) -> Self {
        self.tool_access.push((glob.into(), access));
        self
    }

    /// Exposes only the tools whose names match one of `globs`.
    pub fn tools<I, S>(mut self, globs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = globs.into_iter().map(Into::into).collect();
        self
    }

    /// Prefixes every tool and prompt name with `prefix`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Sets [`ProxyConfig::max_sessions`].
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// Sets [`ProxyConfig::input_timeout`].
    pub fn input_timeout(mut self, d: Duration) -> Self {
        self.input_timeout = d;
        self
    }

    /// Sets [`ProxyConfig::max_waiting`] and [`ProxyConfig::max_waiting_per_caller`].
    pub fn max_waiting(mut self, total: usize, per_caller: usize) -> Self {
        self.max_waiting = total;
        self.max_waiting_per_caller = per_caller;
        self
    }

    /// Sets [`ProxyConfig::connect_timeout`].
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = d;
        self
    }

    /// Sets [`ProxyConfig::force_legacy`].
    pub fn force_legacy(mut self, version: impl Into<String>) -> Self {
        self.force_legacy = Some(version.into());
        self
    }
}

/// Why a proxy could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// [`ProxyConfig::force_legacy`] names no legacy protocol revision.
    #[error("force_legacy {version:?}: not a legacy protocol version ({known})")]
    NotLegacy {
        /// The version given.
        version: String,
        /// The legacy versions known.
        known: String,
    },
    /// The upstream could not be reached or answered with an error (URLs redacted).
    #[error("upstream {upstream}: {message}")]
    Upstream {
        /// The upstream, as [`Upstream::describe`] gives it.
        upstream: String,
        /// What went wrong, URLs redacted.
        message: String,
        /// The client error.
        #[source]
        source: mcp_client::ClientError,
    },
    /// The gateway's upstreams would make names ambiguous (one's prefix starts another's).
    #[error("{0}")]
    AmbiguousNames(String),
    /// The front server could not be built.
    #[error("front server: {0}")]
    Build(#[from] mcp::server::BuildError),
}

/// A running proxy: the front [`mcp::server::Server`] to serve on any transport, and the
/// upstream sessions behind it.
#[derive(Debug, Clone)]
pub struct Proxy {
    server: mcp::server::Server,
    pool: Arc<Pool>,
    flights: Arc<flight::Flights>,
    tasks: Option<Arc<tasks::Tasks>>,
}

impl Proxy {
    /// Connects to the upstream (once now, to learn what it offers and to fail early) and
    /// builds the front server. Spawns the tasks that announce upstream changes and close idle
    /// sessions; needs a Tokio runtime.
    pub async fn connect(config: ProxyConfig) -> Result<Self, ProxyError> {
        Self::connect_with(config, |b| b).await
    }

    /// [`Proxy::connect`], with `customize` applied to the front server's builder (limits,
    /// error exposure, telemetry) before it is built.
    pub async fn connect_with(
        config: ProxyConfig,
        customize: impl FnOnce(mcp::server::ServerBuilder) -> mcp::server::ServerBuilder,
    ) -> Result<Self, ProxyError> {
        let backend = Backend::connect(&config).await?;
        let mut builder =
            mcp::server::Server::builder(&backend.name, &backend.version).fallback(Arc::new(backend.forward.clone()));
        for (k, v) in capabilities(&backend.capabilities) {
            builder = builder.capability(k, v);
        }
        if let Some(text) = &backend.instructions {
            builder = builder.instructions(text);
        }
        let server = customize(builder).build()?;
        backend.start(&server).await;
        let forward = &backend.forward;
        Ok(Proxy { server, pool: forward.pool.clone(), flights: forward.flights.clone(), tasks: forward.tasks.clone() })
    }

    /// The front server: serve it with `mcp::http::serve`, `mcp::stdio::serve_stdio`, or the
    /// in-memory pair.
    pub fn server(&self) -> &mcp::server::Server {
        &self.server
    }

    /// The upstream this proxy serves.
    pub fn upstream(&self) -> &Upstream {
        self.pool.upstream()
    }

    /// How many upstream sessions are open now.
    pub fn open_sessions(&self) -> usize {
        self.pool.len()
    }

    /// How many upstream calls wait for the downstream client's answers now.
    pub fn waiting_calls(&self) -> usize {
        self.flights.len()
    }

    /// How many upstream tasks the proxy routes now (`None` when the upstream does not offer
    /// the tasks extension).
    pub fn routed_tasks(&self) -> Option<usize> {
        self.tasks.as_ref().map(|t| t.len())
    }
}

/// One connected upstream: the fallback that forwards to it, and what it said about itself.
pub(crate) struct Backend {
    pub(crate) forward: forward::Forward,
    /// `serverInfo.name` and `.version`.
    pub(crate) name: String,
    pub(crate) version: String,
    /// The upstream's capabilities, as JSON.
    pub(crate) capabilities: Value,
    pub(crate) instructions: Option<String>,
    changes: Arc<pool::Changes>,
    /// The first client session (to subscribe to resources).
    client: mcp_client::Client,
}

impl Backend {
    /// Connects to the upstream of `config` (once now, to learn what it offers and to fail
    /// early) and makes its forwarding fallback.
    pub(crate) async fn connect(config: &ProxyConfig) -> Result<Self, ProxyError> {
        let legacy = mcp::server::mcp_protocol::version::LEGACY;
        if let Some(v) = config.force_legacy.as_deref().filter(|v| !legacy.contains(v)) {
            return Err(ProxyError::NotLegacy { version: v.to_owned(), known: legacy.join(", ") });
        }
        let upstream = config.upstream.clone();
        let list = lists::ListLimits { max_bytes: config.max_list_bytes, max_items: config.max_list_items };
        let limits = PoolLimits {
            max_sessions: config.max_sessions.max(1),
            connect_timeout: config.connect_timeout,
            force_legacy: config.force_legacy.clone(),
            list,
            ..PoolLimits::default()
        };
        let changes = Arc::new(pool::Changes::default());
        let pool = Pool::new(upstream.clone(), limits, changes.clone());
        let failed = |e: mcp_client::ClientError| ProxyError::Upstream {
            upstream: upstream.describe(),
            message: upstream::loggable(&e.to_string()),
            source: e,
        };
        let first = pool.lease(&Key::default()).await.map_err(failed)?;
        let client = first.session().client().clone();
        drop(first);
        // The proxy passes the upstream's answer on as it came.
        let info = client.discover().await.map_err(failed)?.into_raw();
        let server_info = info
            .get("serverInfo")
            .or_else(|| info.get("_meta").and_then(|m| m.get(mcp::server::mcp_protocol::meta::SERVER_INFO)))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let name = server_info.get("name").and_then(Value::as_str).unwrap_or("upstream").to_owned();
        let version = server_info.get("version").and_then(Value::as_str).unwrap_or("0").to_owned();
        let era = pool::era(&client);
        tracing::info!(
            "upstream {} is {} {} ({era}, protocol {})",
            upstream.describe(),
            upstream::loggable(&name),
            upstream::loggable(&version),
            client.protocol_version()
        );
        let names = filter::Names {
            tools: config.tools.clone(),
            prefix: config.prefix.clone(),
            access: config.tool_access.clone(),
            views: config.view_authority.as_deref().map(filter::view_authority),
            check: config.glob_check.clone().unwrap_or_default(),
            checked: Default::default(),
        };
        names.check.register(&names);
        let flights = flight::Flights::new(
            config.max_waiting.max(1),
            config.max_waiting_per_caller.max(1),
            config.input_timeout.max(Duration::from_millis(1)),
        );
        // The tasks extension is passed through exactly when the (modern) upstream offers it.
        let tasks = (client.is_modern() && client.server_supports_tasks())
            .then(|| Arc::new(tasks::Tasks::new(tasks::MAX_TASKS)));
        let forward = forward::Forward { pool, flights, names: Arc::new(names), tasks, limits: list };
        let capabilities = serde_json::to_value(client.server_capabilities()).unwrap_or_default();
        let instructions = info.get("instructions").and_then(Value::as_str).map(str::to_owned);
        Ok(Self { forward, name, version, capabilities, instructions, changes, client })
    }

    /// Starts following the upstream for `server`: its resource subscriptions, its change
    /// notifications (announced on `server`), and the sweeps of idle sessions and expired
    /// waits. Needs a Tokio runtime.
    pub(crate) async fn start(&self, server: &mcp::server::Server) {
        let (pool, flights) = (self.forward.pool.clone(), self.forward.flights.clone());
        if self.client.server_capabilities().resources.and_then(|r| r.subscribe) == Some(true) {
            // Listeners may ask for any listed resource: the shared session subscribes to them.
            match self.client.list_resources().await {
                Ok(listed) => {
                    let uris = listed.into_iter().map(|r| r.into_inner().uri);
                    pool.subscribe(uris.take(MAX_SUBSCRIPTIONS).collect()).await;
                }
                Err(e) => tracing::warn!(
                    "upstream resources/list: {}; resource updates are not followed",
                    upstream::loggable(&e.to_string())
                ),
            }
        }
        // The policy globs are checked against the tools listed now (else the first list a
        // client asks for), so a glob that matches nothing is reported at start.
        if !self.forward.names.check.is_empty() {
            if let Ok(tools) = lists::all_pages(&self.client, "tools/list", "tools", &self.forward.limits).await {
                self.forward.names.check_listed(tools.iter().filter_map(|t| t.get("name")?.as_str()));
            }
        }
        let (announcer, changes) = (server.clone(), self.changes.clone());
        tokio::spawn(async move {
            loop {
                for change in changes.next().await {
                    announce(&announcer, change);
                }
            }
        });
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                pool.close_idle(IDLE_SESSION);
                let n = flights.sweep();
                if n > 0 {
                    tracing::warn!("{n} call(s) waiting for input expired; their upstream calls were cancelled");
                }
            }
        });
    }
}

/// The downstream capabilities: what the upstream offers, with list changes announced (the
/// proxy feeds them from the upstream's notifications).
fn capabilities(upstream: &Value) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    for k in ["tools", "prompts", "resources"] {
        if let Some(Value::Object(c)) = upstream.get(k) {
            let mut c = c.clone();
            c.insert("listChanged".into(), json!(true));
            out.push((k, Value::Object(c)));
        }
    }
    if upstream.get("completions").is_some() {
        out.push(("completions", json!({})));
    }
    out
}

/// Maps an upstream notification onto the front server's change events.
fn announce(server: &mcp::server::Server, (method, params): Change) {
    use mcp::server::ChangeEvent;
    let event = match method.as_str() {
        "notifications/tools/list_changed" => ChangeEvent::ToolsListChanged,
        "notifications/prompts/list_changed" => ChangeEvent::PromptsListChanged,
        "notifications/resources/list_changed" => ChangeEvent::ResourcesListChanged,
        "notifications/resources/updated" => match params.get("uri").and_then(Value::as_str) {
            Some(uri) => ChangeEvent::ResourceUpdated(uri.to_owned()),
            None => return,
        },
        _ => return,
    };
    tracing::debug!(%method, "upstream change announced downstream");
    server.notify(event);
}
