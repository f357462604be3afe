//! JSON-RPC envelopes and the base request/notification/result shapes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::macros::has_field;
use super::{
    CacheScope, Cursor, JsonObject, NotificationMetaObject, RequestId, RequestMetaObject, ResultMetaObject, ResultType,
};

const_str! {
    /// The JSON-RPC version marker: serializes as `"2.0"` and rejects anything else.
    JsonRpcVersion = "2.0"
}

/// A request that expects a response (any method).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcRequest {
    /// JSON-RPC version; always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Identifier of the request, echoed by its response.
    pub id: RequestId,
    /// The method to invoke.
    pub method: String,
    /// Parameters of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<JsonObject>,
}

impl JsonRpcRequest {
    /// Builds a request.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: Option<JsonObject>) -> Self {
        Self { jsonrpc: JsonRpcVersion, id: id.into(), method: method.into(), params }
    }
}

/// A notification, which does not expect a response (any method).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcNotification {
    /// JSON-RPC version; always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The notification's method.
    pub method: String,
    /// Parameters of the notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<JsonObject>,
}

impl JsonRpcNotification {
    /// Builds a notification.
    pub fn new(method: impl Into<String>, params: Option<JsonObject>) -> Self {
        Self { jsonrpc: JsonRpcVersion, method: method.into(), params }
    }
}

/// A successful (non-error) response to a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResultResponse {
    /// JSON-RPC version; always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Identifier of the request this responds to.
    pub id: RequestId,
    /// The result, as a generic result object.
    pub result: BaseResult,
}

impl JsonRpcResultResponse {
    /// Builds a result response.
    pub fn new(id: impl Into<RequestId>, result: BaseResult) -> Self {
        Self { jsonrpc: JsonRpcVersion, id: id.into(), result }
    }
}

/// A response to a request that indicates an error occurred.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// JSON-RPC version; always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Identifier of the request this responds to, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error that occurred.
    pub error: Error,
}

impl JsonRpcErrorResponse {
    /// Builds an error response.
    pub fn new(id: Option<RequestId>, error: Error) -> Self {
        Self { jsonrpc: JsonRpcVersion, id, error }
    }
}

union_enum! {
    /// A response to a request: either a result or an error.
    pub enum JsonRpcResponse {
        /// A successful response.
        Result(JsonRpcResultResponse),
        /// An error response.
        Error(JsonRpcErrorResponse),
    }
    select |v| {
        if has_field(v, "error") {
            Ok(Kind::Error)
        } else if has_field(v, "result") {
            Ok(Kind::Result)
        } else {
            Err("JSON-RPC response has neither `result` nor `error`".to_owned())
        }
    }
}

union_enum! {
    /// Any JSON-RPC message that can be decoded off the wire or encoded to be sent.
    pub enum JsonRpcMessage {
        /// A request (has `method` and `id`).
        Request(JsonRpcRequest),
        /// A notification (has `method`, no `id`).
        Notification(JsonRpcNotification),
        /// A successful response (has `result`).
        ResultResponse(JsonRpcResultResponse),
        /// An error response (has `error`).
        ErrorResponse(JsonRpcErrorResponse),
    }
    select |v| {
        if has_field(v, "method") {
            if has_field(v, "id") {
                Ok(Kind::Request)
            } else {
                Ok(Kind::Notification)
            }
        } else if has_field(v, "error") {
            Ok(Kind::ErrorResponse)
        } else if has_field(v, "result") {
            Ok(Kind::ResultResponse)
        } else {
            Err("not a JSON-RPC message: no `method`, `result` or `error`".to_owned())
        }
    }
}

impl From<JsonRpcResponse> for JsonRpcMessage {
    fn from(value: JsonRpcResponse) -> Self {
        match value {
            JsonRpcResponse::Result(r) => Self::ResultResponse(r),
            JsonRpcResponse::Error(e) => Self::ErrorResponse(e),
        }
    }
}

/// The base shape of a request, without the JSON-RPC envelope fields (schema: `Request`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseRequest {
    /// The method to invoke.
    pub method: String,
    /// Parameters of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<JsonObject>,
}

/// The base shape of a notification, without the JSON-RPC envelope fields (schema:
/// `Notification`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseNotification {
    /// The notification's method.
    pub method: String,
    /// Parameters of the notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<JsonObject>,
}

/// Common result fields (schema: `Result`). Any other property is kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; treated as `complete` when absent.
    #[serde(default)]
    pub result_type: ResultType,
    /// Every other property of the result.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A result that indicates success but carries no data.
pub type EmptyResult = BaseResult;

/// Common params for any request: just the request `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestParams {
    /// Request metadata (protocol version, client capabilities, ...).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
}

/// Common params for any notification: just an optional `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
}

/// Common params for paginated requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Opaque pagination position; results start after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
}

/// A paginated request with any method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequest {
    /// JSON-RPC version; always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Identifier of the request, echoed by its response.
    pub id: RequestId,
    /// The method to invoke.
    pub method: String,
    /// Pagination parameters.
    pub params: PaginatedRequestParams,
}

/// Common fields of a paginated result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// Opaque position after the last returned item; present if there may be more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// How to parse the result; treated as `complete` when absent.
    #[serde(default)]
    pub result_type: ResultType,
}

/// A result that carries a time-to-live hint for client-side caching.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheableResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// Who may cache the response.
    pub cache_scope: CacheScope,
    /// How to parse the result; treated as `complete` when absent.
    #[serde(default)]
    pub result_type: ResultType,
    /// How long, in milliseconds, the client may cache the response.
    pub ttl_ms: u64,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Error {
    /// The error type that occurred.
    pub code: i64,
    /// A short, single-sentence description of the error.
    pub message: String,
    /// Additional sender-defined information about the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl Error {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = crate::error::code::PARSE_ERROR;
    /// The JSON is not a valid request object.
    pub const INVALID_REQUEST: i64 = crate::error::code::INVALID_REQUEST;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = crate::error::code::METHOD_NOT_FOUND;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = crate::error::code::INVALID_PARAMS;
    /// Internal error of the receiver.
    pub const INTERNAL_ERROR: i64 = crate::error::code::INTERNAL_ERROR;
    /// HTTP headers do not match the request body.
    pub const HEADER_MISMATCH: i64 = crate::error::code::HEADER_MISMATCH;
    /// The request needs a client capability that was not declared.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = crate::error::code::MISSING_REQUIRED_CLIENT_CAPABILITY;
    /// The requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = crate::error::code::UNSUPPORTED_PROTOCOL_VERSION;

    /// An error with a code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    /// Returns the error with `data` attached.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for Error {}
