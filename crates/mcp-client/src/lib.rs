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

mod api;
pub mod auth;
mod cache;
mod call;
mod client;
pub mod elicit;
mod error;
mod handlers;
mod legacy;
mod listen;
pub mod protocol;
mod result;
mod skills;
mod tasks;
pub mod transport;

pub use auth::{AuthChallenge, AuthProvider};
pub use client::{CallOptions, Client, ClientBuilder, ElicitationModes, NotificationCallback, Sampling, ServerEra};
pub use error::{ClientError, ErrorSource, TransportError};
pub use handlers::{Handlers, InputHandler};
pub use listen::{ListenEvent, Subscription};
pub use mcp_skills::{SkillEntry, SkillResource, SkillResources};
pub use result::{CallTool, ToolResult};
pub use skills::LoadedSkill;
pub use tasks::{Started, TaskHandle};
