//! OAuth 2.0 Token Introspection (RFC 7662) for opaque access tokens.
//!
//! The request body, client authentication and response checks are sans-IO functions;
//! [`IntrospectionValidator`] (feature `fetch`) POSTs to the endpoint and caches answers briefly.

use crate::principal::{check_claims, ClaimRules, Principal};
use crate::AuthError;
use base64::Engine as _;
use serde_json::Value;
use std::time::Duration;

/// Where and how to introspect tokens, and what an active token must satisfy.
#[derive(Clone)]
pub struct IntrospectionConfig {
    /// The introspection endpoint URL.
    pub endpoint: String,
    /// This resource server's client id at the authorization server.
    pub client_id: String,
    /// Its client secret (sent with HTTP Basic, RFC 6749 §2.3.1).
    pub client_secret: String,
    /// Accepted audiences: this server's canonical URI. An active token whose `aud` does not
    /// name one of them is refused.
    pub audiences: Vec<String>,
    /// Expected `iss` when the response states one.
    pub issuer: Option<String>,
    /// Clock-skew allowance for `exp`/`nbf` (default 60 s).
    pub leeway: Duration,
    /// How long an active answer is reused for the same token (default 0: ask every time;
    /// never past the token's `exp`). Longer means revocation takes longer to apply.
    pub cache_ttl: Duration,
    /// How long an `active: false` answer is reused for the same token (default 30 s; zero
    /// turns it off), so a flood of made-up tokens does not cost one authorization-server
    /// request each when repeated. Longer means a token that becomes active later (rare: tokens
    /// are active when issued) is refused for longer.
    pub inactive_cache_ttl: Duration,
    /// Most entries of each answer cache (active and inactive; default 10 000). At the bound
    /// the oldest entry is evicted. Entries are keyed by the SHA-256 of the token, never the
    /// token itself.
    pub cache_max_entries: usize,
    /// The HTTP client's limits (feature `fetch`).
    #[cfg(feature = "fetch")]
    pub fetch: crate::FetchOptions,
}

impl std::fmt::Debug for IntrospectionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionConfig")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("audiences", &self.audiences)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl IntrospectionConfig {
    /// Introspection at `endpoint` with client credentials, for tokens meant for `audience`.
    pub fn new(endpoint: &str, client_id: &str, client_secret: &str, audience: &str) -> Self {
        Self {
            endpoint: endpoint.to_owned(),
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            audiences: vec![audience.to_owned()],
            issuer: None,
            leeway: Duration::from_secs(60),
            cache_ttl: Duration::ZERO,
            inactive_cache_ttl: Duration::from_secs(30),
            cache_max_entries: 10_000,
            #[cfg(feature = "fetch")]
            fetch: crate::FetchOptions::default(),
        }
    }
}

/// `application/x-www-form-urlencoded` encoding of one value.
fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The form body of an introspection request for `token`.
pub fn introspection_request_body(token: &str) -> String {
    format!("token={}&token_type_hint=access_token", form_encode(token))
}

/// The `Authorization: Basic` value for client credentials (each part form-encoded first, as
/// RFC 6749 §2.3.1 requires).
pub fn client_basic_auth(client_id: &str, client_secret: &str) -> String {
    let raw = format!("{}:{}", form_encode(client_id), form_encode(client_secret));
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(raw))
}

/// Checks an introspection response at time `now`: `active` must be `true`; `aud` must name an
/// accepted audience; `exp`/`nbf` (if present) must hold; `iss` (if present and configured) must
/// match. The subject is `sub`, or `client_id` for client-credentials tokens.
pub fn principal_from_introspection(
    response: &Value,
    config: &IntrospectionConfig,
    now: u64,
) -> Result<Principal, AuthError> {
    let obj = response
        .as_object()
        .ok_or_else(|| AuthError::Unavailable("introspection response is not a JSON object".into()))?;
    if obj.get("active") != Some(&Value::Bool(true)) {
        return Err(AuthError::Inactive);
    }
    let rules = ClaimRules {
        issuer: config.issuer.as_deref(),
        require_issuer: false,
        audiences: &config.audiences,
        leeway: config.leeway,
        require_exp: false,
        subject_from_client_id: true,
    };
    check_claims(obj.clone(), &rules, now)
}

#[cfg(feature = "fetch")]
pub use validator::IntrospectionValidator;

#[cfg(feature = "fetch")]
mod validator {
    use super::*;
    use crate::fetch::Fetcher;
    use crate::principal::{now_secs, TokenValidator, ValidateFuture};
    use parking_lot::Mutex;
    use sha2::{Digest, Sha256};
    use std::collections::{HashMap, VecDeque};

    /// A bounded cache of answers keyed by the token's SHA-256, each valid until a time
    /// (seconds since the epoch); at the bound the oldest inserted entry is evicted.
    pub(super) struct AnswerCache<V> {
        max: usize,
        seq: u64,
        map: HashMap<[u8; 32], (V, u64, u64)>,
        /// Insertion order: (key, sequence number); entries whose number no longer matches the
        /// map's are stale and skipped.
        order: VecDeque<([u8; 32], u64)>,
    }

    impl<V: Clone> AnswerCache<V> {
        pub(super) fn new(max: usize) -> Self {
            Self { max, seq: 0, map: HashMap::new(), order: VecDeque::new() }
        }

        pub(super) fn get(&mut self, key: &[u8; 32], now: u64) -> Option<V> {
            match self.map.get(key) {
                Some((v, until, _)) if now < *until => Some(v.clone()),
                Some(_) => {
                    self.map.remove(key);
                    None
                }
                None => None,
            }
        }

        pub(super) fn insert(&mut self, key: [u8; 32], value: V, until: u64) {
            if self.max == 0 {
                return;
            }
            self.seq += 1;
            self.map.insert(key, (value, until, self.seq));
            self.order.push_back((key, self.seq));
            while self.map.len() > self.max {
                let Some((old, seq)) = self.order.pop_front() else { break };
                if self.map.get(&old).is_some_and(|e| e.2 == seq) {
                    self.map.remove(&old);
                }
            }
            if self.order.len() > 2 * self.max {
                let map = &self.map;
                self.order.retain(|(k, s)| map.get(k).is_some_and(|e| e.2 == *s));
            }
        }

        pub(super) fn len(&self) -> usize {
            self.map.len()
        }
    }

    /// A [`TokenValidator`] asking the authorization server's introspection endpoint.
    pub struct IntrospectionValidator {
        config: IntrospectionConfig,
        fetcher: Fetcher,
        authorization: String,
        cache: Mutex<AnswerCache<Principal>>,
        inactive: Mutex<AnswerCache<()>>,
    }

    impl std::fmt::Debug for IntrospectionValidator {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("IntrospectionValidator").field("config", &self.config).finish_non_exhaustive()
        }
    }

    impl IntrospectionValidator {
        /// A validator for `config` (checks the endpoint URL now).
        pub fn new(config: IntrospectionConfig) -> Result<Self, AuthError> {
            if config.audiences.is_empty() {
                return Err(AuthError::Config("introspection needs at least one audience".into()));
            }
            let fetcher = Fetcher::new(&config.fetch)?;
            fetcher.check_url(&config.endpoint)?;
            let authorization = client_basic_auth(&config.client_id, &config.client_secret);
            let max = config.cache_max_entries;
            Ok(Self {
                config,
                fetcher,
                authorization,
                cache: Mutex::new(AnswerCache::new(max)),
                inactive: Mutex::new(AnswerCache::new(max)),
            })
        }

        /// Validates `token` at time `now` (seconds since the epoch).
        pub async fn validate_at(&self, token: &str, now: u64) -> Result<Principal, AuthError> {
            let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
            let caching = !self.config.cache_ttl.is_zero();
            let caching_inactive = !self.config.inactive_cache_ttl.is_zero();
            if caching_inactive && self.inactive.lock().get(&key, now).is_some() {
                return Err(AuthError::Inactive);
            }
            if caching {
                if let Some(p) = self.cache.lock().get(&key, now) {
                    return Ok(p);
                }
            }
            let body = introspection_request_body(token);
            let r = self.fetcher.post_form(&self.config.endpoint, body, &self.authorization).await?;
            if !(200..300).contains(&r.status) {
                return Err(AuthError::Unavailable(format!("introspection endpoint answered HTTP {}", r.status)));
            }
            let json = r.json.ok_or_else(|| AuthError::Unavailable("introspection response is not JSON".into()))?;
            let principal = match principal_from_introspection(&json, &self.config, now) {
                Err(AuthError::Inactive) if caching_inactive => {
                    let until = now.saturating_add(self.config.inactive_cache_ttl.as_secs().max(1));
                    self.inactive.lock().insert(key, (), until);
                    return Err(AuthError::Inactive);
                }
                other => other?,
            };
            if caching {
                let exp = principal.claims.get("exp").and_then(Value::as_u64).unwrap_or(u64::MAX);
                let until = exp.min(now.saturating_add(self.config.cache_ttl.as_secs()));
                self.cache.lock().insert(key, principal.clone(), until);
            }
            Ok(principal)
        }

        /// How many `active: false` answers are cached now.
        pub fn cached_inactive(&self) -> usize {
            self.inactive.lock().len()
        }
    }

    impl TokenValidator for IntrospectionValidator {
        fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a, Result<Principal, AuthError>> {
            Box::pin(self.validate_at(token, now_secs()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_encoding() {
        assert_eq!(introspection_request_body("a+b/c=="), "token=a%2Bb%2Fc%3D%3D&token_type_hint=access_token");
        // "id:x" and "s p" are encoded before Base64: "id%3Ax:s+p".
        let expected = base64::engine::general_purpose::STANDARD.encode("id%3Ax:s+p");
        assert_eq!(client_basic_auth("id:x", "s p"), format!("Basic {expected}"));
    }

    #[cfg(feature = "fetch")]
    #[test]
    fn answer_cache_is_bounded_and_expires() {
        let mut c = validator::AnswerCache::new(3);
        let k = |i: u8| [i; 32];
        for i in 0..5 {
            c.insert(k(i), i, 100);
            assert!(c.len() <= 3);
        }
        assert_eq!(c.get(&k(0), 0), None, "the oldest went first");
        assert_eq!(c.get(&k(1), 0), None);
        assert_eq!(c.get(&k(4), 0), Some(4));
        assert_eq!(c.get(&k(4), 100), None, "expired");
        // Re-inserting a key does not grow the cache.
        for _ in 0..10 {
            c.insert(k(3), 3, 200);
        }
        assert!(c.len() <= 3);
        assert_eq!(c.get(&k(3), 150), Some(3));
        let mut off = validator::AnswerCache::new(0);
        off.insert(k(1), 1, 100);
        assert_eq!(off.len(), 0);
    }

    #[test]
    fn response_checks() {
        let cfg = IntrospectionConfig::new("https://as/introspect", "rs", "secret", "https://rs/mcp");
        let ok = json!({"active": true, "aud": ["https://rs/mcp"], "exp": 100, "sub": "bob", "scope": "x y"});
        let p = principal_from_introspection(&ok, &cfg, 50).unwrap();
        assert_eq!((p.subject.as_str(), p.scopes.len()), ("bob", 2));
        assert_eq!(principal_from_introspection(&json!({"active": false}), &cfg, 0), Err(AuthError::Inactive));
        assert_eq!(principal_from_introspection(&json!({"active": "true"}), &cfg, 0), Err(AuthError::Inactive));
        let mut v = ok.clone();
        v["aud"] = json!("https://other");
        assert_eq!(principal_from_introspection(&v, &cfg, 50), Err(AuthError::WrongAudience));
        assert_eq!(principal_from_introspection(&ok, &cfg, 500), Err(AuthError::Expired));
        let cc = json!({"active": true, "aud": "https://rs/mcp", "client_id": "svc"});
        assert_eq!(principal_from_introspection(&cc, &cfg, 0).unwrap().subject, "svc");
        let mut with_iss = cfg.clone();
        with_iss.issuer = Some("https://as".into());
        let mut v = ok.clone();
        v["iss"] = json!("https://evil");
        assert_eq!(principal_from_introspection(&v, &with_iss, 50), Err(AuthError::WrongIssuer));
    }
}
