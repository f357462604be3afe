use super::*;
use serde_json::json;

fn stdio() -> Value {
    json!({"type": "stdio", "command": "srv", "args": ["-v"]})
}

#[test]
fn an_added_server_leaves_every_other_byte_as_it_was() {
    let before =
        "{\n  \"zeta\": 123456789012345678901234567890,\n  \"alpha\": {\"b\": 1, \"a\": 1.0e+2, \"b\": 2},\n  \
                  \"mcpServers\": {\n    \"old\": {\"command\": \"old\"}\n  },\n  \"last\": [1.50, -0]\n}\n";
    let after = add_entry(before, "mcpServers", "new", &stdio(), false).unwrap();
    assert_eq!(
        after,
        "{\n  \"zeta\": 123456789012345678901234567890,\n  \"alpha\": {\"b\": 1, \"a\": 1.0e+2, \"b\": 2},\n  \
         \"mcpServers\": {\n    \"old\": {\"command\": \"old\"},\n    \"new\": {\n      \"type\": \"stdio\",\n      \
         \"command\": \"srv\",\n      \"args\": [\n        \"-v\"\n      ]\n    }\n  },\n  \"last\": [1.50, -0]\n}\n"
    );
}

#[test]
fn the_servers_object_is_added_or_filled_in_the_file_s_own_layout() {
    let tabs = "{\n\t\"a\": 1\n}";
    assert_eq!(
        add_entry(tabs, "servers", "x", &json!({"url": "u"}), false).unwrap(),
        "{\n\t\"a\": 1,\n\t\"servers\": {\n\t\t\"x\": {\n\t\t\t\"url\": \"u\"\n\t\t}\n\t}\n}"
    );
    let inline = r#"{"a": 1, "mcpServers": {"o": {}}}"#;
    assert_eq!(
        add_entry(inline, "mcpServers", "x", &stdio(), false).unwrap(),
        r#"{"a": 1, "mcpServers": {"o": {}, "x": {"type": "stdio", "command": "srv", "args": ["-v"]}}}"#
    );
    assert_eq!(
        add_entry(r#"{"a": 1}"#, "mcpServers", "x", &json!({"url": "u"}), false).unwrap(),
        r#"{"a": 1, "mcpServers": {"x": {"url": "u"}}}"#
    );
    let empty = "{\n  \"mcpServers\": {}\n}\n";
    assert_eq!(
        add_entry(empty, "mcpServers", "x", &json!({"url": "u"}), false).unwrap(),
        "{\n  \"mcpServers\": {\n    \"x\": {\n      \"url\": \"u\"\n    }\n  }\n}\n"
    );
    for blank in ["", " \n", "{}"] {
        assert_eq!(
            add_entry(blank, "mcpServers", "x", &json!({"url": "u"}), false).unwrap(),
            "{\n  \"mcpServers\": {\n    \"x\": {\n      \"url\": \"u\"\n    }\n  }\n}\n"
        );
    }
}

#[test]
fn force_replaces_only_the_named_server() {
    let before = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": 1e400,\n    \"c\": {}\n  }\n}\n";
    let after = add_entry(before, "mcpServers", "a", &json!({"url": "u"}), true).unwrap();
    assert_eq!(
        after,
        "{\n  \"mcpServers\": {\n    \"a\": {\n      \"url\": \"u\"\n    },\n    \"b\": 1e400,\n    \"c\": {}\n  }\n}\n"
    );
    assert_eq!(add_entry(before, "mcpServers", "a", &json!({}), false), Err(Refusal::Exists));
}

#[test]
fn duplicate_keys_and_other_shapes_are_refused() {
    let top = r#"{"mcpServers": {}, "mcpServers": {"a": {}}}"#;
    let r = add_entry(top, "mcpServers", "x", &stdio(), false).unwrap_err();
    assert_eq!(r, Refusal::Duplicate { key: "mcpServers".into(), in_servers: false });
    assert!(
        r.message("mcpServers", "x").contains("written twice at the top level"),
        "{}",
        r.message("mcpServers", "x")
    );
    let inner = r#"{"mcpServers": {"a": {"command": "1"}, "a": {"command": "2"}}}"#;
    let r = add_entry(inner, "mcpServers", "x", &stdio(), false).unwrap_err();
    assert_eq!(r, Refusal::Duplicate { key: "a".into(), in_servers: true });
    assert!(r.message("mcpServers", "x").contains("in `mcpServers`"));
    assert_eq!(add_entry("[1]", "mcpServers", "x", &stdio(), false), Err(Refusal::NotObject));
    assert_eq!(add_entry(r#"{"mcpServers": []}"#, "mcpServers", "x", &stdio(), false), Err(Refusal::ServersNotObject));
    assert!(matches!(add_entry("{\"a\": 1,}", "mcpServers", "x", &stdio(), false), Err(Refusal::NotJson(_))));
    assert!(matches!(add_entry("{} {}", "mcpServers", "x", &stdio(), false), Err(Refusal::NotJson(_))));
}

#[test]
fn escaped_keys_are_compared_by_their_value() {
    let before = r#"{"mcp\u0053ervers": {"\u0061": {}}}"#;
    assert_eq!(add_entry(before, "mcpServers", "a", &json!({}), false), Err(Refusal::Exists));
    let after = add_entry(before, "mcpServers", "b", &json!({}), false).unwrap();
    assert_eq!(after, r#"{"mcp\u0053ervers": {"\u0061": {}, "b": {}}}"#);
}

/// An object of `n` members `"k0": 0, ...`, with `extra` members appended.
fn many_keys(n: usize, extra: &str) -> String {
    let mut s = String::from("{\"mcpServers\": {");
    for i in 0..n {
        s.push_str(&format!("\"k{i}\": {i}, "));
    }
    s.push_str(extra);
    s.push_str("}}");
    s
}

#[test]
fn many_keys_are_checked_for_duplicates_in_one_pass() {
    // 200,000 members: a pairwise check (about 2e10 key comparisons, once for the edit and
    // once for its proof) does not finish in any reasonable time; a set check is instant.
    const N: usize = 200_000;
    let after = add_entry(&many_keys(N, "\"last\": 0"), "mcpServers", "x", &json!({}), false).unwrap();
    assert!(after.ends_with("\"last\": 0, \"x\": {}}}"), "{}", &after[after.len() - 40..]);
    let r = add_entry(&many_keys(N, "\"k7\": 1"), "mcpServers", "x", &json!({}), false).unwrap_err();
    assert_eq!(r, Refusal::Duplicate { key: "k7".into(), in_servers: true });
}
