//! The proxy's [`Fallback`]: every catalog request is forwarded to an upstream session.
//!
//! - Lists are read in full from the upstream (every page, bounded) and served as one page,
//!   filtered and renamed (`ProxyConfig::tools`, `ProxyConfig::prefix`), through a session
//!   that declares the caller's input capabilities, as its calls would (what a server lists
//!   may depend on them).
//! - `tools/call`, `prompts/get` and `resources/read` of a request that declared input
//!   capabilities run as [`Flight`]s: the upstream's questions become `input_required` rounds
//!   (see `flight.rs`). Without them nothing can be asked, and the call is made in place.
//! - `completion/complete` is forwarded as is (prompt names unprefixed).
//! - With an upstream that offers the tasks extension, a request that declares it runs on a
//!   session that declares it too; a `CreateTaskResult` is returned with a proxy-issued task
//!   id recorded for it, and `tasks/*` go to the session that owns the task, with the ids
//!   translated both ways (see `tasks.rs`).
//! - What is forwarded is the request's own params: no downstream `_meta` at all (not the
//!   caller's identity, trace context or any other key: the proxy's client writes its own
//!   protocol fields, progress token and trace context), no `requestState`/`inputResponses`,
//!   and never a downstream header (the inbound token stays here; the upstream sees only the
//!   proxy's own credentials).

use super::filter::Names;
use super::flight::{upstream_error, Flight, Flights, Relay};
use super::lists::{all_pages, too_large, ListError, ListLimits};
use super::pool::{Key, Pool};
use super::tasks::Tasks;
use super::upstream::InputCaps;
use mcp::server::fallback::BoxFuture;
use mcp::server::fallback::Fallback;
use mcp::server::mcp_protocol::ProtocolError;
use mcp::server::{Context, HandlerError};
use mcp_client::{CallOptions, Client, ClientError};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Forwards catalog requests (see the module docs).
#[derive(Clone)]
pub(crate) struct Forward {
    /// The upstream sessions.
    pub(crate) pool: Arc<Pool>,
    /// Calls waiting for the downstream client's answers.
    pub(crate) flights: Arc<Flights>,
    /// `ProxyConfig::tools` and `ProxyConfig::prefix`.
    pub(crate) names: Arc<Names>,
    /// Where the upstream's tasks live, when the upstream offers the tasks extension.
    pub(crate) tasks: Option<Arc<Tasks>>,
    /// The bounds of a list read from the upstream.
    pub(crate) limits: ListLimits,
}

impl std::fmt::Debug for Forward {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forward").field("names", &self.names).finish_non_exhaustive()
    }
}

impl Fallback for Forward {
    fn serve(&self, ctx: Context) -> Option<BoxFuture<Result<Value, HandlerError>>> {
        let this = self.clone();
        Some(Box::pin(async move { this.forward(ctx).await }))
    }

    fn serves_tasks(&self) -> bool {
        self.tasks.is_some()
    }
}

fn refuse(e: ProtocolError) -> HandlerError {
    HandlerError::Protocol(e)
}

/// The request's params as the upstream gets them: without the downstream protocol's
/// per-request fields and without the downstream `_meta`. Nothing of it is the upstream's
/// business: the protocol fields (version, client capabilities and info, log level) are the
/// proxy's own session's, which its client writes; `progressToken` is the proxy's own, mapped
/// back to the caller's; `traceparent`/`tracestate` become the context of the proxy's client
/// span (a child of the request's span) when traced; any other key (a caller's identity, a
/// vendor extension) would let a caller speak to the upstream in the proxy's name.
fn upstream_params(params: &Map<String, Value>) -> Map<String, Value> {
    let mut out = params.clone();
    out.remove("requestState");
    out.remove("inputResponses");
    out.remove("_meta");
    out
}

/// A result as the downstream gets it: the framework writes `resultType` (unless it is a
/// `CreateTaskResult`'s `task`) and this server's `serverInfo` itself.
fn downstream_result(mut v: Value) -> Value {
    if let Value::Object(o) = &mut v {
        if o.get("resultType").and_then(Value::as_str) != Some("task") {
            o.remove("resultType");
        }
        if let Some(Value::Object(meta)) = o.get_mut("_meta") {
            meta.remove(mcp::server::mcp_protocol::meta::SERVER_INFO);
            if meta.is_empty() {
                o.remove("_meta");
            }
        }
    }
    v
}

impl Forward {
    pub(crate) async fn forward(&self, ctx: Context) -> Result<Value, HandlerError> {
        let method = ctx.method().to_owned();
        let mut params = upstream_params(ctx.params());
        match method.as_str() {
            "tools/list" => self.list(&ctx, "tools/list", "tools").await,
            "prompts/list" => self.list(&ctx, "prompts/list", "prompts").await,
            "resources/list" => self.list(&ctx, "resources/list", "resources").await,
            "resources/templates/list" => self.list(&ctx, "resources/templates/list", "resourceTemplates").await,
            "tools/call" | "prompts/get" => {
                let name = params.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                let (inner, kind) = if method == "tools/call" {
                    (self.names.inward_tool(&name, &ctx.caller()), "tool")
                } else {
                    (self.names.inward(&name), "prompt")
                };
                let unknown = || refuse(ProtocolError::invalid_params(format!("Unknown {kind}: {name}")));
                let Some(inner) = inner.map(str::to_owned) else { return Err(unknown()) };
                params.insert("name".into(), json!(inner));
                match self.interactive(&ctx, method, params).await {
                    // The upstream's "unknown" answer names the item as the caller did (an
                    // item hidden upstream looks exactly like one this proxy does not offer).
                    Err(HandlerError::Protocol(e))
                        if e.code() == -32602 && e.message() == format!("Unknown {kind}: {inner}") =>
                    {
                        Err(unknown())
                    }
                    other => other,
                }
            }
            "resources/read" => {
                let uri = params.get("uri").and_then(Value::as_str).unwrap_or_default().to_owned();
                let inner =
                    self.names.inward_uri(&uri).map_err(|()| refuse(ProtocolError::resource_not_found(&uri)))?;
                if inner == uri {
                    return self.interactive(&ctx, method, params).await;
                }
                params.insert("uri".into(), json!(inner));
                let mut r = self.interactive(&ctx, method, params).await?;
                for c in r.get_mut("contents").and_then(Value::as_array_mut).into_iter().flatten() {
                    if c.get("uri").and_then(Value::as_str) == Some(inner.as_str()) {
                        c["uri"] = json!(uri);
                    }
                }
                Ok(r)
            }
            "completion/complete" => {
                if let Some(Value::Object(r)) = params.get_mut("ref") {
                    if r.get("type").and_then(Value::as_str) == Some("ref/prompt") {
                        let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
                        let inner = self.names.inward(name).map(str::to_owned);
                        let inner = inner
                            .ok_or_else(|| refuse(ProtocolError::invalid_params(format!("Unknown prompt: {name}"))))?;
                        r.insert("name".into(), json!(inner));
                    }
                }
                let lease = self.lease(&ctx, false).await?;
                let r = lease.session().client().request(&method, params, &CallOptions::default()).await;
                lease.outcome(&r);
                r.map(downstream_result).map_err(|e| refuse(upstream_error(e)))
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" => self.task_method(&ctx, &method, params).await,
            _ => Err(refuse(ProtocolError::method_not_found(method))),
        }
    }

    /// Forwards a `tasks/*` request to the session that owns its task (with the answers of
    /// `tasks/update`, which are its payload here, not an MRTR retry's).
    async fn task_method(
        &self,
        ctx: &Context,
        method: &str,
        mut params: Map<String, Value>,
    ) -> Result<Value, HandlerError> {
        let tasks = self.tasks.as_ref().ok_or_else(|| refuse(ProtocolError::method_not_found(method)))?;
        if let Some(answers) = ctx.params().get("inputResponses") {
            params.insert("inputResponses".into(), answers.clone());
        }
        let id = params.get("taskId").and_then(Value::as_str).unwrap_or_default().to_owned();
        let route = tasks.route(&id, ctx.principal()).map_err(refuse)?;
        params.insert("taskId".into(), json!(route.upstream_id));
        match route.session.client().request(method, params, &CallOptions::default()).await {
            // The session died under the task: the task is gone with it.
            Err(ClientError::Transport(_)) => Err(refuse(super::tasks::not_found())),
            r => r.map(|v| super::tasks::outward(downstream_result(v), &id)).map_err(|e| refuse(upstream_error(e))),
        }
    }

    /// Whether this request's call runs on a session that declares the tasks extension.
    fn wants_tasks(&self, ctx: &Context) -> bool {
        self.tasks.is_some() && ctx.declares_tasks()
    }

    /// Records the task `r` created on `session` and returns `r` naming its proxy task id
    /// (other results are returned as they are).
    fn record(
        &self,
        ctx: &Context,
        r: Result<Value, ClientError>,
        session: &Arc<super::pool::Session>,
    ) -> Result<Value, ClientError> {
        match &self.tasks {
            Some(tasks) => r.map(|v| tasks.record(v, &Arc::downgrade(session), ctx.principal())),
            None => r,
        }
    }

    /// A session for this request: by its input capabilities (when it may be asked) and principal.
    async fn lease(&self, ctx: &Context, interactive: bool) -> Result<super::pool::Lease, HandlerError> {
        let declared = InputCaps::from_client(ctx.client_capabilities());
        let caps = if interactive { declared } else { InputCaps { apps: declared.apps, ..InputCaps::default() } };
        leased(self.pool.lease(&self.key(ctx, caps)).await)
    }

    /// A session for a list: one declaring what the caller declared, as its calls get (an
    /// upstream may list some tools only to clients that can answer questions), shared with
    /// the calls on it (a list asks nothing).
    async fn lease_for_list(&self, ctx: &Context) -> Result<super::pool::Lease, HandlerError> {
        let key = self.key(ctx, InputCaps::from_client(ctx.client_capabilities()));
        leased(self.pool.lease_alongside(&key).await)
    }

    /// The pool key of this request's session declaring `caps`.
    fn key(&self, ctx: &Context, caps: InputCaps) -> Key {
        Key { caps, principal: ctx.principal().map(str::to_owned), tasks: self.wants_tasks(ctx) }
    }

    /// Every item of an upstream list, filtered and renamed, as one page; past a bound, the
    /// error of [`too_large`] naming it.
    pub(crate) async fn list(&self, ctx: &Context, method: &str, key: &str) -> Result<Value, HandlerError> {
        self.read_list(ctx, method, key).await.map_err(|e| match e {
            ListError::TooLarge(bound) => refuse(too_large("the upstream", method, &bound)),
            ListError::Failed(e) => e,
        })
    }

    /// [`Forward::list`], telling a list past the proxy's bound from any other failure.
    pub(crate) async fn read_list(&self, ctx: &Context, method: &str, key: &str) -> Result<Value, ListError> {
        let lease = self.lease_for_list(ctx).await.map_err(ListError::Failed)?;
        let r = all_pages(lease.session().client(), method, key, &self.limits).await;
        lease.outcome(&r);
        let items = match r {
            // An upstream without resource templates (-32601) has none to list.
            Err(ClientError::Server { code: -32601, .. }) if key == "resourceTemplates" => Vec::new(),
            Err(ClientError::ListTooLarge { bound, .. }) => return Err(ListError::TooLarge(bound)),
            r => r.map_err(|e| ListError::Failed(refuse(upstream_error(e))))?,
        };
        if key == "tools" {
            self.names.check_listed(items.iter().filter_map(|t| t.get("name")?.as_str()));
        }
        let renamed = matches!(key, "tools" | "prompts");
        let items: Vec<Value> = items
            .into_iter()
            .filter_map(|mut item| {
                let name = item.get("name").and_then(Value::as_str)?.to_owned();
                if key == "tools" && !self.names.tool_visible(&name, &ctx.caller()) {
                    return None;
                }
                if renamed {
                    item["name"] = json!(self.names.outward(&name));
                }
                self.names.outward_item(key, &mut item);
                Some(item)
            })
            .collect();
        Ok(json!({ key: items, "ttlMs": 0, "cacheScope": "private" }))
    }

    /// A call that may ask the downstream client for input: a new flight, or the parked one
    /// this retry's `requestState` names.
    async fn interactive(
        &self,
        ctx: &Context,
        method: String,
        params: Map<String, Value>,
    ) -> Result<Value, HandlerError> {
        let flight = match self.flights.resume(ctx).map_err(refuse)? {
            Some(f) => f,
            // Nothing can be asked: the call runs here, on the shared session.
            None if !InputCaps::from_client(ctx.client_capabilities()).any() => {
                let lease = self.lease(ctx, false).await?;
                let mut opts = CallOptions::default();
                let here = ctx.clone();
                Relay::of(ctx).options(&mut opts, move |n| n.relay(&here));
                let r = call(lease.session().client(), &method, params, &opts).await;
                lease.outcome(&r);
                let r = self.record(ctx, r, lease.session());
                return r.map(downstream_result).map_err(|e| refuse(upstream_error(e)));
            }
            None => {
                self.flights.admit(ctx).map_err(refuse)?;
                let lease = self.lease(ctx, true).await?;
                let (this, here, session) = (self.clone(), ctx.clone(), lease.session().clone());
                Flight::start(lease, Relay::of(ctx), move |client, opts| async move {
                    let r = call(&client, &method, params, &opts).await;
                    this.record(&here, r, &session)
                })
            }
        };
        self.flights.follow(ctx, flight).await.map(downstream_result)
    }
}

/// A lease, or the refusal of a pool that had none to give.
fn leased(r: Result<super::pool::Lease, ClientError>) -> Result<super::pool::Lease, HandlerError> {
    r.map_err(|e| match e {
        ClientError::Handler { message: m, .. } => refuse(ProtocolError::unavailable("upstream", m)),
        other => refuse(upstream_error(other)),
    })
}

/// One upstream call (`tools/call` through the client's tool call, which mirrors
/// `x-mcp-header` parameters into headers for modern HTTP upstreams). On a session that
/// declares tasks the call is sent as is, so a `CreateTaskResult` comes back unfollowed (the
/// downstream client follows it); the session learns the tool's headers first all the same.
async fn call(
    client: &Client,
    method: &str,
    mut params: Map<String, Value>,
    opts: &CallOptions,
) -> Result<Value, ClientError> {
    if method != "tools/call" {
        return client.request(method, params, opts).await;
    }
    let name = params.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
    if client.declares_tasks() {
        client.learn_tool_headers(&name).await?;
        return client.request(method, params, opts).await;
    }
    let args = params.remove("arguments").unwrap_or_else(|| json!({}));
    client.call_tool(&name, args).options(opts.clone()).await.map(mcp_client::ToolResult::into_value)
}
