//! JWT and introspection validators against keys generated here (ring) and a small
//! authorization server on 127.0.0.1 (hyper): JWKS caching and rotation, discovery,
//! introspection.

#![cfg(feature = "fetch")]

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use jsonwebtoken::{encode, EncodingKey, Header};
use mcp_auth::{
    discover_jwks_uri, now_secs, verify_jwt, Algorithm, AuthError, IntrospectionConfig, IntrospectionValidator,
    JwksOptions, JwtConfig, JwtValidator, KeySet, TokenValidator,
};
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ISS: &str = "https://as.example";
const AUD: &str = "https://rs.example/mcp";

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

struct TestKey {
    kid: String,
    alg: Algorithm,
    enc: EncodingKey,
    jwk: Value,
}

fn es256(kid: &str) -> TestKey {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let pk = pair.public_key().as_ref();
    let jwk = json!({"kty": "EC", "crv": "P-256", "x": b64(&pk[1..33]), "y": b64(&pk[33..65]), "kid": kid,
        "use": "sig", "alg": "ES256"});
    TestKey { kid: kid.into(), alg: Algorithm::ES256, enc: EncodingKey::from_ec_der(pkcs8.as_ref()), jwk }
}

fn ed25519(kid: &str) -> TestKey {
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let jwk = json!({"kty": "OKP", "crv": "Ed25519", "x": b64(pair.public_key().as_ref()), "kid": kid});
    TestKey { kid: kid.into(), alg: Algorithm::EdDSA, enc: EncodingKey::from_ed_der(pkcs8.as_ref()), jwk }
}

fn claims(sub: &str) -> Value {
    json!({"iss": ISS, "aud": AUD, "sub": sub, "exp": now_secs() + 300, "iat": now_secs(), "scope": "mcp files:read",
        "client_id": "cli-1"})
}

fn mint(key: &TestKey, claims: &Value) -> String {
    let mut h = Header::new(key.alg);
    h.kid = Some(key.kid.clone());
    encode(&h, claims, &key.enc).unwrap()
}

/// A compact JWS from raw header/claims JSON and signature bytes.
fn raw_jwt(header: &Value, claims: &Value, sig: &[u8]) -> String {
    format!("{}.{}.{}", b64(header.to_string().as_bytes()), b64(claims.to_string().as_bytes()), b64(sig))
}

fn jwks(keys: &[&TestKey]) -> Value {
    json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()})
}

#[test]
fn static_keys_accept_es256_and_eddsa() {
    let (ec, ed) = (es256("ec-1"), ed25519("ed-1"));
    let keys = KeySet::from_jwks(&jwks(&[&ec, &ed])).unwrap();
    assert_eq!(keys.len(), 2);
    let cfg = JwtConfig::new(ISS, AUD);
    for key in [&ec, &ed] {
        let p = verify_jwt(&mint(key, &claims("alice")), &cfg, &keys, now_secs()).unwrap();
        assert_eq!(p.subject, "alice");
        assert_eq!(p.scopes, ["mcp", "files:read"]);
        assert_eq!(p.client_id.as_deref(), Some("cli-1"));
        assert_eq!(p.claims["iss"], ISS);
    }
    // No kid: every key of the right type is tried.
    let token = encode(&Header::new(Algorithm::ES256), &claims("bob"), &ec.enc).unwrap();
    assert_eq!(verify_jwt(&token, &cfg, &keys, now_secs()).unwrap().subject, "bob");
}

#[test]
fn static_keys_refuse() {
    let ec = es256("ec-1");
    let other = es256("ec-1"); // same kid, different key
    let keys = KeySet::from_jwks(&jwks(&[&ec])).unwrap();
    let cfg = JwtConfig::new(ISS, AUD);
    let now = now_secs();
    let check = |token: &str| verify_jwt(token, &cfg, &keys, now);
    assert_eq!(check(&mint(&other, &claims("a"))), Err(AuthError::BadSignature));
    let none = raw_jwt(&json!({"alg": "none", "kid": "ec-1"}), &claims("a"), b"");
    assert_eq!(check(&none), Err(AuthError::DisallowedAlgorithm("none".into())));
    let none = raw_jwt(&json!({"alg": "NONE"}), &claims("a"), b"");
    assert_eq!(check(&none), Err(AuthError::DisallowedAlgorithm("NONE".into())));
    // Algorithm confusion: HS256 keyed with the public key (JWK JSON or raw point).
    for secret in [ec.jwk.to_string().into_bytes(), ec.jwk["x"].as_str().unwrap().as_bytes().to_vec()] {
        let mut h = Header::new(Algorithm::HS256);
        h.kid = Some("ec-1".into());
        let t = encode(&h, &claims("a"), &EncodingKey::from_secret(&secret)).unwrap();
        assert_eq!(check(&t), Err(AuthError::DisallowedAlgorithm("HS256".into())));
    }
    // Allowed algorithm but not listed: ES384 / RS256 tokens with the EC kid.
    let t = raw_jwt(&json!({"alg": "ES384", "kid": "ec-1"}), &claims("a"), b"sig");
    assert_eq!(check(&t), Err(AuthError::DisallowedAlgorithm("ES384".into())));
    let t = raw_jwt(&json!({"alg": "RS256", "kid": "ec-1"}), &claims("a"), b"sig");
    assert_eq!(check(&t), Err(AuthError::UnknownKey(Some("ec-1".into()))), "an EC key never verifies RS256");
    let t = raw_jwt(&json!({"alg": "ES256", "kid": "nope"}), &claims("a"), b"sig");
    assert_eq!(check(&t), Err(AuthError::UnknownKey(Some("nope".into()))));
    let t = raw_jwt(&json!({"alg": "ES256", "kid": "ec-1", "crit": ["exp"]}), &claims("a"), b"sig");
    assert!(matches!(check(&t), Err(AuthError::Malformed(_))));
    for garbage in ["", "a.b", "a.b.c.d", "!!!.e30.x", "e30.e30.e30"] {
        assert!(matches!(check(garbage), Err(AuthError::Malformed(_))), "{garbage:?}");
    }
    let mut c = claims("a");
    c["aud"] = json!("https://rs.example/other");
    assert_eq!(check(&mint(&ec, &c)), Err(AuthError::WrongAudience));
    c = claims("a");
    c["iss"] = json!("https://as.example/");
    assert_eq!(check(&mint(&ec, &c)), Err(AuthError::WrongIssuer));
    c = claims("a");
    c["exp"] = json!(now - 61);
    assert_eq!(check(&mint(&ec, &c)), Err(AuthError::Expired));
    c["exp"] = json!(now - 30);
    assert!(check(&mint(&ec, &c)).is_ok(), "expired within the 60 s leeway");
    // typ, when required.
    let typed = JwtConfig { required_typ: Some("at+jwt".into()), ..cfg.clone() };
    let t = mint(&ec, &claims("a"));
    assert!(matches!(verify_jwt(&t, &typed, &keys, now), Err(AuthError::Malformed(_))));
    let mut h = Header::new(Algorithm::ES256);
    h.typ = Some("application/AT+JWT".into());
    let t = encode(&h, &claims("a"), &ec.enc).unwrap();
    assert!(verify_jwt(&t, &typed, &keys, now).is_ok());
}

#[test]
fn hmac_only_with_a_configured_secret_never_from_the_jwks() {
    let mut cfg = JwtConfig::new(ISS, AUD);
    cfg.algorithms = vec![Algorithm::HS256];
    assert!(matches!(cfg.check(), Err(AuthError::Config(_))));
    cfg.hmac_secret = Some(b"configured-secret-of-enough-length".to_vec());
    let jwks = json!({"keys": [{"kty": "oct", "k": b64(b"jwks-secret"), "kid": "k"}]});
    let keys = KeySet::from_jwks(&jwks).unwrap();
    assert!(keys.is_empty(), "oct keys are never used");
    let mut h = Header::new(Algorithm::HS256);
    h.kid = Some("k".into());
    let good = encode(&h, &claims("a"), &EncodingKey::from_secret(b"configured-secret-of-enough-length")).unwrap();
    assert_eq!(verify_jwt(&good, &cfg, &keys, now_secs()).unwrap().subject, "a");
    let from_jwks = encode(&h, &claims("a"), &EncodingKey::from_secret(b"jwks-secret")).unwrap();
    assert_eq!(verify_jwt(&from_jwks, &cfg, &keys, now_secs()), Err(AuthError::BadSignature));
}

// ------------------------------------------------------------------------------------------
// A small authorization server
// ------------------------------------------------------------------------------------------

type Handler = dyn Fn(&str, &str, &http::HeaderMap, &[u8]) -> (u16, Value) + Send + Sync;

struct As {
    addr: SocketAddr,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl As {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

async fn start_as(handler: Arc<Handler>) -> As {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let h2 = hits.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let (handler, hits) = (handler.clone(), h2.clone());
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let (handler, hits) = (handler.clone(), hits.clone());
                    async move {
                        let (parts, body) = req.into_parts();
                        let body = body.collect().await.unwrap().to_bytes();
                        *hits.lock().unwrap().entry(parts.uri.path().to_owned()).or_default() += 1;
                        let (status, v) = handler(parts.method.as_str(), parts.uri.path(), &parts.headers, &body);
                        let mut r = http::Response::new(Full::new(Bytes::from(v.to_string())));
                        *r.status_mut() = http::StatusCode::from_u16(status).unwrap();
                        r.headers_mut().insert("content-type", "application/json".parse().unwrap());
                        Ok::<_, Infallible>(r)
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await;
            });
        }
    });
    As { addr, hits }
}

#[tokio::test]
async fn remote_jwks_caches_refreshes_on_unknown_kid_and_rate_limits() {
    let (k1, k2, k3) = (es256("k1"), ed25519("k2"), es256("k3"));
    let current = Arc::new(Mutex::new(jwks(&[&k1])));
    let c = current.clone();
    let server = start_as(Arc::new(move |_, path, _, _| match path {
        "/jwks" => (200, c.lock().unwrap().clone()),
        _ => (404, json!({})),
    }))
    .await;
    let opts = JwksOptions { unknown_kid_interval: Duration::from_millis(300), ..Default::default() };
    let v = JwtValidator::with_jwks_url(JwtConfig::new(ISS, AUD), &server.url("/jwks"), opts).unwrap();
    assert_eq!(v.validate(&mint(&k1, &claims("a"))).await.unwrap().subject, "a");
    assert_eq!(v.validate(&mint(&k1, &claims("b"))).await.unwrap().subject, "b");
    assert_eq!(server.hits("/jwks"), 1, "cached");
    // Rotation: a token with the new kid triggers one refetch and is accepted.
    *current.lock().unwrap() = jwks(&[&k1, &k2]);
    assert_eq!(v.validate(&mint(&k2, &claims("c"))).await.unwrap().subject, "c");
    assert_eq!(server.hits("/jwks"), 2);
    // Another unknown kid right away: rate-limited, no fetch, refused.
    *current.lock().unwrap() = jwks(&[&k1, &k2, &k3]);
    assert_eq!(v.validate(&mint(&k3, &claims("d"))).await, Err(AuthError::UnknownKey(Some("k3".into()))));
    assert_eq!(server.hits("/jwks"), 2);
    // A refused-anyway token (alg none) never causes a fetch.
    let none = raw_jwt(&json!({"alg": "none", "kid": "zzz"}), &claims("a"), b"");
    assert!(matches!(v.validate(&none).await, Err(AuthError::DisallowedAlgorithm(_))));
    // After the interval the refresh is allowed again.
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(v.validate(&mint(&k3, &claims("d"))).await.unwrap().subject, "d");
    assert_eq!(server.hits("/jwks"), 3);
}

#[tokio::test]
async fn unreachable_jwks_is_unavailable() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/jwks");
    let v = JwtValidator::with_jwks_url(JwtConfig::new(ISS, AUD), &url, JwksOptions::default()).unwrap();
    let e = v.validate(&mint(&es256("k"), &claims("a"))).await.unwrap_err();
    assert!(matches!(e, AuthError::Unavailable(_)), "{e:?}");
    assert_eq!(e.http_status(), 503);
    // Plain http to a non-loopback host is refused at configuration time.
    let e = JwtValidator::with_jwks_url(JwtConfig::new(ISS, AUD), "http://as.example/jwks", JwksOptions::default());
    assert!(matches!(e, Err(AuthError::Config(_))));
}

#[tokio::test]
async fn discovery_prefers_rfc8414_then_openid_and_checks_the_issuer() {
    // Issuer with a path; only the OIDC path-appended document exists.
    let issuer = Arc::new(Mutex::new(String::new()));
    let i = issuer.clone();
    let server = start_as(Arc::new(move |_, path, _, _| {
        let iss = i.lock().unwrap().clone();
        match path {
            "/tenant/.well-known/openid-configuration" => (200, json!({"issuer": iss, "jwks_uri": "https://x/jwks"})),
            "/.well-known/oauth-authorization-server/evil" => {
                (200, json!({"issuer": "https://honest.example", "jwks_uri": "https://x/jwks"}))
            }
            _ => (404, json!({})),
        }
    }))
    .await;
    let tenant = server.url("/tenant");
    *issuer.lock().unwrap() = tenant.clone();
    assert_eq!(discover_jwks_uri(&tenant, &JwksOptions::default()).await.unwrap(), "https://x/jwks");
    assert_eq!(server.hits("/.well-known/oauth-authorization-server/tenant"), 1);
    assert_eq!(server.hits("/.well-known/openid-configuration/tenant"), 1);
    let evil = server.url("/evil");
    let e = discover_jwks_uri(&evil, &JwksOptions::default()).await.unwrap_err();
    assert!(matches!(e, AuthError::Unavailable(ref m) if m.contains("honest")), "{e:?}");
}

#[tokio::test]
async fn introspection() {
    let expected_auth = mcp_auth::client_basic_auth("rs-client", "rs-secret");
    let server = start_as(Arc::new(move |method, path, headers, body| {
        assert_eq!((method, path), ("POST", "/introspect"));
        if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected_auth.as_str()) {
            return (401, json!({"error": "invalid_client"}));
        }
        let body = std::str::from_utf8(body).unwrap();
        let token = body.split('&').find_map(|p| p.strip_prefix("token=")).unwrap_or("");
        let exp = now_secs() + 300;
        match token {
            "good" => (200, json!({"active": true, "sub": "carol", "aud": AUD, "scope": "mcp", "exp": exp})),
            "other-aud" => (200, json!({"active": true, "sub": "carol", "aud": "https://other/mcp"})),
            _ => (200, json!({"active": false})),
        }
    }))
    .await;
    let mut cfg = IntrospectionConfig::new(&server.url("/introspect"), "rs-client", "rs-secret", AUD);
    let v = IntrospectionValidator::new(cfg.clone()).unwrap();
    let p = v.validate("good").await.unwrap();
    assert_eq!((p.subject.as_str(), p.scopes.as_slice()), ("carol", &["mcp".to_owned()][..]));
    assert_eq!(v.validate("revoked").await, Err(AuthError::Inactive));
    assert_eq!(v.validate("other-aud").await, Err(AuthError::WrongAudience));
    v.validate("good").await.unwrap();
    assert_eq!(server.hits("/introspect"), 4, "no cache by default");
    cfg.cache_ttl = Duration::from_secs(30);
    let cached = IntrospectionValidator::new(cfg.clone()).unwrap();
    cached.validate("good").await.unwrap();
    cached.validate("good").await.unwrap();
    assert_eq!(server.hits("/introspect"), 5, "cached");
    cfg.client_secret = "wrong".into();
    let bad = IntrospectionValidator::new(cfg).unwrap();
    assert!(matches!(bad.validate("good").await, Err(AuthError::Unavailable(_))));
}

#[tokio::test]
async fn inactive_answers_are_cached_briefly_and_boundedly() {
    let server = start_as(Arc::new(|_, _, _, _| (200, json!({"active": false})))).await;
    let mut cfg = IntrospectionConfig::new(&server.url("/introspect"), "rs-client", "rs-secret", AUD);
    cfg.cache_max_entries = 2;
    let v = IntrospectionValidator::new(cfg).unwrap();
    let now = 1_000_000;
    // The same junk token again and again: one request.
    for _ in 0..20 {
        assert_eq!(v.validate_at("junk-1", now).await, Err(AuthError::Inactive));
    }
    assert_eq!(server.hits("/introspect"), 1);
    // After the 30 s default, asked again.
    assert_eq!(v.validate_at("junk-1", now + 31).await, Err(AuthError::Inactive));
    assert_eq!(server.hits("/introspect"), 2);
    // Bounded: two more tokens evict the oldest.
    v.validate_at("junk-2", now + 31).await.unwrap_err();
    v.validate_at("junk-3", now + 31).await.unwrap_err();
    assert_eq!(v.cached_inactive(), 2);
    assert_eq!(server.hits("/introspect"), 4);
    v.validate_at("junk-3", now + 31).await.unwrap_err();
    assert_eq!(server.hits("/introspect"), 4, "still cached");
    v.validate_at("junk-1", now + 31).await.unwrap_err();
    assert_eq!(server.hits("/introspect"), 5, "evicted");
}
