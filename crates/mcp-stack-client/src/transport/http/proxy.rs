//! HTTP proxies from the environment, as curl and most HTTP clients read them:
//! `https_proxy`/`HTTPS_PROXY` for `https://` servers, `http_proxy`/`HTTP_PROXY` for `http://`,
//! `all_proxy`/`ALL_PROXY` for both, and `no_proxy`/`NO_PROXY` for the hosts to reach directly
//! (a comma-separated list of host names, domain suffixes such as `.example.com` or
//! `example.com`, IP literals, or `*`).
//!
//! Only `http://` proxies are supported: an `https://` server is reached through a `CONNECT`
//! tunnel (TLS end to end, the proxy sees only the host name), an `http://` server with
//! absolute-form requests. Credentials in the proxy URL become `Proxy-Authorization: Basic`.

use crate::error::TransportError;
use base64::Engine as _;
use http::HeaderValue;
use url::Url;

/// One proxy to go through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ProxyHop {
    /// The proxy's host (an IPv6 literal without brackets).
    pub(super) host: String,
    /// Its port.
    pub(super) port: u16,
    /// `Proxy-Authorization` from the proxy URL's userinfo.
    pub(super) authorization: Option<HeaderValue>,
}

/// The proxy settings read once from the environment.
#[derive(Debug, Clone, Default)]
pub(super) struct ProxyEnv {
    http: Option<String>,
    https: Option<String>,
    no_proxy: Vec<String>,
}

fn var(names: &[&str]) -> Option<String> {
    names.iter().find_map(|n| std::env::var(n).ok()).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

impl ProxyEnv {
    /// Reads the variables.
    pub(super) fn from_env() -> Self {
        let all = var(&["all_proxy", "ALL_PROXY"]);
        let no_proxy = var(&["no_proxy", "NO_PROXY"])
            .map(|v| v.split(',').map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()).collect())
            .unwrap_or_default();
        Self {
            http: var(&["http_proxy", "HTTP_PROXY"]).or_else(|| all.clone()),
            https: var(&["https_proxy", "HTTPS_PROXY"]).or(all),
            no_proxy,
        }
    }

    /// Whether any proxy is configured.
    pub(super) fn is_empty(&self) -> bool {
        self.http.is_none() && self.https.is_none()
    }

    /// The proxy for `url`, if any.
    pub(super) fn hop_for(&self, url: &Url) -> Result<Option<ProxyHop>, TransportError> {
        let raw = match url.scheme() {
            "https" => self.https.as_deref(),
            _ => self.http.as_deref(),
        };
        let Some(raw) = raw else { return Ok(None) };
        let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
        if self.bypassed(&host.to_ascii_lowercase()) {
            return Ok(None);
        }
        parse_hop(raw).map(Some)
    }

    fn bypassed(&self, host: &str) -> bool {
        self.no_proxy.iter().any(|entry| {
            let entry = entry.split(':').next().unwrap_or(entry);
            let entry = entry.trim_start_matches('[').trim_end_matches(']');
            entry == "*"
                || host == entry.trim_start_matches('.')
                || host.ends_with(&format!(".{}", entry.trim_start_matches('.')))
        })
    }
}

/// A proxy URL (`http://[user:pass@]host[:port]`, the scheme may be left out).
fn parse_hop(raw: &str) -> Result<ProxyHop, TransportError> {
    let with_scheme = if raw.contains("://") { raw.to_owned() } else { format!("http://{raw}") };
    // The proxy URL may carry credentials: never echoed.
    let bad = |why: &str| TransportError::Connect(format!("the proxy configured in the environment {why}"), None);
    let url = Url::parse(&with_scheme).map_err(|_| bad("is not a valid URL"))?;
    if url.scheme() != "http" {
        return Err(bad("is not an http:// proxy (the only kind supported)"));
    }
    let host = url.host_str().ok_or_else(|| bad("has no host"))?;
    let authorization = basic_credentials(&url).map_err(|_| bad("has invalid credentials"))?;
    Ok(ProxyHop {
        host: host.trim_start_matches('[').trim_end_matches(']').to_owned(),
        port: url.port().unwrap_or(80),
        authorization,
    })
}

/// `Authorization: Basic` (or `Proxy-Authorization`) from `url`'s userinfo, marked sensitive;
/// `None` without a user name.
pub(super) fn basic_credentials(url: &Url) -> Result<Option<HeaderValue>, http::header::InvalidHeaderValue> {
    if url.username().is_empty() {
        return Ok(None);
    }
    let user = percent_decode(url.username());
    let pass = percent_decode(url.password().unwrap_or_default());
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
    let mut v = HeaderValue::try_from(format!("Basic {token}"))?;
    v.set_sensitive(true);
    Ok(Some(v))
}

/// `%XX` escapes decoded (userinfo in URLs); invalid UTF-8 becomes U+FFFD.
fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(http: Option<&str>, https: Option<&str>, no: &[&str]) -> ProxyEnv {
        ProxyEnv {
            http: http.map(str::to_owned),
            https: https.map(str::to_owned),
            no_proxy: no.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_scheme_picks_the_proxy_and_no_proxy_bypasses_it() {
        let e = env(Some("http://p:3128"), Some("proxy.corp:8080"), &["internal.example", ".corp", "10.0.0.1"]);
        let url = |u: &str| Url::parse(u).unwrap();
        let hop = e.hop_for(&url("https://api.example.com/mcp")).unwrap().unwrap();
        assert_eq!((hop.host.as_str(), hop.port), ("proxy.corp", 8080));
        let hop = e.hop_for(&url("http://api.example.com/mcp")).unwrap().unwrap();
        assert_eq!((hop.host.as_str(), hop.port), ("p", 3128));
        for direct in ["https://internal.example/", "https://a.internal.example/", "http://x.corp/", "http://10.0.0.1/"]
        {
            assert_eq!(e.hop_for(&url(direct)).unwrap(), None, "{direct}");
        }
        assert!(e.hop_for(&url("https://notinternal.example/")).unwrap().is_some());
        assert_eq!(env(Some("p:1"), None, &["*"]).hop_for(&url("http://a/")).unwrap(), None);
    }

    #[test]
    fn proxy_credentials_become_basic_auth_and_are_never_echoed() {
        let hop = parse_hop("http://us%40er:p%3Ass@proxy:3128").unwrap();
        let expected = base64::engine::general_purpose::STANDARD.encode("us@er:p:ss");
        assert_eq!(hop.authorization.unwrap().to_str().unwrap(), format!("Basic {expected}"));
        let e = parse_hop("socks5://user:SECRET@proxy:1080").unwrap_err();
        assert!(!e.to_string().contains("SECRET"), "{e}");
    }
}
