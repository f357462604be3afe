//! Shared building blocks: identifiers, JSON aliases, metadata, icons,
//! annotations and enums used across the protocol.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Any JSON value (`JSONValue`).
pub type JsonValue = Value;

/// A JSON object with arbitrary values (`JSONObject`).
pub type JsonObject = serde_json::Map<String, Value>;

/// A JSON array of arbitrary values (`JSONArray`).
pub type JsonArray = Vec<Value>;

/// An opaque token used to represent a cursor for pagination.
pub type Cursor = String;

/// A uniquely identifying ID for a request in JSON-RPC: a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A string identifier.
    String(String),
    /// An integer identifier.
    Integer(i64),
}

impl RequestId {
    /// The id a JSON-RPC message names, as requests are keyed by (the one rule for server and
    /// client): a string as it is; an integer that fits `i64` as an integer; a larger integer
    /// (JSON-RPC allows it, and [`crate::jsonrpc::parse_incoming`] accepts up to `u64`) as the
    /// string `#n`; `None` for a value that is no id (null, a fraction, a boolean, ...).
    ///
    /// Read straight from the value: deserializing the untagged enum builds an error for every
    /// integer id.
    pub fn from_id(id: &Value) -> Option<Self> {
        match id {
            Value::String(s) => Some(Self::String(s.clone())),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Some(Self::Integer(i)),
                (None, Some(u)) => Some(Self::String(format!("#{u}"))),
                (None, None) => None,
            },
            _ => None,
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(s) => f.write_str(s),
            Self::Integer(n) => write!(f, "{n}"),
        }
    }
}

impl From<String> for RequestId {
    fn from(value: String) -> Self {
        Self::String(value)
    }
}

impl From<&str> for RequestId {
    fn from(value: &str) -> Self {
        Self::String(value.to_owned())
    }
}

impl From<i64> for RequestId {
    fn from(value: i64) -> Self {
        Self::Integer(value)
    }
}

impl From<i32> for RequestId {
    fn from(value: i32) -> Self {
        Self::Integer(value.into())
    }
}

impl From<ProgressToken> for RequestId {
    fn from(value: ProgressToken) -> Self {
        match value {
            ProgressToken::String(s) => Self::String(s),
            ProgressToken::Integer(n) => Self::Integer(n),
        }
    }
}

/// A progress token, used to associate progress notifications with the
/// original request: a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// A string token.
    String(String),
    /// An integer token.
    Integer(i64),
}

impl fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(s) => f.write_str(s),
            Self::Integer(n) => write!(f, "{n}"),
        }
    }
}

impl From<String> for ProgressToken {
    fn from(value: String) -> Self {
        Self::String(value)
    }
}

impl From<&str> for ProgressToken {
    fn from(value: &str) -> Self {
        Self::String(value.to_owned())
    }
}

impl From<i64> for ProgressToken {
    fn from(value: i64) -> Self {
        Self::Integer(value)
    }
}

impl From<RequestId> for ProgressToken {
    fn from(value: RequestId) -> Self {
        match value {
            RequestId::String(s) => Self::String(s),
            RequestId::Integer(n) => Self::Integer(n),
        }
    }
}

/// The type of a result object, telling the client how to parse it.
///
/// A result without `resultType` (sent by an older server) is treated as
/// [`ResultType::Complete`]; unknown values are rejected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResultType {
    /// The request completed and the result holds the final content.
    #[default]
    #[serde(rename = "complete")]
    Complete,
    /// The request needs more input; the result is an [`InputRequiredResult`](crate::types::InputRequiredResult).
    #[serde(rename = "input_required")]
    InputRequired,
}

impl ResultType {
    /// The value on the wire.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
        }
    }
}

/// The sender or recipient of messages and data in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The assistant (the model).
    Assistant,
    /// The user.
    User,
}

/// Intended scope of a cached response, like HTTP `Cache-Control`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Only the requesting client may cache the response.
    Private,
    /// The response may be cached and shared between clients.
    Public,
}

/// Base interface for metadata with a programmatic name and a display title.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseMetadata {
    /// Identifier for programmatic use; the display fallback when `title` is absent.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// The theme an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For dark backgrounds.
    Dark,
    /// For light backgrounds.
    Light,
}

/// An optionally-sized icon that can be displayed in a user interface.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// URI of the icon: an HTTP(S) URL or a `data:` URI.
    pub src: String,
    /// MIME type override, when the source's type is missing or generic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes the icon can be used at, in `WxH` form or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon with only its source URI.
    pub fn new(src: impl Into<String>) -> Self {
        Self { src: src.into(), ..Self::default() }
    }
}

/// Base interface that adds an `icons` property.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icons {
    /// Sized icons a client can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

/// Describes an MCP implementation (client or server software).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Identifier for programmatic use; the display fallback when `title` is absent.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The version of this implementation.
    pub version: String,
    /// What this implementation does, in plain words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Sized icons a client can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// URL of the implementation's website.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with only a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self { name: name.into(), version: version.into(), ..Self::default() }
    }
}

/// Optional hints to the client on how an object is used or displayed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is intended for (user, assistant, or both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Last modification time, as an ISO 8601 string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Importance from 0 (least) to 1 (most important, effectively required).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "crate::types::num::opt_f64")]
    pub priority: Option<f64>,
}

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

#[cfg(test)]
mod tests {
    use super::RequestId;
    use serde_json::json;

    #[test]
    fn request_ids_are_keyed_by_one_rule() {
        assert_eq!(RequestId::from_id(&json!("a")), Some(RequestId::String("a".into())));
        assert_eq!(RequestId::from_id(&json!(-7)), Some(RequestId::Integer(-7)));
        assert_eq!(RequestId::from_id(&json!(u64::MAX)), Some(RequestId::String(format!("#{}", u64::MAX))));
        for no_id in [json!(null), json!(1.5), json!(true), json!([1]), json!({})] {
            assert_eq!(RequestId::from_id(&no_id), None, "{no_id}");
        }
    }
}
