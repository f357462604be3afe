//! The rules of an object schema that are not properties: `anyOf`/`oneOf`/`allOf` of
//! constraints, `if`/`then`/`else`, `not`, `dependentRequired`, closed objects. `tools show`
//! prints them under the property tree, so that a call the server refuses is explained by
//! what the listing shows.

use super::args::{deref, type_summary};
use serde_json::Value;

/// How long one rule's text may get before it is cut (`…`).
const MAX_RULE: usize = 160;

/// One line per rule of `schema` (its `$ref` resolved against `root`), without indentation.
pub(super) fn rule_lines(root: &Value, schema: &Value) -> Vec<String> {
    let s = deref(root, schema);
    let mut out = Vec::new();
    if s.get("additionalProperties") == Some(&Value::Bool(false)) {
        out.push("no other keys".to_owned());
    }
    for (key, word) in [("anyOf", "at least one of"), ("oneOf", "exactly one of"), ("allOf", "all of")] {
        let Some(branches) = s.get(key).and_then(Value::as_array) else { continue };
        // Branches that only add properties are shown in the tree already.
        let rules: Vec<String> = branches.iter().filter_map(|b| condition(root, b)).collect();
        match rules.len() {
            0 => {}
            1 if key != "oneOf" => out.push(rules[0].clone()),
            _ => out.push(format!("{word}: {}", rules.join(" | "))),
        }
    }
    if let Some(cond) = s.get("if").and_then(|c| condition(root, c)) {
        let mut line = format!("if {cond}");
        if let Some(then) = s.get("then").and_then(|t| condition(root, t)) {
            line.push_str(&format!(": {then}"));
        }
        if let Some(other) = s.get("else").and_then(|e| condition(root, e)) {
            line.push_str(&format!("; otherwise {other}"));
        }
        out.push(line);
    }
    if let Some(not) = s.get("not").and_then(|n| condition(root, n)) {
        out.push(format!("not ({not})"));
    }
    if let Some(deps) = s.get("dependentRequired").and_then(Value::as_object) {
        for (k, v) in deps {
            let names = names(v);
            if !names.is_empty() {
                out.push(format!("with {k}: {} required", names.join(", ")));
            }
        }
    }
    out.into_iter().map(cut).collect()
}

/// A constraint in words (`phone required`, `contactMethod = "phone"`), or `None` when it
/// says nothing beyond what the property tree shows.
fn condition(root: &Value, c: &Value) -> Option<String> {
    let c = deref(root, c);
    let Value::Object(map) = c else {
        return match c {
            Value::Bool(false) => Some("never".into()),
            _ => None,
        };
    };
    let mut parts = Vec::new();
    // Names shown with their value (`k = v`): `k` being required goes without saying.
    let mut valued: Vec<&str> = Vec::new();
    for (k, p) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let p = deref(root, p);
        let shown = match (p.get("const"), p.get("enum")) {
            (Some(v), _) => format!("{k} = {v}"),
            (None, Some(_)) => format!("{k} in {}", type_summary(p)),
            // Only constraints count here: a property's type is in the tree.
            _ => continue,
        };
        parts.push(shown);
        valued.push(k);
    }
    let required = map.get("required").map(names).unwrap_or_default();
    let rest: Vec<&str> = required.iter().map(String::as_str).filter(|r| !valued.contains(r)).collect();
    if !rest.is_empty() {
        parts.push(format!("{} required", rest.join(", ")));
    }
    for (key, word) in [("anyOf", "any of"), ("oneOf", "one of"), ("allOf", "all of")] {
        let inner: Vec<String> =
            map.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(|b| condition(root, b)).collect();
        if !inner.is_empty() {
            parts.push(format!("{word} ({})", inner.join(" | ")));
        }
    }
    if let Some(not) = map.get("not").and_then(|n| condition(root, n)) {
        parts.push(format!("not ({not})"));
    }
    (!parts.is_empty()).then(|| parts.join(" and "))
}

fn names(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
}

fn cut(mut s: String) -> String {
    if s.chars().count() > MAX_RULE {
        s = s.chars().take(MAX_RULE - 1).collect();
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn composition_rules_read_as_sentences() {
        // The shape of the everything server's `json_schema_2020_12_tool`.
        let s = json!({"type": "object",
            "properties": {"contactMethod": {"type": "string", "enum": ["phone", "email"]},
                           "phone": {"type": "string"}, "email": {"type": "string"}},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]}, "else": {"required": ["email"]},
            "additionalProperties": false});
        assert_eq!(
            rule_lines(&s, &s),
            [
                "no other keys",
                "any of (phone required | email required)",
                "if contactMethod = \"phone\": phone required; otherwise email required",
            ]
        );
        let t = json!({"oneOf": [{"required": ["a"]}, {"required": ["b", "c"]}], "not": {"required": ["d"]},
                       "dependentRequired": {"card": ["cvc"]}});
        assert_eq!(
            rule_lines(&t, &t),
            ["exactly one of: a required | b, c required", "not (d required)", "with card: cvc required"]
        );
        // Branches that only add properties say nothing here (the tree shows them).
        let plain = json!({"anyOf": [{"properties": {"x": {"type": "string"}}}, {"type": "null"}]});
        assert!(rule_lines(&plain, &plain).is_empty());
        // A required name whose property only has a type is still said to be required.
        let typed =
            json!({"if": {"properties": {"x": {"type": "string"}}, "required": ["x"]}, "then": {"required": ["y"]}});
        assert_eq!(rule_lines(&typed, &typed), ["if x required: y required"]);
    }
}
