//! Tests of `result`.

use super::*;
use serde_json::json;

#[test]
fn views_of_a_result() {
    let r = ToolResult::new(
        json!({"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "", "mimeType": "image/png"},
        {"type": "text", "text": "b"}], "structuredContent": {"n": 1}, "isError": false}),
    );
    assert_eq!(r.text(), "a\nb");
    assert!(!r.is_error());
    #[derive(serde::Deserialize)]
    struct N {
        n: i64,
    }
    assert_eq!(r.structured::<N>().unwrap().n, 1);
    assert!(r.structured::<String>().is_err());
    assert_eq!(r.content().unwrap().len(), 3);
    assert_eq!(r.typed().unwrap().content.len(), 3);
}
