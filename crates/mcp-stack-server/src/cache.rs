//! An opt-in result cache for read-only tools and for resources
//! ([`crate::ServerBuilder::result_cache`]).
//!
//! - A tool is cached only when named here and marked read-only (`readOnlyHint: true`; a tool
//!   named here without it fails `build()`), for the time given here. Its results are kept per
//!   caller (keyed by the principal), unless named with [`ResultCache::shared_tool`].
//! - `resources/read` results are cached, with [`ResultCache::resources`], for their own
//!   `ttlMs` (0, the default, caches nothing); a `cacheScope: "private"` result only for the
//!   caller it was made for.
//! - Never cached: tool results with `isError`, `input_required` results, the rounds of a multi
//!   round-trip request (they carry `inputResponses` or `requestState`), calls that run as tasks.
//!
//! The key is the method, the tool name or URI, the arguments (as canonical JSON) and, when the
//! result is private, the principal, so one caller's private result is never served to another.
//! Access rules are checked before the cache: a hidden item is unknown whatever is cached.
//! The in-memory store is bounded in entries and bytes; [`CacheStore`] puts it elsewhere (the
//! `mcp-stack-redis` crate has one on Redis, shared by every replica).
//!
//! ```
//! use mcp_server::cache::ResultCache;
//! use mcp_server::{Server, Tool};
//! use std::time::Duration;
//!
//! let server = Server::builder("s", "1")
//!     .result_cache(ResultCache::new().shared_tool("forecast", Duration::from_secs(60)).resources())
//!     .tool(Tool::new("forecast").read_only_hint(true).handler(|| async { "sunny" }))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

use crate::error::BuildError;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A boxed future borrowing the store.
pub type CacheFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where cached results live: serialised result objects under opaque keys, each with its time
/// to live. A store that fails answers "not cached" (the request is then served afresh).
pub trait CacheStore: Send + Sync + 'static {
    /// The result stored under `key`, if fresh.
    fn get<'a>(&'a self, key: &'a str) -> CacheFuture<'a, Option<Arc<[u8]>>>;
    /// Stores `value` under `key` for `ttl` (a store may drop it at once to keep its bounds).
    fn put<'a>(&'a self, key: &'a str, value: Arc<[u8]>, ttl: Duration) -> CacheFuture<'a, ()>;
}

struct Entry {
    value: Arc<[u8]>,
    expires: tokio::time::Instant,
    used: u64,
}

#[derive(Default)]
struct Table {
    entries: HashMap<Box<str>, Entry>,
    bytes: usize,
    uses: u64,
}

impl Table {
    fn remove(&mut self, key: &str) {
        if let Some(e) = self.entries.remove(key) {
            self.bytes -= e.value.len() + key.len();
        }
    }
}

/// Results in this process, bounded in entries and bytes (default 10,000 and 64 MiB). At a
/// bound, expired entries go first, then the least recently used of a sample; one result
/// larger than an eighth of the byte bound is not kept.
pub struct MemoryCacheStore {
    table: Mutex<Table>,
    max_entries: usize,
    max_bytes: usize,
}

impl std::fmt::Debug for MemoryCacheStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.table.lock();
        f.debug_struct("MemoryCacheStore").field("entries", &t.entries.len()).field("bytes", &t.bytes).finish()
    }
}

impl MemoryCacheStore {
    /// A store of at most `max_entries` results and `max_bytes` bytes (keys included).
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        Self { table: Mutex::default(), max_entries: max_entries.max(1), max_bytes: max_bytes.max(1) }
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.table.lock().entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held now (results and keys).
    pub fn bytes(&self) -> usize {
        self.table.lock().bytes
    }

    fn lookup(&self, key: &str) -> Option<Arc<[u8]>> {
        let mut t = self.table.lock();
        t.uses += 1;
        let used = t.uses;
        let now = tokio::time::Instant::now();
        match t.entries.get_mut(key) {
            Some(e) if e.expires > now => {
                e.used = used;
                Some(e.value.clone())
            }
            Some(_) => {
                t.remove(key);
                None
            }
            None => None,
        }
    }

    fn store(&self, key: &str, value: Arc<[u8]>, ttl: Duration) {
        let size = value.len() + key.len();
        if size > self.max_bytes / 8 || ttl.is_zero() {
            return;
        }
        let mut t = self.table.lock();
        t.remove(key);
        let now = tokio::time::Instant::now();
        if t.entries.len() >= self.max_entries || t.bytes + size > self.max_bytes {
            let expired: Vec<Box<str>> =
                t.entries.iter().filter(|(_, e)| e.expires <= now).map(|(k, _)| k.clone()).collect();
            for k in expired {
                t.remove(&k);
            }
        }
        while t.entries.len() >= self.max_entries || t.bytes + size > self.max_bytes {
            let victim = t.entries.iter().take(64).min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone());
            match victim {
                Some(k) => t.remove(&k),
                None => break,
            }
        }
        t.uses += 1;
        let used = t.uses;
        t.bytes += size;
        t.entries.insert(key.into(), Entry { value, expires: now + ttl, used });
    }
}

impl CacheStore for MemoryCacheStore {
    fn get<'a>(&'a self, key: &'a str) -> CacheFuture<'a, Option<Arc<[u8]>>> {
        Box::pin(std::future::ready(self.lookup(key)))
    }

    fn put<'a>(&'a self, key: &'a str, value: Arc<[u8]>, ttl: Duration) -> CacheFuture<'a, ()> {
        self.store(key, value, ttl);
        Box::pin(std::future::ready(()))
    }
}

/// Whether one caller's results are kept apart from another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    PerCaller,
    Shared,
}

/// What to cache ([`crate::ServerBuilder::result_cache`]); see the [module docs](self).
#[derive(Clone, Default)]
pub struct ResultCache {
    tools: HashMap<String, (Duration, Scope)>,
    resources: bool,
    max_entries: Option<usize>,
    max_bytes: Option<usize>,
    store: Option<Arc<dyn CacheStore>>,
}

impl std::fmt::Debug for ResultCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultCache")
            .field("tools", &self.tools)
            .field("resources", &self.resources)
            .field("shared_store", &self.store.is_some())
            .finish()
    }
}

impl ResultCache {
    /// Caches nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Caches the read-only tool `name` for `ttl`, per caller.
    pub fn tool(mut self, name: impl Into<String>, ttl: Duration) -> Self {
        self.tools.insert(name.into(), (ttl, Scope::PerCaller));
        self
    }

    /// Caches the read-only tool `name` for `ttl`, one result for every caller (for tools whose
    /// result does not depend on who asks).
    pub fn shared_tool(mut self, name: impl Into<String>, ttl: Duration) -> Self {
        self.tools.insert(name.into(), (ttl, Scope::Shared));
        self
    }

    /// Caches `resources/read` results for their `ttlMs`, honouring their `cacheScope`.
    pub fn resources(mut self) -> Self {
        self.resources = true;
        self
    }

    /// Most results the in-memory store keeps (default 10,000).
    pub fn max_entries(mut self, n: usize) -> Self {
        self.max_entries = Some(n);
        self
    }

    /// Most bytes the in-memory store keeps (default 64 MiB).
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = Some(n);
        self
    }

    /// Keeps results in `store` (e.g. Redis) instead of in memory.
    pub fn store(mut self, store: Arc<dyn CacheStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Checks the configuration against the registered tools (`read_only`: whether a tool of
    /// that name is marked read-only, `None` when no such tool is registered yet).
    pub(crate) fn build(self, read_only: impl Fn(&str) -> Option<bool>) -> Result<Cache, BuildError> {
        for (name, (ttl, _)) in &self.tools {
            let problem = if ttl.is_zero() {
                Some("a cache time of 0 caches nothing")
            } else if read_only(name) == Some(false) {
                Some("the tool is not marked read-only (readOnlyHint): its results are never cached")
            } else {
                None
            };
            if let Some(p) = problem {
                return Err(BuildError::InvalidPolicy {
                    policy: format!("result cache of tool {name:?}"),
                    reason: p.into(),
                });
            }
        }
        let store = match self.store {
            Some(s) => s,
            None => {
                Arc::new(MemoryCacheStore::new(self.max_entries.unwrap_or(10_000), self.max_bytes.unwrap_or(64 << 20)))
            }
        };
        Ok(Cache { tools: self.tools, resources: self.resources, store: Some(store) })
    }
}

/// The cache of a built server (empty: caches nothing).
#[derive(Default)]
pub(crate) struct Cache {
    tools: HashMap<String, (Duration, Scope)>,
    resources: bool,
    store: Option<Arc<dyn CacheStore>>,
}

impl Cache {
    /// The time and scope a tool's results are kept for, when they are.
    pub(crate) fn tool(&self, name: &str) -> Option<(Duration, Scope)> {
        self.store.as_ref()?;
        self.tools.get(name).copied()
    }

    /// Whether a cache was configured (`ServerBuilder::result_cache`).
    pub(crate) fn configured(&self) -> bool {
        self.store.is_some()
    }

    /// Whether `resources/read` results are cached.
    pub(crate) fn resources(&self) -> bool {
        self.resources && self.store.is_some()
    }

    /// The key of a result: method, name or URI, arguments, and the principal when private.
    pub(crate) fn key(method: &str, target: &str, args: &str, principal: Option<&str>) -> String {
        match principal {
            Some(p) => format!("{method}\u{0}{target}\u{0}{args}\u{0}p:{p}"),
            None => format!("{method}\u{0}{target}\u{0}{args}\u{0}*"),
        }
    }

    pub(crate) async fn get(&self, key: &str) -> Option<serde_json::Value> {
        let bytes = self.store.as_ref()?.get(key).await?;
        serde_json::from_slice(&bytes).ok()
    }

    pub(crate) async fn put(&self, key: &str, value: &impl serde::Serialize, ttl: Duration) {
        if let (Some(store), Ok(bytes)) = (&self.store, serde_json::to_vec(value)) {
            store.put(key, bytes.into(), ttl).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn entries_expire_and_bounds_hold() {
        let store = MemoryCacheStore::new(100, 1 << 20);
        store.store("a", Arc::from(&b"1"[..]), Duration::from_secs(1));
        assert_eq!(store.lookup("a").as_deref(), Some(&b"1"[..]));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(store.lookup("a").is_none() && store.is_empty(), "expired entries go");
        for i in 0..100_000 {
            store.store(&format!("k{i}"), Arc::from(&b"xx"[..]), Duration::from_secs(60));
            if i % 10 == 0 {
                assert!(store.lookup("k0").is_some(), "a result in use is kept");
            }
        }
        assert!(store.len() <= 100, "{} entries", store.len());
        let bytes = MemoryCacheStore::new(1_000_000, 10_000);
        for i in 0..1000 {
            bytes.store(&format!("k{i}"), Arc::from(vec![0u8; 1000]), Duration::from_secs(60));
        }
        assert!(bytes.bytes() <= 10_000, "{} bytes", bytes.bytes());
        bytes.store("huge", Arc::from(vec![0u8; 5000]), Duration::from_secs(60));
        assert!(bytes.lookup("huge").is_none(), "larger than an eighth of the bound: not kept");
    }
}
