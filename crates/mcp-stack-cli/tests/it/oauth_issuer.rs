//! A small OAuth authorization server for the tests (127.0.0.1): RFC 8414 / OpenID metadata
//! and a JWKS, with RS256 keys made by the `openssl` tool and ES256 keys made with ring, and
//! tokens signed with them.

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::Full;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

// ------------------------------------------------------------------------------------------
// Keys and tokens
// ------------------------------------------------------------------------------------------

pub(crate) fn b64url(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

pub(crate) struct Key {
    pub(crate) kid: String,
    pub(crate) alg: Algorithm,
    pub(crate) enc: EncodingKey,
    pub(crate) jwk: Value,
    /// The public key as PEM (what an algorithm-confusion attacker uses as HMAC secret).
    pub(crate) public_pem: Vec<u8>,
}

pub(crate) fn openssl(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let mut child = std::process::Command::new("openssl")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("these tests generate RSA keys with the `openssl` command; install it");
    child.stdin.take().expect("stdin").write_all(stdin).expect("write to openssl");
    let out = child.wait_with_output().expect("openssl");
    assert!(out.status.success(), "openssl {args:?} failed");
    out.stdout
}

pub(crate) fn rsa_key(kid: &str) -> Key {
    let pem = openssl(&["genrsa", "-traditional", "2048"], b"");
    let modulus = String::from_utf8(openssl(&["rsa", "-noout", "-modulus"], &pem)).expect("utf-8");
    let hex = modulus.trim().strip_prefix("Modulus=").expect("Modulus=");
    let n: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    let jwk = json!({"kty": "RSA", "n": b64url(&n), "e": "AQAB", "kid": kid, "alg": "RS256", "use": "sig"});
    let enc = EncodingKey::from_rsa_pem(&pem).expect("RSA PEM");
    Key { kid: kid.into(), alg: Algorithm::RS256, enc, jwk, public_pem: openssl(&["rsa", "-pubout"], &pem) }
}

/// Two RSA keys, generated once per test process.
pub(crate) fn rsa(i: usize) -> &'static Key {
    static KEYS: OnceLock<[Key; 2]> = OnceLock::new();
    &KEYS.get_or_init(|| [rsa_key("rsa-1"), rsa_key("rsa-2")])[i]
}

pub(crate) fn es256_key(kid: &str) -> Key {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let pk = pair.public_key().as_ref();
    let jwk = json!({"kty": "EC", "crv": "P-256", "x": b64url(&pk[1..33]), "y": b64url(&pk[33..65]), "kid": kid});
    let enc = EncodingKey::from_ec_der(pkcs8.as_ref());
    Key { kid: kid.into(), alg: Algorithm::ES256, enc, jwk, public_pem: pk.to_vec() }
}

pub(crate) fn mint(key: &Key, claims: &Value) -> String {
    let mut h = Header::new(key.alg);
    h.kid = Some(key.kid.clone());
    encode(&h, claims, &key.enc).expect("sign")
}

// ------------------------------------------------------------------------------------------
// The authorization server
// ------------------------------------------------------------------------------------------

#[derive(Default)]
struct AsState {
    jwks: Value,
    hits: HashMap<String, usize>,
}

pub(crate) struct AuthServer {
    pub(crate) issuer: String,
    state: Arc<Mutex<AsState>>,
}

impl AuthServer {
    /// Serves its metadata (RFC 8414, and OpenID discovery; only the latter if `!rfc8414`) and
    /// a JWKS with `keys`.
    pub(crate) async fn start(keys: &[&Key], rfc8414: bool) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(AsState::default()));
        let this = Self { issuer: issuer.clone(), state: state.clone() };
        this.set_keys(keys);
        let metadata = json!({
            "issuer": issuer, "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"), "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
        });
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let (state, metadata) = (state.clone(), metadata.clone());
                let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let path = req.uri().path().to_owned();
                    let mut st = state.lock().unwrap();
                    *st.hits.entry(path.clone()).or_default() += 1;
                    let (status, body) = match path.as_str() {
                        "/.well-known/oauth-authorization-server" if rfc8414 => (200, metadata.clone()),
                        "/.well-known/openid-configuration" => (200, metadata.clone()),
                        "/jwks" => (200, st.jwks.clone()),
                        _ => (404, json!({"error": "not_found"})),
                    };
                    let mut r = http::Response::new(Full::new(Bytes::from(body.to_string())));
                    *r.status_mut() = http::StatusCode::from_u16(status).unwrap();
                    r.headers_mut().insert("content-type", "application/json".parse().unwrap());
                    async move { Ok::<_, Infallible>(r) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                tokio::spawn(hyper::server::conn::http1::Builder::new().serve_connection(io, svc));
            }
        });
        this
    }

    pub(crate) fn set_keys(&self, keys: &[&Key]) {
        self.state.lock().unwrap().jwks = json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()});
    }

    pub(crate) fn hits(&self, path: &str) -> usize {
        self.state.lock().unwrap().hits.get(path).copied().unwrap_or(0)
    }
}
