//! Tests of `roots_handler`.

use super::*;
use mcp_protocol::types::Root;
use serde_json::json;

#[tokio::test]
async fn declares_roots_and_answers_with_the_handler() {
    let b = ClientBuilder::new("t", "1")
        .on_roots(|| async { Ok(ListRootsResult { roots: vec![Root::new("file:///a")], ..Default::default() }) });
    assert!(b.handlers.capabilities().roots.is_some());
    let answer = b.handlers.answer("roots/list", json!({})).await.unwrap();
    assert_eq!(answer, json!({ "roots": [{ "uri": "file:///a" }] }));
}
