//! Rate-limit buckets on Redis: every instance spends from the same buckets, so N replicas
//! enforce one budget. One atomic script per request (the generic cell rate algorithm on
//! Redis's own clock, so the instances' clocks do not matter); a bucket's key expires when it
//! has refilled, so idle callers cost nothing.

use crate::backend::RedisBackend;
use mcp_server::rate_limit::{Quota, RateLimitStore, RateLimitStoreError, StoreFuture};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// KEYS[1]: the bucket; ARGV[1]: µs per request; ARGV[2]: burst tolerance in µs.
/// Returns -1 when allowed, else the wait in µs.
const ACQUIRE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
if tat - now > tolerance then return tat - now - tolerance end
local next = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.max(1, math.ceil((next - now) / 1000)))
return -1
";

/// The rate-limit store on Redis ([`RedisBackend::rate_limit_store`]).
pub struct RedisRateLimitStore {
    backend: RedisBackend,
    script: redis::Script,
}

impl std::fmt::Debug for RedisRateLimitStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateLimitStore").finish_non_exhaustive()
    }
}

impl RedisRateLimitStore {
    pub(crate) fn new(backend: RedisBackend) -> Self {
        Self { backend, script: redis::Script::new(ACQUIRE) }
    }

    /// The Redis key of a bucket: its name hashed (names hold principals and client addresses,
    /// of any length), under the namespace.
    fn key(&self, bucket: &str) -> String {
        let digest = Sha256::digest(bucket.as_bytes());
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        self.backend.inner.keys.key(&["rl", &hex])
    }
}

impl RateLimitStore for RedisRateLimitStore {
    fn acquire<'a>(&'a self, key: &'a str, quota: Quota) -> StoreFuture<'a> {
        Box::pin(async move {
            let mut inv = self.script.prepare_invoke();
            let (interval_us, tolerance_us) = mcp_server::internal::gcra_params(quota);
            inv.key(self.key(key)).arg(interval_us).arg(tolerance_us);
            let mut conn = self.backend.conn();
            let limit = self.backend.inner.options.command_timeout;
            let wait: i64 = match tokio::time::timeout(limit, inv.invoke_async(&mut conn)).await {
                Ok(Ok(wait)) => wait,
                Ok(Err(e)) => return Err(RateLimitStoreError::Backend(Box::new(e))),
                Err(_) => return Err(RateLimitStoreError::Timeout { limit }),
            };
            Ok(if wait < 0 { Ok(()) } else { Err(Duration::from_micros(wait as u64)) })
        })
    }
}
