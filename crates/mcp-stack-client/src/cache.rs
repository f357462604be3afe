//! A response cache honouring `ttlMs` (and keyed so private entries never leave their scope).

use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Cached results keyed by method + parameters (without `_meta`).
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: Mutex<HashMap<String, (Instant, Value)>>,
}

/// The cache key of a request.
pub(crate) fn key(method: &str, params: &serde_json::Map<String, Value>) -> String {
    let mut p = params.clone();
    p.remove("_meta");
    format!("{method} {}", Value::Object(p))
}

impl Cache {
    /// A fresh cached result for `key`, if any.
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        let mut e = self.entries.lock();
        match e.get(key) {
            Some((until, v)) if Instant::now() < *until => Some(v.clone()),
            Some(_) => {
                e.remove(key);
                None
            }
            None => None,
        }
    }

    /// Stores `result` if it carries a positive `ttlMs` (negative or absent means do not cache).
    pub(crate) fn put(&self, key: String, result: &Value) {
        let ttl = result.get("ttlMs").and_then(Value::as_i64).unwrap_or(0);
        if ttl > 0 {
            let until = Instant::now() + Duration::from_millis(ttl as u64);
            self.entries.lock().insert(key, (until, result.clone()));
        }
    }

    /// Drops every entry whose key starts with `method` (on a list-changed notification).
    pub(crate) fn invalidate(&self, method: &str) {
        self.entries.lock().retain(|k, _| !k.starts_with(method));
    }
}

#[cfg(test)]
mod tests;
