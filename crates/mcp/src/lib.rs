//! The Model Context Protocol (revision 2026-07-28) for Rust.
//!
//! This facade re-exports the layers behind features:
//! - [`protocol`]: the sans-IO core (types, JSON-RPC, `_meta`, versions, errors, MRTR state);
//! - [`server`] (feature `server`): the server framework;
//! - [`stdio`] (feature `stdio`) and [`http`] (feature `http`): server transports.
//!
//! A server in a few lines:
//!
//! ```no_run
//! use mcp::prelude::*;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo { text: String }
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = Server::builder("echo-server", "1.0.0")
//!     .tool(json!({"name": "echo", "description": "Echo the text back"}), |_ctx: Context, a: Echo| async move {
//!         Ok(CallToolResult::text(a.text))
//!     })
//!     .build()
//!     .expect("valid server");
//! mcp::stdio::serve_stdio(server).await
//! # }
//! ```

#[cfg(feature = "http")]
pub use mcp_http as http;
pub use mcp_protocol as protocol;
pub use mcp_protocol::types;
#[cfg(feature = "server")]
pub use mcp_server as server;
#[cfg(feature = "stdio")]
pub use mcp_stdio as stdio;
pub use schemars;
pub use serde_json;

/// The names most servers need.
pub mod prelude {
    pub use mcp_protocol::types::{
        CallToolResult, ContentBlock, EmbeddedResource, GetPromptResult, Icon, ImageContent, Implementation, Prompt,
        PromptArgument, PromptMessage, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
        TextContent, Tool, ToolAnnotations,
    };
    pub use mcp_protocol::ProtocolError;
    #[cfg(feature = "server")]
    pub use mcp_server::{ChangeEvent, Context, HandlerError, Server, ServerBuilder};
    pub use serde_json::{json, Value};
}
