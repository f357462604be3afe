//! The cache of already-verified JWTs inside a [`crate::JwtValidator`]: a client sends the same
//! bearer token on every request of its session, and checking an RS256 signature costs tens of
//! microseconds of CPU, so a token whose signature and claims were checked once is answered from
//! here until one of the rules below says otherwise.
//!
//! - The key is the exact token: the whole string is compared (its hash only picks the shard).
//! - An entry is used only while `now` (passed in, checked on every hit) is before the token's
//!   `exp` (never in the leeway past it: there the token is verified again), not before its `nbf`
//!   minus the leeway, and for at most [`VerifiedCacheOptions::max_age`] after it was verified,
//!   with or without `exp`.
//! - An entry is bound to the key set that verified it: after a JWKS refresh or rotation (a new
//!   key set) it is dropped on its next use and the token is verified again against the new keys.
//! - Only successful verifications are stored, never a refusal.
//! - Issuer and audience cannot differ on a hit: the cache belongs to one validator, whose
//!   [`crate::JwtConfig`] is fixed when it is built. Scopes are checked by [`crate::AuthConfig`]
//!   after the validator on every request, hit or not.
//!
//! Bound and eviction: at most [`VerifiedCacheOptions::capacity`] entries, in shards of at most
//! 64 under their own lock (held for a map look-up, never across a signature check). Each shard
//! evicts as S3-FIFO does: a new token enters a small probation queue (a tenth of the shard); a
//! token used again while there moves to the main queue on eviction, one never used again is
//! dropped and its hash remembered in a bounded ghost list, and a token whose hash is in the ghost
//! list enters the main queue directly. The main queue gives each token up to three second
//! chances (one per use). So a caller spraying distinct tokens churns only the probation queue:
//! tokens in use stay, and a new client's token gets into the main queue on its second
//! verification, unless more than a shard's capacity of other new tokens was verified in between.
//! Every insertion does bounded work (at most 128 queue steps and one scan of the ghost list).

use crate::keyset::KeySet;
use crate::Principal;
use parking_lot::RwLock;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Settings of the cache of verified tokens of a [`crate::JwtValidator`] (see
/// [`crate::JwtValidator::with_verified_cache`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifiedCacheOptions {
    /// Most tokens kept (default 1024; 0 turns the cache off). Each entry holds the token and its
    /// claims, so the bound on memory is about `capacity` times the size of a token and its claims.
    pub capacity: usize,
    /// Longest time a token is answered from the cache after its signature was checked, even if
    /// its `exp` is later or absent (default 5 minutes).
    pub max_age: Duration,
}

impl Default for VerifiedCacheOptions {
    fn default() -> Self {
        Self { capacity: 1024, max_age: Duration::from_secs(300) }
    }
}

impl VerifiedCacheOptions {
    /// No cache: every token's signature is checked on every request.
    pub fn disabled() -> Self {
        Self { capacity: 0, ..Self::default() }
    }
}

/// Most entries of one shard.
const SHARD_CAPACITY: usize = 64;
/// Most shards.
const MAX_SHARDS: usize = 16;
/// Most queue steps of one insertion before the head is dropped whatever its uses.
const EVICTION_STEPS: usize = 2 * SHARD_CAPACITY;
/// Most second chances of a token in the main queue.
const MAX_USES: u8 = 3;

struct Entry {
    principal: Arc<Principal>,
    /// The key set that verified the token.
    keys: Arc<KeySet>,
    /// First second the entry may answer (`nbf` minus the leeway).
    from: u64,
    /// First second the entry may no longer answer (`exp`, or verification time + `max_age`).
    until: u64,
    /// Uses since the entry entered its queue, up to [`MAX_USES`].
    uses: AtomicU8,
    /// Tells this entry from an earlier one of the same token in the queues.
    stamp: u64,
}

#[derive(Default)]
struct Shard {
    map: HashMap<Arc<str>, Entry>,
    /// Probation queue: tokens inserted and not yet used again (may hold stale records).
    small: VecDeque<(Arc<str>, u64)>,
    /// Main queue (may hold stale records).
    main: VecDeque<(Arc<str>, u64)>,
    /// Hashes of tokens dropped from probation, oldest first.
    ghost: VecDeque<u64>,
    next_stamp: u64,
}

/// The verified-token cache of one validator.
pub(crate) struct VerifiedTokens {
    shards: Box<[RwLock<Shard>]>,
    shard_capacity: usize,
    max_age: u64,
    /// Leeway of the validator's config: an entry answers from `nbf - leeway` on, as verification.
    leeway: u64,
    hasher: RandomState,
}

impl VerifiedTokens {
    pub(crate) fn new(options: VerifiedCacheOptions, leeway: Duration) -> Self {
        let capacity = options.capacity;
        let shards = capacity.div_ceil(SHARD_CAPACITY).clamp(1, MAX_SHARDS);
        let live = if capacity == 0 { 0 } else { shards };
        Self {
            shards: (0..live).map(|_| RwLock::default()).collect(),
            shard_capacity: capacity.div_ceil(shards),
            max_age: options.max_age.as_secs(),
            leeway: leeway.as_secs(),
            hasher: RandomState::new(),
        }
    }

    fn shard(&self, hash: u64) -> Option<&RwLock<Shard>> {
        (!self.shards.is_empty()).then(|| &self.shards[(hash % self.shards.len() as u64) as usize])
    }

    /// The principal of `token` if it was verified with `keys` and may still answer at `now`.
    pub(crate) fn get(&self, token: &str, keys: &Arc<KeySet>, now: u64) -> Option<Principal> {
        let shard = self.shard(self.hasher.hash_one(token))?;
        let stale = {
            let s = shard.read();
            let e = s.map.get(token)?;
            if Arc::ptr_eq(&e.keys, keys) && e.from <= now && now < e.until {
                let _ = e.uses.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| (u < MAX_USES).then_some(u + 1));
                let principal = e.principal.clone();
                drop(s);
                return Some(Principal::clone(&principal));
            }
            e.stamp
        };
        // Out of its time or verified with keys no longer current: never used again.
        let mut s = shard.write();
        if s.map.get(token).is_some_and(|e| e.stamp == stale) {
            s.map.remove(token);
        }
        None
    }

    /// Whether `token` has an entry (usable or not): it passed the header checks when verified.
    pub(crate) fn holds(&self, token: &str) -> bool {
        self.shard(self.hasher.hash_one(token)).is_some_and(|s| s.read().map.contains_key(token))
    }

    /// Stores `principal`, just verified with `keys` at `now`. Tokens that would not answer at
    /// `now` (or have an unreadable `exp`/`nbf`) are not stored.
    pub(crate) fn insert(&self, token: &str, keys: &Arc<KeySet>, principal: &Principal, now: u64) {
        let hash = self.hasher.hash_one(token);
        let Some(shard) = self.shard(hash) else { return };
        let (Some(exp), Some(nbf)) = (seconds(principal, "exp"), seconds(principal, "nbf")) else { return };
        let until = now.saturating_add(self.max_age).min(exp.unwrap_or(u64::MAX));
        let from = nbf.map_or(0, |n| n.saturating_sub(self.leeway));
        if !(from <= now && now < until) {
            return;
        }
        let mut s = shard.write();
        let s = &mut *s;
        s.map.remove(token); // its queue record goes stale
        s.make_room(self.shard_capacity, hash_of(&self.hasher));
        let key: Arc<str> = Arc::from(token);
        let stamp = s.next_stamp;
        s.next_stamp += 1;
        match s.ghost.iter().position(|g| *g == hash) {
            Some(i) => {
                s.ghost.remove(i);
                s.main.push_back((key.clone(), stamp));
            }
            None => s.small.push_back((key.clone(), stamp)),
        }
        let entry =
            Entry { principal: Arc::new(principal.clone()), keys: keys.clone(), from, until, uses: 0.into(), stamp };
        s.map.insert(key, entry);
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.read().map.len()).sum()
    }
}

fn hash_of(hasher: &RandomState) -> impl Fn(&str) -> u64 + '_ {
    move |t| hasher.hash_one(t)
}

/// A numeric claim in whole seconds: `Some(None)` when absent, `None` when unreadable.
fn seconds(principal: &Principal, name: &str) -> Option<Option<u64>> {
    match principal.claims.get(name) {
        None | Some(Value::Null) => Some(None),
        Some(Value::Number(n)) => {
            n.as_u64().or_else(|| n.as_f64().filter(|f| f.is_finite() && *f >= 0.0).map(|f| f as u64)).map(Some)
        }
        Some(_) => None,
    }
}

impl Shard {
    /// Frees a queue slot when the queues hold `capacity` records (live or stale).
    fn make_room(&mut self, capacity: usize, hash: impl Fn(&str) -> u64) {
        let small_capacity = (capacity / 10).max(1);
        let mut steps = 0;
        while self.small.len() + self.main.len() >= capacity {
            steps += 1;
            let force = steps >= EVICTION_STEPS;
            let from_small = self.small.len() >= small_capacity || self.main.is_empty();
            let queue = if from_small { &mut self.small } else { &mut self.main };
            let Some((key, stamp)) = queue.pop_front() else { return };
            let Some(entry) = self.map.get(&key).filter(|e| e.stamp == stamp) else { continue };
            let uses = entry.uses.load(Ordering::Relaxed);
            if uses > 0 && !force {
                // Used since it entered its queue: one more round, in the main queue.
                entry.uses.store(if from_small { 0 } else { uses - 1 }, Ordering::Relaxed);
                self.main.push_back((key, stamp));
                continue;
            }
            self.map.remove(&key);
            if from_small {
                if self.ghost.len() >= capacity {
                    self.ghost.pop_front();
                }
                self.ghost.push_back(hash(&key));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn principal(claims: Value) -> Principal {
        let claims: Map<String, Value> = claims.as_object().cloned().unwrap();
        Principal { subject: "alice".into(), scopes: vec!["mcp".into()], client_id: None, claims }
    }

    fn keys() -> Arc<KeySet> {
        Arc::new(KeySet::default())
    }

    fn cache(capacity: usize) -> VerifiedTokens {
        VerifiedTokens::new(
            VerifiedCacheOptions { capacity, max_age: Duration::from_secs(300) },
            Duration::from_secs(60),
        )
    }

    #[test]
    fn key_is_the_whole_token() {
        let (c, k) = (cache(16), keys());
        let token = format!("{}.payload.sig-A", "h".repeat(500));
        c.insert(&token, &k, &principal(json!({"exp": 1000})), 100);
        assert!(c.get(&token, &k, 100).is_some());
        assert!(c.get(&token.replace("sig-A", "sig-B"), &k, 100).is_none(), "same length, last bytes differ");
        assert!(c.get(&token[..token.len() - 1], &k, 100).is_none(), "a prefix");
        assert!(c.get(&format!("{token}x"), &k, 100).is_none(), "an extension");
    }

    #[test]
    fn never_past_exp_nor_before_nbf() {
        let (c, k) = (cache(16), keys());
        c.insert("t", &k, &principal(json!({"exp": 1000})), 900);
        assert!(c.get("t", &k, 999).is_some());
        // The validator accepts up to exp + leeway, but only after verifying again.
        assert!(c.get("t", &k, 1000).is_none());
        assert!(c.get("t", &k, 999).is_none(), "an entry out of its time is dropped");
        // nbf 1000 with 60 s leeway: usable from 940, as verification accepts it.
        c.insert("n", &k, &principal(json!({"exp": 2000, "nbf": 1000})), 950);
        assert!(c.get("n", &k, 939).is_none());
        c.insert("n", &k, &principal(json!({"exp": 2000, "nbf": 1000})), 950);
        assert!(c.get("n", &k, 940).is_some());
        // Not stored when it would not answer now, or the claims are unreadable.
        c.insert("late", &k, &principal(json!({"exp": 1000})), 1000);
        c.insert("odd", &k, &principal(json!({"exp": "1000"})), 900);
        assert!(c.get("late", &k, 999).is_none() && c.get("odd", &k, 950).is_none());
    }

    #[test]
    fn max_age_bounds_every_entry() {
        let (c, k) = (cache(16), keys());
        c.insert("no-exp", &k, &principal(json!({})), 100);
        c.insert("far-exp", &k, &principal(json!({"exp": 1_000_000})), 100);
        assert!(c.get("no-exp", &k, 399).is_some() && c.get("far-exp", &k, 399).is_some());
        assert!(c.get("no-exp", &k, 400).is_none() && c.get("far-exp", &k, 400).is_none());
    }

    #[test]
    fn another_key_set_invalidates() {
        let (c, old, new) = (cache(16), keys(), keys());
        c.insert("t", &old, &principal(json!({"exp": 1000})), 100);
        assert!(c.get("t", &new, 100).is_none(), "verified with keys no longer current");
        assert!(c.get("t", &old, 100).is_none(), "and dropped");
        c.insert("t", &new, &principal(json!({"exp": 1000})), 100);
        assert!(c.get("t", &new, 100).is_some());
    }

    #[test]
    fn zero_capacity_disables() {
        let (c, k) = (cache(0), keys());
        c.insert("t", &k, &principal(json!({"exp": 1000})), 100);
        assert!(c.get("t", &k, 100).is_none());
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn bounded_with_many_shards() {
        let (c, k) = (cache(1000), keys());
        assert_eq!(c.shards.len(), MAX_SHARDS);
        for i in 0..5000 {
            c.insert(&format!("tok-{i}"), &k, &principal(json!({"exp": 1000})), 100);
            assert!(c.len() <= 1000 + MAX_SHARDS, "at most capacity rounded up to whole shards");
        }
        assert!(c.len() > 900, "the shards fill up: {}", c.len());
    }

    #[test]
    fn sprayed_tokens_do_not_push_out_tokens_in_use() {
        let (c, k) = (cache(32), keys());
        let p = principal(json!({"exp": 1000}));
        let in_use: Vec<String> = (0..20).map(|i| format!("user-{i}")).collect();
        for t in &in_use {
            c.insert(t, &k, &p, 100);
            assert!(c.get(t, &k, 100).is_some());
        }
        for i in 0..10_000 {
            c.insert(&format!("spray-{i}"), &k, &p, 100);
            if i % 100 == 0 {
                for t in &in_use {
                    assert!(c.get(t, &k, 100).is_some(), "{t} pushed out after {i} sprayed tokens");
                }
            }
        }
        assert!(c.len() <= 32);
    }

    #[test]
    fn a_new_token_gets_in_on_its_second_verification() {
        let (c, k) = (cache(32), keys());
        let p = principal(json!({"exp": 1000}));
        let spray = |from: usize, n: usize| (from..from + n).for_each(|i| c.insert(&format!("spray-{i}"), &k, &p, 100));
        spray(0, 100);
        c.insert("newcomer", &k, &p, 100);
        spray(100, 40); // more than the shard holds: pushed out before its next request
        assert!(c.get("newcomer", &k, 100).is_none());
        c.insert("newcomer", &k, &p, 100); // verified again: remembered, into the main queue
        spray(140, 10_000);
        assert!(c.get("newcomer", &k, 100).is_some());
    }

    #[test]
    fn concurrent_use_stays_bounded() {
        let (c, k) = (Arc::new(cache(64)), keys());
        let p = principal(json!({"exp": 1000}));
        std::thread::scope(|s| {
            for t in 0..4 {
                let (c, k, p) = (c.clone(), k.clone(), p.clone());
                s.spawn(move || {
                    for i in 0..2000 {
                        let token = format!("t{t}-{}", i % 80);
                        if c.get(&token, &k, 100).is_none() {
                            c.insert(&token, &k, &p, 100);
                        }
                    }
                });
            }
        });
        assert!(c.len() <= 64);
    }

    mod through_the_validator {
        use super::*;
        use crate::{AuthConfig, AuthError, JwtConfig, JwtValidator};
        use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};

        const ISS: &str = "https://as.example";
        const AUD: &str = "https://rs.example/mcp";

        fn validator(options: VerifiedCacheOptions) -> JwtValidator {
            let mut config = JwtConfig::new(ISS, AUD);
            config.algorithms = vec![Algorithm::HS256];
            config.hmac_secret = Some(b"secret".to_vec());
            JwtValidator::new(config, KeySet::default()).unwrap().with_verified_cache(options)
        }

        fn token(claims: Value) -> String {
            encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(b"secret")).unwrap()
        }

        fn good(scope: &str) -> String {
            token(json!({"iss": ISS, "aud": AUD, "sub": "alice", "exp": 1000, "scope": scope}))
        }

        #[tokio::test]
        async fn refusals_are_never_cached() {
            let v = validator(VerifiedCacheOptions::default());
            let refused = [
                (
                    token(json!({"iss": ISS, "aud": "https://other/mcp", "sub": "a", "exp": 1000})),
                    AuthError::WrongAudience,
                ),
                (token(json!({"iss": "https://evil", "aud": AUD, "sub": "a", "exp": 1000})), AuthError::WrongIssuer),
                (token(json!({"iss": ISS, "aud": AUD, "sub": "a", "exp": 10})), AuthError::Expired),
                (format!("{}x", good("mcp")), AuthError::BadSignature),
            ];
            for (t, e) in &refused {
                assert_eq!(v.validate_at(t, 100).await.as_ref().err(), Some(e));
                assert_eq!(v.validate_at(t, 100).await.as_ref().err(), Some(e));
            }
            assert_eq!(v.verified.len(), 0);
            let t = good("mcp");
            let first = v.validate_at(&t, 100).await.unwrap();
            assert_eq!(v.verified.len(), 1);
            assert_eq!(v.validate_at(&t, 101).await.unwrap(), first);
        }

        #[tokio::test]
        async fn a_cached_token_still_expires() {
            let v = validator(VerifiedCacheOptions::default());
            let t = good("mcp");
            assert!(v.validate_at(&t, 990).await.is_ok());
            assert_eq!(v.verified.len(), 1);
            assert!(v.validate_at(&t, 1059).await.is_ok(), "in the leeway: verified again");
            assert_eq!(v.validate_at(&t, 1060).await, Err(AuthError::Expired));
        }

        #[tokio::test]
        async fn scopes_are_checked_on_every_hit() {
            let v = Arc::new(validator(VerifiedCacheOptions::default()));
            let auth = AuthConfig::builder(AUD, v.clone())
                .authorization_server(ISS)
                .required_scopes(["admin"])
                .build()
                .unwrap();
            let mut headers = http::HeaderMap::new();
            // The clock of `authenticate` is the real one: give the token a far exp.
            let far =
                token(json!({"iss": ISS, "aud": AUD, "sub": "alice", "exp": crate::now_secs() + 3600, "scope": "mcp"}));
            headers.insert(http::header::AUTHORIZATION, format!("Bearer {far}").parse().unwrap());
            for _ in 0..2 {
                let refused = auth.authenticate(&headers, None).await.unwrap_err();
                assert!(matches!(refused, AuthError::InsufficientScope { .. }), "{refused:?}");
            }
            assert_eq!(v.verified.len(), 1, "the second refusal came from a cached token");
        }

        #[tokio::test]
        async fn disabled_cache_stores_nothing() {
            let v = validator(VerifiedCacheOptions::disabled());
            assert!(v.validate_at(&good("mcp"), 100).await.is_ok());
            assert_eq!(v.verified.len(), 0);
        }
    }
}
