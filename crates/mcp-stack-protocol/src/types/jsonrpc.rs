//! JSON-RPC envelopes, the base request/notification/result shapes, the JSON-RPC error
//! objects and the MCP-specific error responses.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::macros::has_field;
use super::{
    CacheScope, ClientCapabilities, Cursor, JsonObject, NotificationMetaObject, RequestId, RequestMetaObject,
    ResultMetaObject, ResultType,
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

// JSON-RPC error objects and the MCP-specific error responses.

/// Defines a standard JSON-RPC error object with a fixed code.
macro_rules! fixed_code_error {
    ($(#[$m:meta])* $name:ident, $code_ty:ident = $code:literal) => {
        const_int! {
            #[doc = concat!("Marker for the error code `", stringify!($code), "`.")]
            $code_ty = $code
        }

        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            #[doc = concat!("The error code; always `", stringify!($code), "`.")]
            pub code: $code_ty,
            /// A short, single-sentence description of the error.
            pub message: String,
            /// Additional sender-defined information about the error.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub data: Option<Value>,
        }

        impl $name {
            /// The error code of this error.
            pub const CODE: i64 = $code;

            /// An error with the given message and no data.
            pub fn new(message: impl Into<String>) -> Self {
                Self { code: $code_ty, message: message.into(), data: None }
            }
        }

        impl From<$name> for Error {
            fn from(value: $name) -> Self {
                Error { code: $code, message: value.message, data: value.data }
            }
        }
    };
}

fixed_code_error! {
    /// Invalid JSON was received and could not be parsed.
    ParseError, ParseErrorCode = -32700
}

fixed_code_error! {
    /// The message is not a valid JSON-RPC request object.
    InvalidRequestError, InvalidRequestErrorCode = -32600
}

fixed_code_error! {
    /// The requested method does not exist or is not available (for example,
    /// the server lacks the matching capability).
    MethodNotFoundError, MethodNotFoundErrorCode = -32601
}

fixed_code_error! {
    /// The method parameters are invalid or malformed (unknown tool or prompt,
    /// invalid cursor, arguments failing validation, ...).
    InvalidParamsError, InvalidParamsErrorCode = -32602
}

fixed_code_error! {
    /// The receiver hit an unexpected condition that prevented it from
    /// fulfilling the request.
    InternalError, InternalErrorCode = -32603
}

const_int! {
    /// Marker for the error code `-32020` (header mismatch).
    HeaderMismatchErrorCode = -32020
}

const_int! {
    /// Marker for the error code `-32021` (missing required client capability).
    MissingRequiredClientCapabilityErrorCode = -32021
}

const_int! {
    /// Marker for the error code `-32022` (unsupported protocol version).
    UnsupportedProtocolVersionErrorCode = -32022
}

/// Error response sent when HTTP header values do not match the request body,
/// or required headers are missing or malformed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeaderMismatchError {
    /// JSON-RPC version; always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Identifier of the request this responds to, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error object.
    pub error: HeaderMismatchErrorObject,
}

/// The error object of a [`HeaderMismatchError`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeaderMismatchErrorObject {
    /// The error code; always `-32020`.
    pub code: HeaderMismatchErrorCode,
    /// A short, single-sentence description of the error.
    pub message: String,
    /// Additional sender-defined information about the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl HeaderMismatchError {
    /// Builds the error response.
    pub fn new(id: Option<RequestId>, message: impl Into<String>) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            error: HeaderMismatchErrorObject { code: HeaderMismatchErrorCode, message: message.into(), data: None },
        }
    }
}

impl From<HeaderMismatchError> for JsonRpcErrorResponse {
    fn from(value: HeaderMismatchError) -> Self {
        let e = value.error;
        JsonRpcErrorResponse::new(
            value.id,
            Error { code: HeaderMismatchErrorCode::VALUE, message: e.message, data: e.data },
        )
    }
}

/// Error response sent when a request needs a capability the client did not
/// declare in its `clientCapabilities` (HTTP status 400).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingRequiredClientCapabilityError {
    /// JSON-RPC version; always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Identifier of the request this responds to, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error object.
    pub error: MissingRequiredClientCapabilityErrorObject,
}

/// The error object of a [`MissingRequiredClientCapabilityError`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingRequiredClientCapabilityErrorObject {
    /// The error code; always `-32021`.
    pub code: MissingRequiredClientCapabilityErrorCode,
    /// A short, single-sentence description of the error.
    pub message: String,
    /// Which capabilities are required.
    pub data: MissingRequiredClientCapabilityData,
}

/// The `data` of a [`MissingRequiredClientCapabilityError`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the server requires from the client for this request.
    pub required_capabilities: ClientCapabilities,
}

impl MissingRequiredClientCapabilityError {
    /// Builds the error response.
    pub fn new(id: Option<RequestId>, message: impl Into<String>, required_capabilities: ClientCapabilities) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            error: MissingRequiredClientCapabilityErrorObject {
                code: MissingRequiredClientCapabilityErrorCode,
                message: message.into(),
                data: MissingRequiredClientCapabilityData { required_capabilities },
            },
        }
    }
}

impl From<MissingRequiredClientCapabilityError> for JsonRpcErrorResponse {
    fn from(value: MissingRequiredClientCapabilityError) -> Self {
        let e = value.error;
        JsonRpcErrorResponse::new(
            value.id,
            Error {
                code: MissingRequiredClientCapabilityErrorCode::VALUE,
                message: e.message,
                data: serde_json::to_value(e.data).ok(),
            },
        )
    }
}

/// Error response sent when the requested protocol version is unknown or
/// unsupported (HTTP status 400).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionError {
    /// JSON-RPC version; always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Identifier of the request this responds to, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error object.
    pub error: UnsupportedProtocolVersionErrorObject,
}

/// The error object of an [`UnsupportedProtocolVersionError`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionErrorObject {
    /// The error code; always `-32022`.
    pub code: UnsupportedProtocolVersionErrorCode,
    /// A short, single-sentence description of the error.
    pub message: String,
    /// The requested and the supported versions.
    pub data: UnsupportedProtocolVersionData,
}

/// The `data` of an [`UnsupportedProtocolVersionError`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionData {
    /// The protocol version the client requested.
    pub requested: String,
    /// The versions the server supports; the client should retry with one of them.
    pub supported: Vec<String>,
}

impl UnsupportedProtocolVersionError {
    /// Builds the error response.
    pub fn new(
        id: Option<RequestId>,
        message: impl Into<String>,
        requested: impl Into<String>,
        supported: Vec<String>,
    ) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            error: UnsupportedProtocolVersionErrorObject {
                code: UnsupportedProtocolVersionErrorCode,
                message: message.into(),
                data: UnsupportedProtocolVersionData { requested: requested.into(), supported },
            },
        }
    }
}

impl From<UnsupportedProtocolVersionError> for JsonRpcErrorResponse {
    fn from(value: UnsupportedProtocolVersionError) -> Self {
        let e = value.error;
        JsonRpcErrorResponse::new(
            value.id,
            Error {
                code: UnsupportedProtocolVersionErrorCode::VALUE,
                message: e.message,
                data: serde_json::to_value(e.data).ok(),
            },
        )
    }
}
