//! The JSON-RPC 2.0 envelope as MCP restricts it: strict classification of incoming messages.

use crate::error::ProtocolError;
use crate::strict::{parse_strict, StrictJsonError};
use serde_json::{Map, Value};

/// A message a server accepts from a client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: has a string or integer `id`.
    Request(Request),
    /// A notification: no `id`.
    Notification(Notification),
}

/// A client-to-server JSON-RPC request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The request id: a JSON string or integer, never null.
    pub id: Value,
    /// The method name.
    pub method: String,
    /// The `params` object (empty when absent).
    pub params: Map<String, Value>,
}

/// A client-to-server JSON-RPC notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The `params` object (empty when absent).
    pub params: Map<String, Value>,
}

/// A message that could not be accepted, with the id when one could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The id of the offending request, if it had a usable one.
    pub id: Option<Value>,
    /// Why it was rejected.
    pub error: ProtocolError,
}

/// Parses and classifies one message from bytes (strict JSON, depth-bounded).
pub fn parse_incoming(bytes: &[u8], max_depth: usize) -> Result<Incoming, Rejected> {
    let value = parse_strict(bytes, max_depth).map_err(|e| Rejected {
        id: None,
        error: match e {
            StrictJsonError::Syntax(m) => ProtocolError::Parse(m),
            other => ProtocolError::Parse(other.to_string()),
        },
    })?;
    classify(value)
}

/// Classifies an already-parsed JSON value as a request or notification.
pub fn classify(value: Value) -> Result<Incoming, Rejected> {
    let obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => return Err(reject(None, "batch requests are not supported")),
        _ => return Err(reject(None, "message must be a JSON object")),
    };
    // One pass over the members, taking them by value (no search per member).
    let (mut id, mut method, mut params) = (None, None, None);
    let (mut version_ok, mut response) = (false, false);
    for (key, v) in obj {
        match key.as_str() {
            "id" => id = Some(v),
            "jsonrpc" => version_ok = matches!(&v, Value::String(s) if s == "2.0"),
            "method" => method = Some(v),
            "params" => params = Some(v),
            "result" | "error" => response = true,
            _ => {}
        }
    }
    let id = match id {
        None => None,
        Some(v @ Value::String(_)) => Some(v),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n)),
        Some(Value::Null) => return Err(reject(None, "id must not be null")),
        Some(_) => return Err(reject(None, "id must be a string or an integer")),
    };
    if !version_ok {
        return Err(reject(id, "jsonrpc must be \"2.0\""));
    }
    if response {
        return Err(reject(id, "responses are not accepted by a server"));
    }
    let method = match method {
        Some(Value::String(m)) => m,
        Some(_) => return Err(reject(id, "method must be a string")),
        None => return Err(reject(id, "missing method")),
    };
    let params = match params {
        None => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => return Err(reject(id, "params must be an object")),
    };
    Ok(match id {
        Some(id) => Incoming::Request(Request { id, method, params }),
        None => Incoming::Notification(Notification { method, params }),
    })
}

/// An envelope refused as an invalid request (`-32600`). Cold: valid messages never build one.
#[cold]
fn reject(id: Option<Value>, message: &str) -> Rejected {
    Rejected { id, error: ProtocolError::InvalidRequest(message.to_owned()) }
}

/// Serializes a successful JSON-RPC response.
pub fn result_response(id: &Value, result: Value) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), Value::String("2.0".into()));
    m.insert("id".into(), id.clone());
    m.insert("result".into(), result);
    Value::Object(m)
}

/// Builds a JSON-RPC notification message (`params` left out when `Null`).
pub fn notification(method: &str, params: Value) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), Value::String("2.0".into()));
    m.insert("method".into(), Value::String(method.into()));
    if !params.is_null() {
        m.insert("params".into(), params);
    }
    Value::Object(m)
}

/// Builds a JSON-RPC request message.
pub fn request(id: &Value, method: &str, params: Value) -> Value {
    let mut m = Map::with_capacity(4);
    m.insert("jsonrpc".into(), Value::String("2.0".into()));
    m.insert("id".into(), id.clone());
    m.insert("method".into(), Value::String(method.into()));
    m.insert("params".into(), params);
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::code;

    fn code_of(s: &str) -> (Option<Value>, i64) {
        let r = parse_incoming(s.as_bytes(), 64).unwrap_err();
        (r.id, r.error.code())
    }

    #[test]
    fn classifies_request_and_notification() {
        let r = parse_incoming(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#, 64).unwrap();
        assert!(matches!(r, Incoming::Request(Request { ref method, .. }) if method == "tools/list"));
        let n = parse_incoming(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#, 64)
            .unwrap();
        assert!(matches!(n, Incoming::Notification(_)));
    }

    #[test]
    fn rejects_bad_envelopes_with_right_codes() {
        assert_eq!(code_of("{"), (None, code::PARSE_ERROR));
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#), (None, code::PARSE_ERROR));
        assert_eq!(code_of(r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#), (None, code::INVALID_REQUEST));
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#), (None, code::INVALID_REQUEST));
        assert_eq!(code_of(r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#), (Some(Value::from(3)), code::INVALID_REQUEST));
        assert_eq!(code_of(r#"{"id":3,"method":"x"}"#), (Some(Value::from(3)), code::INVALID_REQUEST));
        assert_eq!(
            code_of(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            (Some(Value::from("a")), code::INVALID_REQUEST)
        );
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#), (None, code::INVALID_REQUEST));
        assert_eq!(
            code_of(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#),
            (Some(Value::from(1)), code::INVALID_REQUEST)
        );
        assert_eq!(code_of("42"), (None, code::INVALID_REQUEST));
    }
}
