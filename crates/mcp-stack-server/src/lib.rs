#![warn(unreachable_pub)]
//! Server framework for the Model Context Protocol, revision 2026-07-28.
//!
//! Build a [`Server`] once with [`Server::builder`], register tools, resources, templates,
//! prompts and completions, then hand it to a transport (`mcp-stdio`, `mcp-http`). Dispatch is
//! a plain async function from one request to one result, with request-scoped notifications
//! going to a sink the transport provides.
//!
//! ```
//! use mcp_server::{Args, Server, Tool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo { text: String }
//!
//! let server = Server::builder("demo", "1.0.0")
//!     .tool(Tool::new("echo").description("Echo text").handler(|Args(a): Args<Echo>| async move { a.text }))
//!     .build()
//!     .unwrap();
//! # drop(server);
//! ```

mod access;
pub mod access_log;
pub mod apps;
mod builder;
pub mod cache;
mod catalog;
mod change_bus;
mod change_feed;
mod context;
mod deadline;
mod definitions;
mod dispatch;
mod error;
pub mod fallback;
mod handler;
mod handler_result;
mod inputs;
pub mod layers;
mod listen;
mod listen_limits;
mod mount;
mod pages;
pub mod panic;
pub mod rate_limit;
mod reply;
mod round;
mod server;
mod skills;
mod stage_set;
mod stages;
mod state_map;
pub mod tasks;
mod telemetry;
mod template;
mod testing;
mod typed_inputs;

pub use access::{Access, Caller};
pub use builder::ServerBuilder;
pub use catalog::{TaskSupport, ToolEntry};
pub use change_bus::{BusInbox, ChangeBus, InMemoryBus};
pub use change_feed::{ChangeEvent, ChangeFeed};
pub use context::{Context, NotificationSink, RequestEnv};
pub use definitions::{Prompt, PromptHandler, Resource, ResourceHandler, Tool, ToolHandler};
pub use error::{correlation_id, reported, BuildError, HandlerError, ItemKind, ResultExt};
pub use handler::{schema_of, Args, FromRequest, FromRequestParts, Handler, HttpRequest, State};
pub use handler_result::{Blob, IntoPromptResult, IntoReadResult, IntoToolResult, Json};
pub use inputs::{declares, InputRequired, Inputs};
pub use listen_limits::ListenLimits;
pub use mcp_protocol;
pub use reply::Reply;
pub use server::Server;
pub use skills::SkillSet;
pub use template::UriTemplate;
pub use testing::TestContext;
pub use typed_inputs::Elicitation;

/// What the sibling crates of this workspace (the session machine `mcp-stack-session`, the
/// transports `mcp-stack-http` and `mcp-stack-stdio`, the proxy, the Redis stores, the CLI and
/// the test kits) need from the server's insides: how a transport starts a request, what a
/// legacy session supplies in place of `_meta`, and a few wire predicates.
///
/// **Not part of the stable interface**: anything here may change or go in any release,
/// without a note in the changelog. Servers use the items at the crate root instead.
#[doc(hidden)]
pub mod internal {
    pub use crate::dispatch::is_known_method;
    pub use crate::round::{Preset, RoundState};
    pub use crate::server::method_not_found;

    use crate::context::RequestEnv;
    use crate::reply::Reply;
    use crate::server::Server;
    use mcp_protocol::{ProtocolError, Request};
    use std::future::Future;
    use std::pin::Pin;

    /// Serves one request the way every transport does (traced, under the panic scope, the
    /// request timeout and the operation layers); `preset` is what a legacy session supplies in
    /// place of `_meta` and `requestState`.
    #[inline]
    pub fn serve(
        server: Server,
        request: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> Pin<Box<dyn Future<Output = Result<Reply, ProtocolError>> + Send + 'static>> {
        server.process_boxed(request, env, preset)
    }

    /// Opens `requestState` bound to `env`'s principal as of `now` (seconds since the epoch;
    /// `Some(0)` ignores expiry, for state that never left the server; `None`: the clock).
    pub fn open_state_at(
        server: &Server,
        request: &Request,
        env: &RequestEnv,
        now: Option<u64>,
    ) -> Result<RoundState, ProtocolError> {
        server.open_state_at(request, env, now)
    }

    /// The log level (a rank) a legacy session gets before it sets one.
    pub fn legacy_log_level(server: &Server) -> Option<u8> {
        server.inner.config.legacy_log_level
    }

    /// The `x-mcp-header` parameters of the tool `name` as `caller` may see it (what the HTTP
    /// transport checks against the `Mcp-Param-*` headers): `None` when it has none, or is
    /// unknown or hidden from `caller`.
    pub fn header_params_of(
        server: &Server,
        name: &str,
        caller: &crate::access::Caller<'_>,
    ) -> Option<std::sync::Arc<[mcp_protocol::headers::HeaderParam]>> {
        server.header_params_of(name, caller)
    }

    /// The generic cell rate algorithm's parameters of `quota`, in microseconds: how long one
    /// request's token takes to come back (the emission interval), and how far ahead of now a
    /// bucket may run (the burst tolerance). What a shared rate-limit store runs the algorithm
    /// with (the Redis store, in a script), the same as the in-memory one.
    pub fn gcra_params(quota: crate::rate_limit::Quota) -> (u64, u64) {
        (quota.interval_us(), quota.tolerance_us())
    }

    /// How long a request may run (and, by default, how long a client has to answer).
    pub fn request_timeout(server: &Server) -> std::time::Duration {
        server.inner.config.request_timeout
    }
}

/// Support for the code `mcp`'s attribute macros generate; not a stable API.
#[doc(hidden)]
pub mod __private {
    use crate::error::HandlerError;
    use std::fmt::Display;
    use std::str::FromStr;

    /// Parses a prompt argument or template variable.
    pub fn parse_argument<T: FromStr>(name: &str, value: String) -> Result<T, HandlerError>
    where
        T::Err: Display,
    {
        value.parse().map_err(|e| HandlerError::invalid_params(format!("argument {name:?}: {e}")))
    }

    /// Parses an optional prompt argument or template variable.
    pub fn parse_optional_argument<T: FromStr>(name: &str, value: Option<String>) -> Result<Option<T>, HandlerError>
    where
        T::Err: Display,
    {
        value.map(|v| parse_argument(name, v)).transpose()
    }
}
