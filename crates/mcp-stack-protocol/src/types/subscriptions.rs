//! Subscriptions (`subscriptions/listen`): a long-lived channel for
//! notifications outside any specific request.

use serde::{Deserialize, Serialize};

use super::{JsonObject, NotificationMetaObject, RequestMetaObject, ResultType, SubscriptionsListenResultMetaObject};

/// The notification types a client opts in to on a `subscriptions/listen`
/// request. Each type is opt-in; the server must not send any other.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// Receive `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// Receive `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// Receive `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// Receive `notifications/resources/updated` for these resource URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Receive `notifications/tasks` for these task ids (the tasks extension,
    /// `io.modelcontextprotocol/tasks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
    /// Every other key (other extensions' filters), kept as is.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters for a `subscriptions/listen` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The notifications the client opts in to on this stream.
    pub notifications: SubscriptionFilter,
}

request_type! {
    /// Opens a long-lived channel for notifications outside any specific
    /// request (replaces the former HTTP GET stream).
    pub struct SubscriptionsListenRequest {
        method: SubscriptionsListenMethod = "subscriptions/listen",
        params: SubscriptionsListenRequestParams,
    }
}

/// The result of a `subscriptions/listen` request, sent when the server ends
/// the subscription gracefully (for example on shutdown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Result metadata, naming the subscription that ended.
    #[serde(rename = "_meta")]
    pub meta: SubscriptionsListenResultMetaObject,
    /// How to parse the result; `complete` for this type.
    #[serde(default)]
    pub result_type: ResultType,
    /// Every other key (extensions such as tasks or skills, fields newer than
    /// this schema), kept as is so round trips are lossless.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionsListenResult {
    /// The result closing the subscription `subscription_id`.
    pub fn new(subscription_id: impl Into<super::RequestId>) -> Self {
        Self {
            meta: SubscriptionsListenResultMetaObject::new(subscription_id),
            result_type: ResultType::Complete,
            extra: JsonObject::new(),
        }
    }
}

result_response! {
    /// A successful response to a `subscriptions/listen` request, sent when
    /// the server tears the subscription down gracefully.
    pub struct SubscriptionsListenResultResponse { result: SubscriptionsListenResult }
}

/// Parameters for a `notifications/subscriptions/acknowledged` notification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// Notification metadata (carries the subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
    /// The requested notification types the server agreed to send (only
    /// those it supports).
    pub notifications: SubscriptionFilter,
}

notification_type! {
    /// Confirms that a `subscriptions/listen` subscription is established and
    /// tells which notification types will be delivered.
    pub struct SubscriptionsAcknowledgedNotification {
        method: SubscriptionsAcknowledgedNotificationMethod = "notifications/subscriptions/acknowledged",
        params: SubscriptionsAcknowledgedNotificationParams,
    }
}
