//! Who may talk to the inspector: requests must name our own loopback address as `Host` (no DNS
//! rebinding), come from our own origin when a browser says where they come from (no other web
//! page), and carry the random token of this run (shown once, in the URL's fragment) to reach
//! the API. No CORS header is ever sent.
//!
//! Only the IP literal a listener is bound to is accepted as its `Host` (`127.0.0.1:PORT` for
//! the page, `[::1]:PORT` for the sandbox where IPv6 loopback exists; never `localhost:PORT`): a
//! name can resolve to an address we did not bind, where another local process may listen, so
//! the inspector never names one and refuses to be reached by one.

use http::{HeaderMap, HeaderValue, Method};
use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// The checks of one listener (the page's, or the sandbox's).
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    /// `Host` values accepted (`127.0.0.1:PORT` or `[::1]:PORT`: the literal address bound,
    /// nothing else).
    hosts: Vec<String>,
    /// `Origin` values accepted (`http://` + each host).
    origins: Vec<String>,
    token: String,
}

/// Why a request is refused (the status and a short text; nothing more is said).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refusal(pub(crate) u16, pub(crate) &'static str);

/// The token header the page sends with every API request.
pub(crate) const TOKEN_HEADER: &str = "x-inspector-token";

/// The address of the page (and of the sandbox where IPv6 loopback cannot be bound).
pub(crate) const LOOPBACK: &str = "127.0.0.1";

/// The address of the sandbox where it can be bound: an IP literal other than the page's, so
/// the sandbox is another site than the page, not only another origin. As a URL host it is
/// written `[::1]`.
pub(crate) const LOOPBACK_V6: std::net::Ipv6Addr = std::net::Ipv6Addr::LOCALHOST;

/// The loopback address `ip` as a URL host (`127.0.0.1`, `[::1]`).
pub(crate) fn url_host(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// How long the one-time code of an opened browser may be exchanged for the token.
pub(crate) const CODE_LIFETIME: Duration = Duration::from_secs(60);

/// A one-time code the page exchanges for the token (`POST /api/exchange`): what `mcp inspect`
/// puts in the URL it opens, so the token is never on a browser's command line. Single use,
/// expiring after [`CODE_LIFETIME`]; at most one is outstanding.
#[derive(Debug, Default)]
pub(crate) struct OneTimeCode(Mutex<Option<(String, Instant)>>);

impl OneTimeCode {
    /// A fresh code (replacing any outstanding one).
    pub(crate) fn issue(&self) -> String {
        let code = token();
        *self.0.lock() = Some((code.clone(), Instant::now()));
        code
    }

    /// Whether `given` is the outstanding code, still fresh; a match uses it up.
    pub(crate) fn redeem(&self, given: &str) -> bool {
        let mut slot = self.0.lock();
        let fresh = slot.as_ref().is_some_and(|(code, at)| {
            at.elapsed() < CODE_LIFETIME && constant_time_eq(given.as_bytes(), code.as_bytes())
        });
        if fresh || slot.as_ref().is_some_and(|(_, at)| at.elapsed() >= CODE_LIFETIME) {
            *slot = None;
        }
        fresh
    }
}

impl Guard {
    /// Accepts `Host: HOST:port` only (`host` the literal address bound, as a URL writes it:
    /// `127.0.0.1`, `[::1]`), and that origin.
    pub(crate) fn new(host: &str, port: u16, token: &str) -> Self {
        let hosts = vec![format!("{host}:{port}")];
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Self { hosts, origins, token: token.to_owned() }
    }

    /// The origin the page is served from (what `Origin` says of the page's own requests).
    pub(crate) fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Checks `Host` and `Origin` (every request).
    pub(crate) fn check_site(&self, method: &Method, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = headers.get(http::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
        if !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Err(Refusal(421, "this inspector answers only at its own loopback address"));
        }
        match headers.get(http::header::ORIGIN).map(HeaderValue::to_str) {
            None if method == Method::GET || method == Method::HEAD => Ok(()),
            // A state-changing request must say it comes from the page (browsers always do).
            None => Err(Refusal(403, "requests must come from the inspector page")),
            Some(Ok(o)) if self.origins.iter().any(|ours| ours == o) => Ok(()),
            Some(_) => Err(Refusal(403, "requests from other origins are refused")),
        }
    }

    /// Checks the token header of an API request, in constant time.
    pub(crate) fn check_token(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let given = headers.get(TOKEN_HEADER).map(HeaderValue::as_bytes).unwrap_or_default();
        if constant_time_eq(given, self.token.as_bytes()) {
            Ok(())
        } else {
            Err(Refusal(403, "missing or wrong inspector token"))
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A fresh token: 32 random bytes, hex.
pub(crate) fn token() -> String {
    use rand::RngCore as _;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Headers on every answer: no sniffing, no referrer, no caching, no framing by others.
pub(crate) fn hardening(headers: &mut HeaderMap) {
    let set = |h: &mut HeaderMap, k: &'static str, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "referrer-policy", "no-referrer");
    set(headers, "cache-control", "no-store");
    set(headers, "cross-origin-resource-policy", "same-origin");
    // Where IPv6 loopback is missing, the page and the sandbox share a site (127.0.0.1, two
    // ports): ask for an agent cluster, so a process, per origin.
    set(headers, "origin-agent-cluster", "?1");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn only_our_host_and_origin_pass() {
        let g = Guard::new(LOOPBACK, 4000, "t0k");
        let ok = headers(&[("host", "127.0.0.1:4000")]);
        assert_eq!(g.check_site(&Method::GET, &ok), Ok(()));
        // A name is refused: it may resolve to an address we did not bind (`::1`).
        assert_eq!(g.check_site(&Method::GET, &headers(&[("host", "localhost:4000")])).unwrap_err().0, 421);
        assert_eq!(g.check_site(&Method::GET, &headers(&[("host", "[::1]:4000")])).unwrap_err().0, 421);
        assert_eq!(g.origins(), ["http://127.0.0.1:4000"]);
        let rebound = headers(&[("host", "evil.example:4000")]);
        assert_eq!(g.check_site(&Method::GET, &rebound).unwrap_err().0, 421);
        assert_eq!(g.check_site(&Method::GET, &headers(&[("host", "127.0.0.1:4001")])).unwrap_err().0, 421);
        let foreign = headers(&[("host", "127.0.0.1:4000"), ("origin", "http://evil.example")]);
        assert_eq!(g.check_site(&Method::POST, &foreign).unwrap_err().0, 403);
        assert_eq!(g.check_site(&Method::GET, &foreign).unwrap_err().0, 403);
        assert_eq!(g.check_site(&Method::POST, &ok).unwrap_err().0, 403, "a POST names its origin");
        let page = headers(&[("host", "127.0.0.1:4000"), ("origin", "http://127.0.0.1:4000")]);
        assert_eq!(g.check_site(&Method::POST, &page), Ok(()));
        let null = headers(&[("host", "127.0.0.1:4000"), ("origin", "null")]);
        assert!(g.check_site(&Method::POST, &null).is_err(), "a sandboxed frame's opaque origin");
    }

    #[test]
    fn the_sandbox_on_ipv6_loopback_answers_only_at_that_literal() {
        let host = url_host(LOOPBACK_V6.into());
        assert_eq!(host, "[::1]");
        let g = Guard::new(&host, 4001, "t0k");
        assert_eq!(g.origins(), ["http://[::1]:4001"]);
        assert_eq!(g.check_site(&Method::GET, &headers(&[("host", "[::1]:4001")])), Ok(()));
        for other in ["127.0.0.1:4001", "localhost:4001", "[0:0:0:0:0:0:0:1]:4001", "[::1]:4000"] {
            assert_eq!(g.check_site(&Method::GET, &headers(&[("host", other)])).unwrap_err().0, 421, "{other}");
        }
        let from_page = headers(&[("host", "[::1]:4001"), ("origin", "http://127.0.0.1:4000")]);
        assert_eq!(g.check_site(&Method::GET, &from_page).unwrap_err().0, 403, "the sandbox is not the page");
    }

    #[test]
    fn the_token_must_match_exactly() {
        let g = Guard::new(LOOPBACK, 4000, "t0k");
        assert!(g.check_token(&headers(&[(TOKEN_HEADER, "t0k")])).is_ok());
        assert!(g.check_token(&headers(&[(TOKEN_HEADER, "t0K")])).is_err());
        assert!(g.check_token(&headers(&[(TOKEN_HEADER, "t0k0")])).is_err());
        assert!(g.check_token(&HeaderMap::new()).is_err());
        let t = token();
        assert_eq!(t.len(), 64);
        assert_ne!(t, token());
    }

    #[test]
    fn a_code_works_once() {
        let c = OneTimeCode::default();
        assert!(!c.redeem(""), "none issued");
        let code = c.issue();
        assert!(!c.redeem("wrong"), "a wrong code does not match");
        assert!(c.redeem(&code));
        assert!(!c.redeem(&code), "used up");
        let old = c.issue();
        *c.0.lock() = Some((old.clone(), Instant::now() - CODE_LIFETIME));
        assert!(!c.redeem(&old), "expired");
        assert!(c.0.lock().is_none(), "an expired code is dropped");
    }
}
