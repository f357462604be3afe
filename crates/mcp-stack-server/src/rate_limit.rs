//! Rate limits: token buckets per caller, per tool, per caller and tool, and for the whole
//! server, kept in memory or (through [`RateLimitStore`]) shared by every replica.
//!
//! A request past a limit is answered with the JSON-RPC error `-32029`
//! ([`mcp_protocol::error::code::RATE_LIMITED`]) whose `data.retryAfterMs` says when to try again;
//! over Streamable HTTP with status 429 and `Retry-After`. Limits are checked after the
//! [operation layers](crate::layers) (so a layer that sets the caller decides whose budget a
//! request spends) and before the handler; the continuation rounds of a multi round-trip
//! request (those carrying a genuine `requestState`) spend nothing.
//!
//! Callers are keyed by their authenticated principal; anonymous callers by their peer IP
//! address (Streamable HTTP), by a header a trusted front sets
//! ([`RateLimits::anonymous_key_header`]), or else share one bucket (stdio: one client).
//!
//! A forwarding header such as `X-Forwarded-For` is a list each proxy appends to, so only its
//! right end is written by proxies the server trusts: with [`RateLimits::trusted_hops`] `N`
//! (default 1: one reverse proxy, e.g. nginx with `proxy_add_x_forwarded_for`), a caller is
//! the `N`th entry from the right, never an entry the client wrote itself. A list shorter than
//! `N` was written by trusted proxies alone: its leftmost entry is the caller.
//! Buckets are checked from the most specific (this caller on this tool) to the least (the whole
//! server), so a caller flooding one tool is refused before it spends the shared budgets.
//!
//! ```
//! use mcp_server::rate_limit::{Quota, RateLimits};
//! use mcp_server::{Server, Tool};
//! use std::time::Duration;
//!
//! let server = Server::builder("s", "1")
//!     .rate_limits(RateLimits::new().per_caller(Quota::new(100, Duration::from_secs(60))))
//!     .tool(Tool::new("search").rate_limit("5/10s".parse().unwrap()).handler(|| async { "found" }))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

use crate::context::RequestEnv;
use crate::error::BuildError;
use mcp_protocol::ProtocolError;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// `count` requests per `period`, in bursts of up to `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    count: u32,
    period: Duration,
}

impl Quota {
    /// `count` requests per `period` (checked when the server is built: both must be non-zero).
    pub fn new(count: u32, period: Duration) -> Self {
        Self { count, period }
    }

    /// Requests allowed per period.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The time one request's token takes to come back, in microseconds.
    pub(crate) fn interval_us(&self) -> u64 {
        (self.period.as_micros() / u128::from(self.count.max(1))).max(1) as u64
    }

    /// How far ahead of now a bucket may run (the burst), in microseconds.
    pub(crate) fn tolerance_us(&self) -> u64 {
        (self.period.as_micros() as u64).saturating_sub(self.interval_us())
    }

    fn problem(&self) -> Option<&'static str> {
        if self.count == 0 {
            Some("a quota needs a count of at least 1")
        } else if self.period.is_zero() {
            Some("a quota needs a non-zero period")
        } else if self.period > Duration::from_secs(366 * 86_400) {
            Some("a quota's period is at most a year")
        } else {
            None
        }
    }
}

impl std::fmt::Display for Quota {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}s", self.count, self.period.as_secs_f64())
    }
}

/// A quota written `COUNT/PERIOD`: `5/10s`, `100/m`, `1000/1h`, `20/500ms` (units `ms`, `s`,
/// `m`, `h`; a missing number means 1).
impl std::str::FromStr for Quota {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a quota: write COUNT/PERIOD, e.g. 5/10s, 100/m, 1000/1h");
        let (count, period) = s.trim().split_once('/').ok_or_else(bad)?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        let period = period.trim();
        let split = period.find(|c: char| !c.is_ascii_digit()).unwrap_or(period.len());
        let (n, unit) = period.split_at(split);
        let n: u64 = if n.is_empty() { 1 } else { n.parse().map_err(|_| bad())? };
        let unit_ms = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return Err(bad()),
        };
        let quota = Quota::new(count, Duration::from_millis(n.checked_mul(unit_ms).ok_or_else(bad)?));
        match quota.problem() {
            Some(p) => Err(format!("{s:?}: {p}")),
            None => Ok(quota),
        }
    }
}

/// The verdict of a bucket: go on, or wait this long.
pub type Verdict = Result<(), Duration>;

/// Why a [`RateLimitStore`] could not give a verdict.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RateLimitStoreError {
    /// The store did not answer within its time limit.
    #[error("the rate limit store did not answer within {} ms", limit.as_millis())]
    Timeout {
        /// The limit that passed.
        limit: Duration,
    },
    /// The store (or the connection to it) failed.
    #[error("rate limit store: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// A boxed future borrowing the store.
pub type StoreFuture<'a> = Pin<Box<dyn Future<Output = Result<Verdict, RateLimitStoreError>> + Send + 'a>>;

/// Where buckets live. [`MemoryRateLimitStore`] keeps them in this process; the
/// `mcp-stack-redis` crate has one on Redis that every replica shares (one budget for all).
pub trait RateLimitStore: Send + Sync + 'static {
    /// Spends one request from the bucket `key` under `quota`: `Ok(Ok(()))` when allowed,
    /// `Ok(Err(wait))` when refused, `Err(why)` when the store failed (the request is then
    /// let through and the failure logged: a limiter outage does not stop the service).
    fn acquire<'a>(&'a self, key: &'a str, quota: Quota) -> StoreFuture<'a>;

    /// [`RateLimitStore::acquire`] without waiting, for a store that can answer at once (in
    /// memory): `None` sends the request through `acquire`. Saves a boxed future per bucket.
    fn acquire_now(&self, key: &str, quota: Quota) -> Option<Result<Verdict, RateLimitStoreError>> {
        let _ = (key, quota);
        None
    }
}

/// The generic cell rate algorithm on one bucket: `tat` is the bucket's theoretical arrival
/// time (microseconds on the store's clock); returns the new `tat`, or how long to wait.
pub(crate) fn gcra(tat: u64, now: u64, quota: Quota) -> Result<u64, Duration> {
    let tat = tat.max(now);
    let ahead = tat - now;
    if ahead > quota.tolerance_us() {
        return Err(Duration::from_micros(ahead - quota.tolerance_us()));
    }
    Ok(tat + quota.interval_us())
}

const SHARDS: usize = 16;

/// One shard of buckets: per key, (theoretical arrival time, last use).
type Shard = HashMap<Box<str>, (u64, u64)>;

/// Buckets in this process: sharded, bounded in count ([`MemoryRateLimitStore::new`]). A full
/// shard first forgets buckets that refilled (they are the same as new ones), then the least
/// recently used among a sample: a caller that keeps sending keeps its bucket, and a forgotten
/// bucket can only give its caller more, never lock anyone out.
pub struct MemoryRateLimitStore {
    /// Per key: the bucket's theoretical arrival time (µs) and when it was last used (a
    /// sequence number).
    shards: Box<[Mutex<Shard>]>,
    per_shard: usize,
    epoch: tokio::time::Instant,
    uses: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for MemoryRateLimitStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRateLimitStore").field("buckets", &self.len()).finish()
    }
}

impl Default for MemoryRateLimitStore {
    fn default() -> Self {
        Self::new(100_000)
    }
}

impl MemoryRateLimitStore {
    /// A store of at most about `max_buckets` buckets (default 100,000).
    pub fn new(max_buckets: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard: max_buckets.div_ceil(SHARDS).max(1),
            epoch: tokio::time::Instant::now(),
            uses: Default::default(),
        }
    }

    /// The buckets held now.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    /// Whether no bucket is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Spends one request from `key` now (what [`RateLimitStore::acquire`] does, synchronously).
    pub(crate) fn spend(&self, key: &str, quota: Quota) -> Verdict {
        let now = self.epoch.elapsed().as_micros() as u64 + 1;
        let seq = self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let shard = &self.shards[shard_of(key)];
        let mut map = shard.lock();
        if let Some((tat, used)) = map.get_mut(key) {
            *used = seq;
            *tat = gcra(*tat, now, quota)?;
            return Ok(());
        }
        let tat = gcra(0, now, quota)?;
        if map.len() >= self.per_shard {
            map.retain(|_, (t, _)| *t > now);
        }
        if map.len() >= self.per_shard {
            let victim = map.iter().take(64).min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone());
            if let Some(k) = victim {
                map.remove(&k);
            }
        }
        map.insert(key.into(), (tat, seq));
        Ok(())
    }
}

fn shard_of(key: &str) -> usize {
    use std::hash::BuildHasher;
    static SEED: std::sync::OnceLock<std::collections::hash_map::RandomState> = std::sync::OnceLock::new();
    (SEED.get_or_init(Default::default).hash_one(key) as usize) % SHARDS
}

impl RateLimitStore for MemoryRateLimitStore {
    fn acquire<'a>(&'a self, key: &'a str, quota: Quota) -> StoreFuture<'a> {
        Box::pin(std::future::ready(Ok(self.spend(key, quota))))
    }

    fn acquire_now(&self, key: &str, quota: Quota) -> Option<Result<Verdict, RateLimitStoreError>> {
        Some(Ok(self.spend(key, quota)))
    }
}

/// The server's rate limits ([`crate::ServerBuilder::rate_limits`]); per-tool limits per caller
/// are set on the tool ([`crate::Tool::rate_limit`]).
#[derive(Clone, Default)]
pub struct RateLimits {
    per_caller: Option<Quota>,
    global: Option<Quota>,
    tools: Vec<(String, Quota)>,
    anonymous_header: Option<http::HeaderName>,
    trusted_hops: Option<usize>,
    store: Option<Arc<dyn RateLimitStore>>,
    max_buckets: Option<usize>,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimits")
            .field("per_caller", &self.per_caller)
            .field("global", &self.global)
            .field("tools", &self.tools)
            .field("anonymous_header", &self.anonymous_header)
            .field("trusted_hops", &self.trusted_hops)
            .field("shared_store", &self.store.is_some())
            .finish()
    }
}

impl RateLimits {
    /// No limits yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every request of one caller.
    pub fn per_caller(mut self, quota: Quota) -> Self {
        self.per_caller = Some(quota);
        self
    }

    /// Every request, whoever sends it.
    pub fn global(mut self, quota: Quota) -> Self {
        self.global = Some(quota);
        self
    }

    /// Calls of the tool `name`, whoever makes them (one budget for all callers).
    pub fn per_tool(mut self, name: impl Into<String>, quota: Quota) -> Self {
        self.tools.push((name.into(), quota));
        self
    }

    /// Keys anonymous callers by this header (the client address a trusted reverse proxy
    /// sets, e.g. `X-Forwarded-For`) instead of the peer address, for every limit: the entry
    /// [`RateLimits::trusted_hops`] from the right of its comma-separated list (the last one by
    /// default), so a client cannot choose its key by sending the header itself. A request
    /// without the header (or with an entry over 128 bytes) is keyed by its peer address.
    pub fn anonymous_key_header(mut self, name: http::HeaderName) -> Self {
        self.anonymous_header = Some(name);
        self
    }

    /// How many reverse proxies in front of the server append to the
    /// [key header](RateLimits::anonymous_key_header) (default 1): the caller is that many
    /// entries from the right. Count only proxies every request passes through; 0 fails
    /// [`crate::ServerBuilder::build`] (to trust no header, name none).
    pub fn trusted_hops(mut self, hops: usize) -> Self {
        self.trusted_hops = Some(hops);
        self
    }

    /// Keeps buckets in `store` (e.g. Redis, shared by every replica) instead of in memory.
    pub fn store(mut self, store: Arc<dyn RateLimitStore>) -> Self {
        self.store = Some(store);
        self
    }

    pub(crate) fn take_store(&mut self) -> Option<Arc<dyn RateLimitStore>> {
        self.store.take()
    }

    pub(crate) fn set_store_if_none(&mut self, store: Arc<dyn RateLimitStore>) {
        self.store.get_or_insert(store);
    }

    /// Most buckets the in-memory store keeps (default 100,000).
    pub fn max_buckets(mut self, n: usize) -> Self {
        self.max_buckets = Some(n);
        self
    }

    /// Checks the quotas and makes the limiter (with `tools`: the per-caller quotas set on
    /// tools, checked too).
    pub(crate) fn build<'a>(self, tools: impl Iterator<Item = (&'a str, Quota)>) -> Result<Limiter, BuildError> {
        for (name, q) in tools {
            if let Some(p) = q.problem() {
                return Err(BuildError::InvalidPolicy {
                    policy: format!("rate limit of tool {name:?}"),
                    reason: p.into(),
                });
            }
        }
        let named = [("per_caller", self.per_caller), ("global", self.global)];
        let tools = self.tools.iter().map(|(n, q)| (n.as_str(), Some(*q)));
        for (what, quota) in named.iter().map(|(w, q)| (*w, *q)).chain(tools) {
            if let Some(p) = quota.and_then(|q| q.problem()) {
                return Err(BuildError::InvalidPolicy { policy: format!("rate limit {what}"), reason: p.into() });
            }
        }
        if self.trusted_hops == Some(0) {
            return Err(BuildError::InvalidPolicy {
                policy: "rate limit trusted_hops".into(),
                reason: "at least 1 proxy (to trust no header, set no key header)".into(),
            });
        }
        let store = match self.store {
            Some(s) => s,
            None => Arc::new(MemoryRateLimitStore::new(self.max_buckets.unwrap_or(100_000))),
        };
        Ok(Limiter {
            per_caller: self.per_caller,
            global: self.global,
            tools: self.tools.into_iter().collect(),
            anonymous_header: self.anonymous_header,
            trusted_hops: self.trusted_hops.unwrap_or(1),
            store,
        })
    }
}

/// The limits of a built server.
pub(crate) struct Limiter {
    per_caller: Option<Quota>,
    global: Option<Quota>,
    tools: HashMap<String, Quota>,
    anonymous_header: Option<http::HeaderName>,
    trusted_hops: usize,
    store: Arc<dyn RateLimitStore>,
}

/// The longest key-header entry used as a key (an address is far shorter); a longer one is
/// ignored, so buckets stay small whatever a front passes on.
const MAX_KEY_ENTRY: usize = 128;

/// The caller's entry of a forwarding header: its lines in order form one comma-separated
/// list, and the caller is the entry `hops` from the right (the entries right of it were
/// appended by the trusted proxies); a shorter list gives its leftmost entry. `None` without
/// the header, or when that entry is empty, over-long or not visible ASCII. Only that entry is
/// checked: the part left of it is the client's own text (nginx joins whatever the client sent,
/// any bytes, into the same line), and it must not make the trusted entry unreadable.
pub(crate) fn forwarded_client<'h>(
    headers: &'h http::HeaderMap,
    name: &http::HeaderName,
    hops: usize,
) -> Option<&'h str> {
    let mut seen = 0;
    let mut leftmost = None;
    'lines: for line in headers.get_all(name).iter().rev() {
        for entry in line.as_bytes().rsplit(|&b| b == b',') {
            seen += 1;
            leftmost = Some(entry);
            if seen >= hops {
                break 'lines;
            }
        }
    }
    let entry = leftmost?.trim_ascii();
    let visible = entry.iter().all(|b| b.is_ascii_graphic());
    if entry.is_empty() || entry.len() > MAX_KEY_ENTRY || !visible {
        return None;
    }
    std::str::from_utf8(entry).ok()
}

impl Limiter {
    /// Appends the key of the caller of `env` to `out`.
    fn push_caller(&self, env: &RequestEnv, out: &mut String) {
        use std::fmt::Write;
        if let Some(p) = &env.principal {
            out.push_str("p:");
            out.push_str(p);
            return;
        }
        let http = env.http.as_deref();
        let header =
            self.anonymous_header.as_ref().and_then(|h| forwarded_client(&http?.headers, h, self.trusted_hops));
        if let Some(v) = header {
            out.push_str("h:");
            out.push_str(v);
            return;
        }
        match env.peer_address() {
            Some(addr) => {
                let _ = write!(out, "ip:{}", addr.ip());
            }
            None => out.push_str("local"),
        }
    }

    /// Whether a limit counts callers apart (and so needs to tell anonymous ones apart).
    pub(crate) fn keys_callers(&self) -> bool {
        self.per_caller.is_some()
    }

    /// Whether a limit of the server's own (not a tool's) may apply to some request.
    pub(crate) fn has_server_limits(&self) -> bool {
        self.per_caller.is_some() || self.global.is_some() || !self.tools.is_empty()
    }

    /// Whether any limit applies to a request (on `tool`, with its own per-caller quota).
    pub(crate) fn applies(&self, tool: Option<(&str, Option<Quota>)>) -> bool {
        self.per_caller.is_some()
            || self.global.is_some()
            || tool.is_some_and(|(name, q)| q.is_some() || self.tools.contains_key(name))
    }

    /// Spends one request of `env`'s caller (on `tool` with its own per-caller quota, when it
    /// is a tool call), from the most specific bucket to the least; the error past a limit.
    pub(crate) async fn check(
        &self,
        env: &RequestEnv,
        tool: Option<(&str, Option<Quota>)>,
    ) -> Result<(), ProtocolError> {
        if !self.applies(tool) {
            return Ok(());
        }
        let order = [
            tool.and_then(|(n, q)| Some((Bucket::ToolPerCaller(n), q?))),
            self.per_caller.map(|q| (Bucket::PerCaller, q)),
            tool.and_then(|(n, _)| Some((Bucket::Tool(n), *self.tools.get(n)?))),
            self.global.map(|q| (Bucket::Server, q)),
        ];
        let mut key = String::with_capacity(64);
        for (bucket, quota) in order.into_iter().flatten() {
            key.clear();
            match bucket {
                Bucket::ToolPerCaller(name) => {
                    key.push_str("ct:");
                    key.push_str(name);
                    key.push(':');
                    self.push_caller(env, &mut key);
                }
                Bucket::PerCaller => {
                    key.push_str("c:");
                    self.push_caller(env, &mut key);
                }
                Bucket::Tool(name) => {
                    key.push_str("t:");
                    key.push_str(name);
                }
                Bucket::Server => key.push('g'),
            }
            let verdict = match self.store.acquire_now(&key, quota) {
                Some(v) => v,
                None => self.store.acquire(&key, quota).await,
            };
            match verdict {
                Ok(Ok(())) => {}
                Ok(Err(wait)) => return Err(ProtocolError::rate_limited(wait, format!("{quota} ({bucket})"))),
                Err(e) => {
                    tracing::warn!(target: "mcp_server::rate_limit", "rate limit store failed, request let through: {e}")
                }
            }
        }
        Ok(())
    }
}

/// Which bucket a request spends from (named in the refusal).
#[derive(Debug, Clone, Copy)]
enum Bucket<'a> {
    ToolPerCaller(&'a str),
    PerCaller,
    Tool(&'a str),
    Server,
}

impl std::fmt::Display for Bucket<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bucket::ToolPerCaller(name) => write!(f, "tool {name} per caller"),
            Bucket::PerCaller => f.write_str("per caller"),
            Bucket::Tool(name) => write!(f, "tool {name}"),
            Bucket::Server => f.write_str("server"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_parse_and_refuse_nonsense() {
        assert_eq!("5/10s".parse::<Quota>().unwrap(), Quota::new(5, Duration::from_secs(10)));
        assert_eq!("100/m".parse::<Quota>().unwrap(), Quota::new(100, Duration::from_secs(60)));
        assert_eq!("20/500ms".parse::<Quota>().unwrap(), Quota::new(20, Duration::from_millis(500)));
        assert_eq!("1/2h".parse::<Quota>().unwrap().period(), Duration::from_secs(7200));
        for bad in ["5", "x/s", "5/10", "5/10d", "0/s", "5/0s", "-1/s", "5/99999999999999999h"] {
            assert!(bad.parse::<Quota>().is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn gcra_allows_a_burst_then_one_per_interval() {
        let q = Quota::new(5, Duration::from_secs(10));
        let mut tat = 0;
        for _ in 0..5 {
            tat = gcra(tat, 1_000, q).unwrap();
        }
        let wait = gcra(tat, 1_000, q).unwrap_err();
        assert_eq!(wait, Duration::from_secs(2), "one token back every 2 s");
        assert!(gcra(tat, 1_000 + 1_999_999, q).is_err());
        assert!(gcra(tat, 1_000 + 2_000_000, q).is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn memory_buckets_refill_with_time() {
        let store = MemoryRateLimitStore::new(100);
        let q = Quota::new(2, Duration::from_secs(1));
        assert!(store.spend("a", q).is_ok() && store.spend("a", q).is_ok());
        assert!(store.spend("a", q).is_err());
        assert!(store.spend("b", q).is_ok(), "another key has its own bucket");
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(store.spend("a", q).is_ok());
        assert!(store.spend("a", q).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_hundred_thousand_callers_stay_within_the_bound() {
        let store = MemoryRateLimitStore::new(8_000);
        let q = Quota::new(1, Duration::from_secs(3600));
        store.spend("flooder", q).unwrap();
        for i in 0..100_000 {
            let _ = store.spend(&format!("caller-{i}"), q);
            let _ = store.spend("flooder", q);
        }
        assert!(store.len() <= 8_000 + SHARDS, "{} buckets", store.len());
        assert!(store.spend("flooder", q).is_err(), "the active flooder is still limited");
    }

    fn xff(lines: &[&str]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for l in lines {
            h.append("x-forwarded-for", l.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_caller_is_the_entry_trusted_hops_from_the_right() {
        let name = http::HeaderName::from_static("x-forwarded-for");
        let pick = |lines: &[&str], hops| forwarded_client(&xff(lines), &name, hops).map(str::to_owned);
        // nginx appended the address it saw to whatever the client sent.
        assert_eq!(pick(&["forged, 203.0.113.7"], 1).as_deref(), Some("203.0.113.7"));
        assert_eq!(pick(&["1.1.1.1,2.2.2.2, 203.0.113.7"], 1).as_deref(), Some("203.0.113.7"));
        // Two trusted proxies (a CDN, then nginx): the CDN's entry is second from the right.
        assert_eq!(pick(&["forged, 198.51.100.1, 10.0.0.5"], 2).as_deref(), Some("198.51.100.1"));
        // Several header lines are one list, in order.
        assert_eq!(pick(&["forged", "198.51.100.1", "10.0.0.5"], 2).as_deref(), Some("198.51.100.1"));
        assert_eq!(pick(&["forged, 198.51.100.1", "10.0.0.5"], 2).as_deref(), Some("198.51.100.1"));
        // A list shorter than the trusted chain: every entry is a proxy's, the leftmost wins.
        assert_eq!(pick(&["198.51.100.1"], 3).as_deref(), Some("198.51.100.1"));
        // Nothing usable: the peer address decides.
        assert_eq!(pick(&[], 1), None);
        assert_eq!(pick(&["a, "], 1), None);
        assert_eq!(pick(&[&"9".repeat(MAX_KEY_ENTRY + 1)], 1), None);
        assert_eq!(pick(&[&"9".repeat(MAX_KEY_ENTRY)], 1).map(|v| v.len()), Some(MAX_KEY_ENTRY));
    }

    #[test]
    fn bytes_the_client_wrote_do_not_hide_the_trusted_entry() {
        let name = http::HeaderName::from_static("x-forwarded-for");
        let raw = |lines: &[&[u8]]| {
            let mut h = http::HeaderMap::new();
            for l in lines {
                h.append(name.clone(), http::HeaderValue::from_bytes(l).unwrap());
            }
            h
        };
        // nginx joined the client's `\xff` into the line it appended to.
        let h = raw(&[b"\xff, 192.0.2.66"]);
        assert_eq!(forwarded_client(&h, &name, 1), Some("192.0.2.66"));
        let h = raw(&[b"caf\xc3\xa9,\x80\x81, 198.51.100.1, 10.0.0.5"]);
        assert_eq!(forwarded_client(&h, &name, 2), Some("198.51.100.1"));
        // The client's bytes on a line of their own, before the proxy's.
        let h = raw(&[b"\xfe\xff", b"192.0.2.66"]);
        assert_eq!(forwarded_client(&h, &name, 1), Some("192.0.2.66"));
        // The selected entry itself must be visible ASCII, else the peer address decides.
        let h = raw(&[b"a, 192.0.2.\xff"]);
        assert_eq!(forwarded_client(&h, &name, 1), None);
        let h = raw(&[b"\xff"]);
        assert_eq!(forwarded_client(&h, &name, 1), None);
        assert_eq!(forwarded_client(&raw(&[b"a b, 1.2.3.4"]), &name, 2), None);
    }

    #[tokio::test]
    async fn a_non_ascii_forwarded_for_does_not_escape_the_bucket() {
        let limiter = RateLimits::new()
            .per_caller(Quota::new(5, Duration::from_secs(3600)))
            .anonymous_key_header(http::HeaderName::from_static("x-forwarded-for"))
            .build(std::iter::empty())
            .unwrap();
        // The attacker (seen by nginx as 192.0.2.66) spends its budget with a byte nginx passes.
        for i in 0..5u8 {
            let line = [b"\xff".as_slice(), &[b'0' + i], b", 192.0.2.66"].concat();
            limiter.check(&behind_proxy(line, [127, 0, 0, 1]), None).await.expect("within the budget");
        }
        let plain = limiter.check(&behind_proxy("192.0.2.66", [127, 0, 0, 1]), None).await;
        assert!(plain.is_err(), "the attacker's own bucket was spent");
        limiter.check(&behind_proxy("192.0.2.10", [127, 0, 0, 1]), None).await.expect("another client is served");
    }

    fn behind_proxy(xff_value: impl AsRef<[u8]>, peer: [u8; 4]) -> RequestEnv {
        let value = http::HeaderValue::from_bytes(xff_value.as_ref()).unwrap();
        let parts = http::Request::builder().header("x-forwarded-for", value).body(()).unwrap().into_parts().0;
        let mut env = RequestEnv::new(Default::default());
        env.peer = Some(std::net::SocketAddr::from((peer, 4000)));
        env.http = Some(Arc::new(parts));
        env
    }

    #[tokio::test]
    async fn a_forged_forwarded_for_neither_escapes_nor_locks_out() {
        let limiter = RateLimits::new()
            .per_caller(Quota::new(5, Duration::from_secs(3600)))
            .anonymous_key_header(http::HeaderName::from_static("x-forwarded-for"))
            .build(std::iter::empty())
            .unwrap();
        // The attacker (seen by nginx as 192.0.2.66) rotates the first entry: one budget.
        let mut refused = 0;
        for i in 0..12 {
            let env = behind_proxy(format!("10.0.0.{i}, 192.0.2.66"), [127, 0, 0, 1]);
            refused += limiter.check(&env, None).await.is_err() as usize;
        }
        assert_eq!(refused, 7);
        // Naming the victim's address spends the attacker's budget, not the victim's.
        for _ in 0..5 {
            let _ = limiter.check(&behind_proxy("192.0.2.10, 192.0.2.66", [127, 0, 0, 1]), None).await;
        }
        for _ in 0..5 {
            limiter.check(&behind_proxy("192.0.2.10", [127, 0, 0, 1]), None).await.expect("the victim is served");
        }
    }

    #[test]
    fn zero_trusted_hops_fails_the_build() {
        let e = RateLimits::new().trusted_hops(0).build(std::iter::empty()).err().expect("refused");
        assert!(e.to_string().contains("trusted_hops"), "{e}");
    }
}
