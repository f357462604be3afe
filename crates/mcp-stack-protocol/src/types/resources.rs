//! Resources: listing, templates, reading, contents and change notifications.

use serde::{Deserialize, Serialize};

use super::{
    Annotations, CacheScope, Cursor, Icon, InputResponses, JsonObject, MetaObject, NotificationMetaObject,
    NotificationParams, PaginatedRequestParams, RequestMetaObject, ResourceContents, ResultMetaObject,
    ResultOrInputRequired, ResultType,
};

/// A known resource that the server is capable of reading.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The URI of the resource.
    pub uri: String,
    /// Identifier for programmatic use; the display fallback when `title` is absent.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource represents; helps the model understand it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of the resource, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size of the raw content in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Sized icons a client can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Resource {
    /// A resource with only a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self { uri: uri.into(), name: name.into(), ..Self::default() }
    }
}

/// A template (RFC 6570) describing resources available on the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// URI template used to build resource URIs.
    pub uri_template: String,
    /// Identifier for programmatic use; the display fallback when `title` is absent.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the template is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every matching resource, if they all share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sized icons a client can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Common params for resource-related requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The URI of the resource; its interpretation is up to the server.
    pub uri: String,
}

/// Parameters for a `resources/read` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The URI of the resource; its interpretation is up to the server.
    pub uri: String,
    /// Answers to the server's earlier input requests, when retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state from an earlier `InputRequiredResult`, echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

request_type! {
    /// Sent from the client to read a specific resource URI.
    pub struct ReadResourceRequest { method: ReadResourceMethod = "resources/read", params: ReadResourceRequestParams }
}

/// The result of a `resources/read` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The contents of the resource and any sub-resources.
    pub contents: Vec<ResourceContents>,
    /// How long, in milliseconds, the client may cache the response.
    ///
    /// Required by the schema and servers must send it, but optional here
    /// because the official examples (and older servers) omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the response; optional for the same reason as `ttl_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ReadResourceResult {
    /// A result with the given contents and caching hints.
    pub fn new(contents: Vec<ResourceContents>, ttl_ms: u64, cache_scope: CacheScope) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            contents,
            ttl_ms: Some(ttl_ms),
            cache_scope: Some(cache_scope),
            extra: JsonObject::new(),
        }
    }
}

result_response! {
    /// A successful response to a `resources/read` request.
    pub struct ReadResourceResultResponse { result: ResultOrInputRequired<ReadResourceResult> }
}

request_type! {
    /// Sent from the client to list the resources the server has.
    pub struct ListResourcesRequest { method: ListResourcesMethod = "resources/list", params: PaginatedRequestParams }
}

/// The result of a `resources/list` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The resources.
    pub resources: Vec<Resource>,
    /// Opaque position after the last returned item; present if there may be more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
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
    /// A successful response to a `resources/list` request.
    pub struct ListResourcesResultResponse { result: ListResourcesResult }
}

request_type! {
    /// Sent from the client to list the resource templates the server has.
    pub struct ListResourceTemplatesRequest {
        method: ListResourceTemplatesMethod = "resources/templates/list",
        params: PaginatedRequestParams,
    }
}

/// The result of a `resources/templates/list` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The resource templates.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Opaque position after the last returned item; present if there may be more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
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
    /// A successful response to a `resources/templates/list` request.
    pub struct ListResourceTemplatesResultResponse { result: ListResourceTemplatesResult }
}

notification_type! {
    /// Tells the client that the list of readable resources changed. Only
    /// delivered on a `subscriptions/listen` stream that opted in.
    pub struct ResourceListChangedNotification {
        method: ResourceListChangedNotificationMethod = "notifications/resources/list_changed",
        params?: NotificationParams,
    }
}

/// Parameters for a `notifications/resources/updated` notification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
    /// URI of the updated resource (possibly a sub-resource of the subscribed one).
    pub uri: String,
}

notification_type! {
    /// Tells the client that a subscribed resource changed and may need to be
    /// read again.
    pub struct ResourceUpdatedNotification {
        method: ResourceUpdatedNotificationMethod = "notifications/resources/updated",
        params: ResourceUpdatedNotificationParams,
    }
}
