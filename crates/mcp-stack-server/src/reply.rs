//! [`Reply`]: a result on its way to the wire, kept in its typed form (or pre-serialised, for
//! shared list pages) until [`crate::Server::encode_response`] writes it, once.

use mcp_protocol::meta::SERVER_INFO;
use mcp_protocol::types::{
    CallToolResult, CompleteResult, GetPromptResult, InputRequiredResult, ReadResourceResult, ResultMetaObject,
};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// The successful result of one request, as [`crate::Server::handle_reply`] hands it out:
/// typed, or bytes shared between requests (list pages, serialised once per catalog version),
/// or JSON built by hand (fallbacks, tasks). [`crate::Server::encode_response`] writes it
/// straight to bytes, adding `serverInfo` to `_meta`; [`Reply::into_value`] turns it into JSON
/// for inspection (tests, the legacy bridge).
#[derive(Debug, Clone)]
pub struct Reply(pub(crate) Body);

#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// JSON built by hand.
    Value(Value),
    /// A result object serialised once and shared (without `_meta`: `serverInfo` is spliced in
    /// when written).
    Shared(Arc<[u8]>),
    Tool(Box<CallToolResult>),
    Prompt(Box<GetPromptResult>),
    Read(Box<ReadResourceResult>),
    Complete(Box<CompleteResult>),
    InputRequired(Box<InputRequiredResult>),
}

impl Reply {
    /// The result as JSON (without the `serverInfo` the writer adds).
    pub fn into_value(self) -> Value {
        fn json<T: Serialize>(t: &T) -> Value {
            serde_json::to_value(t).expect("results serialize")
        }
        match self.0 {
            Body::Value(v) => v,
            Body::Shared(b) => serde_json::from_slice(&b).expect("a shared page is JSON"),
            Body::Tool(r) => json(&r),
            Body::Prompt(r) => json(&r),
            Body::Read(r) => json(&r),
            Body::Complete(r) => json(&r),
            Body::InputRequired(r) => json(&r),
        }
    }

    /// Whether this is an `input_required` result.
    pub fn is_input_required(&self) -> bool {
        match &self.0 {
            Body::InputRequired(_) => true,
            Body::Value(v) => v.get("resultType").and_then(Value::as_str) == Some("input_required"),
            _ => false,
        }
    }

    /// Whether this is a tool result with `isError: true`.
    pub fn is_tool_error(&self) -> bool {
        match &self.0 {
            Body::Tool(r) => r.is_error == Some(true),
            Body::Value(v) => mcp_protocol::telemetry::is_tool_error(v),
            _ => false,
        }
    }

    pub(crate) fn shared(bytes: Arc<[u8]>) -> Self {
        Self(Body::Shared(bytes))
    }
}

impl From<Value> for Reply {
    fn from(v: Value) -> Self {
        Self(Body::Value(v))
    }
}

macro_rules! typed_reply {
    ($($ty:ident => $variant:ident),*) => {$(
        impl From<$ty> for Reply {
            fn from(r: $ty) -> Self {
                Self(Body::$variant(Box::new(r)))
            }
        }
    )*};
}
typed_reply!(CallToolResult => Tool, GetPromptResult => Prompt, ReadResourceResult => Read,
    CompleteResult => Complete, InputRequiredResult => InputRequired);

impl Reply {
    /// Writes the result object, adding `serverInfo` (`info`, serialised) to its `_meta`.
    pub(crate) fn write_result(&self, out: &mut Vec<u8>, info: Option<&[u8]>) {
        match &self.0 {
            Body::Value(v) => write_value(out, v, info),
            Body::Shared(b) => {
                out.extend_from_slice(b);
                splice_info(out, info);
            }
            Body::Tool(r) => write_typed(out, &**r, r.meta.as_ref(), info),
            Body::Prompt(r) => write_typed(out, &**r, r.meta.as_ref(), info),
            Body::Read(r) => write_typed(out, &**r, r.meta.as_ref(), info),
            Body::Complete(r) => write_typed(out, &**r, r.meta.as_ref(), info),
            Body::InputRequired(r) => write_typed(out, &**r, r.meta.as_ref(), info),
        }
    }
}

/// Writes a typed result (whose `resultType` is always there), adding `serverInfo` to `_meta`.
fn write_typed<T: Serialize>(out: &mut Vec<u8>, t: &T, meta: Option<&ResultMetaObject>, info: Option<&[u8]>) {
    match (meta, info) {
        (_, None) => serde_json::to_writer(&mut *out, t).expect("results serialize"),
        (None, Some(_)) => {
            serde_json::to_writer(&mut *out, t).expect("results serialize");
            splice_info(out, info);
        }
        (Some(m), Some(_)) if m.server_info.is_some() => {
            serde_json::to_writer(&mut *out, t).expect("results serialize")
        }
        // A `_meta` of the handler's own: merged as JSON (rare).
        (Some(_), Some(_)) => write_value(out, &serde_json::to_value(t).expect("results serialize"), info),
    }
}

/// Adds `"_meta":{serverInfo}` to the object just written (which has no `_meta`).
fn splice_info(out: &mut Vec<u8>, info: Option<&[u8]>) {
    let Some(info) = info else { return };
    debug_assert_eq!(out.last(), Some(&b'}'));
    out.pop();
    if out.last() != Some(&b'{') {
        out.push(b',');
    }
    out.extend_from_slice(b"\"_meta\":{\"");
    out.extend_from_slice(SERVER_INFO.as_bytes());
    out.extend_from_slice(b"\":");
    out.extend_from_slice(info);
    out.extend_from_slice(b"}}");
}

/// Writes a JSON result: `resultType` defaults to `complete`, `serverInfo` goes into `_meta`.
fn write_value(out: &mut Vec<u8>, result: &Value, info: Option<&[u8]>) {
    let Value::Object(map) = result else {
        serde_json::to_writer(&mut *out, result).expect("JSON serializes");
        return;
    };
    let key = |out: &mut Vec<u8>, k: &str, first: &mut bool| {
        if !std::mem::take(first) {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, k).expect("JSON serializes");
        out.push(b':');
    };
    let mut first = true;
    let mut meta_done = info.is_none();
    out.push(b'{');
    for (k, v) in map {
        key(out, k, &mut first);
        match (k.as_str(), v, info) {
            ("_meta", Value::Object(m), Some(info)) if !m.contains_key(SERVER_INFO) => {
                let mut inner_first = true;
                out.push(b'{');
                for (mk, mv) in m {
                    key(out, mk, &mut inner_first);
                    serde_json::to_writer(&mut *out, mv).expect("JSON serializes");
                }
                key(out, SERVER_INFO, &mut inner_first);
                out.extend_from_slice(info);
                out.push(b'}');
                meta_done = true;
            }
            _ => {
                serde_json::to_writer(&mut *out, v).expect("JSON serializes");
                meta_done |= k == "_meta";
            }
        }
    }
    if !map.contains_key("resultType") {
        key(out, "resultType", &mut first);
        out.extend_from_slice(b"\"complete\"");
    }
    if !meta_done {
        out.push(b'}');
        splice_info(out, info);
    } else {
        out.push(b'}');
    }
}
