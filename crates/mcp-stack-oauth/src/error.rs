//! Errors of the OAuth client.

use mcp_client::TransportError;

/// Everything that can stop an authorization.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL is not acceptable: not https (or http on a loopback host), or another scheme.
    #[error("refused URL: {0}")]
    InsecureUrl(String),
    /// Protected-resource or authorization-server metadata could not be found or read.
    #[error("discovery failed: {0}")]
    Discovery(String),
    /// The protected-resource metadata names another resource than the MCP server.
    #[error("protected resource metadata rejected: {0}")]
    ResourceMismatch(String),
    /// The authorization-server metadata names another issuer than the one it was fetched for.
    #[error("authorization server metadata rejected: {0}")]
    IssuerMismatch(String),
    /// The authorization server does not advertise PKCE with `S256`.
    #[error("the authorization server does not advertise PKCE with S256 (code_challenge_methods_supported)")]
    PkceUnsupported,
    /// No way to obtain a client id, or the registration endpoint refused.
    #[error("client registration failed: {0}")]
    Registration(String),
    /// The authorization response (redirect) was rejected: wrong `iss`, `state`, redirect URI...
    #[error("authorization response rejected: {0}")]
    AuthorizationResponse(String),
    /// The authorization server answered the authorization request with an error.
    #[error("authorization denied: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    AuthorizationDenied {
        /// OAuth `error` code.
        error: String,
        /// `error_description`, if any.
        description: Option<String>,
    },
    /// The token endpoint refused a request.
    #[error("token request failed (HTTP {status}): {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Token {
        /// HTTP status.
        status: u16,
        /// OAuth `error` code (or a summary when the body was not an OAuth error).
        error: String,
        /// `error_description`, if any.
        description: Option<String>,
    },
    /// An HTTP exchange with an authorization server or the metadata endpoints failed.
    #[error("HTTP error: {0}")]
    Http(String, #[source] Option<mcp_client::ErrorSource>),
    /// The user-agent step (browser, redirect capture) failed.
    #[error("user agent: {0}")]
    UserAgent(String),
    /// The token store could not be read or written.
    #[error("token store: {0}")]
    Store(String, #[source] Option<mcp_client::ErrorSource>),
    /// The configuration cannot work (missing credentials, bad key...).
    #[error("configuration: {0}")]
    Config(String),
}

impl From<OAuthError> for TransportError {
    fn from(e: OAuthError) -> Self {
        TransportError::Auth(e.to_string(), Some(mcp_client::ErrorSource::new(e)))
    }
}

/// Describes a reqwest error without its URL (which may carry query parameters).
pub(crate) fn http_error(e: reqwest::Error) -> OAuthError {
    let e = e.without_url();
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&dyn std::error::Error> = Some(&e);
    while let Some(err) = cur {
        let text = err.to_string();
        if !parts.last().is_some_and(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = err.source();
    }
    OAuthError::Http(parts.join(": "), Some(mcp_client::ErrorSource::new(e)))
}
