//! `mcp tools show NAME`: one tool's definition, readably: name and title, description,
//! annotations, task support, and the input and output schemas as indented property trees
//! (type, required, enum values, bounds, defaults, descriptions, nested objects and arrays of
//! objects), then the schema's other rules (`anyOf`/`oneOf`/`allOf`, `if`/`then`/`else`,
//! `not`, `dependentRequired`, no other keys: see `schema_rules`). `--json` prints the tool definition as the server sent it.

use super::args::{deref, first_line, object_parts, type_summary};
use super::hints::names_hint;
use super::render::{self, Stream};
use super::{Ctx, Failure};
use serde_json::Value;

/// Nesting shown before a schema is cut off (`…`); recursive `$ref`s end here too.
const MAX_DEPTH: usize = 6;

/// Runs `tools show NAME`; with `save_icons`, also fetches the tool's icons (every rule of
/// the spec's icon section applied) and saves the valid ones in that folder.
pub(super) async fn tools_show(ctx: &Ctx<'_>, name: &str, save_icons: Option<&std::path::Path>) -> Result<u8, Failure> {
    let tools = ctx.client.list_tools().await.map_err(|e| ctx.fail(e, "tools/list"))?;
    let Some(tool) = tools.iter().find(|t| t.name == name).map(|t| t.raw()) else {
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        return Err(Failure::new(format!("unknown tool `{name}`: the server does not offer it"))
            .hint(names_hint("tools", &names)));
    };
    if !ctx.opts.json {
        Stream::Out.write(&tool_text(tool));
    }
    let saved = match save_icons {
        Some(dir) => Some(
            super::icons::save_icons(ctx.target, std::slice::from_ref(tool), dir, ctx.opts.json, ctx.opts.icon_limits)
                .await,
        ),
        None => None,
    };
    if ctx.opts.json {
        match saved {
            // The definition as sent, and what became of its icons.
            Some(saved) => render::print_json(&serde_json::json!({ "tool": tool, "icons": saved })),
            None => render::print_json(tool),
        }
    }
    Ok(0)
}

/// The sections of a tool's description, in order: each a heading (`None` for the header
/// lines) and its lines.
pub(super) fn sections(tool: &Value) -> Vec<(Option<&'static str>, Vec<String>)> {
    let mut out = Vec::new();
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
    let title =
        tool.get("title").or_else(|| tool.pointer("/annotations/title")).and_then(Value::as_str).filter(|t| *t != name);
    let mut head = vec![match title {
        Some(t) => format!("{} — {t}", Stream::Out.bold(name)),
        None => Stream::Out.bold(name),
    }];
    if let Some(d) = tool.get("description").and_then(Value::as_str).filter(|d| !d.trim().is_empty()) {
        head.extend(d.trim_end().lines().map(|l| l.trim_end().to_owned()));
    }
    out.push((None, head));
    if let Some(a) = tool.get("annotations").and_then(Value::as_object).filter(|a| !a.is_empty()) {
        out.push((Some("Annotations"), annotation_lines(a)));
    }
    let icons = super::icons::icon_lines(tool);
    if !icons.is_empty() {
        out.push((Some("Icons"), icons));
    }
    if let Some(t) = tool.pointer("/execution/taskSupport").and_then(Value::as_str) {
        out.push((Some("Task support"), vec![format!("  {t}")]));
    }
    let input = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
    out.push((Some("Input schema (arguments)"), schema_tree(&input)));
    if let Some(o) = tool.get("outputSchema") {
        out.push((Some("Output schema (structuredContent)"), schema_tree(o)));
    }
    out
}

/// `tools show` as text.
pub(super) fn tool_text(tool: &Value) -> String {
    let mut s = String::new();
    for (i, (heading, lines)) in sections(tool).into_iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        if let Some(h) = heading {
            s.push_str(&format!("{}\n", Stream::Out.bold(&format!("{h}:"))));
        }
        for l in lines {
            s.push_str(&l);
            s.push('\n');
        }
    }
    s
}

fn annotation_lines(a: &serde_json::Map<String, Value>) -> Vec<String> {
    let meaning = |k: &str, v: &Value| -> Option<&'static str> {
        Some(match (k, v.as_bool()?) {
            ("readOnlyHint", true) => "does not modify its environment",
            ("readOnlyHint", false) => "may modify its environment",
            ("destructiveHint", true) => "may destroy or overwrite data",
            ("destructiveHint", false) => "only adds, never destroys",
            ("idempotentHint", true) => "repeating a call has no further effect",
            ("idempotentHint", false) => "repeating a call may have more effects",
            ("openWorldHint", true) => "talks to the outside world",
            ("openWorldHint", false) => "works in a closed domain",
            _ => return None,
        })
    };
    let width = a.keys().map(String::len).max().unwrap_or(0);
    a.iter()
        .map(|(k, v)| {
            let shown = v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string());
            match meaning(k, v) {
                Some(m) => format!("  {k:width$}  {shown} {}", Stream::Out.dim(&format!("({m})"))),
                None => format!("  {k:width$}  {shown}"),
            }
        })
        .collect()
}

/// A schema's properties as an indented tree (`root` resolves `$ref`s).
pub(super) fn schema_tree(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if !schema.is_object() {
        out.push("  (none given)".to_owned());
        return out;
    }
    properties(schema, schema, 1, &mut out);
    if out.is_empty() {
        let t = type_summary(deref(schema, schema));
        out.push(if t == "object" { "  (no properties)".to_owned() } else { format!("  {t}") });
    }
    let rules = super::schema_rules::rule_lines(schema, schema);
    if !rules.is_empty() {
        out.push("  rules:".to_owned());
        out.extend(rules.into_iter().map(|r| format!("    {r}")));
    }
    out
}

fn properties(root: &Value, schema: &Value, depth: usize, out: &mut Vec<String>) {
    let pad = "  ".repeat(depth);
    if depth > MAX_DEPTH {
        out.push(format!("{pad}…"));
        return;
    }
    let parts = object_parts(root, schema);
    let mut required: Vec<&str> = Vec::new();
    let mut props: Vec<(&String, &Value)> = Vec::new();
    for p in &parts {
        required.extend(p.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str));
        for (k, v) in p.get("properties").and_then(Value::as_object).into_iter().flatten() {
            if !props.iter().any(|(n, _)| *n == k) {
                props.push((k, v));
            }
        }
    }
    let width = props.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (name, prop) in props {
        let p = deref(root, prop);
        let req = if required.contains(&name.as_str()) { "required" } else { "optional" };
        let mut line = format!("{pad}{name:width$}  {}, {req}", type_summary(&leaf(root, p)));
        if let Some(d) = p.get("default").filter(|d| !d.is_null()) {
            line.push_str(&format!(", default {d}"));
        }
        if let Some(d) = p.get("description").or_else(|| p.get("title")).and_then(Value::as_str) {
            line.push_str(&format!(" {}", Stream::Out.dim(&format!("— {}", first_line(d)))));
        }
        out.push(line);
        let nested = if has_properties(root, p) {
            Some(p)
        } else {
            p.get("items").map(|i| deref(root, i)).filter(|i| has_properties(root, i))
        };
        if let Some(n) = nested {
            properties(root, n, depth + 1, out);
        }
    }
    for p in &parts {
        match p.get("additionalProperties") {
            Some(Value::Bool(true)) => out.push(format!("{pad}(other keys allowed)")),
            Some(s @ Value::Object(_)) => {
                out.push(format!("{pad}(any other key)  {}", type_summary(&leaf(root, deref(root, s)))))
            }
            _ => {}
        }
    }
}

/// Whether `s` has a tree to show beneath it: properties, or a rule for other keys.
fn has_properties(root: &Value, s: &Value) -> bool {
    object_parts(root, s).iter().any(|p| {
        p.get("properties").and_then(Value::as_object).is_some_and(|m| !m.is_empty())
            || matches!(p.get("additionalProperties"), Some(Value::Object(_) | Value::Bool(true)))
    })
}

/// A schema to summarize: `anyOf`/`oneOf` branches (an `Option<T>`'s `T | null`) merged into
/// one `type` list, `$ref`s to objects shown as `object`.
fn leaf(root: &Value, s: &Value) -> Value {
    let mut s = s.clone();
    for k in ["anyOf", "oneOf"] {
        let Some(branches) = s.get(k).and_then(Value::as_array).cloned() else { continue };
        if branches.iter().all(|b| b.get("const").is_some()) {
            continue;
        }
        let mut types: Vec<Value> = Vec::new();
        for b in &branches {
            let b = deref(root, b);
            let t = match b.get("type") {
                Some(Value::Array(ts)) => ts.clone(),
                Some(t) => vec![t.clone()],
                None if b.get("properties").is_some() => vec![Value::from("object")],
                None => vec![],
            };
            for t in t {
                if !types.contains(&t) {
                    types.push(t);
                }
            }
        }
        if s.get("type").is_none() && !types.is_empty() {
            s["type"] = Value::Array(types);
        }
    }
    if s.get("type").is_none() && s.get("properties").is_some() {
        s["type"] = Value::from("object");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_every_part_of_a_tool() {
        let tool = json!({
            "name": "book", "title": "Book a table", "description": "Books a table.\nSecond line.",
            "annotations": {"readOnlyHint": false, "title": "Booking"},
            "execution": {"taskSupport": "optional"},
            "inputSchema": {"type": "object", "required": ["when"],
                "$defs": {"guest": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
                "properties": {
                    "when": {"type": "string", "description": "ISO date."},
                    "size": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
                    "seat": {"enum": ["in", "out"]},
                    "host": {"anyOf": [{"$ref": "#/$defs/guest"}, {"type": "null"}]},
                    "guests": {"type": "array", "items": {"$ref": "#/$defs/guest"}},
                    "notes": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
        });
        let text = console::strip_ansi_codes(&tool_text(&tool)).into_owned();
        let expected = "\
book — Book a table
Books a table.
Second line.

Annotations:
  readOnlyHint  false (may modify its environment)
  title         Booking

Task support:
  optional

Input schema (arguments):
  guests  array of object, optional
    name  string, required
  host    object | null, optional
    name  string, required
  notes   object, optional
    (any other key)  string
  seat    \"in\" | \"out\", optional
  size    integer (1..12), optional, default 2
  when    string, required — ISO date.

Output schema (structuredContent):
  id  string, required
";
        assert_eq!(text, expected);
        let bare = json!({"name": "ping", "inputSchema": {"type": "object", "properties": {}}});
        assert_eq!(
            console::strip_ansi_codes(&tool_text(&bare)),
            "ping\n\nInput schema (arguments):\n  (no properties)\n"
        );
    }
}
