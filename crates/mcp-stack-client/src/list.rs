//! The bounds of a paginated list read in full, shared with the proxy (which reads its
//! upstreams' lists with the same defaults, the same byte count and the same tally).

use serde_json::Value;

/// The default bound on the items of one paginated list, all pages together, in bytes of
/// JSON (16 MiB: the largest single message the transports accept, so any list a server can
/// send unpaginated fits).
pub const DEFAULT_MAX_LIST_BYTES: usize = 16 << 20;

/// The default bound on the items of one paginated list (100,000: far more tools, prompts or
/// resources than a client can use, while each item's bookkeeping stays bounded).
pub const DEFAULT_MAX_LIST_ITEMS: usize = 100_000;

/// The bounds of one list read in full: most items and most bytes of items (serialized JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLimits {
    /// Most bytes of items (serialized JSON).
    pub max_bytes: usize,
    /// Most items.
    pub max_items: usize,
}

impl Default for ListLimits {
    fn default() -> Self {
        Self { max_bytes: DEFAULT_MAX_LIST_BYTES, max_items: DEFAULT_MAX_LIST_ITEMS }
    }
}

/// A running count of a list's items and bytes against its [`ListLimits`], page by page.
#[derive(Debug, Default)]
pub struct Tally {
    /// Items counted so far.
    pub items: usize,
    /// Bytes (serialized JSON) counted so far.
    pub bytes: usize,
}

impl Tally {
    /// Counts `n` more items of `bytes`; `Err` names the bound passed (`"16777216 bytes"`),
    /// the item bound first.
    pub fn add(&mut self, n: usize, bytes: usize, limits: &ListLimits) -> Result<(), String> {
        self.items = self.items.saturating_add(n);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.items > limits.max_items {
            return Err(format!("{} items", limits.max_items));
        }
        if self.bytes > limits.max_bytes {
            return Err(format!("{} bytes", limits.max_bytes));
        }
        Ok(())
    }
}

/// The length of `v` as JSON text (what a list's byte bound counts), without writing it
/// anywhere.
pub fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing a `Value` to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_len_is_the_length_of_the_text() {
        let v = serde_json::json!({"name": "écho", "n": [1, 2, {"a": null}]});
        assert_eq!(json_len(&v), serde_json::to_string(&v).unwrap().len());
    }
}
