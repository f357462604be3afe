//! The `_meta` objects attached to requests, results and notifications.
//!
//! Each typed meta object has fields for the keys MCP reserves plus an
//! `extra` map that keeps every other key, so round trips are lossless.

use serde::{Deserialize, Serialize};

use super::{ClientCapabilities, Implementation, JsonObject, LoggingLevel, ProgressToken, RequestId};

/// Contents of a generic `_meta` field: free-form metadata keyed by
/// (optionally prefixed) names. Prefixes whose second label is
/// `modelcontextprotocol` or `mcp` are reserved for MCP.
pub type MetaObject = JsonObject;

/// The `_meta` of a request: the generic meta object plus request-specific keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestMetaObject {
    /// The client's capabilities for this specific request; an empty object
    /// means no optional capability. Servers must not infer them from earlier requests.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub client_capabilities: ClientCapabilities,
    /// The client software making the request (self-reported, informational).
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Implementation>,
    /// Desired log level for this request; without it the server sends no log messages.
    #[serde(rename = "io.modelcontextprotocol/logLevel", default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<LoggingLevel>,
    /// The MCP protocol version used for this request.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: String,
    /// If set, the caller asks for progress notifications carrying this token.
    #[serde(rename = "progressToken", default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
    /// Every other key, kept as is.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl RequestMetaObject {
    /// A request meta object with the two required keys.
    pub fn new(protocol_version: impl Into<String>, client_capabilities: ClientCapabilities) -> Self {
        Self { protocol_version: protocol_version.into(), client_capabilities, ..Self::default() }
    }
}

/// The `_meta` of a result: the generic meta object plus result-specific keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultMetaObject {
    /// The server software producing the response (self-reported, informational).
    #[serde(rename = "io.modelcontextprotocol/serverInfo", default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Implementation>,
    /// Every other key, kept as is.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `_meta` of a notification: the generic meta object plus
/// notification-specific keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationMetaObject {
    /// The subscription stream (the id of its `subscriptions/listen` request)
    /// this notification was delivered on; absent outside such streams.
    #[serde(rename = "io.modelcontextprotocol/subscriptionId", default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<RequestId>,
    /// Every other key, kept as is.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `_meta` of a [`SubscriptionsListenResult`](crate::types::SubscriptionsListenResult):
/// a result meta object that also names the subscription stream it closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenResultMetaObject {
    /// The server software producing the response (self-reported, informational).
    #[serde(rename = "io.modelcontextprotocol/serverInfo", default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Implementation>,
    /// The subscription stream this response closes.
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub subscription_id: RequestId,
    /// Every other key, kept as is.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionsListenResultMetaObject {
    /// A meta object naming the closed subscription.
    pub fn new(subscription_id: impl Into<RequestId>) -> Self {
        Self { server_info: None, subscription_id: subscription_id.into(), extra: JsonObject::new() }
    }
}
