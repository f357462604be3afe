//! DPoP (RFC 9449): proofs of possession for token requests and resource requests, with the
//! server-supplied nonces remembered per origin.

use crate::crypto::{now_secs, random_token, sha256_b64url, SigningKey};
use crate::error::OAuthError;
use parking_lot::Mutex;
use serde_json::json;
use std::collections::HashMap;
use url::Url;

/// A DPoP key and the nonces servers asked for.
#[derive(Debug)]
pub(crate) struct Dpop {
    key: SigningKey,
    nonces: Mutex<HashMap<String, String>>,
}

/// `htu`: the request URL without query and fragment (RFC 9449 §4.2).
fn htu(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

impl Dpop {
    /// A fresh ES256 key.
    pub(crate) fn generate() -> Result<Self, OAuthError> {
        Ok(Self { key: SigningKey::generate()?, nonces: Mutex::default() })
    }

    /// The JWK thumbprint the tokens are bound to (`cnf.jkt`).
    pub(crate) fn thumbprint(&self) -> String {
        self.key.thumbprint()
    }

    /// Remembers the nonce `url`'s origin asked for.
    pub(crate) fn set_nonce(&self, url: &Url, nonce: &str) {
        self.nonces.lock().insert(url.origin().ascii_serialization(), nonce.to_owned());
    }

    /// A fresh proof for `method` on `url` (with `ath` when presenting `access_token`, and the
    /// origin's nonce if it gave one).
    pub(crate) fn proof(&self, method: &str, url: &Url, access_token: Option<&str>) -> Result<String, OAuthError> {
        let mut claims = json!({ "jti": random_token(16), "htm": method, "htu": htu(url), "iat": now_secs() });
        if let Some(t) = access_token {
            claims["ath"] = json!(sha256_b64url(t.as_bytes()));
        }
        let nonce = self.nonces.lock().get(&url.origin().ascii_serialization()).cloned();
        if let Some(n) = nonce {
            claims["nonce"] = json!(n);
        }
        self.key.sign_jwt(json!({ "typ": "dpop+jwt", "jwk": self.key.public_jwk() }), &claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use serde_json::Value;

    #[test]
    fn proofs_are_fresh_and_carry_nonce_and_ath() {
        let d = Dpop::generate().unwrap();
        let url = Url::parse("http://localhost:9/mcp?x=1").unwrap();
        d.set_nonce(&url, "n1");
        let p1 = d.proof("POST", &url, Some("tok")).unwrap();
        let p2 = d.proof("POST", &url, Some("tok")).unwrap();
        let claims = |p: &str| -> Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p.split('.').nth(1).unwrap()).unwrap()).unwrap()
        };
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p1.split('.').next().unwrap()).unwrap()).unwrap();
        assert_eq!(header["typ"], "dpop+jwt");
        assert!(header["jwk"].get("d").is_none());
        let (c1, c2) = (claims(&p1), claims(&p2));
        assert_ne!(c1["jti"], c2["jti"]);
        assert_eq!(c1["htu"], "http://localhost:9/mcp");
        assert_eq!(c1["nonce"], "n1");
        assert_eq!(c1["ath"], sha256_b64url(b"tok"));
    }
}
