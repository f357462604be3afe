//! One outgoing request, as a transport sees it: its id, what kind of exchange it opens, its
//! headers, and its JSON written straight into the transport's buffer.
//!
//! The client core builds most requests from their parts (the caller's `params` and the
//! client's `_meta` fields) without an intermediate `serde_json::Value`: a request is written
//! once, into the stdio outbox or the HTTP body, and nothing of it is copied or allocated per
//! field. Requests built as a whole JSON value (rare paths, custom transports' tests) go
//! through [`OutgoingRequest::new`].

use crate::error::TransportError;
use mcp_protocol::meta::{CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROGRESS_TOKEN, PROTOCOL_VERSION};
use mcp_protocol::types::{LoggingLevel, RequestId};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// One outgoing request. Its JSON is written with [`OutgoingRequest::write_json`].
#[derive(Debug, Clone)]
pub struct OutgoingRequest<'a> {
    id: Value,
    streams: bool,
    listen: bool,
    initialize: bool,
    /// Takes the log messages that name no request while it is the one in flight.
    unnamed_logs: bool,
    body: Body<'a>,
    /// HTTP headers to send with it (lower-case names). Ignored by stdio.
    pub headers: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
enum Body<'a> {
    /// A whole JSON-RPC request.
    Whole(Value),
    /// A request from its parts.
    Parts(Parts<'a>),
}

impl OutgoingRequest<'static> {
    /// A request from the whole JSON-RPC message (`jsonrpc`, `id`, `method`, `params`). Fails
    /// when its `id` is not a string or an integer.
    pub fn new(message: Value, headers: Vec<(String, String)>) -> Result<Self, TransportError> {
        let id = match message.get("id") {
            Some(id) if RequestId::from_id(id).is_some() => id.clone(),
            Some(_) => return Err(TransportError::Malformed("request id is not a string or integer".into())),
            None => return Err(TransportError::Malformed("request without id".into())),
        };
        let method = message.get("method").and_then(Value::as_str).unwrap_or_default();
        let streams = streams(method, message.pointer("/params/_meta"));
        let (listen, initialize) = (is_listen(method), method == "initialize");
        Ok(Self { id, streams, listen, initialize, unnamed_logs: true, body: Body::Whole(message), headers })
    }
}

impl<'a> OutgoingRequest<'a> {
    /// A request from its parts (the client core's path for every call).
    pub(crate) fn from_parts(parts: Parts<'a>, headers: Vec<(String, String)>) -> Self {
        Self {
            id: Value::from(parts.id),
            streams: parts.meta.progress.is_some()
                || parts.meta.log_level.is_some()
                || streams(parts.method, parts.params.get("_meta")),
            listen: is_listen(parts.method),
            initialize: parts.method == "initialize",
            unnamed_logs: true,
            body: Body::Parts(parts),
            headers,
        }
    }

    /// The request's id (a string or an integer).
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// The request's id as a key of the transport's pending requests.
    pub(crate) fn key(&self) -> RequestId {
        RequestId::from_id(&self.id).expect("the id is checked when the request is made")
    }

    /// Whether messages other than the response may come for this request: it carries a
    /// progress token or a log level, it is `subscriptions/listen`, or the [`crate::Client`]
    /// that made it passes log messages to its caller. Any other request gets exactly one
    /// message, its response.
    ///
    /// Only the client marks a request as taking notifications; a transport cannot:
    ///
    /// ```compile_fail,E0624
    /// # use mcp_client::transport::OutgoingRequest;
    /// # let message = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"});
    /// let req = OutgoingRequest::new(message, Vec::new()).unwrap().taking_notifications(true);
    /// ```
    pub fn streams(&self) -> bool {
        self.streams
    }

    /// Marks the request as one that takes notifications when `on` (a legacy call whose caller
    /// reads its log messages: they carry no sign of the request they belong to).
    pub(crate) fn taking_notifications(mut self, on: bool) -> Self {
        self.streams |= on;
        self
    }

    /// Whether the request takes a log message that names no request while it is the only one
    /// in flight (default: yes; see `ClientBuilder::log_attribution`).
    pub(crate) fn takes_unnamed_logs(&self) -> bool {
        self.unnamed_logs
    }

    /// Marks whether the request takes log messages that name no request.
    pub(crate) fn taking_unnamed_logs(mut self, on: bool) -> Self {
        self.unnamed_logs = on;
        self
    }

    /// Whether this is `subscriptions/listen` (its stream never carries log messages).
    pub fn is_listen(&self) -> bool {
        self.listen
    }

    /// Whether this is `initialize` (a legacy session begins with its answer).
    pub fn is_initialize(&self) -> bool {
        self.initialize
    }

    /// Appends the request's JSON (one line: no newline inside) to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), TransportError> {
        let r = match &self.body {
            Body::Whole(v) => serde_json::to_writer(&mut *out, v),
            Body::Parts(p) => serde_json::to_writer(&mut *out, p),
        };
        r.map_err(|e| TransportError::Malformed(e.to_string()))
    }

    /// The request's JSON as a new buffer.
    pub fn to_json(&self) -> Result<Vec<u8>, TransportError> {
        let mut out = Vec::with_capacity(512);
        self.write_json(&mut out)?;
        Ok(out)
    }
}

/// Whether a request of `method` with `_meta` may get more messages than its response: it is
/// `subscriptions/listen`, or it carries a progress token or a log level.
fn streams(method: &str, meta: Option<&Value>) -> bool {
    is_listen(method) || meta.is_some_and(|m| m.get(PROGRESS_TOKEN).is_some() || m.get(LOG_LEVEL).is_some())
}

/// Whether `method` is `subscriptions/listen`.
fn is_listen(method: &str) -> bool {
    mcp_protocol::Method::parse(method) == Some(mcp_protocol::Method::SubscriptionsListen)
}

/// A request from its parts: `{"jsonrpc":"2.0","id":..,"method":..,"params":{..}}`, where
/// `params` are the caller's with the client's `_meta` fields merged into theirs.
#[derive(Debug, Clone)]
pub(crate) struct Parts<'a> {
    pub(crate) id: i64,
    pub(crate) method: &'a str,
    pub(crate) params: &'a Map<String, Value>,
    pub(crate) meta: ClientMeta<'a>,
}

/// The `_meta` fields the client sets on a request. They replace the caller's fields of the
/// same names; the caller's other `_meta` fields are kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientMeta<'a> {
    /// A modern request's version, capabilities and client info (both already JSON text).
    pub(crate) modern: Option<(&'a str, &'a RawValue, &'a RawValue)>,
    pub(crate) progress: Option<i64>,
    pub(crate) log_level: Option<LoggingLevel>,
    /// Anything else (trace context).
    pub(crate) extra: Option<&'a Map<String, Value>>,
}

impl ClientMeta<'_> {
    fn is_empty(&self) -> bool {
        self.modern.is_none()
            && self.progress.is_none()
            && self.log_level.is_none()
            && self.extra.is_none_or(Map::is_empty)
    }

    /// Whether the client sets `key`.
    fn sets(&self, key: &str) -> bool {
        (self.modern.is_some() && [PROTOCOL_VERSION, CLIENT_CAPABILITIES, CLIENT_INFO].contains(&key))
            || (self.progress.is_some() && key == PROGRESS_TOKEN)
            || (self.log_level.is_some() && key == LOG_LEVEL)
            || self.extra.is_some_and(|e| e.contains_key(key))
    }
}

impl Serialize for Parts<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("jsonrpc", "2.0")?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("method", self.method)?;
        m.serialize_entry("params", &Params(self))?;
        m.end()
    }
}

/// `params`: the caller's fields, `_meta` merged.
struct Params<'p, 'a>(&'p Parts<'a>);

impl Serialize for Params<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Parts { params, meta, .. } = self.0;
        let mut m = s.serialize_map(None)?;
        for (k, v) in params.iter().filter(|(k, _)| *k != "_meta") {
            m.serialize_entry(k, v)?;
        }
        let theirs = params.get("_meta");
        match theirs {
            _ if !meta.is_empty() => m.serialize_entry("_meta", &Meta { theirs, ours: meta })?,
            Some(v) => m.serialize_entry("_meta", v)?,
            None => {}
        }
        m.end()
    }
}

/// `_meta`: the caller's fields the client does not set, then the client's.
struct Meta<'p, 'a> {
    theirs: Option<&'p Value>,
    ours: &'p ClientMeta<'a>,
}

impl Serialize for Meta<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ours = self.ours;
        let mut m = s.serialize_map(None)?;
        if let Some(Value::Object(theirs)) = self.theirs {
            for (k, v) in theirs.iter().filter(|(k, _)| !ours.sets(k)) {
                m.serialize_entry(k, v)?;
            }
        }
        if let Some((version, caps, info)) = ours.modern {
            m.serialize_entry(PROTOCOL_VERSION, version)?;
            m.serialize_entry(CLIENT_CAPABILITIES, caps)?;
            m.serialize_entry(CLIENT_INFO, info)?;
        }
        if let Some(p) = ours.progress {
            m.serialize_entry(PROGRESS_TOKEN, &p)?;
        }
        if let Some(l) = ours.log_level {
            m.serialize_entry(LOG_LEVEL, &l)?;
        }
        if let Some(extra) = ours.extra {
            for (k, v) in extra {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

#[cfg(test)]
mod tests;
