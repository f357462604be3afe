//! Configuration of the HTTP transport.

use super::wire::Wire;
use super::{HttpTransport, Inner};
use crate::auth::AuthProvider;
use crate::error::{ErrorSource, TransportError};
use crate::transport::Unsolicited;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Configures an [`HttpTransport`].
pub struct HttpTransportBuilder {
    url: String,
    headers: Vec<(String, String)>,
    connect_timeout: Duration,
    request_timeout: Option<Duration>,
    max_event_bytes: usize,
    auth: Option<Arc<dyn AuthProvider>>,
    cross_origin_redirects: bool,
    root_certificates: Vec<Vec<u8>>,
}

impl std::fmt::Debug for HttpTransportBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header names only: values may be credentials.
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("HttpTransportBuilder")
            .field("headers", &names)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_event_bytes", &self.max_event_bytes)
            .field("auth", &self.auth.is_some())
            .field("cross_origin_redirects", &self.cross_origin_redirects)
            .field("root_certificates", &self.root_certificates.len())
            .finish_non_exhaustive()
    }
}

impl HttpTransportBuilder {
    pub(super) fn new(url: &str) -> Self {
        Self {
            url: url.to_owned(),
            headers: Vec::new(),
            connect_timeout: Duration::from_secs(30),
            request_timeout: Some(Duration::from_secs(600)),
            max_event_bytes: 16 << 20,
            auth: None,
            cross_origin_redirects: false,
            root_certificates: Vec::new(),
        }
    }

    /// Also trusts the certificates in `pem` (PEM, one or more) for `https://`, besides the
    /// Mozilla roots: a private certificate authority, or a test server's own certificate.
    /// Checked by [`HttpTransportBuilder::build`].
    pub fn add_root_certificate_pem(mut self, pem: &[u8]) -> Self {
        self.root_certificates.push(pem.to_vec());
        self
    }

    /// Authorizes every request with `provider`: its headers are added to each request, and a
    /// POST answered 401/403 is sent again after the provider handled the challenge.
    pub fn auth(mut self, provider: Arc<dyn AuthProvider>) -> Self {
        self.auth = Some(provider);
        self
    }

    /// Adds a header sent with every HTTP request (e.g. `Authorization`). Its value is never
    /// logged.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends `Authorization: Bearer <token>` with every HTTP request.
    pub fn bearer_token(self, token: &str) -> Self {
        self.header("authorization", format!("Bearer {token}"))
    }

    /// Longest time to establish a connection (default 30 s).
    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }

    /// Safety net: longest wait for a response's headers, and for a whole non-streamed body
    /// (default 10 min). SSE streams are not capped: the client core times requests out.
    pub fn request_timeout(mut self, t: Duration) -> Self {
        self.request_timeout = Some(t);
        self
    }

    /// Whether to follow a 307/308 redirect to another origin (scheme, host or port) than the
    /// server URL's (default false: such a redirect fails the request with an error naming the
    /// new location). When on, requests to the other origin carry only the protocol's own
    /// headers (`Content-Type`, `Accept`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
    /// `Mcp-Param-*`, `Mcp-Session-Id`, `Last-Event-ID`): no header given to
    /// [`HttpTransportBuilder::header`], no `Authorization` and nothing from the auth provider.
    /// Same-origin 307/308 redirects are always followed (at most 5 in a row); 301/302/303 never
    /// are (they would turn a POST into a bodiless GET).
    pub fn follow_cross_origin_redirects(mut self, on: bool) -> Self {
        self.cross_origin_redirects = on;
        self
    }

    /// Largest accepted SSE event or JSON response body (default 16 MiB).
    pub fn max_event_bytes(mut self, n: usize) -> Self {
        self.max_event_bytes = n.max(1);
        self
    }

    /// Checks the URL and headers and builds the transport. No connection is made yet.
    pub fn build(self) -> Result<HttpTransport, TransportError> {
        let url = parse_url(&self.url)?;
        let mut headers = HeaderMap::new();
        for (k, v) in &self.headers {
            let name = HeaderName::from_bytes(k.trim().as_bytes()).map_err(|e| {
                TransportError::Connect(format!("invalid header name {k:?}"), Some(ErrorSource::new(e)))
            })?;
            let mut value = HeaderValue::from_str(v).map_err(|e| {
                TransportError::Connect(format!("invalid value for header {name}"), Some(ErrorSource::new(e)))
            })?;
            if is_sensitive(&name) {
                value.set_sensitive(true);
            }
            headers.append(name, value);
        }
        let wire = Wire::new(&url, self.connect_timeout, &self.root_certificates)?;

        let inner = Inner {
            wire,
            display_url: display_url(&url),
            url,
            headers,
            request_timeout: self.request_timeout,
            max_event_bytes: self.max_event_bytes,
            state: Mutex::default(),
            unsolicited: Unsolicited::new(),
            refusals: Arc::new(tokio::sync::Semaphore::new(super::MAX_REFUSALS_IN_FLIGHT)),
            auth: self.auth,
            cross_origin_redirects: self.cross_origin_redirects,
        };
        Ok(HttpTransport { inner: Arc::new(inner) })
    }
}

fn parse_url(raw: &str) -> Result<Url, TransportError> {
    // The raw text is not echoed: it may carry credentials.
    let mut url = Url::parse(raw.trim())
        .map_err(|e| TransportError::Connect(format!("invalid server URL: {e}"), Some(ErrorSource::new(e))))?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(TransportError::Connect(
                format!("unsupported URL scheme {other:?}: the HTTP transport needs an http:// or https:// URL"),
                None,
            ))
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(TransportError::Connect("the server URL has no host".into(), None));
    }
    url.set_fragment(None);
    Ok(url)
}

pub(super) fn display_url(url: &Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.to_string()
}

pub(super) fn is_sensitive(name: &HeaderName) -> bool {
    matches!(name.as_str(), "authorization" | "proxy-authorization" | "cookie" | "x-api-key" | "api-key")
}
