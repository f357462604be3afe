//! Authorization hook of the HTTP transport.
//!
//! An [`AuthProvider`] (for example the OAuth 2.1 client of the `mcp-oauth` crate) adds the
//! authorization headers to every HTTP request of the transport and handles the server's
//! `401`/`403` challenges; the transport re-sends a POST after each challenge the provider
//! handled, a bounded number of times.

use crate::error::TransportError;
use futures::future::BoxFuture;

/// A `401 Unauthorized` or `403 Forbidden` answer, as the provider sees it.
#[derive(Clone)]
pub struct AuthChallenge {
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` header, if any.
    pub www_authenticate: Option<String>,
    /// The `DPoP-Nonce` header, if any (RFC 9449 §9).
    pub dpop_nonce: Option<String>,
    /// The request's HTTP method (`POST`, `GET`...).
    pub method: String,
    /// The request URL.
    pub url: String,
    /// The `Authorization` header value that was sent, if any (lets a provider see whether its
    /// credentials changed while the request was in flight). Never logged.
    pub authorization: Option<String>,
}

impl std::fmt::Debug for AuthChallenge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthChallenge")
            .field("status", &self.status)
            .field("www_authenticate", &self.www_authenticate)
            .field("dpop_nonce", &self.dpop_nonce)
            .field("method", &self.method)
            .field("url", &self.url)
            .field("authorization", &self.authorization.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Supplies authorization for the HTTP transport (`HttpTransportBuilder::auth`).
pub trait AuthProvider: Send + Sync + 'static {
    /// Headers to add to a request (`authorization`, and e.g. `dpop`), lower-case names.
    /// `method` is the HTTP method and `url` the full request URL. An empty list sends the
    /// request without credentials.
    fn headers<'a>(
        &'a self,
        method: &'a str,
        url: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, TransportError>>;

    /// Handles a 401/403 answer (obtaining, refreshing or upgrading credentials). `Ok(true)`
    /// asks the transport to send the request again; `Ok(false)` gives the answer to the caller
    /// as it is; an error ends the request with that error.
    fn on_challenge(&self, challenge: AuthChallenge) -> BoxFuture<'_, Result<bool, TransportError>>;
}
