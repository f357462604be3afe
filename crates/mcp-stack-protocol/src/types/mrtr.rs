//! Multi-round-trip requests: a server answers a request with an
//! [`InputRequiredResult`] asking the client for more input (sampling,
//! roots, elicitation); the client retries the request with the answers in
//! `inputResponses` and the echoed `requestState`.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::macros::has_field;
use super::{
    CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult, JsonObject, ListRootsRequest,
    ListRootsResult, RequestMetaObject, ResultMetaObject, ResultType,
};

tagged_union! {
    /// A server-initiated request the client must fulfil (chosen by `method`).
    pub enum InputRequest by "method" {
        /// `sampling/createMessage`
        CreateMessage(CreateMessageRequest) = "sampling/createMessage",
        /// `roots/list`
        ListRoots(ListRootsRequest) = "roots/list",
        /// `elicitation/create`
        Elicit(ElicitRequest) = "elicitation/create",
    }
}

/// Server-initiated requests the client must fulfil, keyed by
/// server-assigned identifiers.
pub type InputRequests = BTreeMap<String, InputRequest>;

union_enum! {
    /// The client's result for one input request. The variant is chosen by
    /// shape: `action` means elicitation, `roots` means roots, otherwise sampling.
    pub enum InputResponse {
        /// Result of `sampling/createMessage`.
        CreateMessage(CreateMessageResult),
        /// Result of `roots/list`.
        ListRoots(ListRootsResult),
        /// Result of `elicitation/create`.
        Elicit(ElicitResult),
    }
    select |v| {
        if has_field(v, "action") {
            Ok(Kind::Elicit)
        } else if has_field(v, "roots") {
            Ok(Kind::ListRoots)
        } else if has_field(v, "model") || has_field(v, "role") {
            Ok(Kind::CreateMessage)
        } else {
            Err("input response is none of CreateMessageResult, ListRootsResult, ElicitResult".to_owned())
        }
    }
}

/// The client's results for server-initiated requests, keyed like the
/// matching [`InputRequests`].
pub type InputResponses = BTreeMap<String, InputResponse>;

/// Sent by the server when it needs more input before it can complete the
/// request. At least one of `inputRequests` or `requestState` must be present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `input_required` for this type.
    pub result_type: ResultType,
    /// Requests the client must fulfil before retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client must echo back when retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl InputRequiredResult {
    /// An input-required result with the given requests and state.
    pub fn new(input_requests: Option<InputRequests>, request_state: Option<String>) -> Self {
        Self {
            meta: None,
            result_type: ResultType::InputRequired,
            input_requests,
            request_state,
            extra: JsonObject::new(),
        }
    }
}

/// The params fields a client adds when retrying a request after an
/// [`InputRequiredResult`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Answers to the server's input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` from the server, echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// The result of a request that may instead ask the client for more input:
/// either an [`InputRequiredResult`] (`resultType: "input_required"`) or the
/// request's normal result `T`.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // wire type: short-lived, boxing would only hurt ergonomics
pub enum ResultOrInputRequired<T> {
    /// The server needs more input before it can complete the request.
    InputRequired(InputRequiredResult),
    /// The request completed.
    Complete(T),
}

impl<T> ResultOrInputRequired<T> {
    /// The completed result, if any.
    pub fn complete(self) -> Option<T> {
        match self {
            Self::Complete(t) => Some(t),
            Self::InputRequired(_) => None,
        }
    }
}

impl<T: Serialize> Serialize for ResultOrInputRequired<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Self::InputRequired(r) => r.serialize(serializer),
            Self::Complete(t) => t.serialize(serializer),
        }
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for ResultOrInputRequired<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = Value::deserialize(deserializer)?;
        if value.get("resultType").and_then(Value::as_str) == Some(ResultType::InputRequired.as_str()) {
            InputRequiredResult::deserialize(value).map(Self::InputRequired).map_err(D::Error::custom)
        } else {
            T::deserialize(value).map(Self::Complete).map_err(D::Error::custom)
        }
    }
}

impl<T> From<InputRequiredResult> for ResultOrInputRequired<T> {
    fn from(value: InputRequiredResult) -> Self {
        Self::InputRequired(value)
    }
}
