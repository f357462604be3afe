//! The icon checks never panic on untrusted bytes, and what they accept is consistent: an
//! image is accepted only with its own magic bytes and within the default limits, and a
//! `data:` URI never decodes to more than its limit.
use mcp_client::__fuzz::{icon_data_uri, icon_image};

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    if let Ok(info) = icon_image(data) {
        let magic: &[u8] = match info.mime.as_str() {
            "image/png" => b"\x89PNG\r\n\x1a\n",
            "image/jpeg" => &[0xFF, 0xD8, 0xFF],
            _ => b"RIFF",
        };
        assert!(data.starts_with(magic), "{info:?}");
        assert!(info.width > 0 && info.height > 0 && info.width <= 4096 && info.height <= 4096, "{info:?}");
        assert!(info.frames >= 1 && info.frames <= 256, "{info:?}");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = icon_data_uri(text);
        let _ = icon_data_uri(&format!("data:;base64,{text}"));
    }
}
