//! The integration tests of mcp-stack-http, as one test binary (one link of the whole stack):
//! - `streamable`: the 2026-07-28 endpoint over real sockets on 127.0.0.1, every message
//!   checked against the JSON schema.
//! - `legacy`: 2025-11-25 sessions (`Mcp-Session-Id`) on the same endpoint.
//! - `drain`: the graceful drain of `serve` on kept-alive connections.
//! - `service`: the endpoint as a `tower::Service`, mounted in axum at any path, no sockets.

mod drain;
mod legacy;
mod service;
mod streamable;
