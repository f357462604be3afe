//! Server framework for the Model Context Protocol, revision 2026-07-28.
//!
//! Build a [`Server`] once with [`Server::builder`], register tools, resources, templates,
//! prompts and completions, then hand it to a transport (`mcp-stdio`, `mcp-http`). Dispatch is
//! a plain async function from one request to one result, with request-scoped notifications
//! going to a sink the transport provides.
//!
//! ```no_run
//! use mcp_server::{Server, Context, HandlerError};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo { text: String }
//!
//! let server = Server::builder("demo", "1.0.0")
//!     .tool(json!({"name": "echo", "description": "Echo text"}), |_ctx: Context, a: Echo| async move {
//!         Ok::<_, HandlerError>(json!({"content": [{"type": "text", "text": a.text}]}))
//!     })
//!     .build()
//!     .unwrap();
//! ```

mod builder;
mod context;
mod dispatch;
mod error;
mod legacy;
mod listen;
mod mrtr;
mod registry;
mod server;
pub mod template;

pub use builder::{schema_of, ServerBuilder};
pub use context::{Context, NotificationSink, RequestEnv};
pub use dispatch::{is_known_method, supports_mrtr};
pub use error::HandlerError;
pub use legacy::{is_modern_request, ClientPeer, LegacySession, PendingRequests};
pub use listen::SubscriptionFilter;
pub use mcp_protocol;
pub use mrtr::{declares, InputRequired, Inputs};
pub use registry::{BoxFuture, BuildError, ToolEntry};
pub use server::{ChangeEvent, Server};
