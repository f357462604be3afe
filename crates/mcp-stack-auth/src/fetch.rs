//! The HTTP(S) client behind remote key sets, discovery and introspection (reqwest + rustls):
//! bounded time and size, no redirects, `http://` for loopback hosts only (unless allowed).

use crate::AuthError;
use reqwest::Url;
use serde_json::Value;
use std::time::Duration;

/// Settings of outgoing requests to the authorization server.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Whole-request timeout (default 10 s).
    pub timeout: Duration,
    /// Largest accepted response body (default 1 MiB).
    pub max_bytes: usize,
    /// Accept `http://` URLs for non-loopback hosts (default false: HTTPS only, except
    /// 127.0.0.0/8, `[::1]` and `localhost`).
    pub allow_insecure_http: bool,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self { timeout: Duration::from_secs(10), max_bytes: 1 << 20, allow_insecure_http: false }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
    opts: FetchOptions,
}

/// The outcome of a request: status and parsed JSON body (`None` when not JSON).
pub(crate) struct Fetched {
    pub status: u16,
    pub json: Option<Value>,
}

impl Fetcher {
    pub(crate) fn new(opts: &FetchOptions) -> Result<Self, AuthError> {
        let client = reqwest::Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(opts.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("mcp-auth/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| AuthError::Config(format!("HTTP client: {e}")))?;
        Ok(Self { client, opts: opts.clone() })
    }

    /// Parses `url` and checks its scheme (HTTPS, or HTTP on loopback / when allowed).
    pub(crate) fn check_url(&self, url: &str) -> Result<Url, AuthError> {
        let u = Url::parse(url).map_err(|e| AuthError::Config(format!("invalid URL {url:?}: {e}")))?;
        let loopback = match u.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        };
        match u.scheme() {
            "https" => Ok(u),
            "http" if loopback || self.opts.allow_insecure_http => Ok(u),
            _ => Err(AuthError::Config(format!("{url:?} must be an https:// URL"))),
        }
    }

    /// GETs `url` (expecting JSON).
    pub(crate) async fn get(&self, url: &str) -> Result<Fetched, AuthError> {
        let u = self.check_url(url)?;
        let req = self.client.get(u).header(reqwest::header::ACCEPT, "application/json");
        self.send(url, req).await
    }

    /// POSTs a form body with an `Authorization` header (expecting JSON).
    pub(crate) async fn post_form(&self, url: &str, body: String, authorization: &str) -> Result<Fetched, AuthError> {
        let u = self.check_url(url)?;
        let req = self
            .client
            .post(u)
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::AUTHORIZATION, authorization)
            .body(body);
        self.send(url, req).await
    }

    async fn send(&self, url: &str, req: reqwest::RequestBuilder) -> Result<Fetched, AuthError> {
        let unavailable = |e: reqwest::Error| AuthError::Unavailable(format!("{url}: {e}"));
        let mut resp = req.send().await.map_err(unavailable)?;
        let status = resp.status().as_u16();
        if resp.content_length().is_some_and(|l| l > self.opts.max_bytes as u64) {
            return Err(AuthError::Unavailable(format!("{url}: response larger than {} bytes", self.opts.max_bytes)));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(unavailable)? {
            if body.len() + chunk.len() > self.opts.max_bytes {
                return Err(AuthError::Unavailable(format!(
                    "{url}: response larger than {} bytes",
                    self.opts.max_bytes
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched { status, json: serde_json::from_slice(&body).ok() })
    }
}
