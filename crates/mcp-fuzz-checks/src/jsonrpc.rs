//! Strict JSON + JSON-RPC classification never panics, and accepted requests re-parse identically.
use mcp_protocol::jsonrpc::{parse_incoming, Incoming};

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    if let Ok(Incoming::Request(r)) = parse_incoming(data, 64) {
        let again = serde_json::json!({"jsonrpc": "2.0", "id": r.id, "method": r.method, "params": r.params});
        let bytes = serde_json::to_vec(&again).unwrap();
        assert!(matches!(parse_incoming(&bytes, 64), Ok(Incoming::Request(_))));
        let _ = mcp_protocol::RequestMeta::from_params(&r.params);
    }
}
