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
