//! The SSE parser never panics, never holds an event over its limit, and gives the same events
//! however the bytes are split.
use mcp_protocol::sse::SseParser;

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let Some((&split, data)) = data.split_first() else { return };
    let limit = 256;
    let mut whole = SseParser::new(limit);
    let all = whole.feed(data);
    let mut pieces = SseParser::new(limit);
    let step = usize::from(split % 17) + 1;
    let mut got = Vec::new();
    let mut failed = false;
    for c in data.chunks(step) {
        match pieces.feed(c) {
            Ok(evs) => got.extend(evs),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    if let (Ok(all), false) = (&all, failed) {
        assert_eq!(all.len(), got.len(), "split feeding changed the events");
        for (a, b) in all.iter().zip(&got) {
            assert_eq!(a.data, b.data);
            // The limit counts bytes received; invalid UTF-8 becomes U+FFFD (3 bytes) per byte.
            assert!(a.data.len() <= 3 * limit);
        }
        assert_eq!(whole.last_event_id(), pieces.last_event_id());
    }
}
