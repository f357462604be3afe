//! The HTTP client used for metadata, registration and token requests: no redirects are
//! followed, bodies are bounded, and every URL is checked before use.

use crate::error::{http_error, OAuthError};
use crate::safety::{check_url, redact, GuardedResolver, NetGuard};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Largest response body read from an authorization server.
const MAX_BODY: usize = 1 << 20;

/// An answer from an authorization or metadata endpoint (no `Debug`: bodies carry tokens).
#[derive(Clone)]
pub(crate) struct Reply {
    pub status: u16,
    pub dpop_nonce: Option<String>,
    pub location: Option<String>,
    pub json: Option<Value>,
}

impl Reply {
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `(error, error_description)` of an OAuth error body.
    pub(crate) fn oauth_error(&self) -> (String, Option<String>) {
        let get = |k: &str| self.json.as_ref().and_then(|j| j.get(k)).and_then(Value::as_str).map(str::to_owned);
        (get("error").unwrap_or_else(|| format!("HTTP {}", self.status)), get("error_description"))
    }
}

/// See the module documentation. With a [`NetGuard`], every request's host is resolved and
/// checked against the MCP server's address class first, and the connection goes to the
/// checked addresses only (the client's resolver checks again).
#[derive(Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    guard: Option<Arc<NetGuard>>,
}

impl Http {
    /// A client without the address rule (for user-configured endpoints and user agents).
    pub(crate) fn new(timeout: Duration) -> Result<Self, OAuthError> {
        Self::build(timeout, None)
    }

    /// A client for the endpoints an MCP server (at `guard`'s URL) leads to.
    pub(crate) fn guarded(timeout: Duration, guard: Arc<NetGuard>) -> Result<Self, OAuthError> {
        Self::build(timeout, Some(guard))
    }

    fn build(timeout: Duration, guard: Option<Arc<NetGuard>>) -> Result<Self, OAuthError> {
        let mut b = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(30)))
            .user_agent(concat!("mcp-oauth/", env!("CARGO_PKG_VERSION")));
        if let Some(g) = &guard {
            b = b.dns_resolver(Arc::new(GuardedResolver(g.clone())));
        }
        Ok(Self { client: b.build().map_err(http_error)?, guard })
    }

    /// Checks `url` (scheme rules, then the address rule when guarded) without sending anything.
    pub(crate) async fn check_target(&self, url: &Url, what: &str) -> Result<(), OAuthError> {
        check_url(url, what)?;
        if let Some(g) = &self.guard {
            g.check_url(url, what).await?;
        }
        Ok(())
    }

    async fn send(&self, rb: reqwest::RequestBuilder) -> Result<Reply, OAuthError> {
        let mut resp = rb.send().await.map_err(http_error)?;
        let header = |n: &str| resp.headers().get(n).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let status = resp.status().as_u16();
        let dpop_nonce = header("dpop-nonce");
        let location = header("location");
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(http_error)? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(OAuthError::Http(format!("response body larger than {MAX_BODY} bytes"), None));
            }
            body.extend_from_slice(&chunk);
        }
        let json = serde_json::from_slice::<Value>(&body).ok();
        Ok(Reply { status, dpop_nonce, location, json })
    }

    /// GET expecting JSON.
    pub(crate) async fn get_json(&self, url: &Url, what: &str) -> Result<Reply, OAuthError> {
        self.check_target(url, what).await?;
        tracing::debug!(url = %redact(url), "GET {what}");
        self.send(self.client.get(url.clone()).header(ACCEPT, "application/json")).await
    }

    /// GET without following redirects (the headless user agent).
    pub(crate) async fn get_raw(&self, url: &Url, what: &str) -> Result<Reply, OAuthError> {
        self.check_target(url, what).await?;
        tracing::debug!(url = %redact(url), "GET {what}");
        self.send(self.client.get(url.clone())).await
    }

    /// POST of a JSON body.
    pub(crate) async fn post_json(&self, url: &Url, body: &Value, what: &str) -> Result<Reply, OAuthError> {
        self.check_target(url, what).await?;
        tracing::debug!(url = %redact(url), "POST {what}");
        let rb =
            self.client.post(url.clone()).header(ACCEPT, "application/json").header(CONTENT_TYPE, "application/json");
        self.send(rb.body(body.to_string())).await
    }

    /// POST of an `application/x-www-form-urlencoded` body, with optional `Authorization` and
    /// `DPoP` headers. Values are never logged.
    pub(crate) async fn post_form(
        &self,
        url: &Url,
        form: &[(String, String)],
        authorization: Option<&str>,
        dpop: Option<&str>,
        what: &str,
    ) -> Result<Reply, OAuthError> {
        self.check_target(url, what).await?;
        tracing::debug!(url = %redact(url), "POST {what}");
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
        let mut rb = self
            .client
            .post(url.clone())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        if let Some(a) = authorization {
            let mut v = reqwest::header::HeaderValue::from_str(a)
                .map_err(|_| OAuthError::config("invalid characters in client credentials"))?;
            v.set_sensitive(true);
            rb = rb.header(AUTHORIZATION, v);
        }
        if let Some(p) = dpop {
            rb = rb.header("dpop", p);
        }
        self.send(rb).await
    }
}
