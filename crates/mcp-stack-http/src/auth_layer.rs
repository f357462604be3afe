//! OAuth 2.1 resource-server protection as a tower layer, for endpoints mounted in a larger
//! stack (axum, tower). The `auth` field of [`crate::EndpointConfig`] does the same inside the service for
//! [`crate::serve`].
//!
//! ```no_run
//! # fn demo(auth: std::sync::Arc<mcp_http::auth::AuthConfig>, server: mcp_server::Server) {
//! use mcp_http::{AuthLayer, EndpointConfig, McpService};
//! use tower::Layer;
//! let protected = AuthLayer::new(auth, "/mcp").layer(McpService::new(server, EndpointConfig::default()));
//! # drop(protected); }
//! ```

use crate::body::McpBody;
use crate::response::{auth_refusal, metadata_response};
use http::{Method, Request, Response};
use mcp_auth::{AuthConfig, Principal};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// What [`AuthLayer`] leaves in an admitted request's extensions: who the token belongs to, and
/// the configuration that admitted it (per-tool scopes are checked against it once the body is
/// read).
#[derive(Debug, Clone)]
pub struct Authenticated {
    /// The token's principal.
    pub principal: Principal,
    pub(crate) config: Arc<AuthConfig>,
}

/// Authenticates a request's bearer token: the verdict the endpoint (with
/// the `auth` field of [`crate::EndpointConfig`]) and [`AuthLayer`] both act on, or the 401/403 refusal.
pub(crate) async fn authenticate(
    auth: &Arc<AuthConfig>,
    headers: &http::HeaderMap,
    uri: &http::Uri,
) -> Result<Authenticated, Response<McpBody>> {
    match auth.authenticate(headers, uri.query()).await {
        Ok(principal) => Ok(Authenticated { principal, config: auth.clone() }),
        Err(e) => Err(auth_refusal(auth, &e)),
    }
}

/// Requires a valid bearer token on every request except the RFC 9728 metadata documents (which
/// it serves) and CORS preflights, answering 401/403 with the `WWW-Authenticate` challenge
/// otherwise.
#[derive(Debug, Clone)]
pub struct AuthLayer {
    auth: Arc<AuthConfig>,
    endpoint_path: String,
}

impl AuthLayer {
    /// Protection by `auth` for the MCP endpoint at `endpoint_path` (its path-aware metadata
    /// document is served too).
    pub fn new(auth: Arc<AuthConfig>, endpoint_path: impl Into<String>) -> Self {
        Self { auth, endpoint_path: endpoint_path.into() }
    }
}

impl<S> tower_layer::Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> AuthService<S> {
        AuthService { inner, auth: self.auth.clone(), endpoint_path: self.endpoint_path.clone() }
    }
}

/// The service [`AuthLayer`] wraps around an inner one.
#[derive(Debug, Clone)]
pub struct AuthService<S> {
    inner: S,
    auth: Arc<AuthConfig>,
    endpoint_path: String,
}

/// The body of an [`AuthService`] response: the refusal or metadata document it answered
/// itself (left), or the inner service's response body (right).
pub type AuthBody<B> = http_body_util::Either<McpBody, B>;

impl<S, B, RB> tower_service::Service<Request<B>> for AuthService<S>
where
    S: tower_service::Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Send + 'static,
    B: Send + 'static,
    RB: Send + 'static,
{
    type Response = Response<AuthBody<RB>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<AuthBody<RB>>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let auth = self.auth.clone();
        if auth.is_metadata_path(req.uri().path(), &self.endpoint_path) {
            let r = metadata_response(&auth, req.method()).map(AuthBody::Left);
            return Box::pin(async move { Ok(r) });
        }
        // The ready inner service goes into the future; a fresh clone waits for the next call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            if req.method() != Method::OPTIONS {
                match authenticate(&auth, req.headers(), req.uri()).await {
                    Ok(admitted) => {
                        req.extensions_mut().insert(admitted);
                    }
                    Err(refusal) => return Ok(refusal.map(AuthBody::Left)),
                }
            }
            Ok(inner.call(req).await?.map(AuthBody::Right))
        })
    }
}
