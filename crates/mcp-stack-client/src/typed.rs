//! [`Typed`]: a schema type as the server sent it, typed view and raw JSON together.

use crate::error::ClientError;
use mcp_protocol::types::DiscoverResult;
use serde::de::DeserializeOwned;
use serde::{Deserialize as _, Serialize, Serializer};
use serde_json::Value;
use std::ops::Deref;

/// A result (or list item) of the schema, as the server sent it: the typed value (through
/// [`Deref`], so `tool.name` works) and the JSON it was read from ([`Typed::raw`]), so
/// nothing of a newer revision or an extension is lost, even inside nested objects the
/// schema types do not extend. Serializing it writes the raw JSON, unchanged.
///
/// Unknown top-level fields also land in the typed value's `extra` map.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed<T> {
    value: T,
    raw: Value,
}

impl<T: DeserializeOwned> Typed<T> {
    /// Reads `raw` as a `T`; `what` names the method (and field) in the error, e.g.
    /// `tools/list: tools[2]`.
    pub(crate) fn parse(raw: Value, what: &str) -> Result<Self, ClientError> {
        match T::deserialize(&raw) {
            Ok(value) => Ok(Self { value, raw }),
            Err(e) => Err(ClientError::invalid_response(format!("{what}: {e}")).caused_by(e)),
        }
    }
}

impl<T> Typed<T> {
    /// The JSON the server sent.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The typed value, owned (the raw JSON is dropped).
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The JSON the server sent, owned.
    pub fn into_raw(self) -> Value {
        self.raw
    }

    /// Both halves, owned.
    pub fn into_parts(self) -> (T, Value) {
        (self.value, self.raw)
    }
}

impl<T> Deref for Typed<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> AsRef<T> for Typed<T> {
    fn as_ref(&self) -> &T {
        &self.value
    }
}

/// Writes the raw JSON, as it came.
impl<T> Serialize for Typed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(s)
    }
}

/// The compact raw JSON.
impl<T> std::fmt::Display for Typed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.raw)
    }
}

/// A `server/discover` result (or, from a legacy server, its `initialize` result) read as a
/// [`DiscoverResult`]. Lenient where servers commonly are: a missing `ttlMs` reads as 0, a
/// missing `cacheScope` as `private`, and a legacy result's `protocolVersion` stands for
/// `supportedVersions` (its `serverInfo` and `protocolVersion` stay in `extra`).
pub(crate) fn discover_result(raw: Value, what: &str) -> Result<Typed<DiscoverResult>, ClientError> {
    let mut filled = raw.clone();
    if let Some(m) = filled.as_object_mut() {
        m.entry("ttlMs").or_insert(Value::from(0));
        m.entry("cacheScope").or_insert(Value::from("private"));
        if !m.contains_key("supportedVersions") {
            let v = m.get("protocolVersion").cloned().into_iter().collect();
            m.insert("supportedVersions".into(), Value::Array(v));
        }
    }
    let value = DiscoverResult::deserialize(&filled)
        .map_err(|e| ClientError::invalid_response(format!("{what}: {e}")).caused_by(e))?;
    Ok(Typed { value, raw })
}

#[cfg(test)]
mod tests;
