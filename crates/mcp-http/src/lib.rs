//! Streamable HTTP transport for MCP servers (revision 2026-07-28), on hyper.
//!
//! One POST endpoint (default `/mcp`). Checks run in this order, each answering before any
//! handler runs: path (404), Host/Origin (403), authorization when [`HttpConfig::auth`] is set
//! (401/400 with `WWW-Authenticate: Bearer resource_metadata=...`, 403 `insufficient_scope`),
//! HTTP method (405 for GET/DELETE/...), body size (413), JSON-RPC parse (400), request-metadata
//! headers against the body (400, `-32020`), per-tool scopes of `tools/call` (403), unknown
//! method (404, `-32601`), `_meta` (400). With auth on, the RFC 9728 protected-resource metadata
//! is served (GET, no token) at `/.well-known/oauth-protected-resource` and its path-aware form
//! (`/.well-known/oauth-protected-resource/mcp`), and handlers see the token subject as
//! `ctx.principal()` (also bound into sealed MRTR state). Requests that need no notification get
//! `application/json`; once a handler emits a notification the response becomes an SSE stream.
//! `subscriptions/listen` is always an SSE stream with keep-alive comments. Closing a response
//! stream cancels the request's handler.
//!
//! [`McpService`] is a `tower::Service<http::Request<B>>` for any body type, so it mounts in an
//! axum `Router` (`route_service("/mcp", service)`) or under tower layers; [`serve`] runs it on
//! hyper with connection limits. Browser clients need [`HttpConfig::cors`] (opt-in).
//!
//! Dual era: a legacy client's `initialize` (no modern `_meta`) opens a session with an
//! `Mcp-Session-Id`; requests with that header are served by the legacy rules (server-to-client
//! requests on the POST's SSE stream, answers POSTed back, GET for the session's notification
//! stream, DELETE to end it). See [`HttpConfig::max_sessions`].

mod auth_layer;
mod body;
mod cors;
#[cfg(feature = "legacy")]
mod legacy;
#[cfg(feature = "legacy")]
mod legacy_call;
mod limits;
mod notes;
#[cfg(feature = "legacy")]
mod resume;
mod serve;
mod service;
#[cfg(feature = "legacy")]
mod shared;
mod validate;

pub use auth_layer::{AuthLayer, AuthService, Authenticated};
pub use body::McpBody;
pub use cors::CorsConfig;
/// The resource-server building blocks ([`auth::AuthConfig`], validators, metadata).
pub use mcp_auth as auth;
pub use serve::{raise_fd_limit, serve};
pub use service::{HttpConfig, McpService, RequestBody};
#[cfg(feature = "legacy")]
pub use shared::{
    SessionChange, SessionEvent, SessionRecord, SessionSink, SessionStore, SessionStoreError, StoreFuture,
    StoredStream, StreamEntry,
};
pub use validate::{check_host_origin, check_request_headers};
