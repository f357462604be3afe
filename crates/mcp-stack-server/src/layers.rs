//! Operation layers: code that runs around every request the server serves, on every transport
//! (stdio, Streamable HTTP of both eras, the in-memory pair), because it sits in the server
//! itself rather than in a transport.
//!
//! A layer sees the [`Operation`] (method, params, principal, era, request `_meta`), may change
//! it, may answer in place of the server (a result or a protocol error, from the one error
//! table), or passes it on with [`Next::run`] and then sees (and may change) the [`Reply`]:
//!
//! ```
//! use mcp_server::layers::from_fn;
//! use mcp_server::{Server, Tool};
//! use mcp_protocol::ProtocolError;
//!
//! let audit = from_fn(|op, next| async move {
//!     let method = op.method().to_owned();
//!     let started = std::time::Instant::now();
//!     let reply = next.run(op).await;
//!     eprintln!("{method} took {:?} ({})", started.elapsed(), if reply.is_ok() { "ok" } else { "error" });
//!     reply
//! });
//! let admin_only = from_fn(|op, next| async move {
//!     if op.method() == "tools/call" && op.principal() != Some("admin") {
//!         return Err(ProtocolError::invalid_params("tools are for administrators"));
//!     }
//!     next.run(op).await
//! });
//! let server = Server::builder("s", "1")
//!     .layer(audit) // outermost: sees what `admin_only` refused too
//!     .layer(admin_only)
//!     .tool(Tool::new("ping").handler(|| async { "pong" }))
//!     .build()
//!     .unwrap();
//! ```
//!
//! Layers run in the order they were added, the first outermost, inside the server's panic
//! scope and request timeout: a panicking layer is answered `-32603` like a panicking handler.
//!
//! A `subscriptions/listen` request passes through the same layers: a layer may refuse it,
//! change its params or caller, or note it. The end of the chain opens the stream from the
//! operation as the innermost layer passed it on and hands the stream to the transport; the
//! [`Reply`] a layer gets back from `next.run` is then empty (`{}`), or the listen's refusal
//! (a bad filter, too many subscriptions). A layer that answers a listen request itself,
//! instead of passing it on, refuses it.
//!
//! Why not tower's `Layer`/`Service`: an MCP operation is one request in and one reply out with
//! no back-pressure to signal, so `poll_ready` and `Clone` services would only add ceremony; a
//! layer here is one async function, as axum's `middleware::from_fn` is. A tower stack still
//! wraps the HTTP endpoint (`mcp_http::McpService` is a `tower::Service`) for HTTP concerns.

use crate::catalog::BoxFuture;
use crate::context::RequestEnv;
use crate::reply::Reply;
use crate::round::Preset;
use mcp_protocol::{Method, ProtocolError, Request};
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;

/// Code around every operation; see the [module docs](self).
pub trait OperationLayer: Send + Sync + 'static {
    /// Serves `op`: answer in place of the server, or pass it on with `next.run(op)`.
    fn call(&self, op: Operation, next: Next) -> BoxFuture<Result<Reply, ProtocolError>>;
}

/// A layer made of an async function ([`from_fn`]).
pub struct FnLayer<F>(F);

impl<F> std::fmt::Debug for FnLayer<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnLayer")
    }
}

/// A layer from an async function of the operation and the rest of the chain.
pub fn from_fn<F, Fut>(f: F) -> FnLayer<F>
where
    F: Fn(Operation, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Reply, ProtocolError>> + Send + 'static,
{
    FnLayer(f)
}

impl<F, Fut> OperationLayer for FnLayer<F>
where
    F: Fn(Operation, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Reply, ProtocolError>> + Send + 'static,
{
    fn call(&self, op: Operation, next: Next) -> BoxFuture<Result<Reply, ProtocolError>> {
        Box::pin((self.0)(op, next))
    }
}

/// The protocol era of the client an operation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Era {
    /// Revision 2026-07-28: a stateless request carrying its `_meta`.
    Modern,
    /// An initialize-based session (2025-11-25 and older).
    Legacy,
}

/// One request on its way through the layers.
pub struct Operation {
    pub(crate) request: Request,
    pub(crate) env: RequestEnv,
    pub(crate) answer: Answer,
}

/// A `subscriptions/listen` stream, as the end of the chain opens it.
pub(crate) type ListenStream = std::pin::Pin<Box<dyn futures::Stream<Item = Value> + Send>>;

/// How the end of the chain answers an operation.
pub(crate) enum Answer {
    /// With a [`Reply`]; a legacy session's request carries the per-request fields (and MRTR
    /// state) the session gives it.
    Reply(Option<Box<Preset>>),
    /// A `subscriptions/listen` request: with its stream, handed over here (the layers get
    /// an empty reply once it opened).
    Stream(tokio::sync::oneshot::Sender<ListenStream>),
}

impl Operation {
    /// A request answered with a reply.
    pub(crate) fn call(request: Request, env: RequestEnv, preset: Option<Box<Preset>>) -> Self {
        Self { request, env, answer: Answer::Reply(preset) }
    }

    /// The legacy session's fields, for a legacy request.
    fn preset(&self) -> Option<&Preset> {
        match &self.answer {
            Answer::Reply(preset) => preset.as_deref(),
            Answer::Stream(_) => None,
        }
    }
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operation")
            .field("method", &self.request.method)
            .field("id", &self.request.id)
            .field("principal", &self.env.principal)
            .field("era", &self.era())
            .finish_non_exhaustive()
    }
}

impl Operation {
    /// The method (`tools/call`, `resources/read`, `tasks/get`...).
    pub fn method(&self) -> &str {
        &self.request.method
    }

    /// The method as this server knows it, `None` for one it does not serve (the server
    /// answers that with `-32601` after the layers).
    pub fn kind(&self) -> Option<Method> {
        Method::parse(&self.request.method)
    }

    /// The JSON-RPC request id.
    pub fn id(&self) -> &Value {
        &self.request.id
    }

    /// The params (`_meta` included for a modern request).
    pub fn params(&self) -> &Map<String, Value> {
        &self.request.params
    }

    /// The params, to change before passing the operation on (the server checks them after).
    pub fn params_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.request.params
    }

    /// The authenticated principal (the token's subject), when the transport authenticated one.
    pub fn principal(&self) -> Option<&str> {
        self.env.principal.as_deref()
    }

    /// The scopes the caller's access token grants (empty without one).
    pub fn scopes(&self) -> &[String] {
        &self.env.scopes
    }

    /// The caller (principal, scopes, and whether its client renders MCP Apps), as
    /// [`crate::Access`] rules see it.
    pub fn caller(&self) -> crate::access::Caller<'_> {
        let apps = match self.preset() {
            Some(preset) => mcp_protocol::apps::renders_apps(&preset.meta.client_capabilities),
            None => self
                .meta()
                .and_then(|m| m.get(mcp_protocol::meta::CLIENT_CAPABILITIES))
                .and_then(Value::as_object)
                .is_some_and(mcp_protocol::apps::renders_apps),
        };
        self.env.caller().with_apps(apps)
    }

    /// Sets who the caller is, for what runs after this layer (access rules, handlers, task
    /// ownership, sealed MRTR state): how a layer authenticates callers itself (an API key on
    /// stdio, a header a trusted gateway sets). Replaces what the transport authenticated.
    pub fn set_caller(&mut self, principal: Option<String>, scopes: Vec<String>) {
        self.env.principal = principal;
        self.env.scopes = scopes.into();
    }

    /// The address of the peer the request came from (Streamable HTTP served by
    /// `mcp_http::serve`, or any server that puts a `SocketAddr` in the request's extensions).
    pub fn peer(&self) -> Option<std::net::SocketAddr> {
        self.env.peer_address()
    }

    /// The HTTP request the operation arrived in (Streamable HTTP only): headers, URI...
    pub fn http(&self) -> Option<&http::request::Parts> {
        self.env.http.as_deref()
    }

    /// The era of the client.
    pub fn era(&self) -> Era {
        if self.preset().is_some() {
            Era::Legacy
        } else {
            Era::Modern
        }
    }

    /// The request's `_meta` as the client sent it (a legacy session's requests carry only what
    /// that era sends, e.g. a `progressToken`).
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.request.params.get("_meta").and_then(Value::as_object)
    }

    /// The name the operation is about, when it has one: the tool or prompt name, or the
    /// resource URI.
    pub fn target(&self) -> Option<&str> {
        let key = match self.kind()? {
            Method::ToolsCall | Method::PromptsGet => "name",
            Method::ResourcesRead => "uri",
            _ => return None,
        };
        self.request.params.get(key).and_then(Value::as_str)
    }
}

/// The chain as the layers see it: the layers in order, and what serves an operation once the
/// last of them passed it on (the server's dispatch). The server implements it; the layers know
/// no more of the server than this.
pub(crate) trait Chain: Send + Sync + 'static {
    /// The layers, outermost first.
    fn layers(&self) -> &[Arc<dyn OperationLayer>];
    /// Serves an operation every layer has passed on (a listen one by opening its stream).
    fn serve(self: Arc<Self>, op: Operation) -> BoxFuture<Result<Reply, ProtocolError>>;
}

/// The rest of the chain: the layers after this one, then the server.
pub struct Next {
    chain: Arc<dyn Chain>,
    index: usize,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("index", &self.index).finish_non_exhaustive()
    }
}

impl Next {
    /// The chain from layer `index` on.
    pub(crate) fn new(chain: Arc<dyn Chain>, index: usize) -> Self {
        Self { chain, index }
    }

    /// Passes `op` on; the future returned gives its reply.
    ///
    /// The next layer (or, at the end of the chain, the server) takes the operation when this
    /// is called, and the future finishes it: the next layer's own (boxed), or the server's
    /// dispatch of the request.
    pub fn run(self, op: Operation) -> impl Future<Output = Result<Reply, ProtocolError>> + Send + 'static {
        use futures::future::Either;
        let Next { chain, index } = self;
        match chain.layers().get(index).cloned() {
            Some(layer) => Either::Left(layer.call(op, Next { chain, index: index + 1 })),
            None => Either::Right(chain.serve(op)),
        }
    }
}
