//! Tools: definitions, listing, calling and change notifications.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    CacheScope, ContentBlock, Cursor, Icon, InputResponses, JsonObject, MetaObject, NotificationParams,
    PaginatedRequestParams, RequestMetaObject, ResultMetaObject, ResultOrInputRequired, ResultType,
};

/// Definition of a tool the client can call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Identifier for programmatic use; the display fallback when no title is given.
    pub name: String,
    /// Human-readable display name (takes precedence over `annotations.title`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does; helps the model decide when to use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments. Arguments are always objects, so its
    /// `type` must be `"object"`; it defaults to JSON Schema 2020-12 unless
    /// `$schema` says otherwise.
    pub input_schema: JsonObject,
    /// Optional JSON Schema of `structuredContent` in the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Sized icons a client can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Optional hints about the tool's behaviour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Self { name: name.into(), input_schema, ..Self::default() }
    }

    /// The input schema `{"type": "object"}` of a tool without parameters.
    pub fn empty_input_schema() -> JsonObject {
        let mut schema = JsonObject::new();
        schema.insert("type".to_owned(), Value::String("object".to_owned()));
        schema
    }
}

/// Hints describing a [`Tool`] to clients. They are not guaranteed to be
/// faithful; never base trust decisions on them for untrusted servers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title for the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// If true, the tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// If true, the tool may perform destructive updates (default true);
    /// meaningful only when not read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// If true, repeated calls with the same arguments have no further effect
    /// (default false); meaningful only when not read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// If true, the tool may interact with an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

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

impl From<CallToolResult> for ResultOrInputRequired<CallToolResult> {
    fn from(value: CallToolResult) -> Self {
        Self::Complete(value)
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
