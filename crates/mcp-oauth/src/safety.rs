//! URL rules: endpoints must be `https`, or `http` on a loopback host; nothing else
//! (`file:`, `javascript:`, custom schemes) is ever fetched or opened.

use crate::error::OAuthError;
use url::{Host, Url};

/// Whether `url` names a loopback host (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`).
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Parses an endpoint URL (`what` names it in errors) and checks it: `https`, or `http` on a
/// loopback host; a host; no user info; no fragment.
pub fn check_endpoint(raw: &str, what: &str) -> Result<Url, OAuthError> {
    let url = Url::parse(raw.trim()).map_err(|e| OAuthError::InsecureUrl(format!("{what}: not a URL ({e})")))?;
    check_url(&url, what)?;
    Ok(url)
}

/// Checks an already parsed URL against the endpoint rules.
pub(crate) fn check_url(url: &Url, what: &str) -> Result<(), OAuthError> {
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(url) => {}
        "http" => {
            return Err(OAuthError::InsecureUrl(format!(
                "{what}: plain http is allowed only on loopback hosts ({})",
                url.host_str().unwrap_or_default()
            )))
        }
        other => return Err(OAuthError::InsecureUrl(format!("{what}: scheme {other:?} is not allowed"))),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(OAuthError::InsecureUrl(format!("{what}: no host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(OAuthError::InsecureUrl(format!("{what}: credentials in the URL")));
    }
    if url.fragment().is_some() {
        return Err(OAuthError::InsecureUrl(format!("{what}: fragment in the URL")));
    }
    Ok(())
}

/// A URL fit for logs: scheme, host, port and path only.
pub(crate) fn redact(url: &Url) -> String {
    format!(
        "{}://{}{}",
        url.scheme(),
        url.host_str().unwrap_or_default(),
        url.port().map(|p| format!(":{p}")).unwrap_or_default()
    ) + url.path()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_rules() {
        assert!(check_endpoint("https://as.example.com/token", "t").is_ok());
        assert!(check_endpoint("http://localhost:8080/token", "t").is_ok());
        assert!(check_endpoint("http://127.0.0.7/token", "t").is_ok());
        assert!(check_endpoint("http://[::1]:9/token", "t").is_ok());
        assert!(check_endpoint("http://as.example.com/token", "t").is_err());
        assert!(check_endpoint("http://10.0.0.1/token", "t").is_err());
        assert!(check_endpoint("file:///etc/passwd", "t").is_err());
        assert!(check_endpoint("javascript:alert(1)", "t").is_err());
        assert!(check_endpoint("myapp://callback", "t").is_err());
        assert!(check_endpoint("https://user:pw@as.example.com/", "t").is_err());
        assert!(check_endpoint("https://as.example.com/#frag", "t").is_err());
    }
}
