//! Roots (`roots/list`): directories or files the client exposes to the server.

use serde::{Deserialize, Serialize};

use super::{JsonObject, MetaObject};

const_str! {
    /// Marker for the method name `roots/list`.
    ListRootsMethod = "roots/list"
}

/// A request from the server for the client's root URIs. It travels inside
/// an `InputRequiredResult`, without JSON-RPC envelope.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsRequest {
    /// Always `roots/list`.
    pub method: ListRootsMethod,
    /// Optional parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<ListRootsRequestParams>,
    /// Other properties (for example an `id`), kept as is.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ListRootsRequest {
    /// Method name of this request on the wire.
    pub const METHOD: &'static str = "roots/list";

    /// Builds the request without parameters.
    pub fn new() -> Self {
        Self::default()
    }
}

/// The `params` of a [`ListRootsRequest`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsRequestParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

/// The client's answer to a `roots/list` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A root directory or file the server can operate on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// The URI of the root; currently it must start with `file://`.
    pub uri: String,
    /// Optional human-readable name of the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl Root {
    /// A root with a URI and no name.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), ..Self::default() }
    }
}
