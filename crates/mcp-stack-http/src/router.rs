//! The endpoint as an axum `Router` (feature `axum`).

use crate::config::EndpointConfig;
use crate::response::metadata_response;
use crate::service::McpService;
use mcp_auth::metadata::{path_of, PRM_WELL_KNOWN};

/// An axum `Router` serving `server`'s MCP endpoint at `path` (e.g. `/mcp` or `/api/mcp`), and,
/// when `config.auth` is set, the RFC 9728 protected-resource metadata (GET, no token) at
/// `/.well-known/oauth-protected-resource`, at its path-aware form
/// (`/.well-known/oauth-protected-resource` + `path`) and at the path of the advertised metadata
/// URL; every request to the endpoint then needs a valid bearer token (401/403 with the
/// `WWW-Authenticate` challenge otherwise). Merge it into the application's router or nest it.
///
/// ```no_run
/// # async fn demo(server: mcp_server::Server) -> std::io::Result<()> {
/// let app = axum::Router::new()
///     .route("/health", axum::routing::get(|| async { "ok" }))
///     .merge(mcp_http::router(server, "/api/mcp", mcp_http::EndpointConfig::default()));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3001").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
///
/// # Panics
///
/// When `path` is not a valid axum route path (it must start with `/`).
pub fn router(server: mcp_server::Server, path: &str, config: EndpointConfig) -> axum::Router {
    let auth = config.auth.clone();
    let mut app = axum::Router::new().route_service(path, McpService::new(server, config));
    if let Some(auth) = auth {
        let mut paths = vec![PRM_WELL_KNOWN.to_owned(), format!("{PRM_WELL_KNOWN}{}", path.trim_end_matches('/'))];
        let advertised = path_of(auth.metadata_url()).to_owned();
        if !paths.contains(&advertised) && advertised != path && advertised.starts_with('/') {
            paths.push(advertised);
        }
        for p in paths {
            let auth = auth.clone();
            let metadata = move |method: http::Method| async move { metadata_response(&auth, &method) };
            app = app.route(&p, axum::routing::any(metadata));
        }
    }
    app
}
