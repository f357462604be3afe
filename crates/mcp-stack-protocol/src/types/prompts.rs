//! Prompts: listing, fetching and change notifications.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    CacheScope, ContentBlock, Cursor, Icon, InputResponses, JsonObject, MetaObject, NotificationParams,
    PaginatedRequestParams, RequestMetaObject, ResultMetaObject, ResultOrInputRequired, ResultType, Role,
};

/// A prompt or prompt template that the server offers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Identifier for programmatic use; the display fallback when `title` is absent.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments used to template the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Sized icons a client can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Prompt {
    /// A prompt with only a name.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }
}

/// An argument a prompt can accept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Identifier for programmatic use; the display fallback when `title` is absent.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the argument must be provided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// A message returned as part of a prompt; like a sampling message, but it
/// may also embed resources from the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who sends the message.
    pub role: Role,
    /// The content of the message.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A message from `role` with the given content.
    pub fn new(role: Role, content: impl Into<ContentBlock>) -> Self {
        Self { role, content: content.into() }
    }
}

/// Parameters for a `prompts/get` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The name of the prompt or prompt template.
    pub name: String,
    /// Arguments used to template the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Answers to the server's earlier input requests, when retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state from an earlier `InputRequiredResult`, echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

request_type! {
    /// Used by the client to get a prompt provided by the server.
    pub struct GetPromptRequest { method: GetPromptMethod = "prompts/get", params: GetPromptRequestParams }
}

/// The result of a `prompts/get` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// A description of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages of the prompt.
    pub messages: Vec<PromptMessage>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

result_response! {
    /// A successful response to a `prompts/get` request.
    pub struct GetPromptResultResponse { result: ResultOrInputRequired<GetPromptResult> }
}

request_type! {
    /// Sent from the client to list the prompts and prompt templates the server has.
    pub struct ListPromptsRequest { method: ListPromptsMethod = "prompts/list", params: PaginatedRequestParams }
}

/// The result of a `prompts/list` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The prompts.
    pub prompts: Vec<Prompt>,
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
    /// A successful response to a `prompts/list` request.
    pub struct ListPromptsResultResponse { result: ListPromptsResult }
}

notification_type! {
    /// Tells the client that the list of prompts changed. Only delivered on a
    /// `subscriptions/listen` stream that opted in.
    pub struct PromptListChangedNotification {
        method: PromptListChangedNotificationMethod = "notifications/prompts/list_changed",
        params?: NotificationParams,
    }
}
