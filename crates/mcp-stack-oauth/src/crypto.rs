//! Randomness, PKCE, and ES256 JSON Web Tokens (client assertions, DPoP proofs).

use crate::error::OAuthError;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use rand::RngCore;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Base64url without padding.
pub(crate) fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `n` random bytes, base64url-encoded.
pub(crate) fn random_token(n: usize) -> String {
    let mut buf = vec![0u8; n];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    b64url(&buf)
}

/// base64url(SHA-256(`data`)).
pub(crate) fn sha256_b64url(data: &[u8]) -> String {
    b64url(&Sha256::digest(data))
}

/// A PKCE pair (RFC 7636): a 43-character verifier and its S256 challenge.
pub(crate) fn pkce_pair() -> (String, String) {
    let verifier = random_token(32);
    let challenge = sha256_b64url(verifier.as_bytes());
    (verifier, challenge)
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// An ES256 (ECDSA P-256, SHA-256) signing key.
pub struct SigningKey {
    pair: EcdsaKeyPair,
    jwk: Value,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey").field("alg", &"ES256").field("thumbprint", &self.thumbprint()).finish()
    }
}

impl SigningKey {
    fn from_pkcs8_der(der: &[u8]) -> Result<Self, OAuthError> {
        let rng = ring::rand::SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
            .map_err(|e| OAuthError::config(format!("not a PKCS#8 P-256 private key ({e})")))?;
        let point = pair.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return Err(OAuthError::config("unexpected P-256 public key encoding"));
        }
        let jwk = json!({ "kty": "EC", "crv": "P-256", "x": b64url(&point[1..33]), "y": b64url(&point[33..65]) });
        Ok(Self { pair, jwk })
    }

    /// A fresh random key (for DPoP).
    pub fn generate() -> Result<Self, OAuthError> {
        let rng = ring::rand::SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| OAuthError::config("could not generate a P-256 key"))?;
        Self::from_pkcs8_der(doc.as_ref())
    }

    /// Reads a PEM `PRIVATE KEY` (PKCS#8) holding a P-256 key.
    pub fn from_pem(pem: &str) -> Result<Self, OAuthError> {
        let body: String = pem
            .lines()
            .map(str::trim)
            .skip_while(|l| !l.starts_with("-----BEGIN PRIVATE KEY-----"))
            .skip(1)
            .take_while(|l| !l.starts_with("-----END"))
            .collect();
        if body.is_empty() {
            return Err(OAuthError::config("expected a PEM block \"BEGIN PRIVATE KEY\" (PKCS#8)"));
        }
        let der =
            STANDARD.decode(body).map_err(|e| OAuthError::config(format!("invalid PEM base64: {e}")).caused_by(e))?;
        Self::from_pkcs8_der(&der)
    }

    /// The public key as a JWK (`kty`, `crv`, `x`, `y`; no private part).
    pub fn public_jwk(&self) -> &Value {
        &self.jwk
    }

    /// The RFC 7638 JWK SHA-256 thumbprint.
    pub fn thumbprint(&self) -> String {
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            self.jwk["x"].as_str().unwrap_or_default(),
            self.jwk["y"].as_str().unwrap_or_default()
        );
        sha256_b64url(canonical.as_bytes())
    }

    /// A compact JWS: header `{"alg":"ES256", ...extra}` over `claims`.
    pub fn sign_jwt(&self, extra_header: Value, claims: &Value) -> Result<String, OAuthError> {
        let mut header = json!({ "alg": "ES256" });
        if let (Some(h), Value::Object(extra)) = (header.as_object_mut(), extra_header) {
            h.extend(extra);
        }
        let input = format!("{}.{}", b64url(header.to_string().as_bytes()), b64url(claims.to_string().as_bytes()));
        let rng = ring::rand::SystemRandom::new();
        let sig = self.pair.sign(&rng, input.as_bytes()).map_err(|_| OAuthError::config("ES256 signing failed"))?;
        Ok(format!("{input}.{}", b64url(sig.as_ref())))
    }

    /// A client assertion (RFC 7523 §3): `iss` = `sub` = `client_id`, `aud` = `audience`,
    /// `iat`, `exp` (+5 min) and a random `jti`.
    pub fn client_assertion(&self, client_id: &str, audience: &str) -> Result<String, OAuthError> {
        let now = now_secs();
        let claims = json!({ "iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + 300, "jti": random_token(16) });
        self.sign_jwt(json!({ "typ": "JWT" }), &claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_is_s256_of_the_verifier() {
        let (v, c) = pkce_pair();
        assert_eq!(v.len(), 43);
        assert_eq!(c, b64url(&Sha256::digest(v.as_bytes())));
        // RFC 7636 appendix B.
        assert_eq!(
            sha256_b64url(b"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn signs_verifiable_jwts() {
        let k = SigningKey::generate().unwrap();
        let jwt = k.client_assertion("me", "https://as.example.com").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://as.example.com");
        let point = k.pair.public_key().as_ref();
        let pk = ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, point);
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        pk.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig).unwrap();
        assert_eq!(k.thumbprint().len(), 43);
        assert!(k.public_jwk().get("d").is_none());
    }
}
