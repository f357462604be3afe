//! JWT access tokens (RFC 9068 profile) checked against a JWK set.
//!
//! [`verify_jwt`] is sans-IO (keys and clock are parameters); [`JwtValidator`] adds the key
//! source: a fixed [`KeySet`], or (feature `fetch`) a remote JWKS cached with a TTL and refreshed
//! when a token names an unknown `kid` (rate-limited).
//!
//! Refused outright: `alg: none`, any algorithm outside [`JwtConfig::algorithms`], HMAC
//! algorithms unless a shared secret is configured (the secret is never taken from the JWKS, so
//! a public key can never be used as an HMAC secret), keys whose type or curve does not fit the
//! algorithm, and tokens with a `crit` header.

use crate::keyset::{kind_for, KeySet, VerifyKey};
use crate::principal::{check_claims, now_secs, ClaimRules, Principal, TokenValidator, ValidateFuture};
use crate::AuthError;
use base64::Engine as _;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// What a JWT access token must satisfy.
#[derive(Clone)]
pub struct JwtConfig {
    /// Expected `iss`, compared as a plain string.
    pub issuer: String,
    /// Accepted audiences: this server's canonical URI (scheme/host case and a lone trailing `/`
    /// are ignored). At least one.
    pub audiences: Vec<String>,
    /// Accepted `alg` values (default RS256, ES256, EdDSA). HS* need [`JwtConfig::hmac_secret`].
    pub algorithms: Vec<Algorithm>,
    /// Clock-skew allowance for `exp` and `nbf` (default 60 s).
    pub leeway: Duration,
    /// Shared secret for HS256/384/512, only if those are listed in `algorithms`.
    pub hmac_secret: Option<Vec<u8>>,
    /// Required `typ` header (e.g. `at+jwt`; `application/` prefix and case ignored), if any.
    pub required_typ: Option<String>,
    /// Longest accepted token in bytes (default 16 KiB).
    pub max_token_bytes: usize,
}

impl std::fmt::Debug for JwtConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtConfig")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .field("algorithms", &self.algorithms)
            .field("leeway", &self.leeway)
            .field("hmac_secret", &self.hmac_secret.as_ref().map(|_| "<redacted>"))
            .field("required_typ", &self.required_typ)
            .finish()
    }
}

impl JwtConfig {
    /// Tokens from `issuer` for `audience`, RS256/ES256/EdDSA, 60 s leeway.
    pub fn new(issuer: &str, audience: &str) -> Self {
        Self {
            issuer: issuer.to_owned(),
            audiences: vec![audience.to_owned()],
            algorithms: vec![Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA],
            leeway: Duration::from_secs(60),
            hmac_secret: None,
            required_typ: None,
            max_token_bytes: 16 * 1024,
        }
    }

    /// Refuses inconsistent settings (no audience or algorithm, HS* without a secret).
    pub fn check(&self) -> Result<(), AuthError> {
        if self.audiences.is_empty() {
            return Err(AuthError::Config("a JWT validator needs at least one audience".into()));
        }
        if self.algorithms.is_empty() {
            return Err(AuthError::Config("a JWT validator needs at least one algorithm".into()));
        }
        if self.algorithms.iter().any(|a| is_hmac(*a)) && self.hmac_secret.as_ref().is_none_or(Vec::is_empty) {
            return Err(AuthError::Config("HS* algorithms need a configured shared secret".into()));
        }
        Ok(())
    }

    fn rules(&self) -> ClaimRules<'_> {
        ClaimRules {
            issuer: Some(&self.issuer),
            require_issuer: true,
            audiences: &self.audiences,
            leeway: self.leeway,
            require_exp: true,
            subject_from_client_id: false,
        }
    }
}

fn is_hmac(a: Algorithm) -> bool {
    matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

/// The `alg` and `kid` of a token's header, after the header checks.
fn check_header(token: &str, config: &JwtConfig) -> Result<(Algorithm, Option<String>), AuthError> {
    if token.len() > config.max_token_bytes {
        return Err(AuthError::Malformed("token too large".into()));
    }
    let mut parts = token.split('.');
    let (Some(h), Some(_), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(AuthError::Malformed("not a compact JWS (three dot-separated parts)".into()));
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(h)
        .map_err(|_| AuthError::Malformed("header is not base64url".into()))?;
    let header: Map<String, Value> =
        serde_json::from_slice(&raw).map_err(|_| AuthError::Malformed("header is not a JSON object".into()))?;
    let alg_name = header.get("alg").and_then(Value::as_str).ok_or(AuthError::Malformed("header has no alg".into()))?;
    let alg = Algorithm::from_str(alg_name).map_err(|_| AuthError::DisallowedAlgorithm(alg_name.to_owned()))?;
    if !config.algorithms.contains(&alg) || (is_hmac(alg) && config.hmac_secret.is_none()) {
        return Err(AuthError::DisallowedAlgorithm(alg_name.to_owned()));
    }
    if header.contains_key("crit") {
        return Err(AuthError::Malformed("unsupported crit header".into()));
    }
    if let Some(want) = &config.required_typ {
        let norm = |t: &str| {
            let t = t.to_ascii_lowercase();
            t.strip_prefix("application/").map(str::to_owned).unwrap_or(t)
        };
        let typ = header.get("typ").and_then(Value::as_str).map(norm);
        if typ.as_deref() != Some(norm(want).as_str()) {
            return Err(AuthError::Malformed(format!("typ must be {want}")));
        }
    }
    let kid = match header.get("kid") {
        None => None,
        Some(Value::String(k)) => Some(k.clone()),
        Some(_) => return Err(AuthError::Malformed("kid is not a string".into())),
    };
    Ok((alg, kid))
}

/// Verifies `token` with `keys` at time `now` (seconds since the epoch): header checks,
/// signature, then claims (issuer, audience, `exp`/`nbf` with leeway, `sub`).
///
/// Fails with [`AuthError::UnknownKey`] when no key fits the token's `kid` (a caller with a
/// remote key set may refresh it and retry).
pub fn verify_jwt(token: &str, config: &JwtConfig, keys: &KeySet, now: u64) -> Result<Principal, AuthError> {
    let (alg, kid) = check_header(token, config)?;
    let mut validation = Validation::new(alg);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    let hmac;
    let candidates: Vec<&DecodingKey> = match kind_for(alg) {
        None => {
            let secret =
                config.hmac_secret.as_deref().ok_or_else(|| AuthError::DisallowedAlgorithm(format!("{alg:?}")))?;
            hmac = DecodingKey::from_secret(secret);
            vec![&hmac]
        }
        Some(kind) => {
            let alg_name = format!("{alg:?}");
            let fits = |k: &&VerifyKey| {
                k.kind == kind
                    && k.alg.as_deref().is_none_or(|a| a == alg_name)
                    && (kid.is_none() || k.kid.as_deref() == kid.as_deref())
            };
            keys.keys.iter().filter(fits).map(|k| &k.key).collect()
        }
    };
    if candidates.is_empty() {
        return Err(AuthError::UnknownKey(kid));
    }
    let mut last = AuthError::BadSignature;
    for key in candidates {
        match jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation) {
            Ok(data) => return check_claims(data.claims, &config.rules(), now),
            Err(e) => {
                last = match e.kind() {
                    ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
                        AuthError::DisallowedAlgorithm(format!("{alg:?}"))
                    }
                    ErrorKind::InvalidToken | ErrorKind::Base64(_) | ErrorKind::Json(_) | ErrorKind::Utf8(_) => {
                        return Err(AuthError::Malformed("undecodable token".into()))
                    }
                    _ => AuthError::BadSignature,
                }
            }
        }
    }
    Err(last)
}

enum Source {
    Static(Arc<KeySet>),
    #[cfg(feature = "fetch")]
    Remote(Box<crate::jwks::RemoteJwks>),
}

/// A [`TokenValidator`] for JWT access tokens.
pub struct JwtValidator {
    config: JwtConfig,
    source: Source,
    pub(crate) verified: crate::verified::VerifiedTokens,
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator").field("config", &self.config).finish_non_exhaustive()
    }
}

impl JwtValidator {
    /// Validates with a fixed key set (no network).
    pub fn new(config: JwtConfig, keys: KeySet) -> Result<Self, AuthError> {
        config.check()?;
        Ok(Self::with_source(config, Source::Static(Arc::new(keys))))
    }

    /// Validates with the JWKS at `jwks_url`, fetched on first use, cached for `options.ttl`,
    /// refreshed early (at most once per `options.unknown_kid_interval`) when a token names an
    /// unknown `kid`. `http://` is accepted for loopback hosts only unless allowed in `options`.
    #[cfg(feature = "fetch")]
    pub fn with_jwks_url(config: JwtConfig, jwks_url: &str, options: crate::JwksOptions) -> Result<Self, AuthError> {
        config.check()?;
        let remote = crate::jwks::RemoteJwks::new(jwks_url, options)?;
        Ok(Self::with_source(config, Source::Remote(Box::new(remote))))
    }

    /// Like [`JwtValidator::with_jwks_url`], with the JWKS URL read from the issuer's metadata
    /// (RFC 8414 `/.well-known/oauth-authorization-server`, then OpenID Connect discovery).
    #[cfg(feature = "fetch")]
    pub async fn discover(config: JwtConfig, options: crate::JwksOptions) -> Result<Self, AuthError> {
        let url = crate::jwks::discover_jwks_uri(&config.issuer, &options).await?;
        Self::with_jwks_url(config, &url, options)
    }

    /// The settings tokens are checked against.
    pub fn config(&self) -> &JwtConfig {
        &self.config
    }

    fn with_source(config: JwtConfig, source: Source) -> Self {
        let verified = crate::verified::VerifiedTokens::new(Default::default(), config.leeway);
        Self { config, source, verified }
    }

    /// Replaces the cache of verified tokens (on by default: [`VerifiedCacheOptions::default`];
    /// [`VerifiedCacheOptions::disabled`] checks every signature on every request).
    ///
    /// [`VerifiedCacheOptions::default`]: crate::VerifiedCacheOptions::default
    /// [`VerifiedCacheOptions::disabled`]: crate::VerifiedCacheOptions::disabled
    pub fn with_verified_cache(mut self, options: crate::VerifiedCacheOptions) -> Self {
        self.verified = crate::verified::VerifiedTokens::new(options, self.config.leeway);
        self
    }

    /// Validates `token` at time `now` (seconds since the epoch): from the cache of verified
    /// tokens when it may answer (see [`crate::VerifiedCacheOptions`]), else verified.
    pub async fn validate_at(&self, token: &str, now: u64) -> Result<Principal, AuthError> {
        let keys = match &self.source {
            Source::Static(keys) => keys.clone(),
            #[cfg(feature = "fetch")]
            Source::Remote(remote) => {
                // Header checks first (a token we would refuse anyway never causes a fetch), but
                // not again for a token that passed them and is in the cache.
                if !self.verified.holds(token) {
                    check_header(token, &self.config)?;
                }
                remote.keys().await?
            }
        };
        if let Some(principal) = self.verified.get(token, &keys, now) {
            return Ok(principal);
        }
        let (result, keys) = match (verify_jwt(token, &self.config, &keys, now), &self.source) {
            #[cfg(feature = "fetch")]
            (Err(e), Source::Remote(remote)) if e.is_unknown_key() => match remote.refresh_for_unknown_kid(&keys).await
            {
                Some(fresh) => (verify_jwt(token, &self.config, &fresh, now), fresh),
                None => (Err(e), keys),
            },
            (result, _) => (result, keys),
        };
        if let Ok(principal) = &result {
            self.verified.insert(token, &keys, principal, now);
        }
        result
    }
}

impl TokenValidator for JwtValidator {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a, Result<Principal, AuthError>> {
        Box::pin(self.validate_at(token, now_secs()))
    }
}
