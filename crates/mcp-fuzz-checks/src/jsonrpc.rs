//! Strict JSON + JSON-RPC classification never panics, accepted requests re-parse identically,
//! and the envelope read straight from the bytes agrees with the whole value's.
use mcp_protocol::jsonrpc::{classify, parse_incoming, Incoming};
use mcp_protocol::strict::parse_strict;

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    for depth in [1, 3, 64] {
        let fast = parse_incoming(data, depth);
        let slow = parse_strict(data, depth).map(classify);
        match (&fast, slow) {
            (Ok(a), Ok(Ok(b))) => assert_eq!(a, &b),
            (Err(a), Ok(Err(b))) => assert_eq!((&a.id, a.error.code()), (&b.id, b.error.code())),
            (Err(a), Err(_)) => assert_eq!((&a.id, a.error.code()), (&None, -32700)),
            (fast, slow) => panic!("the envelope parse gave {fast:?}, the whole value {slow:?}"),
        }
    }
    if let Ok(Incoming::Request(r)) = parse_incoming(data, 64) {
        let again = serde_json::json!({"jsonrpc": "2.0", "id": r.id, "method": r.method, "params": r.params});
        let bytes = serde_json::to_vec(&again).unwrap();
        assert!(matches!(parse_incoming(&bytes, 64), Ok(Incoming::Request(_))));
        let _ = mcp_protocol::RequestMeta::from_params(&r.params);
    }
}
