//! Log messages from server to client (`notifications/message`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::NotificationMetaObject;

/// The severity of a log message (syslog severities, RFC 5424).
///
/// Variants are ordered from least to most severe, so `level >= threshold`
/// filters messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug-level messages.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant conditions.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, from least to most severe (a level's index is its rank).
    pub const ALL: [LoggingLevel; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    /// The level of rank `rank` (0 is `debug`, 7 `emergency`).
    pub fn from_rank(rank: u8) -> Option<Self> {
        Self::ALL.get(usize::from(rank)).copied()
    }

    /// The value on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }
}

impl std::fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
