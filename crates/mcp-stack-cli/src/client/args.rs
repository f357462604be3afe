//! Turning command-line words into request arguments: `ARGS_JSON` plus `--arg key=value`
//! pairs typed by a tool's `inputSchema`, `K=V` lists, `Name: value` headers, roots, and the
//! argument hints shown when a server rejects arguments.

use serde_json::{Map, Value};

/// Splits `key=value` (the value may contain `=`).
pub(crate) fn split_pair<'a>(flag: &str, s: &'a str) -> Result<(&'a str, &'a str), String> {
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
///
/// A dotted key (`--arg address.city=Paris`) sets a field of a nested object, creating the
/// objects on the way; a property whose own name contains the dot (`"a.b"`) is matched first.
/// With the tool's `inputSchema`, each key is looked up in the `properties` of its object
/// (local `$ref`s and `anyOf`/`oneOf`/`allOf` branches are followed) and the value typed by
/// the property's schema ([`typed_value`]). A key the object does not declare is an error
/// listing the known ones, unless the object allows it: `additionalProperties` set to `true`
/// (the value is JSON if it parses, else a string) or to a schema (the value is typed by it),
/// or an object schema that declares no `properties` at all and does not say
/// `additionalProperties: false` (a free-form object). `ARGS_JSON` is passed as given.
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
    for pair in pairs {
        let (k, v) = split_pair("--arg", pair)?;
        set_path(&mut args, k, v, input_schema)?;
    }
    Ok(Value::Object(args))
}

/// What an object schema says about one key.
enum Field<'a> {
    /// Declared (or allowed by an `additionalProperties` schema): typed by this schema.
    Typed(&'a Value),
    /// Allowed, untyped.
    Free,
    /// Not allowed: the known keys.
    Unknown(Vec<String>),
}

/// Follows a local `$ref` (`#/$defs/x`, `#/definitions/x`) against `root`, a few hops at most.
pub(super) fn deref<'a>(root: &'a Value, mut s: &'a Value) -> &'a Value {
    for _ in 0..8 {
        match s.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
            Some(ptr) => match root.pointer(ptr) {
                Some(t) => s = t,
                None => break,
            },
            None => break,
        }
    }
    s
}

/// The object schemas `s` is made of: itself and its `anyOf`/`oneOf`/`allOf` branches.
pub(super) fn object_parts<'a>(root: &'a Value, s: &'a Value) -> Vec<&'a Value> {
    let s = deref(root, s);
    let mut out = vec![s];
    for k in ["anyOf", "oneOf", "allOf"] {
        for b in s.get(k).and_then(Value::as_array).into_iter().flatten() {
            let b = deref(root, b);
            if b.get("properties").is_some() || b.get("additionalProperties").is_some() {
                out.push(b);
            }
        }
    }
    out
}

fn field<'a>(root: &'a Value, schema: &'a Value, key: &str) -> Field<'a> {
    let parts = object_parts(root, schema);
    for p in &parts {
        if let Some(prop) = p.get("properties").and_then(|ps| ps.get(key)) {
            return Field::Typed(deref(root, prop));
        }
    }
    let mut known: Vec<String> = Vec::new();
    let mut declares = false;
    let mut closed = false;
    for p in &parts {
        if let Some(ps) = p.get("properties").and_then(Value::as_object) {
            declares = true;
            known.extend(ps.keys().filter(|k| !known.contains(k)).cloned().collect::<Vec<_>>());
        }
        match p.get("additionalProperties") {
            Some(Value::Bool(true)) => return Field::Free,
            Some(Value::Bool(false)) => closed = true,
            Some(s @ Value::Object(_)) => return Field::Typed(deref(root, s)),
            _ => {}
        }
    }
    if declares || closed {
        Field::Unknown(known)
    } else {
        Field::Free
    }
}

/// Sets `args[path] = raw` (typed), `path` dotted.
fn set_path(args: &mut Map<String, Value>, path: &str, raw: &str, root: Option<&Value>) -> Result<(), String> {
    let mut obj = args;
    let mut schema = root;
    let mut rest = path;
    let mut done = String::new();
    loop {
        // The longest declared name first (`a.b` as one property), else the next segment.
        let (key, tail) = match schema.zip(root) {
            Some((s, r)) if matches!(field(r, s, rest), Field::Typed(_)) => (rest, None),
            _ => match rest.split_once('.') {
                Some((k, t)) => (k, Some(t)),
                None => (rest, None),
            },
        };
        if key.is_empty() {
            return Err(format!("--arg {path}: empty key"));
        }
        let here = if done.is_empty() { key.to_owned() } else { format!("{done}.{key}") };
        let sub = match schema.zip(root) {
            None => None,
            Some((s, r)) => match field(r, s, key) {
                Field::Typed(p) => Some(p),
                Field::Free => None,
                Field::Unknown(known) => {
                    let within = if done.is_empty() { String::new() } else { format!(" in `{done}`") };
                    let known = if known.is_empty() {
                        "it takes no keys".to_owned()
                    } else {
                        format!("known keys: {}", known.join(", "))
                    };
                    return Err(format!("--arg {path}: unknown key `{key}`{within}; {known}"));
                }
            },
        };
        let Some(tail) = tail else {
            let value = typed_value(&here, raw, sub)?;
            obj.insert(key.to_owned(), value);
            return Ok(());
        };
        if let Some(p) = sub {
            let types = schema_types(p);
            let objectish = types.is_empty() || types.iter().any(|t| t == "object");
            if !objectish {
                return Err(format!("--arg {path}: `{here}` is {}, not an object", types.join(" or ")));
            }
        }
        let slot = obj.entry(key.to_owned()).or_insert_with(|| Value::Object(Map::new()));
        if slot.is_null() {
            *slot = Value::Object(Map::new());
        }
        let Value::Object(next) = slot else {
            return Err(format!("--arg {path}: `{here}` is already set to {}", kind_of(slot)));
        };
        obj = next;
        schema = sub;
        done = here;
        rest = tail;
    }
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
pub(crate) fn parse_header(s: &str) -> Result<(String, String), String> {
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
pub(super) fn root(s: &str) -> Result<mcp::protocol::types::Root, String> {
    let uri = if s.contains("://") || s.starts_with("file:") {
        s.to_owned()
    } else {
        let abs = std::path::absolute(s).map_err(|e| format!("--root {s}: {e}"))?;
        url::Url::from_file_path(&abs).map_err(|()| format!("--root {s}: cannot make a file:// URI of it"))?.to_string()
    };
    let name =
        uri.trim_end_matches('/').rsplit('/').next().filter(|n| !n.is_empty() && !n.ends_with(':')).map(str::to_owned);
    Ok(mcp::protocol::types::Root { name, ..mcp::protocol::types::Root::new(uri) })
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
    use serde_json::json;

    #[test]
    fn typed_by_schema() {
        let schema = json!({"type": "object", "properties": {
            "s": {"type": "string"}, "n": {"type": "integer"}, "b": {"type": "boolean"},
            "m": {"type": ["string", "number"]}, "o": {"type": "object"}}});
        let pairs: Vec<String> = ["s=3", "n=3", "b=true", "m=x", "o={\"a\":1}"].iter().map(|s| s.to_string()).collect();
        let args = tool_arguments(Some(r#"{"s": "old", "keep": 1}"#), &pairs, Some(&schema)).unwrap();
        assert_eq!(args, json!({"s": "3", "n": 3, "b": true, "m": "x", "o": {"a": 1}, "keep": 1}));
        // Without a schema, anything goes.
        let args = tool_arguments(None, &["free=4".into(), "word=hello".into()], None).unwrap();
        assert_eq!(args, json!({"free": 4, "word": "hello"}));
        let err = tool_arguments(None, &["n=abc".into()], Some(&schema)).unwrap_err();
        assert!(err.contains("expected integer"), "{err}");
        assert!(tool_arguments(Some("[1]"), &[], None).unwrap_err().contains("object"));
        assert!(tool_arguments(None, &["novalue".into()], None).is_err());
        assert_eq!(tool_arguments(None, &["eq=a=b".into()], None).unwrap(), json!({"eq": "a=b"}));
    }

    fn call(pairs: &[&str], schema: &Value) -> Result<Value, String> {
        let pairs: Vec<String> = pairs.iter().map(|s| s.to_string()).collect();
        tool_arguments(None, &pairs, Some(schema))
    }

    #[test]
    fn dotted_keys_build_nested_objects_by_schema() {
        let schema = json!({"type": "object",
            "$defs": {"addr": {"type": "object", "properties": {
                "city": {"type": "string"}, "zip": {"type": "integer"},
                "geo": {"type": "object", "properties": {"lat": {"type": "number"}, "ok": {"type": "boolean"}}}}}},
            "properties": {
                "address": {"anyOf": [{"$ref": "#/$defs/addr"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
                "extra": {"type": "object", "additionalProperties": true},
                "blob": {"type": "object"},
                "a.b": {"type": "integer"},
                "name": {"type": "string"}}});
        let args = call(
            &[
                "address.city=10",
                "address.zip=75001",
                "address.geo.lat=48.8",
                "address.geo.ok=true",
                "tags=[\"x\"]",
                "labels.prio=3",
                "extra.anything=hi",
                "extra.n=4",
                "blob.x.y=1",
                "a.b=7",
                "name=Ann",
            ],
            &schema,
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"address": {"city": "10", "zip": 75001, "geo": {"lat": 48.8, "ok": true}}, "tags": ["x"],
                   "labels": {"prio": 3}, "extra": {"anything": "hi", "n": 4}, "blob": {"x": {"y": 1}},
                   "a.b": 7, "name": "Ann"})
        );
        let err = call(&["adress.city=x"], &schema).unwrap_err();
        assert!(err.starts_with("--arg adress.city: unknown key `adress`; known keys: "), "{err}");
        assert!(err.contains("address") && err.contains("tags"), "{err}");
        let err = call(&["address.town=x"], &schema).unwrap_err();
        assert_eq!(err, "--arg address.town: unknown key `town` in `address`; known keys: city, geo, zip");
        let err = call(&["labels.prio=high"], &schema).unwrap_err();
        assert_eq!(err, "--arg labels.prio: expected integer, got \"high\"");
        let err = call(&["name.first=x"], &schema).unwrap_err();
        assert_eq!(err, "--arg name.first: `name` is string, not an object");
        let err = tool_arguments(Some(r#"{"blob": 3}"#), &["blob.x=1".into()], Some(&schema)).unwrap_err();
        assert_eq!(err, "--arg blob.x: `blob` is already set to a number");
        // ARGS_JSON objects are extended, not replaced.
        let args = tool_arguments(Some(r#"{"address": {"city": "Oslo"}}"#), &["address.zip=1".into()], Some(&schema));
        assert_eq!(args.unwrap(), json!({"address": {"city": "Oslo", "zip": 1}}));
        // A tool without arguments, and a closed object.
        let none = json!({"type": "object", "properties": {}});
        assert_eq!(call(&["x=1"], &none).unwrap_err(), "--arg x: unknown key `x`; it takes no keys");
        let closed = json!({"type": "object", "additionalProperties": false});
        assert!(call(&["x=1"], &closed).is_err());
        let free = json!({"type": "object"});
        assert_eq!(call(&["x.y=1"], &free).unwrap(), json!({"x": {"y": 1}}));
    }

    #[test]
    fn headers_and_roots() {
        assert_eq!(parse_header("Authorization: Bearer x:y").unwrap(), ("authorization".into(), "Bearer x:y".into()));
        assert!(parse_header("no colon").is_err());
        assert!(parse_header("bad name: v").is_err());
        let r = root("file:///tmp/proj").unwrap();
        assert_eq!((r.uri.as_str(), r.name.as_deref()), ("file:///tmp/proj", Some("proj")));
        let r = root("/tmp/some dir").unwrap();
        assert_eq!(r.uri, "file:///tmp/some%20dir");
    }

    #[test]
    fn hints() {
        let schema = json!({"type": "object", "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 100,
            "description": "How many steps."}}, "required": ["steps"]});
        let h = schema_hint("count", &schema);
        assert_eq!(h[1], "  steps  integer (1..100), required — How many steps.");
    }
}
