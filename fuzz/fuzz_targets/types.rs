//! Typed parsing of any JSON-RPC message never panics, and what parses re-serializes and re-parses.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mcp_protocol::types::JsonRpcMessage;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = serde_json::from_slice::<JsonRpcMessage>(data) {
        let v = serde_json::to_value(&m).unwrap();
        let _: JsonRpcMessage = serde_json::from_value(v).unwrap();
    }
});
