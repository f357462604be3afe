//! A small OAuth authorization server on 127.0.0.1 for tests whose client must refresh tokens:
//! RFC 8414 metadata, a JWKS with one ES256 key (generated with ring), and a token endpoint
//! that answers the `refresh_token` grant for one known refresh token with a fresh JWT for a
//! fixed audience. Every other grant is `invalid_grant`.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn b64url(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// The running issuer (it lives as long as the test's runtime).
pub(crate) struct TokenIssuer {
    /// The issuer URL (`http://127.0.0.1:PORT`).
    pub(crate) issuer: String,
    refreshes: Arc<AtomicUsize>,
    signer: Arc<Signer>,
}

struct Signer {
    key: EncodingKey,
    jwk: Value,
    issuer: String,
    audience: String,
}

impl Signer {
    fn mint(&self, sub: &str) -> String {
        let mut h = Header::new(Algorithm::ES256);
        h.kid = Some("es-1".into());
        let claims = json!({ "iss": self.issuer, "aud": self.audience, "sub": sub, "exp": now() + 300 });
        encode(&h, &claims, &self.key).unwrap()
    }
}

impl TokenIssuer {
    /// Starts the issuer; its tokens are for `audience`, and `refresh_token` is the one
    /// refresh token it honours.
    pub(crate) async fn start(audience: &str, refresh_token: &'static str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
        let pk = pair.public_key().as_ref();
        let jwk = json!({ "kty": "EC", "crv": "P-256", "x": b64url(&pk[1..33]), "y": b64url(&pk[33..65]),
                          "kid": "es-1", "alg": "ES256", "use": "sig" });
        let signer = Arc::new(Signer {
            key: EncodingKey::from_ec_der(pkcs8.as_ref()),
            jwk,
            issuer: issuer.clone(),
            audience: audience.to_owned(),
        });
        let refreshes = Arc::new(AtomicUsize::new(0));
        let (counter, kept) = (refreshes.clone(), signer.clone());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (signer, counter) = (signer.clone(), counter.clone());
                let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let (signer, counter) = (signer.clone(), counter.clone());
                    async move {
                        let path = req.uri().path().to_owned();
                        let form = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        let (status, body) = answer(&signer, &path, &form, refresh_token, &counter);
                        let mut r = http::Response::new(Full::new(Bytes::from(body.to_string())));
                        *r.status_mut() = http::StatusCode::from_u16(status).unwrap();
                        r.headers_mut().insert("content-type", "application/json".parse().unwrap());
                        Ok::<_, Infallible>(r)
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                tokio::spawn(hyper::server::conn::http1::Builder::new().serve_connection(io, svc));
            }
        });
        Self { issuer, refreshes, signer: kept }
    }

    /// A valid access token for `sub` (what a client got from this issuer).
    #[allow(dead_code)] // not every test binary mints tokens itself
    pub(crate) fn token(&self, sub: &str) -> String {
        self.signer.mint(sub)
    }

    /// How many refresh grants it answered.
    #[allow(dead_code)]
    pub(crate) fn refreshes(&self) -> usize {
        self.refreshes.load(Ordering::SeqCst)
    }
}

fn answer(s: &Signer, path: &str, form: &[u8], refresh_token: &str, counter: &AtomicUsize) -> (u16, Value) {
    let issuer = &s.issuer;
    match path {
        "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration" => (
            200,
            json!({
                "issuer": issuer, "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"), "jwks_uri": format!("{issuer}/jwks"),
                "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_methods_supported": ["none"],
            }),
        ),
        "/jwks" => (200, json!({ "keys": [s.jwk] })),
        "/token" => {
            let fields: Vec<(String, String)> = url::form_urlencoded::parse(form).into_owned().collect();
            let field = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
            if field("grant_type") == Some("refresh_token") && field("refresh_token") == Some(refresh_token) {
                counter.fetch_add(1, Ordering::SeqCst);
                let token = s.mint("proxy-user");
                (200, json!({ "access_token": token, "token_type": "Bearer", "expires_in": 300 }))
            } else {
                (400, json!({ "error": "invalid_grant" }))
            }
        }
        _ => (404, json!({ "error": "not_found" })),
    }
}
