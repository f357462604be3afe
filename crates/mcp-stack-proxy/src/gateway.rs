//! A gateway: many upstream servers served as one ([`Gateway`], `mcp proxy --config`).
//!
//! Each upstream is proxied as by [`crate::Proxy`] (its own sessions, MRTR flights, tasks,
//! tool filter and access rules) and the front routes every request to one of them:
//! - lists are every upstream's items together, each item marked with its upstream
//!   ([`crate::UPSTREAM_META`] in its `_meta`); an upstream that fails, or has not answered
//!   within [`GatewayConfig::list_timeout`], is left out of that list (named in the result's
//!   `_meta` [`crate::MISSING_META`]; a slow upstream is reported once until it answers again),
//!   the others are served; an upstream whose own list passes its bounds
//!   ([`ProxyConfig::max_list_bytes`]) is left out the same way (reported once until its list
//!   fits again), while the merged list past the gateway's bounds
//!   ([`GatewayConfig::max_list_bytes`]) is answered with an error naming the bound and the
//!   upstream where it was passed. The bounds are the proxy's own: an upstream's error is a
//!   failure of that upstream, whatever it says;
//! - `tools/call`, `prompts/get` and prompt completions go to the upstream whose prefix the name
//!   has (by default each upstream's tools and prompts are prefixed `NAME_`; prefixes of which
//!   one starts another, as `a_` and `a_b_`, are refused at start, so at most one upstream owns
//!   a name); without prefixes ([`GatewayConfig::no_prefix`]), to the upstream that listed the
//!   name, the first in the configuration order when several do (the clash is reported once in
//!   the log); lists are per caller, and the names each one learns are kept (bounded) for
//!   every caller, whose access is checked again when the call is served;
//! - `resources/read` goes to the upstream that listed the URI, else (with prefixes) whose
//!   view authority it has (MCP Apps views, `ui://` URIs, are served as `ui://NAME/...`,
//!   [`ProxyConfig::view_authority`]), else whose resource template matches it; a URI that
//!   templates of several upstreams match, or that one upstream lists and another's template
//!   matches, is refused, and one no upstream owns is not found (never tried on each upstream
//!   in turn). Resource-template completions go to the upstream that lists a template of
//!   exactly the reference's text (never to one that lists a resource of that URI). A name or
//!   URI that no table knows makes the gateway list again at most once per 10 s;
//! - a request acting for an upstream (`_meta` [`crate::UPSTREAM_META`], set by hosts for MCP
//!   Apps views) is refused when its target belongs to another upstream;
//! - `tasks/*` go to the upstream that owns the task (task ids are the proxy's own).
//!
//! Per upstream the gateway counts calls, errors and time ([`Gateway::stats`]); with
//! [`GatewayConfig::stats_interval`] it reports them in the log (`tracing`, target `mcp_proxy`).
//! Each routed request is also a `histogram.mcp.gateway.upstream.duration` event in seconds
//! (target `mcp_gateway::telemetry`, attributes `mcp.gateway.upstream`, `mcp.method.name` and
//! `error.type`): with `tracing-opentelemetry`'s `MetricsLayer` (`mcp proxy --otlp-endpoint`),
//! an OpenTelemetry histogram per upstream.

use crate::forward::Forward;
use crate::lists::{self, ListError, ListLimits, Tally};
use crate::routes::{self, Templates};
use crate::{capabilities, Backend, ProxyConfig, ProxyError};
use mcp::server::fallback::BoxFuture;
use mcp::server::fallback::Fallback;
use mcp::server::mcp_protocol::ProtocolError;
use mcp::server::{Context, HandlerError};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
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
    /// How long a merged list waits for each upstream's part (default 5 s): an upstream that
    /// has not answered by then is left out of that list (named in its `_meta`
    /// [`crate::MISSING_META`]), and reported in the log once until it answers again.
    pub list_timeout: Duration,
    /// Most bytes (serialized JSON) of a merged list, every upstream's items together
    /// (default [`crate::DEFAULT_MAX_LIST_BYTES`]); past it the list is answered with an error
    /// naming the bound and the upstream where it was passed. Each upstream's own list is
    /// bounded by its [`ProxyConfig::max_list_bytes`]: past that, the upstream is left out of
    /// the merged list (named in [`crate::MISSING_META`]).
    pub max_list_bytes: usize,
    /// Most items of a merged list (default [`crate::DEFAULT_MAX_LIST_ITEMS`]), as
    /// [`GatewayConfig::max_list_bytes`].
    pub max_list_items: usize,
}

impl GatewayConfig {
    /// A gateway of these upstreams, each prefixed `NAME_` unless its config sets a prefix.
    pub fn new(upstreams: Vec<(String, ProxyConfig)>) -> Self {
        Self {
            upstreams,
            no_prefix: false,
            stats_interval: None,
            name: "mcp-gateway".into(),
            list_timeout: Duration::from_secs(5),
            max_list_bytes: crate::DEFAULT_MAX_LIST_BYTES,
            max_list_items: crate::DEFAULT_MAX_LIST_ITEMS,
        }
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

    /// Sets [`GatewayConfig::list_timeout`].
    pub fn list_timeout(mut self, wait: Duration) -> Self {
        self.list_timeout = wait;
        self
    }

    /// Sets [`GatewayConfig::max_list_bytes`] and [`GatewayConfig::max_list_items`].
    pub fn max_list(mut self, bytes: usize, items: usize) -> Self {
        self.max_list_bytes = bytes;
        self.max_list_items = items;
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
    /// Whether it missed the deadline of its last list (reported once until it answers).
    slow: AtomicBool,
    /// The list methods whose last list passed its bound (reported once until one fits).
    oversized: Mutex<HashSet<&'static str>>,
}

/// Which list a name belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Tool,
    Prompt,
    Resource,
    Template,
}

impl Kind {
    /// The list method, its result's key and the key naming an item.
    fn list(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Kind::Tool => ("tools/list", "tools", "name"),
            Kind::Prompt => ("prompts/list", "prompts", "name"),
            Kind::Resource => ("resources/list", "resources", "uri"),
            Kind::Template => ("resources/templates/list", "resourceTemplates", "uriTemplate"),
        }
    }
}

/// The forwarding fallback of every upstream, and the routes learnt from their lists.
#[derive(Clone)]
struct Multi {
    upstreams: Arc<[Routed]>,
    no_prefix: bool,
    routes: Arc<Mutex<HashMap<Kind, HashMap<String, usize>>>>,
    /// The resource templates of the last merged template list, with their upstreams.
    templates: Arc<Mutex<Arc<Templates>>>,
    /// When each list was last read (whether or not it could be served): a name no route
    /// knows lists again at most once per [`RELIST_INTERVAL`], and one request at a time.
    listed: Arc<Mutex<HashMap<Lister, Instant>>>,
    relisting: Arc<tokio::sync::Mutex<()>>,
    /// Clashes already reported (bounded: the names of the lists).
    reported: Arc<Mutex<HashSet<String>>>,
    list_timeout: Duration,
    limits: ListLimits,
}

/// Most names one route table keeps (per kind).
const MAX_ROUTES: usize = 100_000;

/// How often an unknown name (or URI) may make the gateway list again.
const RELIST_INTERVAL: Duration = Duration::from_secs(10);

/// A list kind and the caller (its principal; `None`: anonymous) it was listed for.
type Lister = (Kind, Option<String>);

/// Most callers whose last list time the relist gate keeps (see `Multi::stamp`).
const MAX_LISTERS: usize = 4096;

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
            "tools/list" => self.list(&ctx, Kind::Tool).await,
            "prompts/list" => self.list(&ctx, Kind::Prompt).await,
            "resources/list" => self.list(&ctx, Kind::Resource).await,
            "resources/templates/list" => self.list(&ctx, Kind::Template).await,
            "tools/call" | "prompts/get" => {
                let (kind, what) = if method == "tools/call" { (Kind::Tool, "tool") } else { (Kind::Prompt, "prompt") };
                let name = field("name").unwrap_or_default();
                match self.owner(&ctx, kind, &name).await {
                    Some(i) => {
                        self.provenance(&ctx, i, &format!("{what} {name:?}"))?;
                        self.timed(i, ctx).await
                    }
                    None => Err(refuse(ProtocolError::invalid_params(format!("Unknown {what}: {name}")))),
                }
            }
            "resources/read" => {
                let uri = field("uri").unwrap_or_default();
                let i = self.resource_owner(&ctx, &uri).await?;
                let i = i.ok_or_else(|| refuse(ProtocolError::resource_not_found(&uri)))?;
                self.provenance(&ctx, i, &format!("resource {uri:?}"))?;
                self.timed(i, ctx).await
            }
            "completion/complete" => {
                let reference = ctx.params().get("ref").cloned().unwrap_or_default();
                let text = |k: &str| reference.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
                let (owner, target) = match reference.get("type").and_then(Value::as_str) {
                    Some("ref/prompt") => {
                        let name = text("name");
                        let owner = self.owner(&ctx, Kind::Prompt, &name).await;
                        (owner.ok_or_else(|| format!("Unknown prompt: {name}")), format!("prompt {name:?}"))
                    }
                    // A template's completions go to the upstream that lists the template.
                    Some("ref/resource") => {
                        let uri = text("uri");
                        let owner = self.template_owner(&ctx, &uri).await?;
                        (owner.ok_or_else(|| format!("Unknown resource template: {uri}")), format!("resource {uri:?}"))
                    }
                    _ => (Err("completion/complete: unknown reference type".to_owned()), String::new()),
                };
                let i = owner.map_err(|m| refuse(ProtocolError::invalid_params(m)))?;
                self.provenance(&ctx, i, &target)?;
                self.timed(i, ctx).await
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                // A view's request reaches only its own upstream's tasks.
                let claim = routes::claimed(ctx.params()).map_err(refuse)?.map(str::to_owned);
                let mut last = refuse(crate::tasks::not_found());
                let ours = |u: &Routed| u.forward.tasks.is_some() && claim.as_ref().is_none_or(|c| *c == u.name);
                for i in (0..self.upstreams.len()).filter(|i| ours(&self.upstreams[*i])) {
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

    /// Refuses a request acting for an upstream other than `owner` (see [`crate::UPSTREAM_META`]).
    fn provenance(&self, ctx: &Context, owner: usize, target: &str) -> Result<(), HandlerError> {
        routes::check(ctx.params(), &self.upstreams[owner].name, target).map_err(refuse)
    }

    /// Every upstream's list together, each item marked with its upstream, within the list
    /// deadline and bounds; the routes of `kind` learnt from it.
    async fn list(&self, ctx: &Context, kind: Kind) -> Result<Value, HandlerError> {
        let (method, key, id) = kind.list();
        // Stamped before the read, whatever comes of it: a list that fails (past the merged
        // bound, say) is not read again for every unknown name either.
        self.stamp(ctx, kind);
        let wait = self.list_timeout;
        let reads = self.upstreams.iter().map(|u| tokio::time::timeout(wait, u.forward.read_list(ctx, method, key)));
        let lists = futures::future::join_all(reads).await;
        let mut items = Vec::new();
        let mut routes = HashMap::new();
        let mut templates = Vec::new();
        let mut missing = Vec::new();
        let mut tally = Tally::default();
        for (i, list) in lists.into_iter().enumerate() {
            let u = &self.upstreams[i];
            let list = match list {
                Ok(Ok(l)) => {
                    if u.slow.swap(false, Relaxed) {
                        tracing::info!("upstream {}: answers its lists again", u.name);
                    }
                    u.oversized.lock().remove(method);
                    l
                }
                // Past the upstream's own bound (which only the proxy's side can say): left out
                // like any failing upstream, reported once until its list fits again.
                Ok(Err(ListError::TooLarge(bound))) => {
                    if u.oversized.lock().insert(method) {
                        tracing::warn!(
                            "upstream {}: {method} is larger than its bound of {bound} (--max-list-bytes, \
                             --max-list-items); left out of merged lists until it fits (reported once)",
                            u.name
                        );
                    }
                    missing.push(u.name.clone());
                    continue;
                }
                Ok(Err(ListError::Failed(e))) => {
                    let e = super::upstream::loggable(&e.to_string());
                    tracing::warn!("upstream {}: {method}: {e}; left out of the list", u.name);
                    missing.push(u.name.clone());
                    continue;
                }
                Err(_) => {
                    if !u.slow.swap(true, Relaxed) {
                        tracing::warn!(
                            "upstream {}: no {method} answer within {wait:?}; left out of merged lists until it \
                             answers (reported once)",
                            u.name
                        );
                    }
                    missing.push(u.name.clone());
                    continue;
                }
            };
            let Value::Object(mut list) = list else { continue };
            let Some(Value::Array(got)) = list.remove(key) else { continue };
            for mut item in got {
                let name = item.get(id).and_then(Value::as_str).unwrap_or_default().to_owned();
                if kind == Kind::Template && templates.len() < MAX_ROUTES {
                    templates.push((name.clone(), i));
                }
                if let Some(first) = routes.get(&name) {
                    self.clash(kind, &name, *first, i);
                    continue;
                }
                routes::tag(&mut item, &u.name);
                tally.add(1, lists::json_len(&item), &self.limits).map_err(|bound| {
                    let who = format!("the merged list (at upstream {})", u.name);
                    refuse(lists::too_large(&who, method, &bound))
                })?;
                if routes.len() < MAX_ROUTES {
                    routes.insert(name, i);
                }
                items.push(item);
            }
        }
        // A list is the caller's (what its access and capabilities let it see): its routes are
        // merged into the table, so a name another caller listed stays routed (a call's access
        // is checked again where it is served). At the table's bound it is rebuilt from this
        // list, with what the upstreams left out of it had.
        let left_out = |i: &usize| missing.contains(&self.upstreams[*i].name);
        let mut tables = self.routes.lock();
        let table = tables.entry(kind).or_default();
        let added = routes.keys().filter(|n| !table.contains_key(*n)).count();
        if table.len().saturating_add(added) <= MAX_ROUTES {
            table.extend(routes);
        } else {
            for (name, i) in table.iter() {
                if left_out(i) && routes.len() < MAX_ROUTES && !routes.contains_key(name) {
                    routes.insert(name.clone(), *i);
                }
            }
            *table = routes;
        }
        drop(tables);
        if kind == Kind::Template {
            let mut current = self.templates.lock();
            templates
                .extend(current.listed().filter(|(_, i)| left_out(i)).take(MAX_ROUTES.saturating_sub(templates.len())));
            *current = Arc::new(Templates::new(templates));
        }
        let mut out = Map::new();
        out.insert(key.into(), Value::Array(items));
        out.insert("ttlMs".into(), json!(0));
        out.insert("cacheScope".into(), json!("private"));
        if !missing.is_empty() {
            out.insert("_meta".into(), json!({ crate::MISSING_META: missing }));
        }
        Ok(Value::Object(out))
    }

    /// Records that the caller of `ctx` had `kind` listed now. Lists are shaped by the caller
    /// (its scopes and input capabilities), so the relist gate is per caller: one user's list
    /// does not close the gate for another whose tools it did not show. Anonymous callers share
    /// one entry; past [`MAX_LISTERS`] callers the entries older than the interval go, and if
    /// none is that old, all of them (a caller then relists once more).
    fn stamp(&self, ctx: &Context, kind: Kind) {
        let mut listed = self.listed.lock();
        if listed.len() >= MAX_LISTERS {
            listed.retain(|_, at| at.elapsed() < RELIST_INTERVAL);
            if listed.len() >= MAX_LISTERS {
                listed.clear();
            }
        }
        listed.insert((kind, ctx.principal().map(str::to_owned)), Instant::now());
    }

    /// Merges the lists of `kinds` again unless that was done less than [`RELIST_INTERVAL`]
    /// ago for this caller (one request at a time: others wait for its tables).
    async fn relist(&self, ctx: &Context, kinds: &[Kind]) {
        let _one = self.relisting.lock().await;
        for kind in kinds {
            let key = (*kind, ctx.principal().map(str::to_owned));
            let fresh = self.listed.lock().get(&key).is_some_and(|at| at.elapsed() < RELIST_INTERVAL);
            if !fresh {
                let _ = self.list(ctx, *kind).await;
            }
        }
    }

    fn clash(&self, kind: Kind, name: &str, first: usize, other: usize) {
        let mut reported = self.reported.lock();
        if reported.len() < MAX_ROUTES && reported.insert(format!("{kind:?}:{name}")) {
            let (a, b) = (&self.upstreams[first].name, &self.upstreams[other].name);
            tracing::warn!("{kind:?} {name:?} is offered by upstreams {a} and {b}: {a}'s is served");
        }
    }

    /// `uri` belongs to several upstreams. With prefixes that is refused as ambiguous (an
    /// upstream could otherwise answer, or learn the values typed for, another's URIs); without
    /// them the operator has chosen one namespace, and the first upstream is served as for any
    /// name several offer (reported once).
    fn several(&self, kind: Kind, uri: &str, owners: &[usize]) -> Result<Option<usize>, HandlerError> {
        if self.no_prefix {
            self.clash(kind, uri, owners[0], owners[1]);
            return Ok(Some(owners[0]));
        }
        let names: Vec<&str> = owners.iter().map(|i| self.upstreams[*i].name.as_str()).collect();
        Err(refuse(routes::ambiguous(uri, &names)))
    }

    fn route(&self, kind: Kind, name: &str) -> Option<usize> {
        self.routes.lock().get(&kind)?.get(name).copied()
    }

    /// The upstream serving the tool or prompt `name`: the one whose prefix it has (at most
    /// one: prefixes that start one another are refused at start), or without prefixes the
    /// routes of the last list (listing again, at most once per interval, when the name is
    /// not there).
    async fn owner(&self, ctx: &Context, kind: Kind, name: &str) -> Option<usize> {
        if !self.no_prefix {
            return self.upstreams.iter().position(|u| name.starts_with(u.forward.names.prefix.as_str()));
        }
        if let Some(i) = self.route(kind, name) {
            return Some(i);
        }
        self.relist(ctx, &[kind]).await;
        self.route(kind, name)
    }

    /// The upstream of the resource `uri`: the one that listed it, whose view authority it
    /// has, or whose template it matches (listing again, at most once per interval, when none
    /// does). Several upstreams' templates, or a listing upstream other than the one whose
    /// template matches: an error (never routed to either).
    async fn resource_owner(&self, ctx: &Context, uri: &str) -> Result<Option<usize>, HandlerError> {
        // A listed URI is checked against the templates: they are known first.
        if !self.listed.lock().keys().any(|(k, _)| *k == Kind::Template) {
            self.relist(ctx, &[Kind::Template]).await;
        }
        if let Some(i) = self.known_resource(uri)? {
            return Ok(Some(i));
        }
        self.relist(ctx, &[Kind::Resource, Kind::Template]).await;
        self.known_resource(uri)
    }

    fn known_resource(&self, uri: &str) -> Result<Option<usize>, HandlerError> {
        let listed = self.route(Kind::Resource, uri);
        if listed.is_none() {
            // A view (`ui://NAME/...`) belongs to the upstream whose authority it carries.
            let under = |u: &Routed| u.forward.names.views.is_some() && u.forward.names.inward_uri(uri).is_ok();
            if let Some(i) = uri.starts_with("ui://").then(|| self.upstreams.iter().position(under)).flatten() {
                return Ok(Some(i));
            }
        }
        let templates = self.templates.lock().clone();
        let mut owners = templates.owners(uri);
        if let Some(i) = listed {
            // Listing a URI does not take it from the upstream whose template it matches (a
            // `spy` listing `victim://doc/7`): only an upstream that both lists and templates
            // it, or lists it alone, owns it.
            if owners.iter().all(|o| *o == i) {
                return Ok(Some(i));
            }
            owners.push(i);
            owners.sort_unstable();
            owners.dedup();
        }
        match owners.as_slice() {
            [] => Ok(None),
            [i] => Ok(Some(*i)),
            many => self.several(Kind::Template, uri, many),
        }
    }

    /// The upstream of the resource template `uri` (what a completion's `ref/resource` names):
    /// the one that lists a template of exactly that text (listing again, at most once per
    /// interval, when none does), never one that lists a resource of that URI. Several: an
    /// error.
    async fn template_owner(&self, ctx: &Context, uri: &str) -> Result<Option<usize>, HandlerError> {
        let named = || self.templates.lock().named(uri);
        let mut owners = named();
        if owners.is_empty() {
            self.relist(ctx, &[Kind::Template]).await;
            owners = named();
        }
        match owners.as_slice() {
            [] => Ok(None),
            [i] => Ok(Some(*i)),
            many => self.several(Kind::Template, uri, many),
        }
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
        let mut upstreams = config.upstreams;
        let globs = Arc::default(); // A policy glob is checked against every upstream's tools.
        for (name, upstream) in &mut upstreams {
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
        }
        if !config.no_prefix {
            let prefixes: Vec<(String, String)> =
                upstreams.iter().map(|(n, u)| (n.clone(), u.prefix.clone())).collect();
            routes::check_prefixes(&prefixes).map_err(ProxyError::AmbiguousNames)?;
        }
        let mut backends = Vec::with_capacity(upstreams.len());
        for (name, upstream) in upstreams {
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
            .map(|(name, b)| Routed {
                name: name.clone(),
                forward: b.forward.clone(),
                counters: Counters::default(),
                slow: AtomicBool::new(false),
                oversized: Mutex::default(),
            })
            .collect();
        let multi = Multi {
            upstreams,
            no_prefix: config.no_prefix,
            routes: Default::default(),
            templates: Default::default(),
            listed: Default::default(),
            relisting: Default::default(),
            reported: Default::default(),
            list_timeout: config.list_timeout,
            limits: ListLimits { max_bytes: config.max_list_bytes, max_items: config.max_list_items },
        };
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
