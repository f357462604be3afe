//! Cancellation and progress notifications, and the unions of the
//! notifications each side may send.

use serde::{Deserialize, Serialize};

use super::{
    LoggingMessageNotification, NotificationMetaObject, ProgressToken, PromptListChangedNotification, RequestId,
    ResourceListChangedNotification, ResourceUpdatedNotification, SubscriptionsAcknowledgedNotification,
    ToolListChangedNotification,
};

/// Parameters for a `notifications/cancelled` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
    /// The id of the request to cancel, previously issued by the sender.
    pub request_id: RequestId,
    /// Why the request is cancelled; may be logged or shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

notification_type! {
    /// Cancels a request the sender issued earlier. On stdio the server also
    /// sends it, only to end a `subscriptions/listen` stream. It may arrive
    /// after the request finished; the receiver should then ignore it.
    pub struct CancelledNotification {
        method: CancelledNotificationMethod = "notifications/cancelled",
        params: CancelledNotificationParams,
    }
}

impl CancelledNotification {
    /// A cancellation of `request_id` with an optional reason.
    pub fn cancel(request_id: impl Into<RequestId>, reason: Option<String>) -> Self {
        Self::new(CancelledNotificationParams { meta: None, request_id: request_id.into(), reason })
    }
}

/// Parameters for a `notifications/progress` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
    /// The token given in the original request.
    pub progress_token: ProgressToken,
    /// Progress so far; it should increase with every notification.
    #[serde(serialize_with = "crate::types::num::f64")]
    pub progress: f64,
    /// Total progress required, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "crate::types::num::opt_f64")]
    pub total: Option<f64>,
    /// A message describing the current progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ProgressNotificationParams {
    /// Parameters with a token and progress value.
    pub fn new(progress_token: ProgressToken, progress: f64) -> Self {
        Self { meta: None, progress_token, progress, total: None, message: None }
    }
}

notification_type! {
    /// Reports progress of a long-running request.
    pub struct ProgressNotification {
        method: ProgressNotificationMethod = "notifications/progress",
        params: ProgressNotificationParams,
    }
}

tagged_union! {
    /// Any notification a client sends (chosen by `method`).
    pub enum ClientNotification by "method" {
        /// `notifications/cancelled`
        Cancelled(CancelledNotification) = "notifications/cancelled",
    }
}

tagged_union! {
    /// Any notification a server sends (chosen by `method`).
    pub enum ServerNotification by "method" {
        /// `notifications/cancelled`
        Cancelled(CancelledNotification) = "notifications/cancelled",
        /// `notifications/progress`
        Progress(ProgressNotification) = "notifications/progress",
        /// `notifications/resources/list_changed`
        ResourceListChanged(ResourceListChangedNotification) = "notifications/resources/list_changed",
        /// `notifications/subscriptions/acknowledged`
        SubscriptionsAcknowledged(SubscriptionsAcknowledgedNotification) = "notifications/subscriptions/acknowledged",
        /// `notifications/resources/updated`
        ResourceUpdated(ResourceUpdatedNotification) = "notifications/resources/updated",
        /// `notifications/prompts/list_changed`
        PromptListChanged(PromptListChangedNotification) = "notifications/prompts/list_changed",
        /// `notifications/tools/list_changed`
        ToolListChanged(ToolListChangedNotification) = "notifications/tools/list_changed",
        /// `notifications/message`
        LoggingMessage(LoggingMessageNotification) = "notifications/message",
    }
}
