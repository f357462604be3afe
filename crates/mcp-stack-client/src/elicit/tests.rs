//! Tests of `elicit`.

use super::*;
use serde_json::json;

#[test]
fn fills_defaults_and_validates() {
    let params = json!({"requestedSchema": {"type": "object", "properties": {
        "name": {"type": "string", "default": "Ann"}, "age": {"type": "integer", "default": 3},
        "ok": {"type": "boolean"}}, "required": ["name"]}});
    let r = finish_form(&params, json!({"action": "accept", "content": {"ok": true}})).unwrap();
    assert_eq!(r["content"], json!({"name": "Ann", "age": 3, "ok": true}));
    let r = finish_form(&params, json!({"action": "accept", "content": {"age": "x"}}));
    assert!(r.is_err());
    let r = finish_form(&params, json!({"action": "decline"})).unwrap();
    assert_eq!(r, json!({"action": "decline"}));
}
