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

/// The members of a message that make its JSON-RPC envelope, taken in one pass (from the bytes
/// by [`parse_envelope`], or from a parsed object by `jsonrpc::classify`).
#[derive(Debug, Default)]
pub(crate) struct Envelope {
    /// `id`, whatever its type (checked when the envelope is classified).
    pub(crate) id: Option<Value>,
    /// Whether `jsonrpc` is the string `"2.0"`.
    pub(crate) version_ok: bool,
    /// `method`, whatever its type.
    pub(crate) method: Option<Value>,
    /// `params`, whatever its type.
    pub(crate) params: Option<Value>,
    /// Whether the message has `result` or `error` (a response).
    pub(crate) response: bool,
}

/// What the top level of a message is.
#[derive(Debug)]
pub(crate) enum Top {
    /// An object: its envelope.
    Object(Envelope),
    /// An array (a batch).
    Array,
    /// A string, number, boolean or null.
    Other,
}

/// Parses one JSON-RPC message's top level from `bytes` as [`parse_strict`] would (the same
/// errors, depth and duplicate rules), keeping only its envelope's members: the top-level
/// object is not built, its keys are matched without being copied, and `jsonrpc` is compared
/// in place.
pub(crate) fn parse_envelope(bytes: &[u8], max_depth: usize) -> Result<Top, StrictJsonError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => envelope_with(serde_json::Deserializer::from_str(text), max_depth),
        Err(_) => envelope_with(serde_json::Deserializer::from_slice(bytes), max_depth),
    }
}

fn envelope_with<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    max_depth: usize,
) -> Result<Top, StrictJsonError> {
    let top = (&mut de).deserialize_any(TopLevel(Seed { depth: 0, max: max_depth })).map_err(classify)?;
    de.end().map_err(|e| StrictJsonError::Syntax(e.to_string()))?;
    Ok(top)
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

/// The top level of a message (see [`parse_envelope`]).
struct TopLevel(Seed);

impl<'de> Visitor<'de> for TopLevel {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_unit<E>(self) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        // Read to the end under the same rules: a malformed batch is a parse error first.
        let child = self.0.child::<A::Error>()?;
        while seq.next_element_seed(child)?.is_some() {}
        Ok(Top::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let child = self.0.child::<A::Error>()?;
        let mut envelope = Envelope::default();
        // Keys seen, as bits of `Member` (the envelope's) and by name (any other, rare).
        let (mut seen, mut others) = (0u8, Vec::new());
        while let Some(member) = map.next_key_seed(MemberSeed)? {
            let bit = 1u8 << (member.slot() as u8);
            if let Member::Other(name) = &member {
                if others.contains(name) {
                    return Err(A::Error::custom(format_args!("{DUP}{name}")));
                }
                others.push(name.clone());
            } else if seen & bit != 0 {
                return Err(A::Error::custom(format_args!("{DUP}{}", member.name())));
            }
            seen |= bit;
            match member {
                Member::Id => envelope.id = Some(map.next_value_seed(child)?),
                Member::Jsonrpc => envelope.version_ok = map.next_value_seed(Version(child))?,
                Member::Method => envelope.method = Some(map.next_value_seed(child)?),
                Member::Params => envelope.params = Some(map.next_value_seed(child)?),
                Member::Result | Member::Error => {
                    envelope.response = true;
                    map.next_value_seed(child)?;
                }
                Member::Other(_) => {
                    map.next_value_seed(child)?;
                }
            }
        }
        Ok(Top::Object(envelope))
    }
}

/// A top-level member of a message, matched without copying its key.
enum Member {
    Id,
    Jsonrpc,
    Method,
    Params,
    Result,
    Error,
    Other(String),
}

impl Member {
    fn slot(&self) -> usize {
        match self {
            Member::Id => 0,
            Member::Jsonrpc => 1,
            Member::Method => 2,
            Member::Params => 3,
            Member::Result => 4,
            Member::Error => 5,
            Member::Other(_) => 6,
        }
    }
    fn name(&self) -> &str {
        match self {
            Member::Id => "id",
            Member::Jsonrpc => "jsonrpc",
            Member::Method => "method",
            Member::Params => "params",
            Member::Result => "result",
            Member::Error => "error",
            Member::Other(name) => name,
        }
    }
}

struct MemberSeed;

impl<'de> DeserializeSeed<'de> for MemberSeed {
    type Value = Member;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Member, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for MemberSeed {
    type Value = Member;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E>(self, key: &str) -> Result<Member, E> {
        Ok(match key {
            "id" => Member::Id,
            "jsonrpc" => Member::Jsonrpc,
            "method" => Member::Method,
            "params" => Member::Params,
            "result" => Member::Result,
            "error" => Member::Error,
            other => Member::Other(other.to_owned()),
        })
    }
}

/// The `jsonrpc` member: whether it is the string `"2.0"` (anything else is still read under
/// the strict rules).
#[derive(Clone, Copy)]
struct Version(Seed);

impl<'de> DeserializeSeed<'de> for Version {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Version {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"2.0\"")
    }
    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(v == "2.0")
    }
    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<bool, A::Error> {
        Visitor::visit_seq(self.0, seq).map(|_| false)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<bool, A::Error> {
        Visitor::visit_map(self.0, map).map(|_| false)
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
