//! The rules every core applies to the requests it routes: the key a call is tracked under, the
//! error for an id already in use, which requests are modern, and how a message is encoded.

use mcp_protocol::types::RequestId;
use mcp_protocol::ProtocolError;
use serde_json::{Map, Value};

/// The hash tables' state: seeded per session (ids come from the client), faster than SipHash.
pub(crate) type Seeded = foldhash::fast::FixedState;

/// The key a JSON-RPC id is tracked under (ids are strings or integers).
pub(crate) fn key_of(id: &Value) -> RequestId {
    // The one rule of `RequestId::from_id`; an id it has no key for never gets here (the
    // envelope check refuses it), but a key stays total.
    RequestId::from_id(id).unwrap_or_else(|| RequestId::String(id.to_string()))
}

/// The error for a request whose id is already in flight on the same session.
pub fn id_in_use(id: &Value) -> ProtocolError {
    ProtocolError::InvalidRequest(format!("request id {id} is already in use"))
}

/// Whether a request carries the modern per-request `_meta` (so is served statelessly even when
/// a legacy session exists on the same connection).
pub fn is_modern_request(params: &Map<String, Value>) -> bool {
    params.get("_meta").and_then(Value::as_object).is_some_and(|m| m.contains_key(mcp_protocol::meta::PROTOCOL_VERSION))
}

pub(crate) fn encode(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("JSON serializes")
}
