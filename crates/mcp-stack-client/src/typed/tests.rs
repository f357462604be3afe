//! Tests of `typed`.

use super::*;
use mcp_protocol::types::Tool;
use serde_json::json;

#[test]
fn keeps_the_raw_json_and_unknown_fields() {
    let raw = json!({"name": "t", "inputSchema": {"type": "object"}, "x-new": {"deep": [1]},
        "annotations": {"readOnlyHint": true, "futureHint": 1}});
    let t = Typed::<Tool>::parse(raw.clone(), "tools/list").unwrap();
    assert_eq!(t.name, "t");
    assert_eq!(t.extra["x-new"], json!({"deep": [1]}));
    // A nested field the typed annotations have no slot for survives in the raw JSON.
    assert_eq!(t.raw()["annotations"]["futureHint"], 1);
    assert_eq!(serde_json::to_value(&t).unwrap(), raw);
    let bad = Typed::<Tool>::parse(json!({"name": 3}), "tools/list: tools[0]").unwrap_err();
    assert!(
        matches!(&bad, ClientError::InvalidResponse { message: m, .. } if m.starts_with("tools/list: tools[0]: ")),
        "{bad}"
    );
}

#[test]
fn a_legacy_initialize_result_reads_as_a_discover_result() {
    let init = json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"}, "instructions": "hi"});
    let d = discover_result(init.clone(), "initialize").unwrap();
    assert_eq!(d.supported_versions, ["2025-06-18"]);
    assert_eq!(d.instructions.as_deref(), Some("hi"));
    assert_eq!(d.extra["serverInfo"]["name"], "s");
    assert_eq!(d.raw(), &init);
    assert!(discover_result(json!({"capabilities": []}), "server/discover").is_err());
}
