//! [`OAuthProvider`]: the OAuth 2.1 client as an [`AuthProvider`] of the HTTP transport.

use crate::config::{Grant, StaticClient};
use crate::crypto::now_secs;
use crate::discovery::ServerMetadata;
use crate::dpop::Dpop;
use crate::error::OAuthError;
use crate::http::Http;
use crate::safety::{check_endpoint, redact, NetGuard};
use crate::store::{MemoryStore, StoredAuthorization, TokenSet, TokenStore};
use crate::user_agent::UserAgent;
use futures::future::BoxFuture;
use mcp_client::{AuthChallenge, AuthProvider, TransportError};
use mcp_protocol::auth::BearerChallenge;
use std::sync::Arc;
use std::time::Duration;
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

/// Builds an [`OAuthProvider`].
#[derive(Debug, Clone)]
pub struct OAuthBuilder {
    pub(crate) server_url: String,
    pub(crate) grant: Option<Grant>,
    pub(crate) client_name: String,
    pub(crate) application_type: String,
    pub(crate) static_clients: Vec<StaticClient>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) dpop: bool,
    pub(crate) store: Option<Arc<dyn TokenStore>>,
    pub(crate) timeout: Duration,
    pub(crate) max_step_ups: usize,
    pub(crate) offline_access: bool,
}

impl OAuthBuilder {
    pub(crate) fn new(server_url: &str) -> Self {
        Self {
            server_url: server_url.to_owned(),
            grant: None,
            client_name: "mcp-rs client".into(),
            application_type: "native".into(),
            static_clients: Vec::new(),
            client_metadata_url: None,
            scopes: None,
            dpop: false,
            store: None,
            timeout: Duration::from_secs(30),
            max_step_ups: 2,
            offline_access: true,
        }
    }

    /// How tokens are obtained (required).
    pub fn grant(mut self, grant: Grant) -> Self {
        self.grant = Some(grant);
        self
    }

    /// Shorthand for [`Grant::AuthorizationCode`].
    pub fn user_agent(self, ua: Arc<dyn UserAgent>) -> Self {
        self.grant(Grant::AuthorizationCode(ua))
    }

    /// `client_name` for dynamic registration (default "mcp-rs client").
    pub fn client_name(mut self, name: &str) -> Self {
        self.client_name = name.to_owned();
        self
    }

    /// `application_type` for dynamic registration: `native` (default) or `web`.
    pub fn application_type(mut self, t: &str) -> Self {
        self.application_type = t.to_owned();
        self
    }

    /// Adds pre-registered credentials (used before any other registration mechanism).
    pub fn static_client(mut self, c: StaticClient) -> Self {
        self.static_clients.push(c);
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as `client_id` with
    /// authorization servers that advertise `client_id_metadata_document_supported`.
    pub fn client_metadata_url(mut self, url: &str) -> Self {
        self.client_metadata_url = Some(url.to_owned());
        self
    }

    /// Requests exactly these scopes initially (instead of the challenge / `scopes_supported`).
    pub fn scopes(mut self, scopes: Vec<String>) -> Self {
        self.scopes = Some(scopes);
        self
    }

    /// Binds tokens with DPoP (RFC 9449) when the authorization server advertises ES256.
    pub fn dpop(mut self, on: bool) -> Self {
        self.dpop = on;
        self
    }

    /// Where registrations and tokens are kept (default: in memory).
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Timeout of each HTTP request to metadata and authorization servers (default 30 s).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    /// Most step-up re-authorizations after `insufficient_scope` (default 2).
    pub fn max_step_ups(mut self, n: usize) -> Self {
        self.max_step_ups = n;
        self
    }

    /// Whether to add `offline_access` when the authorization server lists it (default true).
    pub fn offline_access(mut self, on: bool) -> Self {
        self.offline_access = on;
        self
    }

    /// Checks the configuration and builds the provider (loading stored tokens).
    pub fn build(self) -> Result<OAuthProvider, OAuthError> {
        let store: Arc<dyn TokenStore> = match &self.store {
            Some(s) => s.clone(),
            None => Arc::new(MemoryStore::default()),
        };
        OAuthProvider::from_builder(self, store)
    }
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
        let grant = b.grant.ok_or_else(|| OAuthError::config("no grant configured"))?;
        if let Grant::AuthorizationCode(ua) = &grant {
            check_endpoint(&ua.redirect_uri(), "redirect URI")?;
        }
        if let Some(u) = &b.client_metadata_url {
            let url = check_endpoint(u, "client metadata document URL")?;
            if url.scheme() != "https" || url.path().len() <= 1 {
                return Err(OAuthError::config("a client metadata document URL must be https with a path"));
            }
        }
        if !matches!(b.application_type.as_str(), "native" | "web") {
            return Err(OAuthError::config("application_type must be \"native\" or \"web\""));
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
        let info = BearerChallenge::from_header(www_authenticate);
        let mut st = self.state.lock().await;
        self.obtain(&mut st, &info, None, false).await?;
        st.tokens.clone().ok_or_else(|| OAuthError::config("no token obtained"))
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
        let info = BearerChallenge::from_header(ch.www_authenticate.as_deref());
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
