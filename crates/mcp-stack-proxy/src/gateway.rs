//! A gateway: many upstream servers served as one ([`Gateway`], `mcp proxy --config`).
//!
//! Each upstream is proxied as by [`crate::Proxy`] (its own sessions, MRTR flights, tasks,
//! tool filter and access rules) and the front routes every request to one of them:
//! - lists are every upstream's items together (an upstream that fails is left out of that
//!   list, with a warning; the others are served);
//! - `tools/call`, `prompts/get` and prompt completions go to the upstream whose prefix the name
//!   has (by default each upstream's tools and prompts are prefixed `NAME_`); without prefixes
//!   ([`GatewayConfig::no_prefix`]), to the upstream that listed the name, the first in the
//!   configuration order when several do (the clash is reported once in the log);
//! - `resources/read` goes to the upstream that listed the URI, else to each in turn until one
//!   knows it; with prefixes, MCP Apps views (`ui://` URIs) are served as `ui://NAME/...` and
//!   routed by that authority ([`ProxyConfig::view_authority`]);
//! - `tasks/*` go to the upstream that owns the task (task ids are the proxy's own).
//!
//! Per upstream the gateway counts calls, errors and time ([`Gateway::stats`]); with
//! [`GatewayConfig::stats_interval`] it reports them in the log (`tracing`, target `mcp_proxy`).
//! Each routed request is also a `histogram.mcp.gateway.upstream.duration` event in seconds
//! (target `mcp_gateway::telemetry`, attributes `mcp.gateway.upstream`, `mcp.method.name` and
//! `error.type`): with `tracing-opentelemetry`'s `MetricsLayer` (`mcp proxy --otlp-endpoint`),
//! an OpenTelemetry histogram per upstream.

use crate::forward::Forward;
use crate::{capabilities, Backend, ProxyConfig, ProxyError};
use mcp::server::fallback::Fallback;
use mcp::server::mcp_protocol::ProtocolError;
use mcp::server::{BoxFuture, Context, HandlerError};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The upstreams of a [`Gateway`] and how they are combined.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GatewayConfig {
    /// The upstreams, by name, in order (the order decides clashes without prefixes).
    pub upstreams: Vec<(String, ProxyConfig)>,
    /// Serve names as the upstreams have them (no `NAME_` prefix); clashes go to the first.
    pub no_prefix: bool,
    /// Report each upstream's calls, errors and latency in the log this often (off by default).
    pub stats_interval: Option<Duration>,
    /// The front's `serverInfo` name (default `mcp-gateway`).
    pub name: String,
}

impl GatewayConfig {
    /// A gateway of these upstreams, each prefixed `NAME_` unless its config sets a prefix.
    pub fn new(upstreams: Vec<(String, ProxyConfig)>) -> Self {
        Self { upstreams, no_prefix: false, stats_interval: None, name: "mcp-gateway".into() }
    }

    /// Sets [`GatewayConfig::no_prefix`].
    pub fn no_prefix(mut self, on: bool) -> Self {
        self.no_prefix = on;
        self
    }

    /// Sets [`GatewayConfig::stats_interval`].
    pub fn stats_interval(mut self, every: Duration) -> Self {
        self.stats_interval = Some(every);
        self
    }
}

/// Calls, errors and time of one upstream, since the gateway started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpstreamStats {
    /// The upstream's name.
    pub name: String,
    /// Requests routed to it (calls, reads, prompts, completions, task methods).
    pub calls: u64,
    /// Of which answered with an error (or a tool result with `isError`).
    pub errors: u64,
    /// Their total time, in microseconds.
    pub total_us: u64,
    /// The longest, in microseconds.
    pub max_us: u64,
}

#[derive(Default)]
struct Counters {
    calls: AtomicU64,
    errors: AtomicU64,
    total_us: AtomicU64,
    max_us: AtomicU64,
}

struct Routed {
    name: String,
    forward: Forward,
    counters: Counters,
}

/// Which list a name belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Tool,
    Prompt,
    Resource,
}

/// The forwarding fallback of every upstream, and the routes learnt from their lists.
#[derive(Clone)]
struct Multi {
    upstreams: Arc<[Routed]>,
    no_prefix: bool,
    routes: Arc<Mutex<HashMap<Kind, HashMap<String, usize>>>>,
    /// Clashes already reported (bounded: the names of the lists).
    reported: Arc<Mutex<HashSet<String>>>,
}

/// Most names one route table keeps (per kind).
const MAX_ROUTES: usize = 100_000;

fn refuse(e: ProtocolError) -> HandlerError {
    HandlerError::Protocol(e)
}

impl Fallback for Multi {
    fn serve(&self, ctx: Context) -> Option<BoxFuture<Result<Value, HandlerError>>> {
        let this = self.clone();
        Some(Box::pin(async move { this.serve(ctx).await }))
    }

    fn serves_tasks(&self) -> bool {
        self.upstreams.iter().any(|u| u.forward.tasks.is_some())
    }
}

impl Multi {
    async fn serve(&self, ctx: Context) -> Result<Value, HandlerError> {
        let method = ctx.method().to_owned();
        let field = |k: &str| ctx.params().get(k).and_then(Value::as_str).map(str::to_owned);
        match method.as_str() {
            "tools/list" => self.list(&ctx, Kind::Tool, "tools/list", "tools").await,
            "prompts/list" => self.list(&ctx, Kind::Prompt, "prompts/list", "prompts").await,
            "resources/list" => self.list(&ctx, Kind::Resource, "resources/list", "resources").await,
            "resources/templates/list" => {
                self.list(&ctx, Kind::Resource, "resources/templates/list", "resourceTemplates").await
            }
            "tools/call" | "prompts/get" => {
                let (kind, what) = if method == "tools/call" { (Kind::Tool, "tool") } else { (Kind::Prompt, "prompt") };
                let name = field("name").unwrap_or_default();
                match self.owner(&ctx, kind, &name).await {
                    Some(i) => self.timed(i, ctx).await,
                    None => Err(refuse(ProtocolError::invalid_params(format!("Unknown {what}: {name}")))),
                }
            }
            "resources/read" => {
                let uri = field("uri").unwrap_or_default();
                // A view (`ui://NAME/...`) belongs to the upstream whose authority it carries.
                let view_owner = || {
                    let under =
                        |u: &Routed| u.forward.names.views.is_some() && u.forward.names.inward_uri(&uri).is_ok();
                    uri.starts_with("ui://").then(|| self.upstreams.iter().position(under)).flatten()
                };
                if let Some(i) = self.route(Kind::Resource, &uri).or_else(view_owner) {
                    return self.timed(i, ctx).await;
                }
                let mut last = refuse(ProtocolError::resource_not_found(&uri));
                for i in 0..self.upstreams.len() {
                    match self.timed(i, ctx.clone()).await {
                        Err(HandlerError::Protocol(e)) if is_not_found(&e) => last = refuse(e),
                        other => return other,
                    }
                }
                Err(last)
            }
            "completion/complete" => {
                let reference = ctx.params().get("ref").cloned().unwrap_or_default();
                let owner = match reference.get("type").and_then(Value::as_str) {
                    Some("ref/prompt") => {
                        let name = reference.get("name").and_then(Value::as_str).unwrap_or_default();
                        self.owner(&ctx, Kind::Prompt, name).await
                    }
                    _ => None,
                };
                // A template's completions: the first upstream (templates are not routed).
                let owner = owner.or((!self.upstreams.is_empty()).then_some(0));
                match owner {
                    Some(i) => self.timed(i, ctx).await,
                    None => Err(refuse(ProtocolError::method_not_found(method))),
                }
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                let mut last = refuse(crate::tasks::not_found());
                for i in (0..self.upstreams.len()).filter(|i| self.upstreams[*i].forward.tasks.is_some()) {
                    match self.timed(i, ctx.clone()).await {
                        Err(HandlerError::Protocol(e)) if e == crate::tasks::not_found() => last = refuse(e),
                        other => return other,
                    }
                }
                Err(last)
            }
            _ => Err(refuse(ProtocolError::method_not_found(method))),
        }
    }

    /// Every upstream's list together; the routes of `kind` learnt from it.
    async fn list(&self, ctx: &Context, kind: Kind, method: &str, key: &str) -> Result<Value, HandlerError> {
        let lists = futures::future::join_all(self.upstreams.iter().map(|u| u.forward.list(ctx, method, key))).await;
        let mut items = Vec::new();
        let mut routes = HashMap::new();
        let id = if key == "resources" {
            "uri"
        } else if key == "resourceTemplates" {
            "uriTemplate"
        } else {
            "name"
        };
        for (i, list) in lists.into_iter().enumerate() {
            let list = match list {
                Ok(l) => l,
                Err(e) => {
                    let e = super::upstream::loggable(&e.to_string());
                    tracing::warn!("upstream {}: {method}: {e}; left out of the list", self.upstreams[i].name);
                    continue;
                }
            };
            for item in list.get(key).and_then(Value::as_array).into_iter().flatten() {
                let name = item.get(id).and_then(Value::as_str).unwrap_or_default().to_owned();
                match routes.get(&name) {
                    Some(first) => self.clash(kind, &name, *first, i),
                    None => {
                        if routes.len() < MAX_ROUTES {
                            routes.insert(name, i);
                        }
                        items.push(item.clone());
                    }
                }
            }
        }
        if key != "resourceTemplates" {
            self.routes.lock().insert(kind, routes);
        }
        let mut out = Map::new();
        out.insert(key.into(), Value::Array(items));
        out.insert("ttlMs".into(), json!(0));
        out.insert("cacheScope".into(), json!("private"));
        Ok(Value::Object(out))
    }

    fn clash(&self, kind: Kind, name: &str, first: usize, other: usize) {
        let mut reported = self.reported.lock();
        if reported.len() < MAX_ROUTES && reported.insert(format!("{kind:?}:{name}")) {
            let (a, b) = (&self.upstreams[first].name, &self.upstreams[other].name);
            tracing::warn!("{kind:?} {name:?} is offered by upstreams {a} and {b}: {a}'s is served");
        }
    }

    fn route(&self, kind: Kind, name: &str) -> Option<usize> {
        self.routes.lock().get(&kind)?.get(name).copied()
    }

    /// The upstream serving the tool or prompt `name`: by prefix, or by the routes of the last
    /// list (listing again when the name is not there yet).
    async fn owner(&self, ctx: &Context, kind: Kind, name: &str) -> Option<usize> {
        if !self.no_prefix {
            return self
                .upstreams
                .iter()
                .enumerate()
                .filter(|(_, u)| name.starts_with(u.forward.names.prefix.as_str()))
                .max_by_key(|(_, u)| u.forward.names.prefix.len())
                .map(|(i, _)| i);
        }
        if let Some(i) = self.route(kind, name) {
            return Some(i);
        }
        let (method, key) = if kind == Kind::Tool { ("tools/list", "tools") } else { ("prompts/list", "prompts") };
        self.list(ctx, kind, method, key).await.ok()?;
        self.route(kind, name)
    }

    /// Forwards `ctx` to upstream `i`, counting it (and recording its duration for
    /// OpenTelemetry: see the module docs).
    async fn timed(&self, i: usize, ctx: Context) -> Result<Value, HandlerError> {
        let u = &self.upstreams[i];
        let method = mcp::server::mcp_protocol::Method::parse(ctx.method()).map_or("other", |m| m.as_str());
        let started = Instant::now();
        let r = u.forward.forward(ctx).await;
        let elapsed = started.elapsed();
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let c = &u.counters;
        c.calls.fetch_add(1, Relaxed);
        c.total_us.fetch_add(us, Relaxed);
        c.max_us.fetch_max(us, Relaxed);
        let failed = match &r {
            Ok(v) => v.get("isError") == Some(&Value::Bool(true)),
            Err(_) => true,
        };
        if failed {
            c.errors.fetch_add(1, Relaxed);
        }
        tracing::event!(
            target: "mcp_gateway::telemetry",
            parent: None,
            tracing::Level::INFO,
            histogram.mcp.gateway.upstream.duration = elapsed.as_secs_f64(),
            mcp.gateway.upstream = u.name.as_str(),
            mcp.method.name = method,
            error.type = failed.then_some("error"),
        );
        r
    }

    fn stats(&self) -> Vec<UpstreamStats> {
        self.upstreams
            .iter()
            .map(|u| UpstreamStats {
                name: u.name.clone(),
                calls: u.counters.calls.load(Relaxed),
                errors: u.counters.errors.load(Relaxed),
                total_us: u.counters.total_us.load(Relaxed),
                max_us: u.counters.max_us.load(Relaxed),
            })
            .collect()
    }
}

/// A resource-not-found answer (2026-07-28's `-32602` with the URI, or the legacy `-32002`).
fn is_not_found(e: &ProtocolError) -> bool {
    let code = e.code();
    code == mcp::server::mcp_protocol::error::code::LEGACY_RESOURCE_NOT_FOUND
        || (code == -32602 && e.data().is_some_and(|d| d.get("uri").is_some()))
        || e.message().starts_with("Resource not found")
}

/// A running gateway: the front [`mcp::server::Server`] and the upstreams behind it.
#[derive(Clone)]
pub struct Gateway {
    server: mcp::server::Server,
    multi: Multi,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.multi.upstreams.iter().map(|u| u.name.as_str()).collect();
        f.debug_struct("Gateway").field("upstreams", &names).finish_non_exhaustive()
    }
}

impl Gateway {
    /// Connects to every upstream (failing, naming it, when one cannot be reached) and builds
    /// the front server, with `customize` applied to its builder.
    pub async fn connect_with(
        config: GatewayConfig,
        customize: impl FnOnce(mcp::server::ServerBuilder) -> mcp::server::ServerBuilder,
    ) -> Result<Self, ProxyError> {
        let mut backends = Vec::with_capacity(config.upstreams.len());
        let globs = Arc::default(); // A policy glob is checked against every upstream's tools.
        for (name, mut upstream) in config.upstreams {
            upstream.glob_check = Some(Arc::clone(&globs));
            if config.no_prefix {
                upstream.prefix.clear();
            } else {
                if upstream.prefix.is_empty() {
                    upstream.prefix = format!("{name}_");
                }
                // Views of several upstreams stay apart: `ui://x` of NAME is `ui://NAME/x`.
                upstream.view_authority.get_or_insert_with(|| name.clone());
            }
            let backend = Backend::connect(&upstream).await.map_err(|e| match e {
                ProxyError::Upstream { upstream, message, source } => {
                    ProxyError::Upstream { upstream: format!("{name} ({upstream})"), message, source }
                }
                other => other,
            })?;
            backends.push((name, backend));
        }
        let mut caps = Map::new();
        for (_, b) in &backends {
            for (k, v) in capabilities(&b.capabilities) {
                let entry = caps.entry(k).or_insert_with(|| json!({}));
                if let (Value::Object(into), Value::Object(from)) = (entry, v) {
                    for (ck, cv) in from {
                        let slot = into.entry(ck).or_insert(Value::Bool(false));
                        if cv == Value::Bool(true) {
                            *slot = cv;
                        }
                    }
                }
            }
        }
        let upstreams: Arc<[Routed]> = backends
            .iter()
            .map(|(name, b)| Routed { name: name.clone(), forward: b.forward.clone(), counters: Counters::default() })
            .collect();
        let multi =
            Multi { upstreams, no_prefix: config.no_prefix, routes: Default::default(), reported: Default::default() };
        let mut builder =
            mcp::server::Server::builder(&config.name, env!("CARGO_PKG_VERSION")).fallback(Arc::new(multi.clone()));
        for (k, v) in caps {
            builder = builder.capability(&k, v);
        }
        let server = customize(builder).build()?;
        for (_, b) in &backends {
            b.start(&server).await;
        }
        if let Some(every) = config.stats_interval {
            let watched = multi.clone();
            tokio::spawn(async move {
                let mut last = watched.stats();
                loop {
                    tokio::time::sleep(every).await;
                    let now = watched.stats();
                    for (s, before) in now.iter().zip(&last) {
                        let calls = s.calls - before.calls;
                        if calls > 0 {
                            let mean_ms = (s.total_us - before.total_us) as f64 / calls as f64 / 1000.0;
                            tracing::info!(
                                "upstream {}: {calls} calls, {} errors, mean {mean_ms:.1} ms, max {:.1} ms (since start)",
                                s.name,
                                s.errors - before.errors,
                                s.max_us as f64 / 1000.0
                            );
                        }
                    }
                    last = now;
                }
            });
        }
        Ok(Self { server, multi })
    }

    /// The front server.
    pub fn server(&self) -> &mcp::server::Server {
        &self.server
    }

    /// Calls, errors and time per upstream, since the gateway started.
    pub fn stats(&self) -> Vec<UpstreamStats> {
        self.multi.stats()
    }
}
