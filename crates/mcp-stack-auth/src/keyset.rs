//! JWK sets (RFC 7517): the public signing keys a JWT is checked against.

use crate::AuthError;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

/// The family of a public key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyKind {
    Rsa,
    P256,
    P384,
    Ed25519,
}

/// The family of key an algorithm needs (`None` for HMAC, whose secret never comes from a JWKS).
pub(crate) fn kind_for(alg: Algorithm) -> Option<KeyKind> {
    use Algorithm::*;
    match alg {
        RS256 | RS384 | RS512 | PS256 | PS384 | PS512 => Some(KeyKind::Rsa),
        ES256 => Some(KeyKind::P256),
        ES384 => Some(KeyKind::P384),
        EdDSA => Some(KeyKind::Ed25519),
        HS256 | HS384 | HS512 => None,
    }
}

/// One usable key of a set.
#[derive(Clone)]
pub(crate) struct VerifyKey {
    pub(crate) kid: Option<String>,
    pub(crate) alg: Option<String>,
    pub(crate) kind: KeyKind,
    pub(crate) key: DecodingKey,
}

/// The public signing keys of a JWK set (RFC 7517). Symmetric (`oct`) keys, encryption keys and
/// unsupported key types are skipped, never used.
#[derive(Clone, Default)]
pub struct KeySet {
    pub(crate) keys: Vec<VerifyKey>,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.keys.iter().map(|k| (&k.kid, k.kind))).finish()
    }
}

impl KeySet {
    /// Parses a JWKS document (`{"keys": [...]}`); keys that cannot be used are skipped.
    pub fn from_jwks(doc: &Value) -> Result<Self, AuthError> {
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| AuthError::Unavailable("JWKS document has no \"keys\" array".into()))?;
        Ok(Self { keys: keys.iter().filter_map(parse_jwk).collect() })
    }

    /// Parses JWKS bytes (see [`KeySet::from_jwks`]).
    pub fn from_jwks_bytes(bytes: &[u8]) -> Result<Self, AuthError> {
        let doc: Value =
            serde_json::from_slice(bytes).map_err(|e| AuthError::Unavailable(format!("JWKS is not JSON: {e}")))?;
        Self::from_jwks(&doc)
    }

    /// How many usable keys the set has.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the set has no usable key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key ids in the set.
    pub fn kids(&self) -> impl Iterator<Item = Option<&str>> {
        self.keys.iter().map(|k| k.kid.as_deref())
    }
}

fn parse_jwk(v: &Value) -> Option<VerifyKey> {
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    if s("use").is_some_and(|u| u != "sig") {
        return None;
    }
    if let Some(ops) = v.get("key_ops").and_then(Value::as_array) {
        if !ops.iter().any(|o| o == "verify") {
            return None;
        }
    }
    let (kind, key) = match (s("kty")?, s("crv")) {
        ("RSA", _) => (KeyKind::Rsa, DecodingKey::from_rsa_components(s("n")?, s("e")?).ok()?),
        ("EC", Some("P-256")) => (KeyKind::P256, DecodingKey::from_ec_components(s("x")?, s("y")?).ok()?),
        ("EC", Some("P-384")) => (KeyKind::P384, DecodingKey::from_ec_components(s("x")?, s("y")?).ok()?),
        ("OKP", Some("Ed25519")) => (KeyKind::Ed25519, DecodingKey::from_ed_components(s("x")?).ok()?),
        _ => return None,
    };
    Some(VerifyKey { kid: s("kid").map(str::to_owned), alg: s("alg").map(str::to_owned), kind, key })
}
