//! What an [`OAuthProvider`](crate::OAuthProvider) is configured with: the grant and the
//! pre-registered clients (the builder itself is beside the provider).

use crate::crypto::SigningKey;
use crate::user_agent::UserAgent;
use std::sync::Arc;

/// How tokens are obtained.
#[derive(Clone)]
pub enum Grant {
    /// Authorization code with PKCE, through a [`UserAgent`] (a browser, or a headless stand-in).
    AuthorizationCode(Arc<dyn UserAgent>),
    /// The `client_credentials` grant (extension `io.modelcontextprotocol/oauth-client-credentials`)
    /// with a pre-registered client (secret or private key).
    ClientCredentials,
    /// The RFC 7523 JWT-bearer grant with an assertion from a workload identity provider
    /// (workload identity federation). A failure is final: no retry, no other grant.
    JwtBearer {
        /// The workload's JWT.
        assertion: String,
    },
    /// Enterprise-managed authorization (ID-JAG): an RFC 8693 token exchange at the enterprise
    /// IdP, then the JWT-bearer grant at the MCP authorization server.
    Enterprise(EnterpriseGrant),
    /// Only stored tokens, refreshed when needed: never starts a new authorization (for
    /// non-interactive commands after a separate login).
    StoredOnly,
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::AuthorizationCode(_) => "AuthorizationCode",
            Self::ClientCredentials => "ClientCredentials",
            Self::JwtBearer { .. } => "JwtBearer",
            Self::Enterprise(_) => "Enterprise",
            Self::StoredOnly => "StoredOnly",
        })
    }
}

/// The enterprise IdP side of [`Grant::Enterprise`].
#[derive(Clone)]
pub struct EnterpriseGrant {
    /// The IdP's token endpoint (RFC 8693 token exchange).
    pub idp_token_endpoint: String,
    /// The user's identity assertion (an OpenID ID token) from the IdP.
    pub id_token: String,
    /// The client id at the IdP, if it wants one.
    pub idp_client_id: Option<String>,
    /// The client secret at the IdP (sent with `client_secret_basic`), if any.
    pub idp_client_secret: Option<String>,
}

impl std::fmt::Debug for EnterpriseGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterpriseGrant").field("idp_token_endpoint", &self.idp_token_endpoint).finish_non_exhaustive()
    }
}

/// Credentials registered out of band at an authorization server. They are only ever sent to
/// the authorization server that issued them: the [`issuer`](Self::issuer) named with
/// [`StaticClient::for_issuer`], or, without one, the first issuer they are used with, which is
/// recorded in the token store (`client_issuers`) and from then on the only one they are sent
/// to. Any other issuer gets an error naming both, and nothing is sent to it.
#[derive(Clone)]
pub struct StaticClient {
    /// The issuer they belong to; `None` binds them to the first issuer they are used with.
    pub issuer: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client secret (confidential clients).
    pub client_secret: Option<String>,
    /// A private key for `private_key_jwt` (ES256).
    pub private_key: Option<Arc<SigningKey>>,
    /// Forces a token endpoint auth method (otherwise chosen from the metadata).
    pub auth_method: Option<String>,
}

impl std::fmt::Debug for StaticClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticClient")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("private_key", &self.private_key.is_some())
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

impl StaticClient {
    /// Credentials of the authorization server `issuer` (its issuer identifier, compared as a
    /// plain string with the metadata's `issuer`): never sent to any other one.
    pub fn for_issuer(issuer: &str, client_id: &str, client_secret: Option<&str>) -> Self {
        Self::new(client_id, client_secret).issuer(issuer)
    }

    /// A client id (and optional secret) without a named issuer: bound to the first
    /// authorization server they are used with (recorded in the token store) and refused for
    /// any other. Prefer [`StaticClient::for_issuer`].
    pub fn new(client_id: &str, client_secret: Option<&str>) -> Self {
        Self {
            issuer: None,
            client_id: client_id.to_owned(),
            client_secret: client_secret.map(str::to_owned),
            private_key: None,
            auth_method: None,
        }
    }

    /// Binds the credentials to one issuer.
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.issuer = Some(issuer.to_owned());
        self
    }

    /// Authenticates with `private_key_jwt` using `key`.
    pub fn private_key(mut self, key: SigningKey) -> Self {
        self.private_key = Some(Arc::new(key));
        self
    }
}
