//! [`OAuthProvider`]: the OAuth 2.1 client as an [`AuthProvider`] of the HTTP transport.

use crate::challenge::AuthInfo;
use crate::config::{Grant, OAuthBuilder, StaticClient};
use crate::crypto::now_secs;
use crate::discovery::ServerMetadata;
use crate::dpop::Dpop;
use crate::error::OAuthError;
use crate::http::Http;
use crate::safety::{check_endpoint, redact, NetGuard};
use crate::store::{StoredAuthorization, TokenSet, TokenStore};
use futures::future::BoxFuture;
use mcp_client::{AuthChallenge, AuthProvider, TransportError};
use std::sync::Arc;
use url::Url;

/// Refresh tokens this many seconds before they expire.
const REFRESH_MARGIN_SECS: u64 = 60;

/// What the provider knows about the current authorization.
#[derive(Default)]
pub(crate) struct State {
    /// The PRM `resource` (the RFC 8707 `resource` parameter, verbatim).
    pub resource: Option<String>,
    /// The issuer the tokens come from.
    pub issuer: Option<String>,
    /// Its validated metadata.
    pub meta: Option<ServerMetadata>,
    /// The current tokens.
    pub tokens: Option<TokenSet>,
    /// Step-up re-authorizations done.
    pub step_ups: usize,
}

pub(crate) struct Config {
    pub grant: Grant,
    pub client_name: String,
    pub application_type: String,
    pub static_clients: Vec<StaticClient>,
    pub client_metadata_url: Option<String>,
    pub scopes: Option<Vec<String>>,
    pub max_step_ups: usize,
    pub offline_access: bool,
}

/// The OAuth 2.1 client of one MCP server: discovers its authorization server, registers,
/// obtains tokens (authorization code + PKCE, or an extension grant), refreshes them, and
/// re-authorizes on `insufficient_scope`. Use it with
/// `HttpTransport::builder(url).auth(Arc::new(provider))`.
pub struct OAuthProvider {
    pub(crate) cfg: Config,
    /// For everything the MCP server leads to (metadata, authorization server endpoints):
    /// internal addresses only when the MCP server is on one too.
    pub(crate) http: Http,
    /// For endpoints the user configured (the enterprise IdP's token endpoint).
    pub(crate) trusted_http: Http,
    pub(crate) server_url: Url,
    pub(crate) dpop: Option<Dpop>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) state: tokio::sync::Mutex<State>,
}

impl std::fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("server_url", &redact(&self.server_url))
            .field("grant", &self.cfg.grant)
            .field("dpop", &self.dpop.is_some())
            .finish_non_exhaustive()
    }
}

impl OAuthProvider {
    /// Configures a provider for the MCP server at `server_url`.
    pub fn builder(server_url: &str) -> OAuthBuilder {
        OAuthBuilder::new(server_url)
    }

    pub(crate) fn from_builder(b: OAuthBuilder, store: Arc<dyn TokenStore>) -> Result<Self, OAuthError> {
        let server_url = check_endpoint(&b.server_url, "MCP server URL")?;
        let grant = b.grant.ok_or_else(|| OAuthError::Config("no grant configured".into()))?;
        if let Grant::AuthorizationCode(ua) = &grant {
            check_endpoint(&ua.redirect_uri(), "redirect URI")?;
        }
        if let Some(u) = &b.client_metadata_url {
            let url = check_endpoint(u, "client metadata document URL")?;
            if url.scheme() != "https" || url.path().len() <= 1 {
                return Err(OAuthError::Config("a client metadata document URL must be https with a path".into()));
            }
        }
        if !matches!(b.application_type.as_str(), "native" | "web") {
            return Err(OAuthError::Config("application_type must be \"native\" or \"web\"".into()));
        }
        let dpop = if b.dpop { Some(Dpop::generate()?) } else { None };
        let mut state = State::default();
        if let Some(s) = store.load()?.session(server_url.as_str()) {
            let usable = match s.tokens.dpop_jkt.as_deref() {
                None => true,
                Some(jkt) => dpop.as_ref().is_some_and(|d| d.thumbprint() == jkt),
            };
            if usable {
                state.resource = Some(s.resource.clone());
                state.issuer = Some(s.issuer.clone());
                state.tokens = Some(s.tokens.clone());
            }
        }
        Ok(Self {
            cfg: Config {
                grant,
                client_name: b.client_name,
                application_type: b.application_type,
                static_clients: b.static_clients,
                client_metadata_url: b.client_metadata_url,
                scopes: b.scopes,
                max_step_ups: b.max_step_ups,
                offline_access: b.offline_access,
            },
            http: Http::guarded(b.timeout, Arc::new(NetGuard::new(server_url.clone())))?,
            trusted_http: Http::new(b.timeout)?,
            server_url,
            dpop,
            store,
            state: tokio::sync::Mutex::new(state),
        })
    }

    /// The current tokens, if any.
    pub async fn tokens(&self) -> Option<TokenSet> {
        self.state.lock().await.tokens.clone()
    }

    /// The issuer of the current tokens, if any.
    pub async fn issuer(&self) -> Option<String> {
        self.state.lock().await.issuer.clone()
    }

    /// Runs the whole flow now, as if the server had answered 401 with `www_authenticate`.
    pub async fn authorize(&self, www_authenticate: Option<&str>) -> Result<TokenSet, OAuthError> {
        let info = AuthInfo::from_header(www_authenticate);
        let mut st = self.state.lock().await;
        self.obtain(&mut st, &info, None, false).await?;
        st.tokens.clone().ok_or_else(|| OAuthError::Config("no token obtained".into()))
    }

    /// Forgets the tokens of this server (here and in the store); registrations are kept.
    pub async fn logout(&self) -> Result<(), OAuthError> {
        let mut st = self.state.lock().await;
        st.tokens = None;
        self.store.update(&mut |data| data.set_session(self.server_url.as_str(), None)).map(drop)
    }

    /// Records new tokens in the state and the store (a store failure is only logged).
    pub(crate) fn keep(&self, st: &mut State, tokens: TokenSet) {
        if let (Some(issuer), Some(resource)) = (st.issuer.clone(), st.resource.clone()) {
            let session = StoredAuthorization {
                server_url: self.server_url.to_string(),
                resource,
                issuer,
                tokens: tokens.clone(),
            };
            let saved =
                self.store.update(&mut |data| data.set_session(self.server_url.as_str(), Some(session.clone())));
            if let Err(e) = saved {
                tracing::warn!(error = %e, "could not save the tokens");
            }
        }
        st.tokens = Some(tokens);
    }

    /// The DPoP key, if DPoP is on and the authorization server takes ES256 proofs.
    pub(crate) fn dpop_for(&self, meta: &ServerMetadata) -> Option<&Dpop> {
        self.dpop
            .as_ref()
            .filter(|_| meta.dpop_signing_alg_values_supported.as_ref().is_some_and(|a| a.iter().any(|x| x == "ES256")))
    }

    /// Refreshes tokens that expire soon (best effort; expired tokens that cannot be refreshed
    /// are dropped so that the server's 401 starts a new authorization).
    async fn refresh_if_expiring(&self, st: &mut State) {
        let now = now_secs();
        let Some(t) = st.tokens.clone() else { return };
        if !t.expires_within(now, REFRESH_MARGIN_SECS) {
            return;
        }
        if t.refresh_token.is_some() {
            match self.refresh(st, &t).await {
                Ok(new) => {
                    self.keep(st, new);
                    return;
                }
                Err(e) => tracing::info!(error = %e, "token refresh failed"),
            }
        }
        if t.expires_within(now, 0) {
            st.tokens = None;
        }
    }

    async fn headers_for(&self, method: &str, url: &str) -> Result<Vec<(String, String)>, OAuthError> {
        let mut st = self.state.lock().await;
        self.refresh_if_expiring(&mut st).await;
        let Some(t) = &st.tokens else { return Ok(Vec::new()) };
        if t.token_type == "DPoP" {
            let (Some(d), Ok(u)) = (self.dpop.as_ref(), Url::parse(url)) else { return Ok(Vec::new()) };
            let proof = d.proof(method, &u, Some(&t.access_token))?;
            return Ok(vec![("authorization".into(), format!("DPoP {}", t.access_token)), ("dpop".into(), proof)]);
        }
        Ok(vec![("authorization".into(), format!("Bearer {}", t.access_token))])
    }

    async fn challenge(&self, ch: AuthChallenge) -> Result<bool, OAuthError> {
        let info = AuthInfo::from_header(ch.www_authenticate.as_deref());
        let mut st = self.state.lock().await;
        if let (Some(d), Some(nonce), Ok(u)) = (&self.dpop, &ch.dpop_nonce, Url::parse(&ch.url)) {
            d.set_nonce(&u, nonce);
            if info.error.as_deref() == Some("use_dpop_nonce") && st.tokens.is_some() {
                return Ok(true);
            }
        }
        let current = st.tokens.as_ref().map(|t| format!("{} {}", t.token_type, t.access_token));
        if current.is_some() && current != ch.authorization {
            return Ok(true); // the credentials changed while the request was in flight
        }
        match ch.status {
            401 => {
                self.obtain(&mut st, &info, None, ch.authorization.is_some()).await?;
                Ok(true)
            }
            403 if info.error.as_deref() == Some("insufficient_scope") => {
                let Some(needed) = info.scope.clone() else { return Ok(false) };
                let previous = st.tokens.as_ref().map(|t| t.requested_scopes.clone()).unwrap_or_default();
                let mut union = previous.clone();
                for s in needed {
                    if !union.contains(&s) {
                        union.push(s);
                    }
                }
                if union.len() == previous.len() {
                    tracing::info!("insufficient_scope for scopes already requested: not re-authorizing");
                    return Ok(false);
                }
                if st.step_ups >= self.cfg.max_step_ups {
                    tracing::info!("step-up limit reached");
                    return Ok(false);
                }
                st.step_ups += 1;
                self.obtain(&mut st, &info, Some(union), false).await?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

impl AuthProvider for OAuthProvider {
    fn headers<'a>(
        &'a self,
        method: &'a str,
        url: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, TransportError>> {
        Box::pin(async move { self.headers_for(method, url).await.map_err(TransportError::from) })
    }

    fn on_challenge(&self, challenge: AuthChallenge) -> BoxFuture<'_, Result<bool, TransportError>> {
        Box::pin(async move {
            self.challenge(challenge).await.map_err(|e| {
                tracing::warn!(error = %e, "authorization failed");
                TransportError::from(e)
            })
        })
    }
}
