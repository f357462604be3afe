//! Token endpoint requests (RFC 6749 §3.2, RFC 7523, RFC 8693) and client authentication.

use crate::crypto::{now_secs, SigningKey};
use crate::dpop::Dpop;
use crate::error::OAuthError;
use crate::http::{Http, Reply};
use crate::store::TokenSet;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value;
use std::sync::Arc;
use url::Url;

/// How the client authenticates at a token endpoint.
#[derive(Clone)]
pub(crate) enum ClientAuth {
    /// A public client: `client_id` in the body.
    None { client_id: String },
    /// `client_secret_basic` (RFC 6749 §2.3.1: both parts form-urlencoded).
    Basic { client_id: String, secret: String },
    /// `client_secret_post`.
    Post { client_id: String, secret: String },
    /// `private_key_jwt` (RFC 7523 §2.2): a fresh assertion with `aud` = `audience`.
    PrivateKeyJwt { client_id: String, key: Arc<SigningKey>, audience: String },
    /// No client identification at all.
    Anonymous,
}

fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

impl ClientAuth {
    /// Adds the body parameters; returns the `Authorization` header, if any.
    fn apply(&self, form: &mut Vec<(String, String)>) -> Result<Option<String>, OAuthError> {
        let mut push = |k: &str, v: &str| form.push((k.to_owned(), v.to_owned()));
        Ok(match self {
            Self::None { client_id } => {
                push("client_id", client_id);
                None
            }
            Self::Basic { client_id, secret } => {
                let raw = format!("{}:{}", form_encode(client_id), form_encode(secret));
                Some(format!("Basic {}", STANDARD.encode(raw)))
            }
            Self::Post { client_id, secret } => {
                push("client_id", client_id);
                push("client_secret", secret);
                None
            }
            Self::PrivateKeyJwt { client_id, key, audience } => {
                push("client_id", client_id);
                push("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
                push("client_assertion", &key.client_assertion(client_id, audience)?);
                None
            }
            Self::Anonymous => None,
        })
    }

    /// The client id sent, if any.
    pub(crate) fn client_id(&self) -> Option<&str> {
        match self {
            Self::None { client_id }
            | Self::Basic { client_id, .. }
            | Self::Post { client_id, .. }
            | Self::PrivateKeyJwt { client_id, .. } => Some(client_id),
            Self::Anonymous => None,
        }
    }
}

/// POSTs `form` to the token endpoint with client authentication and, with `dpop`, a proof;
/// retries once with the nonce after a `use_dpop_nonce` answer. Returns the successful reply.
pub(crate) async fn post_token(
    http: &Http,
    endpoint: &Url,
    form: &[(String, String)],
    auth: &ClientAuth,
    dpop: Option<&Dpop>,
    what: &str,
) -> Result<Reply, OAuthError> {
    let mut nonce_retry = dpop.is_some();
    loop {
        let mut body = form.to_vec();
        let authorization = auth.apply(&mut body)?;
        let proof = dpop.map(|d| d.proof("POST", endpoint, None)).transpose()?;
        let reply = http.post_form(endpoint, &body, authorization.as_deref(), proof.as_deref(), what).await?;
        if let (Some(d), Some(n)) = (dpop, reply.dpop_nonce.as_deref()) {
            d.set_nonce(endpoint, n);
        }
        if reply.ok() {
            return Ok(reply);
        }
        let (error, description) = reply.oauth_error();
        if nonce_retry && error == "use_dpop_nonce" && reply.dpop_nonce.is_some() {
            nonce_retry = false;
            continue;
        }
        return Err(OAuthError::Token { status: reply.status, error, description });
    }
}

/// Reads a token response into a [`TokenSet`]. `requested` are the scopes asked for;
/// `dpop_jkt` is set when a DPoP proof was sent (a `DPoP` token type needs one).
pub(crate) fn token_set(reply: &Reply, requested: &[String], dpop_jkt: Option<String>) -> Result<TokenSet, OAuthError> {
    let bad = |why: &str| OAuthError::Token {
        status: reply.status,
        error: "invalid_response".into(),
        description: Some(why.into()),
    };
    let j = reply.json.as_ref().ok_or_else(|| bad("the token response is not JSON"))?;
    let access_token = j
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad("no access_token"))?
        .to_owned();
    let raw_type = j.get("token_type").and_then(Value::as_str).unwrap_or("Bearer");
    let token_type = if raw_type.eq_ignore_ascii_case("bearer") {
        "Bearer"
    } else if raw_type.eq_ignore_ascii_case("dpop") && dpop_jkt.is_some() {
        "DPoP"
    } else {
        return Err(bad(&format!("unsupported token_type {raw_type:?}")));
    };
    let expires_in = match j.get("expires_in") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    let scopes = match j.get("scope").and_then(Value::as_str) {
        Some(s) => s.split_whitespace().map(str::to_owned).collect(),
        None => requested.to_vec(),
    };
    Ok(TokenSet {
        access_token,
        token_type: token_type.to_owned(),
        refresh_token: j.get("refresh_token").and_then(Value::as_str).map(str::to_owned),
        expires_at: expires_in.map(|e| now_secs() + e),
        requested_scopes: requested.to_vec(),
        scopes,
        dpop_jkt: (token_type == "DPoP").then_some(dpop_jkt).flatten(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_encodes_both_parts() {
        let mut form = Vec::new();
        let auth = ClientAuth::Basic { client_id: "a b".into(), secret: "p:w".into() };
        let h = auth.apply(&mut form).unwrap().unwrap();
        assert!(form.is_empty());
        let raw = STANDARD.decode(h.strip_prefix("Basic ").unwrap()).unwrap();
        assert_eq!(String::from_utf8(raw).unwrap(), "a+b:p%3Aw");
    }

    #[test]
    fn token_response_parsing() {
        let reply = |j: Value| Reply { status: 200, dpop_nonce: None, location: None, json: Some(j) };
        let t = token_set(
            &reply(serde_json::json!({"access_token":"x","token_type":"bearer","expires_in":60,"scope":"a b"})),
            &["a".into()],
            None,
        )
        .unwrap();
        assert_eq!(t.token_type, "Bearer");
        assert_eq!(t.scopes, ["a", "b"]);
        assert!(t.expires_at.is_some());
        assert!(token_set(&reply(serde_json::json!({"access_token":"x","token_type":"DPoP"})), &[], None).is_err());
        assert!(token_set(&reply(serde_json::json!({"token_type":"Bearer"})), &[], None).is_err());
    }
}
