//! Opt-in CORS for browser clients: preflight answers and the headers a script may read.
//!
//! Written here rather than taken from `tower-http` because the allowed origins must be the same
//! list the endpoint's `Origin` check (DNS-rebinding protection) uses, in the same syntax, and
//! the allowed request headers include the open-ended `Mcp-Param-*` family.

use crate::body::McpBody;
use http::{header, HeaderMap, HeaderValue, Response, StatusCode};
use std::time::Duration;

/// Which browser origins may call the endpoint, and how long a preflight answer may be cached.
#[derive(Debug, Clone)]
pub struct CorsConfig {
    /// Origins allowed to call the endpoint from a browser, in the syntax of
    /// [`crate::EndpointConfig::allowed_origins`] (`https://app.example` or `host:NAME`).
    pub allow_origins: Vec<String>,
    /// How long browsers may cache a preflight answer (default 10 minutes).
    pub max_age: Duration,
}

impl CorsConfig {
    /// CORS for these origins.
    pub fn new(origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self { allow_origins: origins.into_iter().map(Into::into).collect(), max_age: Duration::from_secs(600) }
    }

    /// The answer to an `OPTIONS` preflight (the `Origin` was already checked): the methods of
    /// the endpoint and the request headers MCP uses.
    pub(crate) fn preflight(&self, h: &HeaderMap) -> Response<McpBody> {
        let mut r = Response::new(McpBody::empty());
        *r.status_mut() = StatusCode::NO_CONTENT;
        let out = r.headers_mut();
        out.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, DELETE"));
        let asked = h.get(header::ACCESS_CONTROL_REQUEST_HEADERS).and_then(|v| v.to_str().ok()).unwrap_or("");
        let allowed: Vec<&str> = asked.split(',').map(str::trim).filter(|n| allowed_request_header(n)).collect();
        if !allowed.is_empty() {
            if let Ok(v) = HeaderValue::from_str(&allowed.join(", ")) {
                out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, v);
            }
        }
        out.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from(self.max_age.as_secs()));
        r
    }

    /// Adds the headers that let the calling page read a response.
    pub(crate) fn decorate(&self, r: &mut Response<McpBody>, origin: &HeaderValue) {
        let h = r.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
        h.append(header::VARY, HeaderValue::from_static("Origin"));
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"),
        );
    }
}

/// The request headers a browser client of MCP may send.
fn allowed_request_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(n.as_str(), "content-type" | "accept" | "authorization" | "dpop" | "last-event-id")
        || n.starts_with("mcp-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preflight_allows_mcp_headers_only() {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCESS_CONTROL_REQUEST_HEADERS,
            HeaderValue::from_static("content-type, mcp-protocol-version, Mcp-Param-Region, x-evil"),
        );
        let r = CorsConfig::new(["https://app.example"]).preflight(&h);
        assert_eq!(r.status(), StatusCode::NO_CONTENT);
        let allowed = r.headers()[header::ACCESS_CONTROL_ALLOW_HEADERS].to_str().unwrap();
        assert_eq!(allowed, "content-type, mcp-protocol-version, Mcp-Param-Region");
        assert_eq!(r.headers()[header::ACCESS_CONTROL_MAX_AGE], "600");
    }
}
