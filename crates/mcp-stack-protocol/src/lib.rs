//! Sans-IO core of the Model Context Protocol, revision 2026-07-28.
//!
//! No I/O, no async runtime: types, strict JSON-RPC parsing, `_meta` rules, protocol
//! versions, the error table, HTTP header rules and sealed MRTR state, shared by the
//! server and client frameworks and every transport.

pub mod apps;
pub mod auth;
pub mod error;
pub mod headers;
pub mod jsonrpc;
pub mod meta;
pub mod method;
pub mod outbound;
pub mod params;
pub mod sse;
pub mod state;
pub mod strict;
pub mod telemetry;
pub mod template;
pub mod text;
pub mod types;
pub mod version;

pub use error::{Cancellation, ErrorSource, InputFailure, ProtocolError};
pub use jsonrpc::{Incoming, Notification, Request};
pub use meta::RequestMeta;
pub use method::Method;
pub use params::Params;
