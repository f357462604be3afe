//! Typed results on the client: [`ToolResult`], the JSON a `tools/call` answered with.

use crate::error::ClientError;
use mcp_protocol::types::{CallToolResult, ContentBlock};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The result of a `tools/call`, as the server sent it, with typed views.
///
/// It keeps the JSON it came as (so content types of a newer or older revision are never lost)
/// and parses on demand.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult(Value);

impl ToolResult {
    pub(crate) fn new(v: Value) -> Self {
        Self(v)
    }

    /// The text of every text block, joined by newlines.
    pub fn text(&self) -> String {
        let blocks = self.0.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let texts: Vec<&str> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        texts.join("\n")
    }

    /// Whether the tool reported an execution error (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.0.get("isError").and_then(Value::as_bool) == Some(true)
    }

    /// `structuredContent` deserialized into `T` (an error if absent or of another shape).
    pub fn structured<T: DeserializeOwned>(&self) -> Result<T, ClientError> {
        let sc = self
            .0
            .get("structuredContent")
            .ok_or_else(|| ClientError::invalid_response("the result has no structuredContent"))?;
        T::deserialize(sc).map_err(|e| ClientError::invalid_response(format!("structuredContent: {e}")).caused_by(e))
    }

    /// The content blocks, typed.
    pub fn content(&self) -> Result<Vec<ContentBlock>, ClientError> {
        let c = self.0.get("content").cloned().unwrap_or(Value::Array(Vec::new()));
        serde_json::from_value(c).map_err(|e| ClientError::invalid_response(format!("content: {e}")).caused_by(e))
    }

    /// The whole result as the schema's `CallToolResult`.
    pub fn typed(&self) -> Result<CallToolResult, ClientError> {
        CallToolResult::deserialize_from(&self.0)
    }

    /// The result as JSON.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The result as JSON, owned.
    pub fn into_value(self) -> Value {
        self.0
    }
}

/// The result as compact JSON.
impl std::fmt::Display for ToolResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

trait DeserializeFrom: Sized {
    fn deserialize_from(v: &Value) -> Result<Self, ClientError>;
}

impl DeserializeFrom for CallToolResult {
    fn deserialize_from(v: &Value) -> Result<Self, ClientError> {
        serde::Deserialize::deserialize(v)
            .map_err(|e| ClientError::invalid_response(format!("CallToolResult: {e}")).caused_by(e))
    }
}

#[cfg(test)]
mod tests;
