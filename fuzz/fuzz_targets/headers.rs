//! Header value decoding never panics; decoding an encoded value gives the value back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mcp_protocol::headers::{decode_value, encode_value};

fuzz_target!(|data: &[u8]| {
    let _ = decode_value(data);
    if let Ok(s) = std::str::from_utf8(data) {
        assert_eq!(decode_value(encode_value(s).as_bytes()).as_deref(), Ok(s));
    }
});
