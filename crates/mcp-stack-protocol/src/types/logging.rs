//! Log messages from server to client (`notifications/message`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{LoggingLevel, NotificationMetaObject};

/// Parameters for a `notifications/message` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
    /// The severity of this message.
    pub level: LoggingLevel,
    /// Name of the logger issuing the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The data to log: a string, an object, or any JSON value.
    pub data: Value,
}

impl LoggingMessageNotificationParams {
    /// Parameters with a level and data.
    pub fn new(level: LoggingLevel, data: Value) -> Self {
        Self { meta: None, level, logger: None, data }
    }
}

notification_type! {
    /// A log message from server to client. Sent only for requests whose
    /// `_meta` set `io.modelcontextprotocol/logLevel`.
    pub struct LoggingMessageNotification {
        method: LoggingMessageNotificationMethod = "notifications/message",
        params: LoggingMessageNotificationParams,
    }
}
