//! The order of a form's fields as the server wrote them.
//!
//! `serde_json`'s map is sorted by key in this workspace (its `preserve_order` feature is off,
//! and turning it on would change every crate), so a `requestedSchema` read into a [`Value`]
//! lists its `properties` alphabetically. The order is part of the form, though: a server
//! asks for a name before an optional note. So when the transports read a message that asks
//! for a form, the order of the form's `properties` as written is recorded next to them, under
//! [`PROPERTY_ORDER`], and [`property_order`] gives the fields in that order. A list already
//! there (from a proxy that passed the form on) is kept when it names exactly the schema's
//! properties.
//!
//! Only forms are touched: the `params.requestedSchema` of an `elicitation/create` request, and
//! of each `elicitation/create` in the `inputRequests` of a result (a multi round-trip
//! `input_required` result, or a `tasks/get` task) or of a `notifications/tasks` task. A
//! `requestedSchema` anywhere else (in a tool's `inputSchema`, its `structuredContent`, a task's
//! result) is data and comes back as sent. A message with no form is read once; the second
//! read, which sees the order of keys, is only for the ones that have one.
//!
//! `mcp proxy` passes the list on with the form: it holds the form as a [`Value`] too, so the
//! order it writes downstream is alphabetical, and the list is the only carrier of the
//! server's. The schema of `requestedSchema` allows other keys, and clients that do not know
//! this one ignore it.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The key, in a `requestedSchema`, of the list of its property names in the server's order.
pub const PROPERTY_ORDER: &str = "x-mcp-propertyOrder";

/// The names of `schema`'s `properties` in the order the server wrote them (alphabetical when
/// the order is unknown).
pub fn property_order(schema: &Value) -> Vec<String> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    match schema.get(PROPERTY_ORDER).and_then(|o| names_of(o, props)) {
        Some(names) => names,
        None => props.keys().cloned().collect(),
    }
}

/// `order` as names, if it is a list naming each of `props` exactly once.
fn names_of(order: &Value, props: &Map<String, Value>) -> Option<Vec<String>> {
    let list = order.as_array()?;
    let names: Vec<String> = list.iter().map(|n| n.as_str().map(str::to_owned)).collect::<Option<_>>()?;
    let mut sorted: Vec<&String> = names.iter().collect();
    sorted.sort();
    sorted.dedup();
    (sorted.len() == props.len() && sorted.into_iter().eq(props.keys())).then_some(names)
}

/// A JSON message (or batch) as a [`Value`], with the property order of each form it asks
/// for recorded (see the module docs).
pub(crate) fn parse(bytes: &[u8]) -> serde_json::Result<Value> {
    let mut value: Value = serde_json::from_slice(bytes)?;
    let mut asks = false;
    each_form(&mut value, None, &mut |_, _| asks = true);
    if asks {
        if let Ok(shape) = serde_json::from_slice::<Shape>(bytes) {
            each_form(&mut value, Some(&shape), &mut |schema, written| {
                if let Some(Shape::Object(parts)) = written {
                    record(schema, parts);
                }
            });
        }
    }
    Ok(value)
}

/// Calls `f` with each form (`requestedSchema`) `msg` asks for, and with its written shape when
/// `shape` (the shape of `msg`) is given.
fn each_form<F>(msg: &mut Value, shape: Option<&Shape>, f: &mut F)
where
    F: FnMut(&mut Map<String, Value>, Option<&Shape>),
{
    match msg {
        Value::Array(batch) => {
            for (i, m) in batch.iter_mut().enumerate() {
                if let Value::Object(m) = m {
                    message_forms(m, shape.and_then(|s| s.item(i)), f);
                }
            }
        }
        Value::Object(m) => message_forms(m, shape, f),
        _ => {}
    }
}

/// The forms of one JSON-RPC message (see [`each_form`]).
fn message_forms<F>(msg: &mut Map<String, Value>, shape: Option<&Shape>, f: &mut F)
where
    F: FnMut(&mut Map<String, Value>, Option<&Shape>),
{
    match msg.get("method").and_then(Value::as_str) {
        Some(ELICIT) => request_form(msg, shape, f),
        Some("notifications/tasks") => input_request_forms(msg, "params", shape, f),
        Some(_) => {}
        None => input_request_forms(msg, "result", shape, f),
    }
}

/// The method that asks for a form.
const ELICIT: &str = "elicitation/create";

/// Whether `req` is an `elicitation/create` request.
fn elicits(req: &Map<String, Value>) -> bool {
    req.get("method").and_then(Value::as_str) == Some(ELICIT)
}

/// The form of an `elicitation/create` request (`params.requestedSchema`).
fn request_form<F>(req: &mut Map<String, Value>, shape: Option<&Shape>, f: &mut F)
where
    F: FnMut(&mut Map<String, Value>, Option<&Shape>),
{
    let Some(Value::Object(schema)) = req.get_mut("params").and_then(|p| p.get_mut("requestedSchema")) else {
        return;
    };
    f(schema, shape.and_then(|s| s.member("params")).and_then(|s| s.member("requestedSchema")));
}

/// The forms of the `elicitation/create` requests in `msg[under].inputRequests`.
fn input_request_forms<F>(msg: &mut Map<String, Value>, under: &str, shape: Option<&Shape>, f: &mut F)
where
    F: FnMut(&mut Map<String, Value>, Option<&Shape>),
{
    let Some(Value::Object(requests)) = msg.get_mut(under).and_then(|v| v.get_mut("inputRequests")) else {
        return;
    };
    let Some(shape) = shape else {
        for req in requests.values_mut() {
            if let Value::Object(req) = req {
                if elicits(req) {
                    request_form(req, None, f);
                }
            }
        }
        return;
    };
    let Some(Shape::Object(written)) = shape.member(under).and_then(|s| s.member("inputRequests")) else {
        return;
    };
    // Each request by its written shape (the last one of a key written twice, the one read),
    // found in the map by key: no scan of the shapes per request.
    let mut seen = std::collections::HashSet::with_capacity(written.len());
    for (key, s) in written.iter().rev() {
        if !seen.insert(key.as_str()) {
            continue;
        }
        if let Some(Value::Object(req)) = requests.get_mut(key) {
            if elicits(req) {
                request_form(req, Some(s), f);
            }
        }
    }
}

/// The key order of every object in a JSON text (nothing else of it).
#[derive(Debug)]
enum Shape {
    Leaf,
    Array(Vec<Shape>),
    Object(Vec<(String, Shape)>),
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Shape;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_unit<E>(self) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
                let mut items = Vec::new();
                while let Some(s) = seq.next_element()? {
                    items.push(s);
                }
                Ok(Shape::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
                let mut members = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    members.push((k, map.next_value()?));
                }
                Ok(Shape::Object(members))
            }
        }
        d.deserialize_any(V)
    }
}

impl Shape {
    /// The shape of the member `key` of an object (the last one written, the one read).
    fn member(&self, key: &str) -> Option<&Shape> {
        match self {
            Shape::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, s)| s),
            _ => None,
        }
    }

    /// The shape of item `i` of an array.
    fn item(&self, i: usize) -> Option<&Shape> {
        match self {
            Shape::Array(items) => items.get(i),
            _ => None,
        }
    }
}

/// Puts the written order of `schema`'s properties next to them, unless a valid one is there.
fn record(schema: &mut Map<String, Value>, parts: &[(String, Shape)]) {
    let Some(Value::Object(props)) = schema.get("properties") else { return };
    if schema.get(PROPERTY_ORDER).and_then(|o| names_of(o, props)).is_some() {
        return;
    }
    // With `properties` written twice, the value read is the last one.
    let Some((_, Shape::Object(written))) = parts.iter().rev().find(|(k, _)| k == "properties") else { return };
    let mut seen = std::collections::HashSet::with_capacity(written.len());
    let names: Vec<Value> =
        written.iter().filter(|(k, _)| seen.insert(k.as_str())).map(|(k, _)| Value::String(k.clone())).collect();
    if names.len() == props.len() {
        schema.insert(PROPERTY_ORDER.to_owned(), Value::Array(names));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An `elicitation/create` request asking for `schema` (written as is).
    fn ask(schema: &str) -> Value {
        let text = format!(
            r#"{{"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {{"message": "?", "requestedSchema": {schema}}}}}"#
        );
        parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn the_written_order_of_each_form_is_kept() {
        let v = ask(r#"{"type": "object", "properties": {"name": {"type": "string"},
            "email": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}"#);
        assert_eq!(property_order(&v["params"]["requestedSchema"]), ["name", "email", "age"]);
        // Several forms in one result (input requests of a round), each with its own order.
        let round = br#"{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "inputRequests": {
            "z": {"method": "elicitation/create", "params": {"requestedSchema": {"properties": {"b": {}, "a": {}}}}},
            "y": {"method": "elicitation/create", "params": {"requestedSchema": {"properties": {"c": {}, "d": {}, "a": {}}}}}}}}"#;
        let v = parse(round).unwrap();
        let form = |k: &str| property_order(&v["result"]["inputRequests"][k]["params"]["requestedSchema"]);
        assert_eq!(form("z"), ["b", "a"]);
        assert_eq!(form("y"), ["c", "d", "a"]);
        // A request key written twice: the order of the one read.
        let twice = br#"{"jsonrpc": "2.0", "id": 1, "result": {"inputRequests": {
            "z": {"method": "elicitation/create", "params": {"requestedSchema": {"properties": {"a": {}, "b": {}}}}},
            "z": {"method": "elicitation/create", "params": {"requestedSchema": {"properties": {"d": {}, "c": {}}}}}}}}"#;
        let v = parse(twice).unwrap();
        assert_eq!(property_order(&v["result"]["inputRequests"]["z"]["params"]["requestedSchema"]), ["d", "c"]);
        // A task waiting for input, polled or pushed, and a request in a batch.
        let polled = br#"{"jsonrpc": "2.0", "id": 2, "result": {"taskId": "t", "status": "input_required",
            "inputRequests": {"q": {"method": "elicitation/create", "params": {"requestedSchema": {"properties": {"b": {}, "a": {}}}}}}}}"#;
        let v = parse(polled).unwrap();
        assert_eq!(property_order(&v["result"]["inputRequests"]["q"]["params"]["requestedSchema"]), ["b", "a"]);
        let pushed = br#"{"jsonrpc": "2.0", "method": "notifications/tasks", "params": {"taskId": "t", "status": "input_required",
            "inputRequests": {"q": {"method": "elicitation/create", "params": {"requestedSchema": {"properties": {"b": {}, "a": {}}}}}}}}"#;
        let v = parse(pushed).unwrap();
        assert_eq!(property_order(&v["params"]["inputRequests"]["q"]["params"]["requestedSchema"]), ["b", "a"]);
        let batch = br#"[{"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
            {"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {"requestedSchema": {"properties": {"b": {}, "a": {}}}}}]"#;
        let v = parse(batch).unwrap();
        assert_eq!(property_order(&v[1]["params"]["requestedSchema"]), ["b", "a"]);
    }

    #[test]
    fn a_requested_schema_that_is_not_a_form_comes_back_as_sent() {
        let nested = json!({"type": "object", "properties": {"requestedSchema": {"type": "object",
            "properties": {"b": {"type": "string"}, "a": {"type": "string"}}}}});
        let data = json!({"requestedSchema": {"properties": {"b": 1, "a": 2}}});
        let messages = [
            // A tool whose input is shaped like a form, listed and then answering with one.
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t", "inputSchema": nested}]}}),
            json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [], "structuredContent": data}}),
            // A finished task's result, a round's state next to its input requests, a sampling
            // request among them, and a request that is not an elicitation.
            json!({"jsonrpc": "2.0", "id": 3, "result": {"taskId": "t", "status": "completed",
                "result": {"structuredContent": data}}}),
            json!({"jsonrpc": "2.0", "id": 4, "result": {"resultType": "input_required", "requestState": data,
                "inputRequests": {"s": {"method": "sampling/createMessage", "params": data}}}}),
            json!({"jsonrpc": "2.0", "id": 5, "method": "sampling/createMessage", "params": data}),
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": data}}),
        ];
        for m in messages {
            let text = serde_json::to_vec(&m).unwrap();
            assert_eq!(parse(&text).unwrap(), m, "changed: {m}");
        }
    }

    #[test]
    fn a_list_naming_exactly_the_properties_is_kept_and_others_are_replaced() {
        let passed_on = ask(r#"{"properties": {"a": {}, "b": {}}, "x-mcp-propertyOrder": ["b", "a"]}"#);
        assert_eq!(property_order(&passed_on["params"]["requestedSchema"]), ["b", "a"]);
        let wrong = ask(r#"{"properties": {"b": {}, "a": {}}, "x-mcp-propertyOrder": ["a", "a"]}"#);
        assert_eq!(property_order(&wrong["params"]["requestedSchema"]), ["b", "a"]);
        let other = ask(r#"{"properties": {"b": {}, "a": {}}, "x-mcp-propertyOrder": ["b", "c"]}"#);
        assert_eq!(property_order(&other["params"]["requestedSchema"]), ["b", "a"]);
        // `properties` written twice: the order of the one read.
        let twice = ask(r#"{"properties": {"x": {}, "y": {}}, "properties": {"d": {}, "c": {}, "d": {}}}"#);
        assert_eq!(property_order(&twice["params"]["requestedSchema"]), ["d", "c"]);
        // Unknown order: alphabetical; no schema, nothing recorded.
        assert_eq!(property_order(&json!({"properties": {"b": {}, "a": {}}})), ["a", "b"]);
        let plain = parse(br#"{"result": {"properties": {"b": 1, "a": 2}}}"#).unwrap();
        assert_eq!(plain, json!({"result": {"properties": {"b": 1, "a": 2}}}));
    }
}
