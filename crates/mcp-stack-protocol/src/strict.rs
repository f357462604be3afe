//! Strict JSON parsing: duplicate object keys are rejected and nesting depth is bounded.
//!
//! `serde_json::from_slice::<Value>` silently keeps the last of two duplicate keys, which
//! lets a body say one thing to an intermediary and another to the server. This module
//! builds a [`serde_json::Value`] through a visitor that refuses duplicates and counts depth.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Default maximum nesting depth of arrays/objects accepted by [`parse_strict`].
pub const DEFAULT_MAX_DEPTH: usize = 64;

/// Why a strict parse failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StrictJsonError {
    /// The bytes are not JSON (or not UTF-8, or have trailing data).
    #[error("invalid JSON: {0}")]
    Syntax(String),
    /// An object repeats a key.
    #[error("duplicate object key {0:?}")]
    DuplicateKey(String),
    /// Arrays/objects are nested deeper than the configured limit.
    #[error("JSON nested deeper than {0} levels")]
    TooDeep(usize),
}

/// Parses `bytes` into a [`Value`], rejecting duplicate keys and nesting deeper than `max_depth`.
///
/// The input is checked as UTF-8 once, up front: serde_json then reads it as a `str` and skips
/// checking each string again (invalid input takes the byte path, for serde_json's own error).
pub fn parse_strict(bytes: &[u8], max_depth: usize) -> Result<Value, StrictJsonError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_with(serde_json::Deserializer::from_str(text), max_depth),
        Err(_) => parse_with(serde_json::Deserializer::from_slice(bytes), max_depth),
    }
}

fn parse_with<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    max_depth: usize,
) -> Result<Value, StrictJsonError> {
    let value = Seed { depth: 0, max: max_depth }.deserialize(&mut de).map_err(classify)?;
    de.end().map_err(|e| StrictJsonError::Syntax(e.to_string()))?;
    Ok(value)
}

const DUP: &str = "\u{0}dup:";
const DEEP: &str = "\u{0}deep:";

fn classify(e: serde_json::Error) -> StrictJsonError {
    let text = e.to_string();
    if let Some(rest) = text.strip_prefix(DUP) {
        let key = rest.rsplit_once(" at line").map_or(rest, |(k, _)| k);
        return StrictJsonError::DuplicateKey(key.to_owned());
    }
    if let Some(rest) = text.strip_prefix(DEEP) {
        let n = rest.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        return StrictJsonError::TooDeep(n);
    }
    if text.starts_with("recursion limit exceeded") {
        return StrictJsonError::TooDeep(128);
    }
    StrictJsonError::Syntax(text)
}

#[derive(Clone, Copy)]
struct Seed {
    depth: usize,
    max: usize,
}

impl Seed {
    fn child<E: serde::de::Error>(&self) -> Result<Seed, E> {
        if self.depth >= self.max {
            return Err(E::custom(format_args!("{DEEP}{} levels", self.max)));
        }
        Ok(Seed { depth: self.depth + 1, max: self.max })
    }
}

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let child = self.child::<A::Error>()?;
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(v) = seq.next_element_seed(child)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let child = self.child::<A::Error>()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // One lookup: the vacant entry both proves the key is new and receives the value.
            match out.entry(key) {
                serde_json::map::Entry::Occupied(o) => {
                    return Err(A::Error::custom(format_args!("{DUP}{}", o.key())));
                }
                serde_json::map::Entry::Vacant(v) => {
                    v.insert(map.next_value_seed(child)?);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_json() {
        let v = parse_strict(br#"{"a":[1,2,{"b":null}],"c":"x"}"#, 8).unwrap();
        assert_eq!(v["a"][2]["b"], Value::Null);
    }

    #[test]
    fn rejects_duplicate_keys_at_any_depth() {
        assert_eq!(parse_strict(br#"{"a":1,"a":2}"#, 8), Err(StrictJsonError::DuplicateKey("a".into())));
        assert!(matches!(
            parse_strict(br#"{"x":{"b":1,"b":1}}"#, 8),
            Err(StrictJsonError::DuplicateKey(k)) if k == "b"
        ));
    }

    #[test]
    fn bounds_depth() {
        let deep = format!("{}{}", "[".repeat(10), "]".repeat(10));
        assert!(parse_strict(deep.as_bytes(), 10).is_ok());
        assert_eq!(parse_strict(deep.as_bytes(), 9), Err(StrictJsonError::TooDeep(9)));
        let very = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        assert!(matches!(parse_strict(very.as_bytes(), 10_000), Err(StrictJsonError::TooDeep(_))));
    }

    #[test]
    fn rejects_trailing_garbage_and_non_json() {
        assert!(matches!(parse_strict(b"{} x", 8), Err(StrictJsonError::Syntax(_))));
        assert!(matches!(parse_strict(b"{", 8), Err(StrictJsonError::Syntax(_))));
    }
}
