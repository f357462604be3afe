//! Streamable HTTP request-metadata rules that need no I/O: the Base64 sentinel encoding,
//! `x-mcp-header` annotations on tool input schemas, and header/body comparison.

use base64::Engine as _;
use serde_json::{Map, Value};

/// Header carrying the protocol version.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// Header mirroring the JSON-RPC `method`.
pub const METHOD: &str = "mcp-method";
/// Header mirroring `params.name` or `params.uri`.
pub const NAME: &str = "mcp-name";
/// Prefix of headers mirroring `x-mcp-header` tool parameters.
pub const PARAM_PREFIX: &str = "mcp-param-";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// Encodes a value for a header, using the Base64 sentinel form when it is not plain safe ASCII.
pub fn encode_value(value: &str) -> String {
    let looks_encoded = value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END);
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b) || b == b'\t')
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
        && !looks_encoded;
    if plain {
        value.to_owned()
    } else {
        format!("{SENTINEL_START}{}{SENTINEL_END}", base64::engine::general_purpose::STANDARD.encode(value))
    }
}

/// Decodes a header value: plain values are returned as-is (borrowed), sentinel values are
/// Base64-decoded.
///
/// Fails when the raw bytes are not valid header characters or the Base64 payload is invalid.
pub fn decode_value(raw: &[u8]) -> Result<std::borrow::Cow<'_, str>, String> {
    if !raw.iter().all(|b| (0x20..=0x7e).contains(b) || *b == b'\t') {
        return Err("header value contains invalid characters".into());
    }
    // Optional whitespace around a field value is not part of it (RFC 9110 §5.5); of ASCII
    // whitespace, only space and tab got past the check above. Trimmed as bytes: a char-set
    // trim is far more code on every request's path.
    let s = std::str::from_utf8(raw.trim_ascii()).map_err(|_| "header value is not UTF-8".to_owned())?;
    match s.strip_prefix(SENTINEL_START).and_then(|r| r.strip_suffix(SENTINEL_END)) {
        Some(b64) if s.len() >= SENTINEL_START.len() + SENTINEL_END.len() => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|_| "invalid Base64 in header value".to_owned())?;
            String::from_utf8(bytes).map(Into::into).map_err(|_| "Base64 header value is not UTF-8".to_owned())
        }
        _ => Ok(s.into()),
    }
}

/// One `x-mcp-header` annotation of a tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The `{name}` of `Mcp-Param-{name}` as written in the schema.
    pub header: String,
    /// Lower-cased full header name, `mcp-param-{name}`.
    pub header_lower: String,
    /// The chain of `properties` keys from the schema root to the annotated property.
    pub path: Vec<String>,
    /// The primitive type of the property (`string`, `integer` or `boolean`).
    pub kind: String,
}

/// Finds and validates every `x-mcp-header` annotation of an input schema.
///
/// Annotations must be non-empty tokens, unique case-insensitively, on `string`/`integer`/`boolean`
/// properties reachable from the root through `properties` only.
pub fn header_params(schema: &Map<String, Value>) -> Result<Vec<HeaderParam>, String> {
    let mut out = Vec::new();
    walk_properties(schema, &mut Vec::new(), &mut out)?;
    let mut seen = std::collections::HashSet::new();
    for p in &out {
        if !seen.insert(p.header_lower.clone()) {
            return Err(format!("duplicate x-mcp-header {:?}", p.header));
        }
    }
    check_unreachable(&Value::Object(schema.clone()), true)?;
    Ok(out)
}

fn walk_properties(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    out: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(());
    };
    for (key, sub) in props {
        let Value::Object(sub) = sub else { continue };
        path.push(key.clone());
        if let Some(h) = sub.get("x-mcp-header") {
            let name = h.as_str().ok_or_else(|| format!("x-mcp-header on {key:?} must be a string"))?;
            if name.is_empty() || !name.bytes().all(is_tchar) {
                return Err(format!("x-mcp-header {name:?} on {key:?} is not a valid header token"));
            }
            let kind = match sub.get("type") {
                Some(Value::String(t)) if matches!(t.as_str(), "string" | "integer" | "boolean") => t.clone(),
                other => {
                    return Err(format!(
                    "x-mcp-header {name:?} must annotate a string, integer or boolean property (found type {other:?})"
                ))
                }
            };
            out.push(HeaderParam {
                header: name.to_owned(),
                header_lower: format!("{PARAM_PREFIX}{}", name.to_ascii_lowercase()),
                path: path.clone(),
                kind,
            });
        }
        walk_properties(sub, path, out)?;
        path.pop();
    }
    Ok(())
}

/// Rejects `x-mcp-header` found anywhere not reachable purely through `properties`.
fn check_unreachable(v: &Value, reachable: bool) -> Result<(), String> {
    match v {
        Value::Object(o) => {
            if !reachable && o.contains_key("x-mcp-header") {
                return Err("x-mcp-header must only annotate properties reachable through `properties`".into());
            }
            for (k, sub) in o {
                if k == "properties" {
                    if let Value::Object(props) = sub {
                        for p in props.values() {
                            check_unreachable(p, reachable)?;
                        }
                    }
                } else if k != "x-mcp-header" {
                    check_unreachable(sub, false)?;
                }
            }
            Ok(())
        }
        Value::Array(a) => a.iter().try_for_each(|x| check_unreachable(x, false)),
        _ => Ok(()),
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The value at `path` inside `args`, rendered as the header string, or `None` when absent/null.
pub fn header_value_for(args: &Map<String, Value>, path: &[String]) -> Option<Value> {
    let (last, parents) = path.split_last()?;
    let mut cur = args;
    for p in parents {
        cur = cur.get(p)?.as_object()?;
    }
    match cur.get(last)? {
        Value::Null => None,
        v => Some(v.clone()),
    }
}

/// Whether a decoded header value matches a body value (integers compared numerically).
pub fn header_matches(header: &str, body: &Value) -> bool {
    match body {
        Value::String(s) => s == header,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => match header.parse::<f64>() {
            Ok(h) => n.as_f64().is_some_and(|b| b == h),
            Err(_) => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sentinel_round_trip_matches_spec_table() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(encode_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
        for v in ["Hello, 世界", " padded ", "=?base64?literal?=", "plain"] {
            assert_eq!(decode_value(encode_value(v).as_bytes()).unwrap(), v);
        }
        assert!(decode_value(b"=?base64?!!!?=").is_err());
        assert!(decode_value(b"bad\x01").is_err());
        assert_eq!(decode_value(b"  name\t ").unwrap(), "name");
        // Strict Base64: padding is required.
        assert!(decode_value(b"=?base64?SGVsbG8?=").is_err());
        assert_eq!(decode_value(b"=?base64?SGVsbG8=").unwrap(), "=?base64?SGVsbG8=");
    }

    #[test]
    fn finds_and_validates_annotations() {
        let s = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "nested":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}});
        let ps = header_params(s.as_object().unwrap()).unwrap();
        assert_eq!(ps.len(), 2);
        assert!(ps.iter().any(|p| p.path == ["nested", "n"] && p.header_lower == "mcp-param-n"));
        let bad = [
            json!({"properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":""}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"A B"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}),
            json!({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
            json!({"anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}),
        ];
        for b in bad {
            assert!(header_params(b.as_object().unwrap()).is_err(), "{b}");
        }
    }

    #[test]
    fn compares_numerically() {
        assert!(header_matches("42", &json!(42)));
        assert!(header_matches("42.0", &json!(42)));
        assert!(!header_matches("43", &json!(42)));
        assert!(header_matches("true", &json!(true)));
        assert!(!header_matches("True", &json!(true)));
    }
}
