//! Argument autocompletion (`completion/complete`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{JsonObject, RequestMetaObject, ResultMetaObject, ResultType};

const_str! {
    /// Marker for `"type": "ref/prompt"`.
    PromptReferenceType = "ref/prompt"
}
const_str! {
    /// Marker for `"type": "ref/resource"`.
    ResourceTemplateReferenceType = "ref/resource"
}

/// Identifies a prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptReference {
    /// Always `"ref/prompt"`.
    pub r#type: PromptReferenceType,
    /// Identifier for programmatic use; the display fallback when `title` is absent.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A reference to a resource or resource template definition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateReference {
    /// Always `"ref/resource"`.
    pub r#type: ResourceTemplateReferenceType,
    /// The URI or URI template of the resource.
    pub uri: String,
}

tagged_union! {
    /// What a completion request completes arguments for (the `ref` field).
    pub enum CompleteReference by "type" {
        /// `"ref/prompt"`: a prompt's arguments.
        Prompt(PromptReference) = "ref/prompt",
        /// `"ref/resource"`: a resource template's variables.
        ResourceTemplate(ResourceTemplateReference) = "ref/resource",
    }
}

/// The argument being completed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompleteArgument {
    /// The name of the argument.
    pub name: String,
    /// The value typed so far, used for completion matching.
    pub value: String,
}

/// Extra context for a completion request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompleteContext {
    /// Previously-resolved variables of the URI template or prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// Parameters for a `completion/complete` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The prompt or resource template the argument belongs to.
    pub r#ref: CompleteReference,
    /// The argument being completed.
    pub argument: CompleteArgument,
    /// Extra context for the completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
}

request_type! {
    /// A request from the client to the server for completion options.
    pub struct CompleteRequest { method: CompleteMethod = "completion/complete", params: CompleteRequestParams }
}

/// The completion options of a [`CompleteResult`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The completion values (at most 100).
    pub values: Vec<String>,
    /// Total number of options available, which may exceed `values.len()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more options exist beyond those returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// The result of a `completion/complete` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The completion options.
    pub completion: Completion,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CompleteResult {
    /// A result with the given values and no totals.
    pub fn new(values: Vec<String>) -> Self {
        Self { completion: Completion { values, ..Completion::default() }, ..Self::default() }
    }
}

result_response! {
    /// A successful response to a `completion/complete` request.
    pub struct CompleteResultResponse { result: CompleteResult }
}
