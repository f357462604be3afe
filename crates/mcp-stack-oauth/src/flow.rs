//! The authorization itself: discovery, client registration and the grants.

use crate::config::{EnterpriseGrant, Grant};
use crate::crypto::{pkce_pair, random_token};
use crate::discovery::{fetch_resource_metadata, fetch_server_metadata, ServerMetadata};
use crate::error::OAuthError;
use crate::provider::{OAuthProvider, State};
use crate::safety::check_endpoint;
use crate::store::{ClientRegistration, TokenSet};
use crate::token::{post_token, token_set, ClientAuth};
use crate::user_agent::{is_callback_for, UserAgent};
use mcp_protocol::auth::{BearerChallenge, ProtectedResourceMetadata};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use url::Url;

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

impl OAuthProvider {
    /// Discovers the authorization server and obtains tokens: a refresh when a token was
    /// refused and can be refreshed, else the configured grant (`scopes` set for step-up).
    pub(crate) async fn obtain(
        &self,
        st: &mut State,
        info: &BearerChallenge,
        scopes: Option<Vec<String>>,
        token_refused: bool,
    ) -> Result<(), OAuthError> {
        let prm = fetch_resource_metadata(&self.http, &self.server_url, info.resource_metadata.as_deref()).await?;
        let issuer = match &st.issuer {
            Some(current) if prm.authorization_servers.contains(current) => current.clone(),
            _ => prm.authorization_servers[0].clone(),
        };
        let meta = fetch_server_metadata(&self.http, &issuer).await?;
        if st.issuer.as_deref() != Some(issuer.as_str()) || st.resource.as_deref() != Some(prm.resource.as_str()) {
            if st.issuer.is_some() {
                tracing::info!(issuer = %issuer, "the authorization server changed");
            }
            // Tokens are never carried from one authorization server (or resource) to another.
            st.tokens = None;
            st.step_ups = 0;
        }
        st.issuer = Some(issuer.clone());
        st.resource = Some(prm.resource.clone());
        st.meta = Some(meta.clone());

        if token_refused && scopes.is_none() {
            if let Some(t) = st.tokens.clone().filter(|t| t.refresh_token.is_some()) {
                match self.refresh(st, &t).await {
                    Ok(new) => {
                        self.keep(st, new);
                        return Ok(());
                    }
                    Err(e) => tracing::info!(error = %e, "refresh failed; authorizing again"),
                }
            }
        }
        let mut scopes = scopes.unwrap_or_else(|| self.select_scopes(info, &prm));
        let tokens = match &self.cfg.grant {
            Grant::StoredOnly => {
                return Err(OAuthError::config(format!("no valid stored token for {issuer}: log in first")))
            }
            Grant::AuthorizationCode(ua) => {
                if self.cfg.offline_access
                    && meta.lists_scope("offline_access")
                    && !scopes.iter().any(|s| s == "offline_access")
                {
                    scopes.push("offline_access".into());
                }
                self.authorization_code(ua.as_ref(), &issuer, &meta, &prm, &scopes).await?
            }
            Grant::ClientCredentials => {
                let auth = self.client_auth(&issuer, &meta, None, false).await?;
                let mut f = form(&[("grant_type", "client_credentials"), ("resource", &prm.resource)]);
                push_scope(&mut f, &scopes);
                self.token(&meta, &f, &auth, &scopes, "client credentials token request").await?
            }
            Grant::JwtBearer { assertion } => {
                let auth = match self.static_client(&issuer)? {
                    Some(_) => self.client_auth(&issuer, &meta, None, false).await?,
                    None => ClientAuth::Anonymous,
                };
                let mut f = form(&[("grant_type", JWT_BEARER), ("assertion", assertion), ("resource", &prm.resource)]);
                push_scope(&mut f, &scopes);
                self.token(&meta, &f, &auth, &scopes, "JWT bearer token request").await?
            }
            Grant::Enterprise(e) => {
                let id_jag = self.token_exchange(e, &issuer, &prm).await?;
                let auth = self.client_auth(&issuer, &meta, None, false).await?;
                let mut f = form(&[("grant_type", JWT_BEARER), ("assertion", &id_jag), ("resource", &prm.resource)]);
                push_scope(&mut f, &scopes);
                self.token(&meta, &f, &auth, &scopes, "ID-JAG token request").await?
            }
        };
        self.keep(st, tokens);
        Ok(())
    }

    /// Scope selection: configured scopes, else the challenge's `scope`, else the PRM's
    /// `scopes_supported`, else none (the parameter is omitted).
    fn select_scopes(&self, info: &BearerChallenge, prm: &ProtectedResourceMetadata) -> Vec<String> {
        self.cfg
            .scopes
            .clone()
            .or_else(|| info.scope.clone())
            .or_else(|| prm.scopes_supported.clone())
            .unwrap_or_default()
    }

    /// A token request at the authorization server's token endpoint.
    async fn token(
        &self,
        meta: &ServerMetadata,
        form: &[(String, String)],
        auth: &ClientAuth,
        scopes: &[String],
        what: &str,
    ) -> Result<TokenSet, OAuthError> {
        let endpoint = meta.endpoint("token_endpoint")?;
        let dpop = self.dpop_for(meta);
        let reply = post_token(&self.http, &endpoint, form, auth, dpop, what).await?;
        token_set(&reply, scopes, dpop.map(|d| d.thumbprint()))
    }

    /// The refresh-token grant for `t` at the current authorization server.
    pub(crate) async fn refresh(&self, st: &mut State, t: &TokenSet) -> Result<TokenSet, OAuthError> {
        let issuer = st.issuer.clone().ok_or_else(|| OAuthError::config("no authorization server yet"))?;
        let meta = match &st.meta {
            Some(m) if m.issuer == issuer => m.clone(),
            _ => {
                let m = fetch_server_metadata(&self.http, &issuer).await?;
                st.meta = Some(m.clone());
                m
            }
        };
        let refresh_token = t.refresh_token.clone().ok_or_else(|| OAuthError::config("no refresh token"))?;
        let auth = self.client_auth(&issuer, &meta, None, false).await?;
        let mut f = form(&[("grant_type", "refresh_token"), ("refresh_token", &refresh_token)]);
        if let Some(r) = &st.resource {
            f.push(("resource".into(), r.clone()));
        }
        let mut new = self.token(&meta, &f, &auth, &t.requested_scopes, "refresh token request").await?;
        if new.refresh_token.is_none() {
            new.refresh_token = Some(refresh_token);
        }
        Ok(new)
    }

    /// The authorization code flow with PKCE, `state`, `resource` and RFC 9207 `iss` checks.
    async fn authorization_code(
        &self,
        ua: &dyn UserAgent,
        issuer: &str,
        meta: &ServerMetadata,
        prm: &ProtectedResourceMetadata,
        scopes: &[String],
    ) -> Result<TokenSet, OAuthError> {
        if !meta.supports_s256() {
            return Err(OAuthError::PkceUnsupported);
        }
        let authorize_endpoint = meta.endpoint("authorization_endpoint")?;
        let token_endpoint = meta.endpoint("token_endpoint")?;
        // The user agent fetches the authorization endpoint: the same address rule applies.
        self.http.check_target(&authorize_endpoint, "authorization_endpoint").await?;
        self.http.check_target(&token_endpoint, "token_endpoint").await?;
        let redirect_uri = ua.redirect_uri();
        let redirect = check_endpoint(&redirect_uri, "redirect URI")?;
        let auth = self.client_auth(issuer, meta, Some(&redirect_uri), true).await?;
        let client_id = auth.client_id().unwrap_or_default().to_owned();
        let (verifier, challenge) = pkce_pair();
        let state = random_token(24);
        let mut url = authorize_endpoint;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client_id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", &prm.resource);
            if !scopes.is_empty() {
                q.append_pair("scope", &scopes.join(" "));
            }
        }
        let callback = ua.authorize(url.as_str()).await?;
        let code = check_callback(&callback, &redirect, issuer, meta, &state)?;
        let f = form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &redirect_uri),
            ("code_verifier", &verifier),
            ("resource", &prm.resource),
        ]);
        self.token(meta, &f, &auth, scopes, "authorization code token request").await
    }

    /// RFC 8693 token exchange of the ID token for an ID-JAG at the enterprise IdP.
    async fn token_exchange(
        &self,
        e: &EnterpriseGrant,
        issuer: &str,
        prm: &ProtectedResourceMetadata,
    ) -> Result<String, OAuthError> {
        let endpoint = check_endpoint(&e.idp_token_endpoint, "IdP token endpoint")?;
        let auth = match (&e.idp_client_id, &e.idp_client_secret) {
            (Some(id), Some(secret)) => ClientAuth::Basic { client_id: id.clone(), secret: secret.clone() },
            (Some(id), None) => ClientAuth::None { client_id: id.clone() },
            _ => ClientAuth::Anonymous,
        };
        let f = form(&[
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
            ("requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"),
            ("audience", issuer),
            ("resource", &prm.resource),
            ("subject_token", &e.id_token),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"),
        ]);
        let reply = post_token(&self.trusted_http, &endpoint, &f, &auth, None, "token exchange").await?;
        reply.json.as_ref().and_then(|j| j.get("access_token")).and_then(Value::as_str).map(str::to_owned).ok_or_else(
            || OAuthError::Token {
                status: reply.status,
                error: "invalid_response".into(),
                description: Some("no ID-JAG in the token exchange response".into()),
            },
        )
    }

    /// The pre-registered credentials to use at `issuer`: those issued by it (named with
    /// [`StaticClient::for_issuer`](crate::StaticClient::for_issuer)), else credentials without
    /// a named issuer that are bound to it, or bound now when they were never used (the binding
    /// is recorded in the store). `None` when none are configured; an error, before anything
    /// is sent, when all configured credentials belong to other issuers.
    pub(crate) fn static_client(&self, issuer: &str) -> Result<Option<&crate::config::StaticClient>, OAuthError> {
        let clients = &self.cfg.static_clients;
        if clients.is_empty() {
            return Ok(None);
        }
        if let Some(c) = clients.iter().find(|c| c.issuer.as_deref() == Some(issuer)) {
            return Ok(Some(c));
        }
        let mut others = Vec::new();
        for c in clients {
            if let Some(own) = &c.issuer {
                others.push(format!("client {:?} is registered at {own:?}", c.client_id));
                continue;
            }
            let mut bound = self.store.load()?.client_issuers.get(&c.client_id).cloned().unwrap_or_default();
            if bound.is_empty() {
                // First use: record the binding (under the store's lock, so two processes
                // binding at once agree on one issuer).
                self.store.update(&mut |d| {
                    bound = d.client_issuers.entry(c.client_id.clone()).or_insert_with(|| issuer.to_owned()).clone();
                })?;
            }
            if bound == issuer {
                tracing::debug!(client_id = %c.client_id, issuer = %issuer, "pre-registered client bound to its issuer");
                return Ok(Some(c));
            }
            others.push(format!("client {:?} was first used with (and is bound to) {bound:?}", c.client_id));
        }
        tracing::warn!(issuer = %issuer, "refusing to send pre-registered client credentials to another authorization server");
        Err(OAuthError::config(format!(
            "the authorization server {issuer:?} did not issue the configured client credentials ({}); \
             refusing to send them to it (name the issuer with --client-issuer / StaticClient::for_issuer)",
            others.join("; ")
        )))
    }

    /// The client to use at `issuer`: pre-registered credentials, a stored registration, a
    /// Client ID Metadata Document URL, or (with `register`) dynamic registration.
    async fn client_auth(
        &self,
        issuer: &str,
        meta: &ServerMetadata,
        redirect_uri: Option<&str>,
        register: bool,
    ) -> Result<ClientAuth, OAuthError> {
        if let Some(c) = self.static_client(issuer)? {
            let method = c.auth_method.clone().unwrap_or_else(|| {
                if c.private_key.is_some() {
                    "private_key_jwt".into()
                } else {
                    default_method(meta, c.client_secret.is_some())
                }
            });
            return auth_for(&method, &c.client_id, c.client_secret.as_deref(), c.private_key.clone(), issuer);
        }
        let stored = self.store.load()?.clients.get(issuer).cloned();
        if let Some(reg) = stored.filter(|r| redirect_uri.is_none_or(|u| r.redirect_uris.iter().any(|x| x == u))) {
            let method = reg
                .token_endpoint_auth_method
                .clone()
                .unwrap_or_else(|| default_method(meta, reg.client_secret.is_some()));
            return auth_for(&method, &reg.client_id, reg.client_secret.as_deref(), None, issuer);
        }
        if let Some(url) =
            self.cfg.client_metadata_url.as_ref().filter(|_| meta.client_id_metadata_document_supported == Some(true))
        {
            return Ok(ClientAuth::None { client_id: url.clone() });
        }
        if !register {
            return Err(OAuthError::registration(format!("no client registration for {issuer}")));
        }
        let reg = self.register(issuer, meta, redirect_uri).await?;
        let method = reg.token_endpoint_auth_method.clone().unwrap_or_else(|| "none".into());
        auth_for(&method, &reg.client_id, reg.client_secret.as_deref(), None, issuer)
    }

    /// Dynamic client registration (RFC 7591) with `application_type`; the result is stored
    /// under the issuer.
    async fn register(
        &self,
        issuer: &str,
        meta: &ServerMetadata,
        redirect_uri: Option<&str>,
    ) -> Result<ClientRegistration, OAuthError> {
        let endpoint = meta.endpoint("registration_endpoint").map_err(|_| {
            OAuthError::registration(format!(
                "{issuer} supports neither dynamic registration nor client metadata documents, and no client is configured for it"
            ))
        })?;
        let method = first_accepted(meta, &["none", "client_secret_basic", "client_secret_post"]).unwrap_or("none");
        let redirect_uris: Vec<String> = redirect_uri.map(str::to_owned).into_iter().collect();
        let body = json!({
            "client_name": self.cfg.client_name,
            "redirect_uris": redirect_uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": self.cfg.application_type,
        });
        let reply = self.http.post_json(&endpoint, &body, "client registration").await?;
        if !reply.ok() {
            let (e, d) = reply.oauth_error();
            return Err(OAuthError::registration(format!("{e}{}", d.map(|d| format!(" ({d})")).unwrap_or_default())));
        }
        let j = reply.json.unwrap_or_default();
        let client_id = j
            .get("client_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| OAuthError::registration("the response has no client_id"))?;
        let reg = ClientRegistration {
            client_id: client_id.to_owned(),
            client_secret: j.get("client_secret").and_then(Value::as_str).map(str::to_owned),
            token_endpoint_auth_method: Some(
                j.get("token_endpoint_auth_method").and_then(Value::as_str).unwrap_or(method).to_owned(),
            ),
            redirect_uris,
        };
        if let Err(e) = self.store.update(&mut |data| {
            data.clients.insert(issuer.to_owned(), reg.clone());
        }) {
            tracing::warn!(error = %e, "could not save the client registration");
        }
        Ok(reg)
    }
}

fn push_scope(f: &mut Vec<(String, String)>, scopes: &[String]) {
    if !scopes.is_empty() {
        f.push(("scope".into(), scopes.join(" ")));
    }
}

/// The token endpoint auth method for a client with (or without) a secret.
fn default_method(meta: &ServerMetadata, has_secret: bool) -> String {
    if !has_secret {
        return "none".into();
    }
    first_accepted(meta, &["client_secret_basic", "client_secret_post"]).unwrap_or("client_secret_basic").into()
}

/// The first of `preferred` the authorization server accepts as a token endpoint auth method.
fn first_accepted<'a>(meta: &ServerMetadata, preferred: &[&'a str]) -> Option<&'a str> {
    preferred.iter().copied().find(|m| meta.accepts_auth_method(m))
}

fn auth_for(
    method: &str,
    client_id: &str,
    secret: Option<&str>,
    key: Option<Arc<crate::crypto::SigningKey>>,
    issuer: &str,
) -> Result<ClientAuth, OAuthError> {
    let need_secret =
        || secret.map(str::to_owned).ok_or_else(|| OAuthError::config(format!("{method} needs a client secret")));
    Ok(match method {
        "client_secret_basic" => ClientAuth::Basic { client_id: client_id.into(), secret: need_secret()? },
        "client_secret_post" => ClientAuth::Post { client_id: client_id.into(), secret: need_secret()? },
        "private_key_jwt" => ClientAuth::PrivateKeyJwt {
            client_id: client_id.into(),
            key: key.ok_or_else(|| OAuthError::config("private_key_jwt needs a private key"))?,
            audience: issuer.into(),
        },
        "none" => ClientAuth::None { client_id: client_id.into() },
        other => return Err(OAuthError::config(format!("unsupported token endpoint auth method {other:?}"))),
    })
}

/// Validates the authorization response (RFC 9207 `iss` first, then `state`, then `error`)
/// and returns the code.
fn check_callback(
    callback: &str,
    redirect: &Url,
    issuer: &str,
    meta: &ServerMetadata,
    state: &str,
) -> Result<String, OAuthError> {
    let url = Url::parse(callback)
        .map_err(|e| OAuthError::authorization_response(format!("invalid callback URL: {e}")).caused_by(e))?;
    if !is_callback_for(&url, redirect) {
        return Err(OAuthError::authorization_response("the callback does not go to the redirect URI"));
    }
    let params: HashMap<String, String> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    match params.get("iss") {
        Some(iss) if iss != issuer => {
            return Err(OAuthError::authorization_response(format!("iss {iss:?} is not the issuer {issuer:?}")))
        }
        None if meta.authorization_response_iss_parameter_supported == Some(true) => {
            return Err(OAuthError::authorization_response("iss is missing although the server advertises it"))
        }
        _ => {}
    }
    if params.get("state").map(String::as_str) != Some(state) {
        return Err(OAuthError::authorization_response("state does not match"));
    }
    if let Some(error) = params.get("error") {
        return Err(OAuthError::AuthorizationDenied {
            error: error.clone(),
            description: params.get("error_description").cloned(),
        });
    }
    params
        .get("code")
        .filter(|c| !c.is_empty())
        .cloned()
        .ok_or_else(|| OAuthError::authorization_response("no code in the callback"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callback_checks() {
        let redirect = Url::parse("http://localhost:3000/callback").unwrap();
        let meta = |adv: Option<bool>| ServerMetadata {
            authorization_response_iss_parameter_supported: adv,
            ..Default::default()
        };
        let iss = "http://localhost:9";
        let ok = "http://localhost:3000/callback?code=c&state=s&iss=http%3A%2F%2Flocalhost%3A9";
        assert_eq!(check_callback(ok, &redirect, iss, &meta(Some(true)), "s").unwrap(), "c");
        // Trailing slash: no normalization.
        let slash = "http://localhost:3000/callback?code=c&state=s&iss=http%3A%2F%2Flocalhost%3A9%2F";
        assert!(check_callback(slash, &redirect, iss, &meta(Some(true)), "s").is_err());
        let missing = "http://localhost:3000/callback?code=c&state=s";
        assert!(check_callback(missing, &redirect, iss, &meta(Some(true)), "s").is_err());
        assert!(check_callback(missing, &redirect, iss, &meta(None), "s").is_ok());
        let evil = "http://localhost:3000/callback?code=c&state=s&iss=https%3A%2F%2Fevil.example.com";
        assert!(check_callback(evil, &redirect, iss, &meta(None), "s").is_err());
        assert!(check_callback(missing, &redirect, iss, &meta(None), "other").is_err());
        assert!(check_callback("http://evil.example.com/callback?code=c&state=s", &redirect, iss, &meta(None), "s")
            .is_err());
        let denied = "http://localhost:3000/callback?error=access_denied&state=s";
        assert!(matches!(
            check_callback(denied, &redirect, iss, &meta(None), "s"),
            Err(OAuthError::AuthorizationDenied { .. })
        ));
    }
}
