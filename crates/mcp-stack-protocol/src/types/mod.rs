//! Types for every definition in schema 2026-07-28.
//!
//! Each definition of `schema.json` maps to one Rust type of the same name
//! (`JSONRPC*` and `JSON*` become `JsonRpc*` / `Json*`). A few helper types
//! model anonymous inline objects (for example capability sub-objects) and
//! constant-valued fields (marker types such as [`JsonRpcVersion`] or
//! [`CallToolMethod`], which serialize to one fixed string and reject any
//! other value on deserialize).
//!
//! Note that the schema's `Result` and `Error` definitions are exported under
//! those names; import them explicitly (or qualify them) when the std prelude
//! `Result` is needed in the same scope.

#[macro_use]
mod macros;
mod num;

mod capabilities;
mod common;
mod completion;
mod content;
mod discover;
mod elicitation;
mod elicitation_schema;
mod jsonrpc;
mod logging;
mod messages;
mod meta;
mod mrtr;
mod notifications;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod subscriptions;
mod tool;
mod tools;

pub use capabilities::*;
pub use common::*;
pub use completion::*;
pub use content::*;
pub use discover::*;
pub use elicitation::*;
pub use elicitation_schema::*;
pub use jsonrpc::*;
pub use logging::*;
pub use messages::*;
pub use meta::*;
pub use mrtr::*;
pub use notifications::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use subscriptions::*;
pub use tool::*;
pub use tools::*;
