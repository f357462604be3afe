//! Server discovery (`server/discover`).

use serde::{Deserialize, Serialize};

use super::{CacheScope, JsonObject, RequestParams, ResultMetaObject, ResultType, ServerCapabilities};

request_type! {
    /// Asks the server for its supported protocol versions, capabilities and
    /// other metadata. Servers must implement it; clients may skip it.
    pub struct DiscoverRequest { method: DiscoverMethod = "server/discover", params: RequestParams }
}

/// The result of a `server/discover` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Result metadata (typically with `serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// Protocol versions the server supports; the client picks one for later requests.
    pub supported_versions: Vec<String>,
    /// The capabilities of the server.
    pub capabilities: ServerCapabilities,
    /// Natural-language guidance about the server, e.g. for a system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
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
    /// A successful response to a `server/discover` request.
    pub struct DiscoverResultResponse { result: DiscoverResult }
}
