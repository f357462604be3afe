//! Streamable HTTP transport for MCP servers (revision 2026-07-28), on hyper.
//!
//! One POST endpoint. [`McpService`] (the endpoint) is path-agnostic: it answers whatever
//! request reaches it, so it mounts at any path of an axum `Router` (`route_service("/api/mcp",
//! svc)`, `nest_service("/mcp", svc)`) or under tower layers; the router routes. [`serve`] runs
//! it on hyper at [`ServeConfig::path`] (default `/mcp`; 404 elsewhere) with connection limits
//! and graceful shutdown ([`Serve::with_graceful_shutdown`], [`shutdown_signal`]); `router`
//! (feature `axum`) wires the endpoint, its RFC 9728 metadata and auth from one path.
//!
//! Settings are split by where they take effect: [`EndpointConfig`] (what the endpoint checks
//! and how it answers, wherever it is mounted) and [`ServeConfig`] (the connections of
//! [`serve`]: cap, header and idle timeouts, listen-stream caps, drain time).
//!
//! Checks run in this order, each answering before any handler runs: Host/Origin (403),
//! authorization when the `auth` field of [`EndpointConfig`] is set (401/400 with
//! `WWW-Authenticate: Bearer resource_metadata=...`, 403 `insufficient_scope`), HTTP method (405
//! for GET/DELETE/...), body size (413), JSON-RPC parse (400), request-metadata headers against
//! the body (400, `-32020`), per-tool scopes of `tools/call` (403), unknown method (404,
//! `-32601`), `_meta` (400). With auth on, the RFC 9728 protected-resource metadata is served
//! (GET, no token) at `/.well-known/oauth-protected-resource` and its path-aware form
//! (`/.well-known/oauth-protected-resource/mcp`) by [`serve`], `router` and [`AuthLayer`], and
//! handlers see the token subject as `ctx.principal()` (also bound into sealed MRTR state).
//! Requests that need no notification get `application/json`; once a handler emits a
//! notification the response becomes an SSE stream. `subscriptions/listen` is always an SSE
//! stream with keep-alive comments. Closing a response stream cancels the request's handler.
//! Browser clients need the `cors` field of [`EndpointConfig`] (opt-in).
//!
//! Dual era: a legacy client's `initialize` (no modern `_meta`) opens a session with an
//! `Mcp-Session-Id`; requests with that header are served by the legacy rules (server-to-client
//! requests on the POST's SSE stream, answers POSTed back, GET for the session's notification
//! stream, DELETE to end it). See [`EndpointConfig::max_sessions`].

mod auth_layer;
mod body;
mod body_read;
mod config;
mod cors;
mod endpoint;
#[cfg(feature = "legacy")]
mod legacy;
mod notes;
mod post;
mod response;
#[cfg(feature = "axum")]
mod router;
mod serve;
mod service;
mod validate;

pub use auth_layer::{AuthBody, AuthLayer, AuthService, Authenticated};
pub use body::McpBody;
pub use config::{EndpointConfig, RequestBody};
pub use cors::CorsConfig;
#[cfg(feature = "legacy")]
pub use legacy::{
    SessionChange, SessionEvent, SessionRecord, SessionSink, SessionStore, SessionStoreError, SessionStoreFuture,
    StoredStream, StreamEntry,
};
/// The resource-server building blocks ([`auth::AuthConfig`], validators, metadata).
pub use mcp_auth as auth;
#[cfg(feature = "axum")]
pub use router::router;
pub use serve::{raise_fd_limit, serve, shutdown_signal, Serve, ServeConfig};
pub use service::{McpService, ResponseFuture};
