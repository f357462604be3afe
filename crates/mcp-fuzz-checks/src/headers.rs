//! Header value decoding never panics; decoding an encoded value gives the value back.
use mcp_protocol::headers::{decode_value, encode_value};

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let _ = decode_value(data);
    if let Ok(s) = std::str::from_utf8(data) {
        assert_eq!(decode_value(encode_value(s).as_bytes()).as_deref(), Ok(s));
    }
}
