//! The integration tests of mcp-stack-server, as one test binary:
//! - `access`: access rules on items (lists, calls, reads, listen streams).
//! - `apps`: MCP Apps views, tool links and app-only tools.
//! - `cache`: the result cache of read-only tools and resources.
//! - `dispatch`: requests through `Server::handle` (no transport), every method and error.
//! - `layers`: operation layers around `Server::handle`.
//! - `mount`: servers mounted into another under a prefix.
//! - `mrtr_binding`: sealed `requestState` bound to its request.
//! - `rate_limit`: rate limits per caller, tool and server.
//! - `mrtr_props`: property tests of the multi round-trip flow on the everything server.
//!
//! `panic_hook` has a binary of its own: the hook is process-wide.

mod access;
mod apps;
mod cache;
mod dispatch;
mod layers;
mod mount;
mod mrtr_binding;
mod mrtr_props;
mod rate_limit;
