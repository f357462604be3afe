//! Tests of `cache`.

use super::*;
use serde_json::json;

#[test]
fn honours_ttl() {
    let c = Cache::default();
    c.put("a".into(), &json!({"ttlMs": 60_000, "x": 1}));
    c.put("b".into(), &json!({"ttlMs": 0}));
    c.put("c".into(), &json!({"ttlMs": -5}));
    assert_eq!(c.get("a").unwrap()["x"], 1);
    assert!(c.get("b").is_none());
    assert!(c.get("c").is_none());
    c.invalidate("a");
    assert!(c.get("a").is_none());
}

#[test]
fn holds_at_most_its_byte_bound() {
    let c = Cache::default();
    let big = json!({"ttlMs": 60_000, "x": "y".repeat(MAX_BYTES / 3)});
    for k in ["a", "b", "c", "d"] {
        c.put(k.into(), &big);
    }
    assert!(c.entries.lock().bytes <= MAX_BYTES);
    assert!(c.get("a").is_some() && c.get("b").is_some());
    assert!(c.get("c").is_none() && c.get("d").is_none(), "past the bound: not cached");
    c.invalidate("a");
    c.put("d".into(), &big);
    assert!(c.get("d").is_some(), "room again once an entry is gone");
}
