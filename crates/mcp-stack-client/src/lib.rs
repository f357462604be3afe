//! Client for the Model Context Protocol: talks to modern (2026-07-28, stateless) servers and
//! to legacy (initialize-based) ones, over stdio or HTTP.
//!
//! ```no_run
//! # async fn run() -> Result<(), mcp_client::ClientError> {
//! use mcp_client::{ClientBuilder, transport::stdio::StdioTransport};
//! let transport = StdioTransport::spawn(mcp_client::transport::stdio::StdioCommand::new("mcp").args(["serve", "everything", "--stdio"]))?;
//! let client = ClientBuilder::new("my-app", "1.0.0").connect(transport).await?;
//! let tools = client.list_tools().await?;
//! let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
//! println!("{}", result.text());
//! # Ok(()) }
//! ```

pub mod auth;
mod cache;
mod call;
mod client;
#[cfg(feature = "config")]
pub mod config;
pub mod elicit;
mod error;
mod handlers;
#[cfg(feature = "icons")]
pub mod icons;
mod legacy;
pub mod list;
mod listen;
mod logging;
#[cfg(feature = "multi")]
pub mod multi;
pub mod protocol;
mod redact;
mod requests;
mod result;
mod roots_handler;
mod skills;
mod telemetry;
#[cfg(test)]
mod tests;
pub mod transport;
mod typed;

pub use auth::{AuthChallenge, AuthProvider};
pub use client::{
    CallOptions, CallTool, Client, ClientBuilder, Direction, ElicitationModes, NotificationCallback, Sampling,
    ServerEra, Started, TaskHandle, TrafficTap,
};
pub use error::{ClientError, ErrorSource, TransportError};
pub use handlers::{Handlers, InputHandler};
pub use list::{DEFAULT_MAX_LIST_BYTES, DEFAULT_MAX_LIST_ITEMS};
pub use listen::{ListenEvent, Subscription};
pub use logging::LOG_QUEUE_CAP;
/// The schema types the client API speaks (`mcp_protocol::types`).
pub use mcp_protocol::types;
pub use mcp_skills::{SkillEntry, SkillResource, SkillResources};
pub use redact::redact_url;
pub use result::ToolResult;
pub use skills::LoadedSkill;
pub use typed::Typed;

/// The parsers of what a server sends, for the fuzz targets; not a stable API.
#[doc(hidden)]
pub mod __fuzz {
    use crate::error::TransportError;
    use serde_json::Value;

    /// A JSON body answering request `id` (HTTP): its messages.
    pub fn http_json_body(body: &[u8], id: &Value) -> Result<Vec<Value>, TransportError> {
        crate::transport::http::fuzz::json_body(body, id)
    }

    /// An SSE body answering request `id`, arriving in `chunks`: the messages delivered.
    pub fn http_sse_body(chunks: &[&[u8]], id: &Value, max_event_bytes: usize) -> Result<Vec<Value>, TransportError> {
        crate::transport::http::fuzz::sse_body(chunks, id, max_event_bytes)
    }

    /// A 4xx/5xx answer to request `id`: the JSON-RPC error it carries, or the error.
    pub fn http_error_body(
        status: u16,
        www_authenticate: Option<&str>,
        body: &[u8],
        in_session: bool,
        id: &Value,
    ) -> Result<Value, TransportError> {
        crate::transport::http::fuzz::error_body(status, www_authenticate, body, in_session, id)
    }

    /// Sniffs and parses an icon's image header (PNG, JPEG, WebP) with the default limits.
    #[cfg(feature = "icons")]
    pub fn icon_image(bytes: &[u8]) -> Result<crate::icons::ImageInfo, crate::icons::IconError> {
        crate::icons::fuzz::image(bytes)
    }

    /// Decodes a `data:` icon URI (64 KiB limit) and validates the image in it.
    #[cfg(feature = "icons")]
    pub fn icon_data_uri(uri: &str) -> Result<crate::icons::ImageInfo, crate::icons::IconError> {
        crate::icons::fuzz::data_uri(uri)
    }

    /// One line from a stdio server, routed with request `1` pending: `Some(true)` if it
    /// reached that request, `Some(false)` if unsolicited, `None` if skipped.
    pub fn stdio_line(line: &[u8]) -> Option<bool> {
        crate::transport::stdio::fuzz_line(line)
    }
}
