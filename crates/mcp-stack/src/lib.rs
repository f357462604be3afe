#![doc = include_str!("../../../README.md")]
//!
//! # This crate
//!
//! A facade over the layers, behind features (default: `server`, `macros`, `stdio`):
//! - [`protocol`] and [`types`]: the sans-IO core and the wire types of every schema definition;
//! - [`server`] (`server`): the server framework, with [`tool`], [`prompt`], [`resource`] and
//!   [`schema`] (`macros`);
//! - [`stdio`] (`stdio`) and [`http`] (`http`): the server transports; `axum` adds
//!   `http::router`, the endpoint as an axum `Router`;
//! - [`client`] (`client`): the client library, and [`memory`] (`memory`): a client connected to
//!   a server in the same process, for tests;
//! - [`auth`] (`auth`): OAuth 2.1 resource-server support.
//!
//! [`serde`], [`serde_json`] and [`schemars`] are re-exported, and the macros name them through
//! this crate, so a server's `Cargo.toml` needs only `mcp` and `tokio`.

#[cfg(feature = "auth")]
pub use mcp_auth as auth;
#[cfg(feature = "client")]
pub use mcp_client as client;
#[cfg(feature = "http")]
pub use mcp_http as http;
#[cfg(feature = "memory")]
pub mod memory;
#[cfg(feature = "macros")]
pub use mcp_macros::{prompt, resource, schema, tool};
pub use mcp_protocol as protocol;
pub use mcp_protocol::types;
#[cfg(feature = "server")]
pub use mcp_server as server;
#[cfg(feature = "stdio")]
pub use mcp_stdio as stdio;
pub use schemars;
pub use serde;
pub use serde_json;

/// The names most servers need.
pub mod prelude {
    #[cfg(feature = "macros")]
    pub use mcp_macros::{prompt, resource, schema, tool};
    pub use mcp_protocol::types::{
        AudioContent, CacheScope, CallToolResult, ContentBlock, EmbeddedResource, GetPromptResult, Icon, ImageContent,
        LoggingLevel, PromptMessage, ReadResourceResult, ResourceContents, ResourceLink, Role, TextContent,
        TextResourceContents, ToolAnnotations,
    };
    pub use mcp_protocol::ProtocolError;
    #[cfg(feature = "server")]
    pub use mcp_server::{
        Args, Blob, ChangeEvent, Context, Elicitation, HandlerError, HttpRequest, Json, Prompt, Resource, ResultExt,
        Server, ServerBuilder, State, TaskSupport, Tool,
    };
    pub use serde_json::{json, Value};
}

/// The examples of `docs/policy.md`, compiled and run as doc tests.
#[cfg(all(doctest, feature = "server", feature = "macros"))]
#[doc = include_str!("../../../docs/policy.md")]
pub struct PolicyGuide;

/// The examples of `docs/apps.md`, compiled and run as doc tests.
#[cfg(all(doctest, feature = "server", feature = "macros"))]
#[doc = include_str!("../../../docs/apps.md")]
pub struct AppsGuide;
