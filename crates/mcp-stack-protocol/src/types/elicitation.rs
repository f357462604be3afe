//! Elicitation (`elicitation/create`): the server asks the user, via the
//! client, for information through a form or by visiting a URL.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::macros::str_field;
use super::{JsonObject, PrimitiveSchemaDefinition};

const_str! {
    /// Marker for the method name `elicitation/create`.
    ElicitMethod = "elicitation/create"
}
const_str! {
    /// Marker for `"mode": "form"`.
    ElicitFormMode = "form"
}
const_str! {
    /// Marker for `"mode": "url"`.
    ElicitUrlMode = "url"
}
const_str! {
    /// Marker for `"type": "object"`.
    ObjectSchemaType = "object"
}

/// A request from the server to elicit information from the user via the
/// client. It travels inside an `InputRequiredResult`, without JSON-RPC envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitRequest {
    /// Always `elicitation/create`.
    pub method: ElicitMethod,
    /// What to ask for.
    pub params: ElicitRequestParams,
}

impl ElicitRequest {
    /// Method name of this request on the wire.
    pub const METHOD: &'static str = "elicitation/create";

    /// Builds the request.
    pub fn new(params: impl Into<ElicitRequestParams>) -> Self {
        Self { method: ElicitMethod, params: params.into() }
    }
}

union_enum! {
    /// Parameters of an elicitation: form mode (the default when `mode` is
    /// absent) or URL mode.
    pub enum ElicitRequestParams {
        /// Ask for non-sensitive data through a form.
        Form(ElicitRequestFormParams),
        /// Send the user to a URL.
        Url(ElicitRequestUrlParams),
    }
    select |v| {
        match str_field(v, "mode") {
            None | Some("form") => Ok(Kind::Form),
            Some("url") => Ok(Kind::Url),
            Some(other) => Err(format!("unknown elicitation mode {other:?}")),
        }
    }
}

/// Parameters for eliciting non-sensitive information through a form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// The mode; `"form"`, which is also the meaning when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ElicitFormMode>,
    /// Message to show the user, describing what is requested.
    pub message: String,
    /// The form: a restricted JSON Schema with primitive top-level properties only.
    pub requested_schema: ElicitRequestedSchema,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitRequestFormParams {
    /// Form parameters with an explicit `"mode": "form"`.
    pub fn new(message: impl Into<String>, requested_schema: ElicitRequestedSchema) -> Self {
        Self { mode: Some(ElicitFormMode), message: message.into(), requested_schema, extra: JsonObject::new() }
    }
}

/// The restricted JSON Schema of an elicitation form: an object whose
/// properties are all primitive (no nesting).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitRequestedSchema {
    /// Optional `$schema` dialect URI.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    pub r#type: ObjectSchemaType,
    /// The form fields.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// Names of the fields that must be filled in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

/// Parameters for eliciting information by sending the user to a URL
/// (for sensitive data that must not pass through the client).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitRequestUrlParams {
    /// Always `"url"`.
    pub mode: ElicitUrlMode,
    /// Message to show the user, explaining why the interaction is needed.
    pub message: String,
    /// The URL the user should navigate to.
    pub url: String,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitRequestUrlParams {
    /// URL-mode parameters.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        Self { mode: ElicitUrlMode, message: message.into(), url: url.into(), extra: JsonObject::new() }
    }
}

/// How the user answered an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user submitted the form or confirmed.
    Accept,
    /// The user dismissed without an explicit choice.
    Cancel,
    /// The user explicitly declined.
    Decline,
}

/// One submitted form value.
///
/// The schema allows strings, integers, booleans and string arrays; plain
/// numbers are accepted too since number fields may hold fractions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitValue {
    /// A string.
    String(String),
    /// An integer.
    Integer(i64),
    /// A non-integer number.
    Number(f64),
    /// A boolean.
    Boolean(bool),
    /// Several selected strings (multi-select enums).
    StringArray(Vec<String>),
}

/// The client's answer to an `elicitation/create` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted form data; only for `accept` in form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitResult {
    /// A result with the given action and no content.
    pub fn new(action: ElicitAction) -> Self {
        Self { action, content: None, extra: JsonObject::new() }
    }
}
