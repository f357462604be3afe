//! Sampling (`sampling/createMessage`): the server asks the client to run
//! an LLM completion.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AudioContent, ContentBlock, ImageContent, JsonObject, MetaObject, Role, TextContent, Tool};

const_str! {
    /// Marker for the method name `sampling/createMessage`.
    CreateMessageMethod = "sampling/createMessage"
}
const_str! {
    /// Marker for `"type": "tool_use"`.
    ToolUseType = "tool_use"
}
const_str! {
    /// Marker for `"type": "tool_result"`.
    ToolResultType = "tool_result"
}

/// A request from the server to sample an LLM via the client. It travels
/// inside an `InputRequiredResult`, without JSON-RPC envelope. The client
/// chooses the model and should let the user review the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateMessageRequest {
    /// Always `sampling/createMessage`.
    pub method: CreateMessageMethod,
    /// What to sample.
    pub params: CreateMessageRequestParams,
}

impl CreateMessageRequest {
    /// Method name of this request on the wire.
    pub const METHOD: &'static str = "sampling/createMessage";

    /// Builds the request.
    pub fn new(params: CreateMessageRequestParams) -> Self {
        Self { method: CreateMessageMethod, params }
    }
}

/// Which MCP servers' context to attach to a sampling prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// Context from all servers the client is connected to.
    AllServers,
    /// No context.
    None,
    /// Context from the requesting server only.
    ThisServer,
}

/// Parameters for a `sampling/createMessage` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation to sample from.
    pub messages: Vec<SamplingMessage>,
    /// Maximum number of tokens to sample; the client may sample fewer.
    pub max_tokens: i64,
    /// The server's model preferences; the client may ignore them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt; the client may modify or omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which servers' context to include (soft-deprecated except `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "crate::types::num::opt_f64")]
    pub temperature: Option<f64>,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata passed through to the LLM provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use; requires the client's `sampling.tools` capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use tools; requires the client's `sampling.tools` capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The client's answer to a `sampling/createMessage` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
    /// Who produced the message (normally the assistant).
    pub role: Role,
    /// The sampled content.
    pub content: SamplingMessageContent,
    /// The name of the model that generated the message.
    pub model: String,
    /// Why sampling stopped, if known (`endTurn`, `stopSequence`, `maxTokens`,
    /// `toolUse`, or provider-specific).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A message issued to or received from an LLM API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who sends the message.
    pub role: Role,
    /// One content block or several.
    pub content: SamplingMessageContent,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl SamplingMessage {
    /// A message with one text block.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: SamplingMessageContent::Single(SamplingMessageContentBlock::Text(TextContent::new(text))),
            meta: None,
        }
    }
}

union_enum! {
    /// The `content` of a sampling message: a single block or a list of blocks.
    pub enum SamplingMessageContent {
        /// One content block.
        Single(SamplingMessageContentBlock),
        /// Several content blocks.
        Multiple(Vec<SamplingMessageContentBlock>),
    }
    select |v| {
        Ok(if v.is_array() { Kind::Multiple } else { Kind::Single })
    }
}

impl SamplingMessageContent {
    /// The blocks as a slice, whichever form was used.
    pub fn blocks(&self) -> &[SamplingMessageContentBlock] {
        match self {
            Self::Multiple(blocks) => blocks,
            Self::Single(block) => std::slice::from_ref(block),
        }
    }
}

tagged_union! {
    /// A content block of a sampling message, tagged by `type`.
    pub enum SamplingMessageContentBlock by "type" {
        /// `"text"`
        Text(TextContent) = "text",
        /// `"image"`
        Image(ImageContent) = "image",
        /// `"audio"`
        Audio(AudioContent) = "audio",
        /// `"tool_use"`
        ToolUse(ToolUseContent) = "tool_use",
        /// `"tool_result"`
        ToolResult(ToolResultContent) = "tool_result",
    }
}

/// A request from the assistant to call a tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Always `"tool_use"`.
    pub r#type: ToolUseType,
    /// Unique id of this tool use, matched by the corresponding result.
    pub id: String,
    /// The name of the tool to call.
    pub name: String,
    /// The arguments, conforming to the tool's input schema.
    pub input: JsonObject,
    /// Metadata; clients should preserve it in later sampling requests.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

/// The result of a tool use, sent by the user back to the assistant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// Always `"tool_result"`.
    pub r#type: ToolResultType,
    /// The id of the tool use this result answers.
    pub tool_use_id: String,
    /// The unstructured result, like `CallToolResult.content`.
    pub content: Vec<ContentBlock>,
    /// Optional structured result (any JSON value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed; false when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata; clients should preserve it in later sampling requests.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

/// How the model may use tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    Auto,
    /// The model must not use tools.
    None,
    /// The model must use at least one tool.
    Required,
}

/// Tool selection behaviour for a sampling request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolChoice {
    /// How the model may use tools; `auto` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// A hint for model selection. Undeclared keys are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A (sub)string of a model name, e.g. `claude-3-5-sonnet` or a family like `claude`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Other keys, left to the client to interpret.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The server's model-selection preferences for sampling: ordered name
/// hints and priorities from 0 to 1. All of it is advisory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, evaluated in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "crate::types::num::opt_f64")]
    pub cost_priority: Option<f64>,
    /// How much speed (latency) matters (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "crate::types::num::opt_f64")]
    pub speed_priority: Option<f64>,
    /// How much intelligence matters (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "crate::types::num::opt_f64")]
    pub intelligence_priority: Option<f64>,
}
