//! The JSON-RPC 2.0 envelope as MCP restricts it: strict classification of incoming messages.

use crate::error::ProtocolError;
use crate::strict::{parse_envelope, Envelope, StrictJsonError, Top};
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
///
/// The envelope's own members are read straight from the bytes: no map for the top level and
/// no strings for its keys or for `"2.0"` (the members inside `params` are parsed as
/// [`crate::strict::parse_strict`] would).
pub fn parse_incoming(bytes: &[u8], max_depth: usize) -> Result<Incoming, Rejected> {
    parse_envelope(bytes, max_depth).map_err(unparsable)?.finish()
}

/// A message that is not strict JSON (`-32700`).
#[cold]
fn unparsable(e: StrictJsonError) -> Rejected {
    let error = match e {
        StrictJsonError::Syntax(m) => ProtocolError::Parse(m),
        other => ProtocolError::Parse(other.to_string()),
    };
    Rejected { id: None, error }
}

/// Classifies an already-parsed JSON value as a request or notification.
pub fn classify(value: Value) -> Result<Incoming, Rejected> {
    let obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => return Top::Array.finish(),
        _ => return Top::Other.finish(),
    };
    // One pass over the members, taking them by value (no search per member).
    let mut envelope = Envelope::default();
    for (key, v) in obj {
        match key.as_str() {
            "id" => envelope.id = Some(v),
            "jsonrpc" => envelope.version_ok = matches!(&v, Value::String(s) if s == "2.0"),
            "method" => envelope.method = Some(v),
            "params" => envelope.params = Some(v),
            "result" | "error" => envelope.response = true,
            _ => {}
        }
    }
    envelope.finish()
}

impl Top {
    /// The request or notification, or why the message is not one.
    fn finish(self) -> Result<Incoming, Rejected> {
        match self {
            Top::Object(envelope) => envelope.finish(),
            Top::Array => Err(reject(None, "batch requests are not supported")),
            Top::Other => Err(reject(None, "message must be a JSON object")),
        }
    }
}

impl Envelope {
    /// The request or notification, or why it is not one (in this order: the id, the version,
    /// a response, the method, the params).
    fn finish(self) -> Result<Incoming, Rejected> {
        let id = match self.id {
            None => None,
            Some(v @ Value::String(_)) => Some(v),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n)),
            Some(Value::Null) => return Err(reject(None, "id must not be null")),
            Some(_) => return Err(reject(None, "id must be a string or an integer")),
        };
        if !self.version_ok {
            return Err(reject(id, "jsonrpc must be \"2.0\""));
        }
        if self.response {
            return Err(reject(id, "responses are not accepted by a server"));
        }
        let method = match self.method {
            Some(Value::String(m)) => m,
            Some(_) => return Err(reject(id, "method must be a string")),
            None => return Err(reject(id, "missing method")),
        };
        let params = match self.params {
            None => Map::new(),
            Some(Value::Object(p)) => p,
            Some(_) => return Err(reject(id, "params must be an object")),
        };
        Ok(match id {
            Some(id) => Incoming::Request(Request { id, method, params }),
            None => Incoming::Notification(Notification { method, params }),
        })
    }
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

    /// What a message parses to, the slow way: the whole value strictly, then its envelope.
    fn through_value(bytes: &[u8], depth: usize) -> Result<Incoming, (Option<Value>, i64, String)> {
        let outcome = crate::strict::parse_strict(bytes, depth).map_err(unparsable).and_then(classify);
        outcome.map_err(|r| (r.id, r.error.code(), r.error.to_string()))
    }

    #[test]
    fn the_envelope_read_from_bytes_matches_the_whole_value() {
        let cases: &[&str] = &[
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]}}}"#,
            r#"{"method":"m","params":{},"id":"s","jsonrpc":"2.0","extra":{"k":1}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/x"}"#,
            r#"{"jsonrpc":"2.0","\u0069d":5,"method":"escaped key"}"#,
            r#"{"jsonrpc":"2\u002e0","id":5,"method":"escaped version"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","extra":1,"extra":2}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","extra":{"a":1,"a":2}}"#,
            r#"{"jsonrpc":{"a":1,"a":2},"id":1,"method":"x"}"#,
            r#"{"jsonrpc":["2.0"],"id":1,"method":"x"}"#,
            r#"{"jsonrpc":2.0,"id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":-3,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x"} trailing"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"x"},{"a":1,"a":2}]"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"x"}"#,
            r#"[1,2,3]"#,
            r#""text""#,
            "null",
            "-1.5e3",
            "",
        ];
        for case in cases {
            for depth in [0, 1, 2, 3, 64] {
                let fast =
                    parse_incoming(case.as_bytes(), depth).map_err(|r| (r.id, r.error.code(), r.error.to_string()));
                assert_eq!(fast, through_value(case.as_bytes(), depth), "{case} at depth {depth}");
            }
        }
        let deep = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{}1{}}}"#, "[".repeat(70), "]".repeat(70));
        assert_eq!(
            parse_incoming(deep.as_bytes(), 64).map_err(|r| (r.id, r.error.code(), r.error.to_string())),
            through_value(deep.as_bytes(), 64)
        );
        let invalid_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}";
        assert_eq!(
            parse_incoming(invalid_utf8, 64).map_err(|r| (r.id, r.error.code(), r.error.to_string())),
            through_value(invalid_utf8, 64)
        );
    }
}
