//! Turning command-line words into request arguments: `ARGS_JSON` plus `--arg key=value`
//! pairs typed by a tool's `inputSchema`, `K=V` lists, `Name: value` headers, roots, and the
//! argument hints shown when a server rejects arguments.

use serde_json::{json, Map, Value};

/// Splits `key=value` (the value may contain `=`).
pub(super) fn split_pair<'a>(flag: &str, s: &'a str) -> Result<(&'a str, &'a str), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k, v)),
        _ => Err(format!("{flag} expects KEY=VALUE, got {s:?}")),
    }
}

/// The JSON types a schema property allows (`type` as a string or an array; `enum`/`const`
/// values count too).
fn schema_types(prop: &Value) -> Vec<String> {
    let mut out: Vec<String> = match prop.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    if out.is_empty() {
        let enums = prop.get("enum").and_then(Value::as_array).cloned().unwrap_or_default();
        if !enums.is_empty() && enums.iter().all(Value::is_string) {
            out.push("string".into());
        }
        if prop.get("const").is_some_and(Value::is_string) {
            out.push("string".into());
        }
    }
    out
}

/// Types one `--arg` value. Without schema information the value is JSON if it parses, else
/// a string. A property typed `string` keeps the raw text (`"3"` stays `"3"`); a property
/// typed otherwise must parse as JSON (a bare word is still accepted as a string when the
/// schema allows strings too).
pub(super) fn typed_value(key: &str, raw: &str, prop: Option<&Value>) -> Result<Value, String> {
    let parsed = serde_json::from_str::<Value>(raw).ok();
    let Some(prop) = prop else {
        return Ok(parsed.unwrap_or_else(|| Value::String(raw.to_owned())));
    };
    let types = schema_types(prop);
    if types.is_empty() {
        return Ok(parsed.unwrap_or_else(|| Value::String(raw.to_owned())));
    }
    if types.len() == 1 && types[0] == "string" {
        return Ok(Value::String(raw.to_owned()));
    }
    let fits = |v: &Value| {
        types.iter().any(|t| match t.as_str() {
            "string" => v.is_string(),
            "number" => v.is_number(),
            "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
            "boolean" => v.is_boolean(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            "null" => v.is_null(),
            _ => true,
        })
    };
    match parsed {
        Some(v) if fits(&v) => Ok(v),
        _ if types.iter().any(|t| t == "string") => Ok(Value::String(raw.to_owned())),
        _ => Err(format!("--arg {key}: expected {}, got {raw:?}", types.join(" or "))),
    }
}

/// Builds a tool's `arguments`: the `ARGS_JSON` object (if any), then each `--arg` pair on top.
pub(super) fn tool_arguments(
    json_text: Option<&str>,
    pairs: &[String],
    input_schema: Option<&Value>,
) -> Result<Value, String> {
    let mut args = match json_text {
        None => Map::new(),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => m,
            Ok(other) => return Err(format!("ARGS_JSON must be a JSON object, got {}", kind_of(&other))),
            Err(e) => return Err(format!("ARGS_JSON is not valid JSON: {e}")),
        },
    };
    let props = input_schema.and_then(|s| s.get("properties")).and_then(Value::as_object);
    for pair in pairs {
        let (k, v) = split_pair("--arg", pair)?;
        let value = typed_value(k, v, props.and_then(|p| p.get(k)))?;
        args.insert(k.to_owned(), value);
    }
    Ok(Value::Object(args))
}

/// A prompt's `arguments` (always strings).
pub(super) fn prompt_arguments(pairs: &[String]) -> Result<Map<String, Value>, String> {
    let mut args = Map::new();
    for pair in pairs {
        let (k, v) = split_pair("--arg", pair)?;
        args.insert(k.to_owned(), Value::String(v.to_owned()));
    }
    Ok(args)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses `Name: value` into a lower-case header name and its value.
pub(super) fn parse_header(s: &str) -> Result<(String, String), String> {
    let (name, value) = s.split_once(':').ok_or_else(|| format!("--header expects 'Name: value', got {s:?}"))?;
    let name = name.trim();
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !valid {
        return Err(format!("--header: {name:?} is not a valid header name"));
    }
    let value = value.trim();
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(format!("--header {name}: the value contains a line break"));
    }
    Ok((name.to_ascii_lowercase(), value.to_owned()))
}

/// A `--root`: a URI as given, or a local path turned into a `file://` URI.
pub(super) fn root(s: &str) -> Result<Value, String> {
    let uri = if s.contains("://") || s.starts_with("file:") {
        s.to_owned()
    } else {
        let abs = std::path::absolute(s).map_err(|e| format!("--root {s}: {e}"))?;
        url::Url::from_file_path(&abs).map_err(|()| format!("--root {s}: cannot make a file:// URI of it"))?.to_string()
    };
    let name =
        uri.trim_end_matches('/').rsplit('/').next().filter(|n| !n.is_empty() && !n.ends_with(':')).map(str::to_owned);
    let mut r = json!({ "uri": uri });
    if let Some(n) = name {
        r["name"] = json!(n);
    }
    Ok(r)
}

/// A short description of a JSON Schema property's type: `string`, `integer (1..100)`,
/// `"a" | "b"`...
pub(super) fn type_summary(prop: &Value) -> String {
    if let Some(vals) = prop.get("enum").and_then(Value::as_array) {
        return vals.iter().map(Value::to_string).collect::<Vec<_>>().join(" | ");
    }
    if let Some(vals) = prop.get("oneOf").and_then(Value::as_array) {
        if vals.iter().all(|v| v.get("const").is_some()) {
            return vals.iter().map(|v| v["const"].to_string()).collect::<Vec<_>>().join(" | ");
        }
    }
    let mut t = schema_types(prop).join(" | ");
    if t.is_empty() {
        t = if prop.get("$ref").is_some() { "object".into() } else { "any".into() };
    }
    if t == "array" {
        if let Some(items) = prop.get("items") {
            t = format!("array of {}", type_summary(items));
        }
    }
    let min = prop.get("minimum").or_else(|| prop.get("minLength"));
    let max = prop.get("maximum").or_else(|| prop.get("maxLength"));
    match (min, max) {
        (Some(a), Some(b)) => format!("{t} ({a}..{b})"),
        (Some(a), None) => format!("{t} (>= {a})"),
        (None, Some(b)) => format!("{t} (<= {b})"),
        (None, None) => t,
    }
}

/// Lines describing the arguments a tool takes, for error hints.
pub(super) fn schema_hint(tool: &str, input_schema: &Value) -> Vec<String> {
    let props = input_schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    if props.is_empty() {
        return vec![format!("`{tool}` takes no arguments")];
    }
    let required: Vec<&str> = input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = vec![format!("arguments of `{tool}`:")];
    let width = props.keys().map(String::len).max().unwrap_or(0);
    for (name, prop) in &props {
        let req = if required.contains(&name.as_str()) { "required" } else { "optional" };
        let desc = prop
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!(" — {}", first_line(d)))
            .unwrap_or_default();
        out.push(format!("  {name:width$}  {}, {req}{desc}", type_summary(prop)));
    }
    out
}

/// The first line of `s`, with runs of whitespace collapsed.
pub(super) fn first_line(s: &str) -> String {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_by_schema() {
        let schema = json!({"type": "object", "properties": {
            "s": {"type": "string"}, "n": {"type": "integer"}, "b": {"type": "boolean"},
            "m": {"type": ["string", "number"]}, "o": {"type": "object"}}});
        let pairs: Vec<String> = ["s=3", "n=3", "b=true", "m=x", "free=4", "word=hello", "o={\"a\":1}"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let args = tool_arguments(Some(r#"{"s": "old", "keep": 1}"#), &pairs, Some(&schema)).unwrap();
        assert_eq!(
            args,
            json!({"s": "3", "n": 3, "b": true, "m": "x", "free": 4, "word": "hello", "o": {"a": 1}, "keep": 1})
        );
        let err = tool_arguments(None, &["n=abc".into()], Some(&schema)).unwrap_err();
        assert!(err.contains("expected integer"), "{err}");
        assert!(tool_arguments(Some("[1]"), &[], None).unwrap_err().contains("object"));
        assert!(tool_arguments(None, &["novalue".into()], None).is_err());
        assert_eq!(tool_arguments(None, &["eq=a=b".into()], None).unwrap(), json!({"eq": "a=b"}));
    }

    #[test]
    fn headers_and_roots() {
        assert_eq!(parse_header("Authorization: Bearer x:y").unwrap(), ("authorization".into(), "Bearer x:y".into()));
        assert!(parse_header("no colon").is_err());
        assert!(parse_header("bad name: v").is_err());
        assert_eq!(root("file:///tmp/proj").unwrap(), json!({"uri": "file:///tmp/proj", "name": "proj"}));
        let r = root("/tmp/some dir").unwrap();
        assert_eq!(r["uri"], "file:///tmp/some%20dir");
    }

    #[test]
    fn hints() {
        let schema = json!({"type": "object", "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 100,
            "description": "How many steps."}}, "required": ["steps"]});
        let h = schema_hint("count", &schema);
        assert_eq!(h[1], "  steps  integer (1..100), required — How many steps.");
    }
}
