//! JSON-RPC error objects and the MCP-specific error responses.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ClientCapabilities, Error, JsonRpcErrorResponse, JsonRpcVersion, RequestId};

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
