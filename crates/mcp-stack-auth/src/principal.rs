//! [`Principal`], the [`TokenValidator`] trait, and the claim checks shared by the JWT and
//! introspection validators (sans-IO: the clock is a parameter).

use crate::metadata::same_resource;
use crate::AuthError;
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A boxed, `Send` future (what [`TokenValidator::validate`] returns).
pub type ValidateFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Who a valid access token speaks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    /// The token subject (`sub`); the identity MRTR state and handlers see.
    pub subject: String,
    /// Granted scopes (from `scope`, or `scp`).
    pub scopes: Vec<String>,
    /// The OAuth client the token was issued to (`client_id`, or `azp`), if stated.
    pub client_id: Option<String>,
    /// Every claim of the token (or introspection response).
    pub claims: Map<String, Value>,
}

impl Principal {
    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// Validates access tokens. Implemented by [`crate::JwtValidator`] and (feature `fetch`)
/// [`crate::IntrospectionValidator`]; implement it for anything else (opaque tokens in a
/// database, a test double...).
pub trait TokenValidator: Send + Sync + 'static {
    /// Checks `token` (the bearer credentials, already extracted) and returns its principal, or
    /// why it is refused. Must check that the token was issued for this resource (audience).
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a, Result<Principal, AuthError>>;
}

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// What the claims of a token must satisfy.
#[derive(Debug, Clone)]
pub(crate) struct ClaimRules<'a> {
    /// Expected `iss` (exact string comparison), if checked.
    pub issuer: Option<&'a str>,
    /// Whether `iss` must be present (when `issuer` is set).
    pub require_issuer: bool,
    /// Accepted audiences (this server's canonical URI); empty accepts none.
    pub audiences: &'a [String],
    /// Clock-skew allowance for `exp`/`nbf`.
    pub leeway: Duration,
    /// Whether `exp` must be present.
    pub require_exp: bool,
    /// Whether a missing `sub` falls back to `client_id` (introspection of client-credentials
    /// tokens); otherwise `sub` is required.
    pub subject_from_client_id: bool,
}

fn numeric(claims: &Map<String, Value>, name: &'static str) -> Result<Option<u64>, AuthError> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| f.is_finite() && *f >= 0.0).map(|f| f as u64))
            .map(Some)
            .ok_or(AuthError::MissingClaim(name)),
        Some(_) => Err(AuthError::MissingClaim(name)),
    }
}

/// Scopes from `scope` (space-separated string) or `scp` (array or string).
pub fn scopes_of(claims: &Map<String, Value>) -> Vec<String> {
    let split = |s: &str| s.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect::<Vec<_>>();
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) => split(s),
        (_, Some(Value::Array(a))) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        (_, Some(Value::String(s))) => split(s),
        _ => Vec::new(),
    }
}

/// Checks `claims` against `rules` at time `now` (seconds since the epoch) and builds the
/// principal. Order: issuer, audience, expiry, not-before, subject.
pub(crate) fn check_claims(
    claims: Map<String, Value>,
    rules: &ClaimRules<'_>,
    now: u64,
) -> Result<Principal, AuthError> {
    if let Some(expected) = rules.issuer {
        match claims.get("iss") {
            Some(Value::String(iss)) if iss == expected => {}
            None if !rules.require_issuer => {}
            _ => return Err(AuthError::WrongIssuer),
        }
    }
    let aud_ok = match claims.get("aud") {
        Some(Value::String(a)) => rules.audiences.iter().any(|r| same_resource(a, r)),
        Some(Value::Array(list)) => {
            list.iter().filter_map(Value::as_str).any(|a| rules.audiences.iter().any(|r| same_resource(a, r)))
        }
        _ => false,
    };
    if !aud_ok {
        return Err(AuthError::WrongAudience);
    }
    let leeway = rules.leeway.as_secs();
    match numeric(&claims, "exp")? {
        Some(exp) if now >= exp.saturating_add(leeway) => return Err(AuthError::Expired),
        Some(_) => {}
        None if rules.require_exp => return Err(AuthError::MissingClaim("exp")),
        None => {}
    }
    if let Some(nbf) = numeric(&claims, "nbf")? {
        if nbf > now.saturating_add(leeway) {
            return Err(AuthError::NotYetValid);
        }
    }
    let client_id = ["client_id", "azp"].iter().find_map(|k| claims.get(*k).and_then(Value::as_str)).map(str::to_owned);
    let subject = match claims.get("sub") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        None if rules.subject_from_client_id && client_id.is_some() => client_id.clone().unwrap_or_default(),
        _ => return Err(AuthError::MissingClaim("sub")),
    };
    Ok(Principal { subject, scopes: scopes_of(&claims), client_id, claims })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(aud: &[String]) -> ClaimRules<'_> {
        ClaimRules {
            issuer: Some("https://as"),
            require_issuer: true,
            audiences: aud,
            leeway: Duration::from_secs(30),
            require_exp: true,
            subject_from_client_id: false,
        }
    }

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn claim_rules() {
        let aud = vec!["https://rs/mcp".to_owned()];
        let r = rules(&aud);
        let base = json!({"iss": "https://as", "aud": "https://rs/mcp", "exp": 1000, "sub": "alice",
            "scope": "a b", "client_id": "cli"});
        let p = check_claims(claims(base.clone()), &r, 999).unwrap();
        assert_eq!(
            (p.subject.as_str(), p.scopes.clone(), p.client_id.as_deref()),
            ("alice", vec!["a".into(), "b".into()], Some("cli"))
        );
        let with = |k: &str, v: Value| {
            let mut c = claims(base.clone());
            c.insert(k.into(), v);
            c
        };
        let without = |k: &str| {
            let mut c = claims(base.clone());
            c.remove(k);
            c
        };
        // Leeway: expired 29 s ago is fine, 30 s is not.
        assert!(check_claims(claims(base.clone()), &r, 1029).is_ok());
        assert_eq!(check_claims(claims(base.clone()), &r, 1030), Err(AuthError::Expired));
        assert_eq!(check_claims(with("nbf", json!(1040)), &r, 1000), Err(AuthError::NotYetValid));
        assert!(check_claims(with("nbf", json!(1030)), &r, 1000).is_ok());
        assert_eq!(check_claims(with("iss", json!("https://evil")), &r, 0), Err(AuthError::WrongIssuer));
        assert_eq!(check_claims(without("iss"), &r, 0), Err(AuthError::WrongIssuer));
        assert_eq!(check_claims(with("aud", json!("https://other/mcp")), &r, 0), Err(AuthError::WrongAudience));
        assert_eq!(check_claims(without("aud"), &r, 0), Err(AuthError::WrongAudience));
        assert!(check_claims(with("aud", json!(["x", "HTTPS://RS/mcp"])), &r, 0).is_ok());
        assert_eq!(check_claims(without("exp"), &r, 0), Err(AuthError::MissingClaim("exp")));
        assert_eq!(check_claims(with("exp", json!("1000")), &r, 0), Err(AuthError::MissingClaim("exp")));
        assert_eq!(check_claims(without("sub"), &r, 0), Err(AuthError::MissingClaim("sub")));
        let scp = check_claims(with("scp", json!(["x", "y"])), &r, 0).unwrap();
        assert_eq!(scp.scopes, ["a", "b"], "scope wins over scp");
        let mut c = without("scope");
        c.insert("scp".into(), json!(["x", "y"]));
        assert_eq!(check_claims(c, &r, 0).unwrap().scopes, ["x", "y"]);
    }
}
