//! Errors a handler can return.

use crate::mrtr::InputRequired;
use mcp_protocol::ProtocolError;

/// What a tool, resource or prompt handler returns instead of a result.
#[derive(Debug)]
#[non_exhaustive]
pub enum HandlerError {
    /// A tool execution failure: reported to the model as a result with `isError: true`
    /// (for resources and prompts it becomes an internal error).
    Tool(String),
    /// The request needs input from the client (elicitation, sampling, roots): answered with an
    /// `input_required` result, completed when the client retries.
    InputRequired(InputRequired),
    /// A protocol error, sent as a JSON-RPC error.
    Protocol(ProtocolError),
}

impl HandlerError {
    /// A tool execution error with `message`.
    pub fn tool(message: impl Into<String>) -> Self {
        Self::Tool(message.into())
    }
}

impl From<ProtocolError> for HandlerError {
    fn from(e: ProtocolError) -> Self {
        Self::Protocol(e)
    }
}

impl From<InputRequired> for HandlerError {
    fn from(e: InputRequired) -> Self {
        Self::InputRequired(e)
    }
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Tool(m) => write!(f, "tool error: {m}"),
            Self::InputRequired(_) => f.write_str("input required"),
            Self::Protocol(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for HandlerError {}
