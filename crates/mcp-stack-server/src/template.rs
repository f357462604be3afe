//! RFC 6570 URI templates for resource templates: the protocol crate's parser and matcher, the
//! one the `#[resource]` macro checks its arguments against.

pub use mcp_protocol::template::UriTemplate;
