//! Sealed MRTR `requestState`: an AEAD (ChaCha20-Poly1305) envelope from a rotating key ring.
//!
//! The sealed payload binds the principal, an expiry, the method and a digest of the request's
//! salient parameters, so state cannot be replayed by another user, after it lapses, or on a
//! different request. Opening needs the clock from the caller (`now`, seconds since the epoch):
//! this module does no I/O.

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Why sealed state was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Not decodable, sealed by an unknown key, or modified.
    #[error("requestState is invalid or was tampered with")]
    Tampered,
    /// Its expiry has passed.
    #[error("requestState has expired")]
    Expired,
    /// It was issued to a different principal.
    #[error("requestState belongs to a different principal")]
    WrongPrincipal,
    /// It was issued for a different method or different request parameters.
    #[error("requestState was issued for a different request")]
    WrongRequest,
    /// It was sealed by another service (a different audience) sharing the keys.
    #[error("requestState was issued by a different server")]
    WrongAudience,
}

/// Why a key ring could not be read from configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyRingError {
    /// No secret at all.
    #[error("no secret given (one base64 secret per line)")]
    Empty,
    /// A line is not base64.
    #[error("secret {line} is not base64")]
    NotBase64 {
        /// 1-based position of the secret.
        line: usize,
    },
    /// A secret is shorter than 32 bytes.
    #[error("secret {line} has {len} bytes; at least 32 are needed (e.g. `openssl rand -base64 32`)")]
    TooShort {
        /// 1-based position of the secret.
        line: usize,
        /// Its decoded length.
        len: usize,
    },
}

/// A 256-bit key with a short identifier derived from it.
#[derive(Clone)]
struct RingKey {
    id: [u8; 4],
    cipher: ChaCha20Poly1305,
}

impl RingKey {
    fn new(secret: &[u8; 32]) -> Self {
        let digest = Sha256::digest(secret);
        Self {
            id: [digest[0], digest[1], digest[2], digest[3]],
            cipher: ChaCha20Poly1305::new(Key::from_slice(secret)),
        }
    }
}

/// Keys for sealing and opening state: the first key seals, every key opens (rotation).
#[derive(Clone)]
pub struct KeyRing {
    keys: Vec<RingKey>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyRing").field("keys", &self.keys.len()).finish()
    }
}

impl KeyRing {
    /// A ring with one random key (fine for a single process; use [`KeyRing::from_secrets`]
    /// with shared secrets when several instances serve the same clients).
    pub fn random() -> Self {
        let mut k = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut k);
        Self { keys: vec![RingKey::new(&k)] }
    }

    /// A ring from secrets: `current` seals; `current` and `previous` open.
    pub fn from_secrets(current: [u8; 32], previous: &[[u8; 32]]) -> Self {
        let mut keys = vec![RingKey::new(&current)];
        keys.extend(previous.iter().map(RingKey::new));
        Self { keys }
    }

    /// A ring from configuration text: one base64 secret (standard or URL-safe alphabet, at
    /// least 32 bytes decoded) per line or separated by commas; blank lines and `#` comments are
    /// skipped. The first secret seals, every secret opens. Each key is derived from its secret
    /// with SHA-256, so secrets longer than 32 bytes are fine.
    ///
    /// Rotation without a failed retry: add the new secret second and roll out (every instance
    /// now opens it), move it first and roll out (it seals), then drop the old one once the
    /// state TTL has passed.
    pub fn from_base64_lines(text: &str) -> Result<Self, KeyRingError> {
        let engines = [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        let mut keys = Vec::new();
        let secrets = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or(""))
            .flat_map(|l| l.split(','))
            .map(str::trim)
            .filter(|l| !l.is_empty());
        for (i, secret) in secrets.enumerate() {
            let line = i + 1;
            let raw = engines.iter().find_map(|e| e.decode(secret).ok()).ok_or(KeyRingError::NotBase64 { line })?;
            if raw.len() < 32 {
                return Err(KeyRingError::TooShort { line, len: raw.len() });
            }
            let mut h = Sha256::new();
            h.update(b"mcp-request-state-key\0");
            h.update(&raw);
            keys.push(RingKey::new(&h.finalize().into()));
        }
        if keys.is_empty() {
            return Err(KeyRingError::Empty);
        }
        Ok(Self { keys })
    }

    /// How many keys the ring holds (the first seals).
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Always false: a ring has at least one key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Seals `claims` into an opaque URL-safe string.
    pub fn seal(&self, claims: &StateClaims) -> String {
        let key = &self.keys[0];
        let mut nonce = [0u8; 12];
        rand::thread_rng().fill_bytes(&mut nonce);
        let plain = serde_json::to_vec(claims).expect("claims serialize");
        let ct = key.cipher.encrypt(Nonce::from_slice(&nonce), plain.as_ref()).expect("encrypt");
        let mut out = Vec::with_capacity(16 + ct.len());
        out.extend_from_slice(&key.id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ct);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(out)
    }

    /// Opens sealed state and checks it against the current request.
    pub fn open(&self, sealed: &str, expect: &Expectation<'_>, now: u64) -> Result<StateClaims, StateError> {
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(sealed).map_err(|_| StateError::Tampered)?;
        if raw.len() < 16 + 16 {
            return Err(StateError::Tampered);
        }
        let (id, rest) = raw.split_at(4);
        let (nonce, ct) = rest.split_at(12);
        let key = self.keys.iter().find(|k| k.id == id).ok_or(StateError::Tampered)?;
        let plain = key.cipher.decrypt(Nonce::from_slice(nonce), ct).map_err(|_| StateError::Tampered)?;
        let claims: StateClaims = serde_json::from_slice(&plain).map_err(|_| StateError::Tampered)?;
        if claims.aud != expect.audience {
            return Err(StateError::WrongAudience);
        }
        if claims.exp <= now {
            return Err(StateError::Expired);
        }
        if claims.sub.as_deref() != expect.principal {
            return Err(StateError::WrongPrincipal);
        }
        if claims.method != expect.method || claims.digest != expect.digest {
            return Err(StateError::WrongRequest);
        }
        Ok(claims)
    }
}

/// What is sealed inside `requestState`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateClaims {
    /// The authenticated principal, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    /// The service that sealed it (by default the server's name): a state sealed by another
    /// service sharing the key ring is refused.
    #[serde(default)]
    pub aud: String,
    /// Expiry, seconds since the Unix epoch.
    pub exp: u64,
    /// The method of the originating request.
    pub method: String,
    /// Digest of the originating request's salient parameters ([`request_digest`]).
    pub digest: String,
    /// Application state the handler asked to carry to the retry.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub app: Value,
    /// The `inputRequests` keys the server issued in the round that sealed this state: on the
    /// retry only `inputResponses` under these keys are answers (everything else is ignored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
}

impl StateClaims {
    /// Whether `key` was issued in the round that sealed this state.
    pub fn issued(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k == key)
    }

    /// The answers in `responses` to keys this state issued (the rest is dropped unread).
    pub fn bind_answers(&self, responses: &Map<String, Value>) -> Map<String, Value> {
        responses.iter().filter(|(k, _)| self.issued(k)).map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

/// What the retry must match.
#[derive(Debug, Clone, Copy)]
pub struct Expectation<'a> {
    /// The audience of the server opening it.
    pub audience: &'a str,
    /// The principal of the retry.
    pub principal: Option<&'a str>,
    /// The method of the retry.
    pub method: &'a str,
    /// The digest of the retry's salient parameters.
    pub digest: &'a str,
}

/// Digest of a request's parameters, ignoring `_meta`, `inputResponses` and `requestState`
/// (they legitimately change between the first attempt and the retry). Key order does not matter.
pub fn request_digest(method: &str, params: &Map<String, Value>) -> String {
    let mut h = Sha256::new();
    h.update(method.as_bytes());
    h.update([0]);
    let mut keys: Vec<&String> =
        params.keys().filter(|k| !matches!(k.as_str(), "_meta" | "inputResponses" | "requestState")).collect();
    keys.sort();
    for k in keys {
        h.update(k.as_bytes());
        h.update([0]);
        hash_canonical(&mut h, &params[k]);
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&h.finalize()[..18])
}

fn hash_canonical(h: &mut Sha256, v: &Value) {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            h.update(b"{");
            for k in keys {
                h.update(serde_json::to_string(k).unwrap_or_default().as_bytes());
                h.update(b":");
                hash_canonical(h, &o[k]);
                h.update(b",");
            }
            h.update(b"}");
        }
        Value::Array(a) => {
            h.update(b"[");
            for x in a {
                hash_canonical(h, x);
                h.update(b",");
            }
            h.update(b"]");
        }
        other => h.update(other.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(digest: &str) -> StateClaims {
        StateClaims {
            sub: Some("alice".into()),
            aud: "svc".into(),
            exp: 100,
            method: "tools/call".into(),
            digest: digest.into(),
            app: json!({"step": 1}),
            keys: vec!["q".into()],
        }
    }

    #[test]
    fn seal_open_and_every_rejection() {
        let ring = KeyRing::random();
        let params = json!({"name":"t","arguments":{"b":1,"a":2}}).as_object().unwrap().clone();
        let d = request_digest("tools/call", &params);
        let sealed = ring.seal(&claims(&d));
        let ok = Expectation { audience: "svc", principal: Some("alice"), method: "tools/call", digest: &d };
        let opened = ring.open(&sealed, &ok, 50).unwrap();
        assert_eq!(opened.app, json!({"step": 1}));
        assert_eq!(opened.keys, ["q"], "the issued keys travel inside the sealed payload");
        assert_eq!(ring.open(&sealed, &ok, 100), Err(StateError::Expired));
        assert_eq!(
            ring.open(&sealed, &Expectation { principal: Some("bob"), ..ok }, 50),
            Err(StateError::WrongPrincipal)
        );
        assert_eq!(ring.open(&sealed, &Expectation { principal: None, ..ok }, 50), Err(StateError::WrongPrincipal));
        assert_eq!(ring.open(&sealed, &Expectation { method: "prompts/get", ..ok }, 50), Err(StateError::WrongRequest));
        assert_eq!(ring.open(&sealed, &Expectation { digest: "x", ..ok }, 50), Err(StateError::WrongRequest));
        assert_eq!(ring.open(&sealed, &Expectation { audience: "other", ..ok }, 50), Err(StateError::WrongAudience));
        // Flip one byte anywhere: refused.
        let mut raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        let last = raw.len() - 1;
        raw[last] ^= 1;
        let bad = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
        assert_eq!(ring.open(&bad, &ok, 50), Err(StateError::Tampered));
        assert_eq!(ring.open("not state", &ok, 50), Err(StateError::Tampered));
        // Another ring's state: refused.
        assert_eq!(KeyRing::random().open(&sealed, &ok, 50), Err(StateError::Tampered));
    }

    #[test]
    fn only_answers_to_issued_keys_are_bound() {
        let c = claims("d");
        let responses = json!({"q": {"action": "accept"}, "other": 1, "Q": 2}).as_object().unwrap().clone();
        assert_eq!(Value::Object(c.bind_answers(&responses)), json!({"q": {"action": "accept"}}));
        let none = StateClaims { keys: Vec::new(), ..c };
        assert!(none.bind_answers(&responses).is_empty());
        // State sealed before keys were recorded opens with no issued keys.
        let old: StateClaims =
            serde_json::from_value(json!({"aud": "a", "exp": 1, "method": "m", "digest": "d"})).unwrap();
        assert!(old.keys.is_empty());
    }

    #[test]
    fn rotation_old_keys_open_new_key_seals() {
        let old = KeyRing::from_secrets([1; 32], &[]);
        let new = KeyRing::from_secrets([2; 32], &[[1; 32]]);
        let d = "d";
        let ok = Expectation { audience: "svc", principal: Some("alice"), method: "tools/call", digest: d };
        let by_old = old.seal(&claims(d));
        assert!(new.open(&by_old, &ok, 1).is_ok());
        let by_new = new.seal(&claims(d));
        assert_eq!(old.open(&by_new, &ok, 1), Err(StateError::Tampered));
    }

    #[test]
    fn rings_from_configuration_text() {
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        let (a, b) = (STANDARD.encode([7u8; 32]), URL_SAFE_NO_PAD.encode([9u8; 40]));
        let old = KeyRing::from_base64_lines(&format!("{a}\n")).unwrap();
        let both = KeyRing::from_base64_lines(&format!("# rotation\n{b}\n\n{a}  # old\n")).unwrap();
        assert_eq!(both.len(), 2);
        assert_eq!(KeyRing::from_base64_lines(&format!("{b},{a}")).unwrap().len(), 2);
        let ok = Expectation { audience: "svc", principal: Some("alice"), method: "tools/call", digest: "d" };
        // The old ring's state opens with the new ring (second key); the new first key seals.
        assert!(both.open(&old.seal(&claims("d")), &ok, 1).is_ok());
        assert_eq!(old.open(&both.seal(&claims("d")), &ok, 1), Err(StateError::Tampered));
        // Same text, same keys: another instance opens it.
        let again = KeyRing::from_base64_lines(&format!("{b}\n{a}")).unwrap();
        assert!(again.open(&both.seal(&claims("d")), &ok, 1).is_ok());
        assert_eq!(KeyRing::from_base64_lines(" \n# none\n").unwrap_err(), KeyRingError::Empty);
        assert_eq!(KeyRing::from_base64_lines(&format!("{a}\n*&^")).unwrap_err(), KeyRingError::NotBase64 { line: 2 });
        let short = STANDARD.encode([1u8; 16]);
        assert_eq!(KeyRing::from_base64_lines(&short).unwrap_err(), KeyRingError::TooShort { line: 1, len: 16 });
    }

    #[test]
    fn digest_ignores_meta_and_key_order() {
        let a =
            json!({"name":"t","arguments":{"x":1,"y":[1,{"p":2,"q":3}]},"_meta":{"k":1}}).as_object().unwrap().clone();
        let b = json!({"arguments":{"y":[1,{"q":3,"p":2}],"x":1},"name":"t","requestState":"s"})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(request_digest("tools/call", &a), request_digest("tools/call", &b));
        let c = json!({"name":"t","arguments":{"x":2}}).as_object().unwrap().clone();
        assert_ne!(request_digest("tools/call", &a), request_digest("tools/call", &c));
    }
}
