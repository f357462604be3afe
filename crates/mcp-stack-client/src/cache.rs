//! A response cache honouring `ttlMs` (and keyed so private entries never leave their scope).

use crate::list::json_len;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Most bytes (keys and results as JSON) the cache holds: two lists of the largest size a
/// client reads by default. A result that does not fit (after expired entries are dropped) is
/// not cached.
const MAX_BYTES: usize = 2 * crate::list::DEFAULT_MAX_LIST_BYTES;

/// Cached results keyed by method + parameters (without `_meta`), bounded to [`MAX_BYTES`].
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    /// Key -> (fresh until, result, its size).
    map: HashMap<String, (Instant, Value, usize)>,
    /// The sizes of every entry together.
    bytes: usize,
}

impl Entries {
    fn remove(&mut self, key: &str) {
        if let Some((_, _, size)) = self.map.remove(key) {
            self.bytes -= size;
        }
    }

    fn retain(&mut self, keep: impl Fn(&str, &Instant) -> bool) {
        let mut bytes = self.bytes;
        self.map.retain(|k, (until, _, size)| {
            let kept = keep(k, until);
            if !kept {
                bytes -= *size;
            }
            kept
        });
        self.bytes = bytes;
    }
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
        match e.map.get(key) {
            Some((until, v, _)) if Instant::now() < *until => Some(v.clone()),
            Some(_) => {
                e.remove(key);
                None
            }
            None => None,
        }
    }

    /// Stores `result` if it carries a positive `ttlMs` (negative or absent means do not cache)
    /// and fits in [`MAX_BYTES`] with the fresh entries.
    pub(crate) fn put(&self, key: String, result: &Value) {
        let ttl = result.get("ttlMs").and_then(Value::as_i64).unwrap_or(0);
        if ttl <= 0 {
            return;
        }
        let size = key.len().saturating_add(json_len(result));
        let mut e = self.entries.lock();
        e.remove(&key);
        if e.bytes.saturating_add(size) > MAX_BYTES {
            let now = Instant::now();
            e.retain(|_, until| now < *until);
        }
        if e.bytes.saturating_add(size) <= MAX_BYTES {
            let until = Instant::now() + Duration::from_millis(ttl as u64);
            e.bytes += size;
            e.map.insert(key, (until, result.clone(), size));
        }
    }

    /// Drops every entry whose key starts with `method` (on a list-changed notification).
    pub(crate) fn invalidate(&self, method: &str) {
        self.entries.lock().retain(|k, _| !k.starts_with(method));
    }
}

#[cfg(test)]
mod tests;
