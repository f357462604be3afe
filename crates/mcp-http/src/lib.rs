//! Streamable HTTP transport for MCP servers (revision 2026-07-28), on hyper.
//!
//! One POST endpoint (default `/mcp`). Checks run in this order, each answering before any
//! handler runs: path (404), Host/Origin (403), HTTP method (405 for GET/DELETE/...), body size
//! (413), JSON-RPC parse (400), request-metadata headers against the body (400, `-32020`),
//! unknown method (404, `-32601`), `_meta` (400). Requests that need no notification get
//! `application/json`; once a handler emits a notification the response becomes an SSE stream.
//! `subscriptions/listen` is always an SSE stream with keep-alive comments. Closing a response
//! stream cancels the request's handler.

mod body;
mod service;
mod validate;

pub use body::McpBody;
pub use service::{serve, HttpConfig, McpService};
pub use validate::{check_host_origin, check_request_headers};
