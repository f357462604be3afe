//! The order of a form's fields as the server wrote them.
//!
//! `serde_json`'s map is sorted by key in this workspace (its `preserve_order` feature is off,
//! and turning it on would change every crate), so a `requestedSchema` read into a [`Value`]
//! lists its `properties` alphabetically. The order is part of the form, though: a server
//! asks for a name before an optional note. So when the transports read a message whose text
//! holds a `requestedSchema`, the order of each schema's `properties` as written is recorded
//! next to them, under [`PROPERTY_ORDER`], and [`property_order`] gives the fields in that
//! order. A list already there (from a proxy that passed the form on) is kept when it names
//! exactly the schema's properties.

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

/// A JSON message as a [`Value`], with the property order of every `requestedSchema` in it
/// recorded (see the module docs).
pub(crate) fn parse(bytes: &[u8]) -> serde_json::Result<Value> {
    let mut value: Value = serde_json::from_slice(bytes)?;
    let holds_form = std::str::from_utf8(bytes).is_ok_and(|t| t.contains("\"requestedSchema\""));
    if holds_form {
        if let Ok(shape) = serde_json::from_slice::<Shape>(bytes) {
            annotate(&mut value, &shape);
        }
    }
    Ok(value)
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

/// Records the property order of every `requestedSchema` in `value` (read with `shape`).
fn annotate(value: &mut Value, shape: &Shape) {
    match (value, shape) {
        (Value::Object(map), Shape::Object(members)) => {
            for (k, s) in members {
                let Some(v) = map.get_mut(k) else { continue };
                if k == "requestedSchema" {
                    if let (Value::Object(schema), Shape::Object(parts)) = (&mut *v, s) {
                        record(schema, parts);
                    }
                }
                annotate(v, s);
            }
        }
        (Value::Array(items), Shape::Array(shapes)) => {
            for (v, s) in items.iter_mut().zip(shapes) {
                annotate(v, s);
            }
        }
        _ => {}
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
    let mut names: Vec<Value> = Vec::with_capacity(written.len());
    for (k, _) in written {
        if !names.iter().any(|n| n == k) {
            names.push(Value::String(k.clone()));
        }
    }
    if names.len() == props.len() {
        schema.insert(PROPERTY_ORDER.to_owned(), Value::Array(names));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_written_order_of_each_form_is_kept() {
        let legacy = br#"{"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {"message": "Who?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"},
            "email": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}}}"#;
        let v = parse(legacy).unwrap();
        assert_eq!(property_order(&v["params"]["requestedSchema"]), ["name", "email", "age"]);
        // Several forms in one result (input requests of a round), each with its own order.
        let round = br#"{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "inputRequests": {
            "z": {"method": "elicitation/create", "params": {"requestedSchema": {"properties": {"b": {}, "a": {}}}}},
            "y": {"method": "elicitation/create", "params": {"requestedSchema": {"properties": {"c": {}, "d": {}, "a": {}}}}}}}}"#;
        let v = parse(round).unwrap();
        let form = |k: &str| property_order(&v["result"]["inputRequests"][k]["params"]["requestedSchema"]);
        assert_eq!(form("z"), ["b", "a"]);
        assert_eq!(form("y"), ["c", "d", "a"]);
    }

    #[test]
    fn a_list_naming_exactly_the_properties_is_kept_and_others_are_replaced() {
        let passed_on =
            br#"{"requestedSchema": {"properties": {"a": {}, "b": {}}, "x-mcp-propertyOrder": ["b", "a"]}}"#;
        assert_eq!(property_order(&parse(passed_on).unwrap()["requestedSchema"]), ["b", "a"]);
        let wrong = br#"{"requestedSchema": {"properties": {"b": {}, "a": {}}, "x-mcp-propertyOrder": ["a", "a"]}}"#;
        assert_eq!(property_order(&parse(wrong).unwrap()["requestedSchema"]), ["b", "a"]);
        let other = br#"{"requestedSchema": {"properties": {"b": {}, "a": {}}, "x-mcp-propertyOrder": ["b", "c"]}}"#;
        assert_eq!(property_order(&parse(other).unwrap()["requestedSchema"]), ["b", "a"]);
        // Unknown order: alphabetical; no schema, nothing recorded.
        assert_eq!(property_order(&serde_json::json!({"properties": {"b": {}, "a": {}}})), ["a", "b"]);
        let plain = parse(br#"{"result": {"properties": {"b": 1, "a": 2}}}"#).unwrap();
        assert_eq!(plain, serde_json::json!({"result": {"properties": {"b": 1, "a": 2}}}));
    }
}
