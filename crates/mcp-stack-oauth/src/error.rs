//! Errors of the OAuth client.

use mcp_client::{ErrorSource, TransportError};

/// Everything that can stop an authorization.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL is not acceptable: not https (or http on a loopback host), or another scheme.
    #[error("refused URL: {message}")]
    InsecureUrl {
        /// Which URL, and why it is refused.
        message: String,
        /// The parse error underneath, if any.
        #[source]
        source: Option<ErrorSource>,
    },
    /// Protected-resource or authorization-server metadata could not be found or read.
    #[error("discovery failed: {message}")]
    Discovery {
        /// What was looked for, and what was found instead.
        message: String,
        /// The parse error underneath, if any.
        #[source]
        source: Option<ErrorSource>,
    },
    /// The protected-resource metadata names another resource than the MCP server.
    #[error("protected resource metadata rejected: resource {resource:?} does not identify the MCP server {server}")]
    ResourceMismatch {
        /// The `resource` of the metadata.
        resource: String,
        /// The MCP server's URL (credentials and query left out).
        server: String,
    },
    /// The authorization-server metadata names another issuer than the one it was fetched for.
    #[error("authorization server metadata rejected: metadata fetched for issuer {expected:?} names issuer {found:?}")]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The `issuer` the metadata names.
        found: String,
    },
    /// The authorization server does not advertise PKCE with `S256`.
    #[error("the authorization server does not advertise PKCE with S256 (code_challenge_methods_supported)")]
    PkceUnsupported,
    /// No way to obtain a client id, or the registration endpoint refused.
    #[error("client registration failed: {message}")]
    Registration {
        /// Why.
        message: String,
    },
    /// The authorization response (redirect) was rejected: wrong `iss`, `state`, redirect URI...
    #[error("authorization response rejected: {message}")]
    AuthorizationResponse {
        /// Why.
        message: String,
        /// The parse error underneath, if any.
        #[source]
        source: Option<ErrorSource>,
    },
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
    #[error("user agent: {message}")]
    UserAgent {
        /// What failed.
        message: String,
        /// The error underneath (I/O, URL parse), if any.
        #[source]
        source: Option<ErrorSource>,
    },
    /// The token store could not be read or written.
    #[error("token store: {0}")]
    Store(String, #[source] Option<mcp_client::ErrorSource>),
    /// The configuration cannot work (missing credentials, bad key...).
    #[error("configuration: {message}")]
    Config {
        /// What is missing or wrong.
        message: String,
        /// The error underneath (a key or URL that does not parse), if any.
        #[source]
        source: Option<ErrorSource>,
    },
}

impl OAuthError {
    pub(crate) fn insecure_url(message: impl Into<String>) -> Self {
        Self::InsecureUrl { message: message.into(), source: None }
    }

    pub(crate) fn discovery(message: impl Into<String>) -> Self {
        Self::Discovery { message: message.into(), source: None }
    }

    pub(crate) fn registration(message: impl Into<String>) -> Self {
        Self::Registration { message: message.into() }
    }

    pub(crate) fn authorization_response(message: impl Into<String>) -> Self {
        Self::AuthorizationResponse { message: message.into(), source: None }
    }

    pub(crate) fn user_agent(message: impl Into<String>) -> Self {
        Self::UserAgent { message: message.into(), source: None }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::Config { message: message.into(), source: None }
    }

    /// Keeps `cause` as the [`std::error::Error::source`] of an error that has a place for one;
    /// other errors are returned unchanged.
    pub(crate) fn caused_by(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        match &mut self {
            Self::InsecureUrl { source, .. }
            | Self::Discovery { source, .. }
            | Self::AuthorizationResponse { source, .. }
            | Self::UserAgent { source, .. }
            | Self::Config { source, .. } => *source = Some(ErrorSource::new(cause)),
            _ => {}
        }
        self
    }
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
