//! Tools: definitions, listing, calling and change notifications.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    CacheScope, ContentBlock, Cursor, InputResponses, JsonObject, NotificationParams, PaginatedRequestParams,
    RequestMetaObject, ResultMetaObject, ResultOrInputRequired, ResultType, Tool,
};

/// Parameters for a `tools/call` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The name of the tool.
    pub name: String,
    /// Arguments for the tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Answers to the server's earlier input requests, when retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state from an earlier `InputRequiredResult`, echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

request_type! {
    /// Used by the client to invoke a tool provided by the server.
    pub struct CallToolRequest { method: CallToolMethod = "tools/call", params: CallToolRequestParams }
}

/// The result of a `tools/call` request.
///
/// Tool errors go here with `isError: true` (so the model can see them),
/// not into a JSON-RPC error; protocol errors use JSON-RPC errors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The unstructured result of the call.
    pub content: Vec<ContentBlock>,
    /// Optional structured result (any JSON value), matching the tool's `outputSchema` if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call ended in an error; false when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CallToolResult {
    /// A successful result with the given content.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self { content, ..Self::default() }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A failed result (`isError: true`) with one text block describing the error.
    pub fn error(message: impl Into<String>) -> Self {
        Self { is_error: Some(true), ..Self::text(message) }
    }

    /// A successful result with structured content and its JSON text as a text block.
    pub fn structured(value: Value) -> Self {
        Self { structured_content: Some(value.clone()), ..Self::text(value.to_string()) }
    }
}

result_response! {
    /// A successful response to a `tools/call` request.
    pub struct CallToolResultResponse { result: ResultOrInputRequired<CallToolResult> }
}

request_type! {
    /// Sent from the client to list the tools the server has.
    pub struct ListToolsRequest { method: ListToolsMethod = "tools/list", params: PaginatedRequestParams }
}

/// The result of a `tools/list` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The tools.
    pub tools: Vec<Tool>,
    /// Opaque position after the last returned item; present if there may be more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// How long, in milliseconds, the client may cache the response.
    pub ttl_ms: u64,
    /// Who may cache the response.
    pub cache_scope: CacheScope,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

result_response! {
    /// A successful response to a `tools/list` request.
    pub struct ListToolsResultResponse { result: ListToolsResult }
}

notification_type! {
    /// Tells the client that the list of tools changed. Only delivered on a
    /// `subscriptions/listen` stream that opted in.
    pub struct ToolListChangedNotification {
        method: ToolListChangedNotificationMethod = "notifications/tools/list_changed",
        params?: NotificationParams,
    }
}
