//! Serialization helpers for JSON Schema `number` fields.
//!
//! `number` fields are `f64` in Rust. Serializing an integral `f64` the default
//! way writes `50.0`, which is a different JSON value from the `50` a peer sent
//! us; these helpers write integral values as integers so that round trips are
//! lossless.

use serde::Serializer;

/// Largest integer magnitude an `f64` represents exactly (2^53).
const EXACT_INT_LIMIT: f64 = 9_007_199_254_740_992.0;

/// Serializes an `f64`, using an integer representation when it is integral.
pub(crate) fn f64<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    let v = *value;
    if v.is_finite() && v.fract() == 0.0 && v.abs() <= EXACT_INT_LIMIT {
        // Exact: |v| <= 2^53 fits in i64 and has no fractional part.
        serializer.serialize_i64(v as i64)
    } else {
        serializer.serialize_f64(v)
    }
}

/// Serializes an `Option<f64>` with [`f64`]; pair with `skip_serializing_if`.
pub(crate) fn opt_f64<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => f64(v, serializer),
        None => serializer.serialize_none(),
    }
}
