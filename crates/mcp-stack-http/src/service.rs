//! [`McpService`], the MCP endpoint: its shared state, and its entry ([`McpService::handle`]),
//! which hands each request to `post.rs`.

use crate::endpoint::Endpoint;
#[cfg(feature = "legacy")]
use crate::legacy::Sessions;
use http::{header, Request};
use mcp_server::Server;
use std::sync::Arc;

// What `serve` takes from here.
pub(crate) use crate::config::{EndpointConfig, RequestBody};
pub(crate) use crate::post::Peer;
pub(crate) use crate::response::{metadata_response, status_only, Resp, StreamOwner};

/// The MCP endpoint: a `tower::Service<http::Request<B>>` for any [`RequestBody`], so it mounts
/// in an axum `Router` or under tower layers; [`crate::serve`] runs it on hyper. Cheap to clone.
#[derive(Clone)]
pub struct McpService {
    pub(crate) server: Server,
    pub(crate) config: Arc<EndpointConfig>,
    pub(crate) budget: crate::body_read::BodyBudget,
    #[cfg(feature = "legacy")]
    pub(crate) sessions: Arc<Sessions>,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService").field("server", &self.server).field("config", &self.config).finish_non_exhaustive()
    }
}

impl McpService {
    /// A service serving `server` with `config`.
    pub fn new(server: Server, mut config: EndpointConfig) -> Self {
        if let Some(cors) = &config.cors {
            let extra: Vec<String> =
                cors.allow_origins.iter().filter(|o| !config.allowed_origins.contains(o)).cloned().collect();
            config.allowed_origins.extend(extra);
        }
        Self {
            #[cfg(feature = "legacy")]
            sessions: Sessions::new(
                server.clone(),
                crate::legacy::SessionLimits {
                    max: config.max_sessions,
                    per_client: config.max_sessions_per_client,
                    idle: config.session_idle,
                    init_timeout: config.session_init_timeout,
                },
                config.session_store.clone(),
            ),
            server,
            budget: crate::body_read::BodyBudget::new(config.max_body_bytes_in_flight),
            config: Arc::new(config),
        }
    }

    /// Handles one HTTP request (any body type: hyper's, axum's, a test's `Full<Bytes>`). The
    /// peer's address, if wanted, is a `SocketAddr` in the request's extensions.
    pub async fn handle<B: RequestBody>(&self, req: Request<B>) -> Resp {
        self.handle_from(req, Peer::default()).await
    }

    /// [`McpService::handle`] for a request whose peer `serve` knows.
    pub(crate) fn handle_from<B: RequestBody>(
        &self,
        req: Request<B>,
        peer: Peer,
    ) -> impl std::future::Future<Output = Resp> + Send + '_ {
        use futures::future::Either;
        let Some(cors) = &self.config.cors else {
            // Without CORS the route's own future: no adapter's code on the request path.
            return Either::Left(self.route(req, peer));
        };
        let origin = req.headers().get(header::ORIGIN).cloned();
        let origin = origin.filter(|o| crate::validate::origin_allowed(o, &self.config.allowed_origins));
        // A map, not an `async` block: one awaiting `route` would hold its future twice.
        Either::Right(futures::FutureExt::map(self.route(req, peer), move |mut resp| {
            if let Some(origin) = origin {
                cors.decorate(&mut resp, &origin);
            }
            resp
        }))
    }

    /// The settings this service runs with.
    pub fn config(&self) -> &EndpointConfig {
        &self.config
    }

    /// One request, past CORS (see `post.rs`).
    fn route<B: RequestBody>(
        &self,
        req: Request<B>,
        peer: Peer,
    ) -> impl std::future::Future<Output = Resp> + Send + '_ {
        let ep = Endpoint { server: &self.server, config: &self.config, budget: &self.budget };
        crate::post::route(
            ep,
            #[cfg(feature = "legacy")]
            &self.sessions,
            req,
            peer,
        )
    }
}

impl<B: RequestBody> tower_service::Service<Request<B>> for McpService {
    type Response = Resp;
    type Error = std::convert::Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> ResponseFuture {
        let svc = self.clone();
        ResponseFuture(Box::pin(async move { svc.handle(req).await }))
    }
}

/// The answer of [`McpService`] to one request (its `tower::Service::Future`): what
/// `post.rs` makes of the request, top to bottom. Never fails: every refusal is a response.
pub struct ResponseFuture(std::pin::Pin<Box<dyn std::future::Future<Output = Resp> + Send>>);

impl std::future::Future for ResponseFuture {
    type Output = Result<Resp, std::convert::Infallible>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        self.0.as_mut().poll(cx).map(Ok)
    }
}

impl std::fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResponseFuture")
    }
}
