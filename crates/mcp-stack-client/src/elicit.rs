//! Form elicitation on the client: defaults from `requestedSchema` and validation of answers.

use crate::error::ClientError;
use serde_json::{Map, Value};

pub mod order;
pub use order::{property_order, PROPERTY_ORDER};

/// Completes an accepted form answer: fills missing fields with the schema's `default`s and
/// validates the content against `requestedSchema`. Declines and cancels pass through.
pub fn finish_form(params: &Value, mut result: Value) -> Result<Value, ClientError> {
    if result.get("action").and_then(Value::as_str) != Some("accept") {
        return Ok(result);
    }
    let schema = params.get("requestedSchema").cloned().unwrap_or(Value::Object(Map::new()));
    let content = result
        .as_object_mut()
        .ok_or_else(|| ClientError::handler("elicitation result must be an object"))?
        .entry("content")
        .or_insert_with(|| Value::Object(Map::new()));
    apply_defaults(&schema, content);
    let validator = jsonschema::validator_for(&schema).map_err(|e| {
        ClientError::invalid_response(format!("requestedSchema is not a valid schema: {e}")).caused_by(e)
    })?;
    let errors: Vec<String> = validator.iter_errors(content).map(|e| e.to_string()).collect();
    if !errors.is_empty() {
        return Err(ClientError::handler(format!(
            "elicitation answer does not match the requested schema: {}",
            errors.join("; ")
        )));
    }
    Ok(result)
}

/// Fills every property missing from `content` that has a `default` in `schema`.
pub fn apply_defaults(schema: &Value, content: &mut Value) {
    let (Some(props), Some(obj)) = (schema.get("properties").and_then(Value::as_object), content.as_object_mut())
    else {
        return;
    };
    for (name, prop) in props {
        if let Some(d) = prop.get("default") {
            obj.entry(name.clone()).or_insert_with(|| d.clone());
        }
    }
}

#[cfg(test)]
mod tests;
