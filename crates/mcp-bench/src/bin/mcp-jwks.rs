//! `mcp-jwks`: a JWKS on 127.0.0.1 and one token signed with its key, for the production shape
//! of `scripts/bench.sh` (servers that validate a bearer JWT against a JWKS).
//!
//! Signs with RS256 and the RSA key of `--rsa-key` (PKCS#1 PEM, as `openssl genrsa -traditional`
//! writes it: most identity providers sign with RS256), or with a generated ES256 key (ring)
//! without it; serves `{"keys":[<the public JWK>]}` at `http://127.0.0.1:PORT/jwks.json`, and
//! prints on stdout, one per line:
//! `jwks=URL`, `issuer=http://127.0.0.1:PORT` and `token=JWT` (for `--audience`, valid for
//! `--valid-for`). Exits by itself after `--exit-after`.

use bytes::Bytes;
use clap::Parser;
use http_body_util::Full;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use mcp_bench::parse_duration;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, RsaKeyPair, RsaPublicKeyComponents, ECDSA_P256_SHA256_FIXED_SIGNING};
use std::convert::Infallible;
use std::io::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Command-line options.
#[derive(Parser)]
#[command(name = "mcp-jwks", about = "A JWKS on 127.0.0.1 and a token it validates")]
struct Args {
    /// The token's `aud`.
    #[arg(long)]
    audience: String,
    /// How long the token is valid.
    #[arg(long, default_value = "120m", value_parser = parse_duration)]
    valid_for: Duration,
    /// An RSA private key (PKCS#1 PEM) to sign with RS256; without it, a new ES256 key.
    #[arg(long)]
    rsa_key: Option<std::path::PathBuf>,
    /// Exit by itself after this long (safety bound for benchmark scripts).
    #[arg(long, default_value = "240m", value_parser = parse_duration)]
    exit_after: Duration,
}

fn b64url(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A new ES256 key: its public JWK and the signing key.
fn ec_key() -> Result<(serde_json::Value, EncodingKey, Algorithm), BoxError> {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).map_err(|_| "key generation")?;
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
        .map_err(|_| "key generation")?;
    let pk = pair.public_key().as_ref();
    let jwk = serde_json::json!({
        "kty": "EC", "crv": "P-256", "x": b64url(&pk[1..33]), "y": b64url(&pk[33..65]),
        "kid": "bench-1", "alg": "ES256", "use": "sig"
    });
    Ok((jwk, EncodingKey::from_ec_der(pkcs8.as_ref()), Algorithm::ES256))
}

/// The RS256 key of a PKCS#1 PEM: its public JWK and the signing key.
fn rsa_key(pem: &str) -> Result<(serde_json::Value, EncodingKey, Algorithm), BoxError> {
    use base64::Engine as _;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(body.trim())?;
    let pair = RsaKeyPair::from_der(&der).map_err(|e| format!("not a PKCS#1 RSA key: {e}"))?;
    let public = RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
    let jwk = serde_json::json!({
        "kty": "RSA", "n": b64url(&public.n), "e": b64url(&public.e), "kid": "bench-1", "alg": "RS256", "use": "sig"
    });
    Ok((jwk, EncodingKey::from_rsa_der(&der), Algorithm::RS256))
}

/// A token from `issuer` for `audience`, signed with `key` (`kid` bench-1), valid from `now` for
/// `valid_for`.
fn mint(
    key: &EncodingKey,
    alg: Algorithm,
    issuer: &str,
    audience: &str,
    now: u64,
    valid_for: Duration,
) -> Result<String, BoxError> {
    let mut header = Header::new(alg);
    header.kid = Some("bench-1".into());
    let claims = serde_json::json!({
        "iss": issuer, "aud": audience, "sub": "bench", "iat": now, "exp": now + valid_for.as_secs()
    });
    Ok(encode(&header, &claims, key)?)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let args = Args::parse();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let issuer = format!("http://{}", listener.local_addr()?);
    let (jwk, key, alg) = match &args.rsa_key {
        Some(path) => rsa_key(&std::fs::read_to_string(path)?)?,
        None => ec_key()?,
    };
    let jwks = serde_json::json!({"keys": [jwk]});
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let token = mint(&key, alg, &issuer, &args.audience, now, args.valid_for)?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "jwks={issuer}/jwks.json\nissuer={issuer}\ntoken={token}")?;
        out.flush()?;
    }
    let body = Bytes::from(jwks.to_string());
    let serve = async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let body = body.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let found = req.uri().path() == "/jwks.json";
                    let mut r = http::Response::new(Full::new(if found { body.clone() } else { Bytes::new() }));
                    if found {
                        r.headers_mut().insert(http::header::CONTENT_TYPE, "application/json".parse().expect("valid"));
                    } else {
                        *r.status_mut() = http::StatusCode::NOT_FOUND;
                    }
                    async move { Ok::<_, Infallible>(r) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await;
            });
        }
    };
    tokio::select! {
        () = serve => {}
        () = tokio::time::sleep(args.exit_after) => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp::http::auth::{verify_jwt, JwtConfig, KeySet};

    /// The JWKS and the token are what the project's own validator accepts, and only for the
    /// audience the token names.
    fn accepted(jwk: serde_json::Value, key: &EncodingKey, alg: Algorithm) {
        let keys = KeySet::from_jwks(&serde_json::json!({"keys": [jwk]})).unwrap();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let token = mint(key, alg, "http://127.0.0.1:1", "http://127.0.0.1/mcp", now, Duration::from_secs(60)).unwrap();
        let config = JwtConfig::new("http://127.0.0.1:1", "http://127.0.0.1/mcp");
        assert!(verify_jwt(&token, &config, &keys, now).is_ok());
        let other = JwtConfig::new("http://127.0.0.1:1", "http://127.0.0.1/other");
        assert!(verify_jwt(&token, &other, &keys, now).is_err());
    }

    #[test]
    fn an_es256_token_verifies_against_its_jwks() {
        let (jwk, key, alg) = ec_key().unwrap();
        assert_eq!(alg, Algorithm::ES256);
        accepted(jwk, &key, alg);
    }

    #[test]
    fn an_rs256_token_from_an_openssl_key_verifies_against_its_jwks() {
        // openssl is one of the test programs (scripts/test-deps.sh installs it).
        let out = std::process::Command::new("openssl")
            .args(["genrsa", "-traditional", "2048"])
            .output()
            .expect("openssl (scripts/test-deps.sh installs it)");
        assert!(out.status.success(), "openssl genrsa failed");
        let (jwk, key, alg) = rsa_key(std::str::from_utf8(&out.stdout).unwrap()).unwrap();
        assert_eq!(alg, Algorithm::RS256);
        assert_eq!(jwk["kty"], "RSA");
        accepted(jwk, &key, alg);
    }

    #[test]
    fn a_pem_that_is_not_an_rsa_key_is_refused() {
        assert!(rsa_key("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n").is_err());
        assert!(rsa_key("not base64 at all").is_err());
    }
}
