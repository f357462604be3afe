//! Cached results on Redis ([`RedisBackend::cache_store`]): every instance serves what any of
//! them cached. Each result is one key with its time to live (`SET .. PX`), under a hash of
//! the cache key (which holds principals and arguments of any length); how much Redis keeps
//! in all is Redis's own `maxmemory` policy.

use crate::backend::RedisBackend;
use mcp_server::cache::{CacheFuture, CacheStore};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

/// Largest result stored (1 MiB); larger ones are served afresh each time.
const MAX_VALUE: usize = 1 << 20;

/// The result cache store on Redis.
pub struct RedisCacheStore {
    backend: RedisBackend,
}

impl std::fmt::Debug for RedisCacheStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCacheStore").finish_non_exhaustive()
    }
}

impl RedisCacheStore {
    pub(crate) fn new(backend: RedisBackend) -> Self {
        Self { backend }
    }

    fn key(&self, key: &str) -> String {
        let digest = Sha256::digest(key.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.backend.inner.keys.key(&["cache", &hex])
    }
}

impl CacheStore for RedisCacheStore {
    fn get<'a>(&'a self, key: &'a str) -> CacheFuture<'a, Option<Arc<[u8]>>> {
        Box::pin(async move {
            let mut conn = self.backend.conn();
            let cmd = redis::cmd("GET").arg(self.key(key)).clone();
            let got: Option<Vec<u8>> = self.backend.run(cmd.query_async(&mut conn)).await.ok()?;
            got.filter(|v| v.len() <= MAX_VALUE).map(Arc::from)
        })
    }

    fn put<'a>(&'a self, key: &'a str, value: Arc<[u8]>, ttl: Duration) -> CacheFuture<'a, ()> {
        Box::pin(async move {
            let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
            if value.len() > MAX_VALUE || ms == 0 {
                return;
            }
            let mut conn = self.backend.conn();
            let cmd = redis::cmd("SET").arg(self.key(key)).arg(&value[..]).arg("PX").arg(ms).clone();
            if let Err(e) = self.backend.run(cmd.query_async::<()>(&mut conn)).await {
                tracing::warn!(target: "mcp_redis", "result cache: {e}");
            }
        })
    }
}
