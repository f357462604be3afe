//! A remote JWK set: fetched on first use, cached with a TTL, refreshed early when a token names
//! an unknown `kid` (at most once per interval, one fetch at a time), and authorization-server
//! metadata discovery of its URL.

use crate::fetch::{FetchOptions, Fetcher};
use crate::keyset::KeySet;
use crate::metadata::{as_metadata_urls, jwks_uri_from_as_metadata};
use crate::AuthError;
use parking_lot::RwLock;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Settings of a remote JWK set.
#[derive(Debug, Clone)]
pub struct JwksOptions {
    /// How long a fetched key set is used before it is fetched again (default 5 min).
    pub ttl: Duration,
    /// Least time between two refreshes caused by unknown `kid`s (default 30 s): a flood of
    /// tokens with made-up key ids costs at most one fetch per interval.
    pub unknown_kid_interval: Duration,
    /// The HTTP client's limits.
    pub fetch: FetchOptions,
}

impl Default for JwksOptions {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(300),
            unknown_kid_interval: Duration::from_secs(30),
            fetch: FetchOptions::default(),
        }
    }
}

struct Cached {
    keys: Arc<KeySet>,
    /// When the keys stop being fresh.
    stale_at: Instant,
}

pub(crate) struct RemoteJwks {
    url: String,
    fetcher: Fetcher,
    opts: JwksOptions,
    cached: RwLock<Option<Cached>>,
    /// Held while fetching (single flight).
    fetching: tokio::sync::Mutex<FetchState>,
}

#[derive(Default)]
struct FetchState {
    /// When the last refresh caused by an unknown `kid` started.
    last_kid_refresh: Option<Instant>,
    /// The last failed fetch while no keys were cached: answered again for a second, so an
    /// unreachable server is not asked once per request.
    failure: Option<(Instant, AuthError)>,
}

impl RemoteJwks {
    pub(crate) fn new(url: &str, opts: JwksOptions) -> Result<Self, AuthError> {
        let fetcher = Fetcher::new(&opts.fetch)?;
        fetcher.check_url(url)?;
        Ok(Self { url: url.to_owned(), fetcher, opts, cached: RwLock::new(None), fetching: Default::default() })
    }

    fn current(&self) -> Option<(Arc<KeySet>, bool)> {
        let c = self.cached.read();
        c.as_ref().map(|c| (c.keys.clone(), Instant::now() < c.stale_at))
    }

    fn store(&self, keys: Arc<KeySet>, fresh_for: Duration) {
        *self.cached.write() = Some(Cached { keys, stale_at: Instant::now() + fresh_for });
    }

    async fn fetch(&self) -> Result<Arc<KeySet>, AuthError> {
        let r = self.fetcher.get(&self.url).await?;
        if !(200..300).contains(&r.status) {
            return Err(AuthError::Unavailable(format!("{}: HTTP {}", self.url, r.status)));
        }
        let doc = r.json.ok_or_else(|| AuthError::Unavailable(format!("{}: not JSON", self.url)))?;
        let keys = KeySet::from_jwks(&doc)?;
        tracing::debug!(url = %self.url, keys = keys.len(), "fetched JWKS");
        Ok(Arc::new(keys))
    }

    /// The key set, fetched when there is none or it went stale. A failed refresh keeps serving
    /// stale keys (retrying after `unknown_kid_interval`); with no keys at all it fails.
    pub(crate) async fn keys(&self) -> Result<Arc<KeySet>, AuthError> {
        if let Some((keys, true)) = self.current() {
            return Ok(keys);
        }
        let mut state = self.fetching.lock().await;
        let stale = match self.current() {
            Some((keys, true)) => return Ok(keys), // another request refreshed it meanwhile
            other => other.map(|(k, _)| k),
        };
        if let Some((at, e)) = &state.failure {
            if stale.is_none() && at.elapsed() < Duration::from_secs(1) {
                return Err(e.clone());
            }
        }
        state.failure = None;
        match self.fetch().await {
            Ok(keys) => {
                self.store(keys.clone(), self.opts.ttl);
                Ok(keys)
            }
            Err(e) => match stale {
                Some(keys) => {
                    tracing::warn!(url = %self.url, error = %e, "JWKS refresh failed; using the previous keys");
                    self.store(keys.clone(), self.opts.unknown_kid_interval);
                    Ok(keys)
                }
                None => {
                    state.failure = Some((Instant::now(), e.clone()));
                    Err(e)
                }
            },
        }
    }

    /// Refetches because a token named a `kid` missing from `seen`. Returns the new keys, or
    /// `None` when rate-limited or the fetch failed (the token is then refused).
    pub(crate) async fn refresh_for_unknown_kid(&self, seen: &Arc<KeySet>) -> Option<Arc<KeySet>> {
        let mut state = self.fetching.lock().await;
        if let Some((keys, _)) = self.current() {
            if !Arc::ptr_eq(&keys, seen) {
                return Some(keys); // refreshed while we waited
            }
        }
        if state.last_kid_refresh.is_some_and(|t| t.elapsed() < self.opts.unknown_kid_interval) {
            tracing::debug!(url = %self.url, "unknown kid: JWKS refresh rate-limited");
            return None;
        }
        state.last_kid_refresh = Some(Instant::now());
        match self.fetch().await {
            Ok(keys) => {
                self.store(keys.clone(), self.opts.ttl);
                Some(keys)
            }
            Err(e) => {
                tracing::warn!(url = %self.url, error = %e, "JWKS refresh failed");
                None
            }
        }
    }
}

/// Finds the `jwks_uri` of `issuer`: tries RFC 8414 and OpenID Connect discovery URLs in the MCP
/// order; the first document found must name exactly `issuer`.
pub async fn discover_jwks_uri(issuer: &str, options: &JwksOptions) -> Result<String, AuthError> {
    let fetcher = Fetcher::new(&options.fetch)?;
    let mut last = AuthError::Unavailable(format!("no authorization server metadata found for {issuer}"));
    for url in as_metadata_urls(issuer)? {
        match fetcher.get(&url).await {
            Ok(r) if (200..300).contains(&r.status) => {
                let doc = r.json.ok_or_else(|| AuthError::Unavailable(format!("{url}: not JSON")))?;
                return jwks_uri_from_as_metadata(&doc, issuer);
            }
            Ok(r) => last = AuthError::Unavailable(format!("{url}: HTTP {}", r.status)),
            Err(e @ AuthError::Config(_)) => return Err(e),
            Err(e) => last = e,
        }
    }
    Err(last)
}
