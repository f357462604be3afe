//! Typed parsing of any JSON-RPC message never panics, and what parses re-serializes and re-parses.
use mcp_protocol::types::JsonRpcMessage;

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    if let Ok(m) = serde_json::from_slice::<JsonRpcMessage>(data) {
        let v = serde_json::to_value(&m).unwrap();
        let _: JsonRpcMessage = serde_json::from_value(v).unwrap();
    }
}
