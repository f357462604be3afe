//! The HTTP client under the transport: hyper's HTTP/1.1 connections with our own keep-alive
//! pool ([`super::pool`]) for plain `http://` URLs (far less per-request work than reqwest or
//! hyper-util's pooled client), reqwest for `https://` (TLS), for URLs
//! carrying credentials (reqwest turns them into Basic auth) and when a proxy is configured
//! in the environment (reqwest honours `HTTP_PROXY` and friends).

use super::describe;
use super::pool::{Origin, Pool, PooledBody, SendError};
use crate::error::{ErrorSource, TransportError};
use bytes::Bytes;
use futures::Stream;
use http_body_util::Full;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_LENGTH, HOST, USER_AGENT};
use reqwest::{Method, StatusCode, Url};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The `User-Agent` of every request.
const AGENT: &str = concat!("mcp-client/", env!("CARGO_PKG_VERSION"));

/// Environment variables that make reqwest send plain HTTP through a proxy.
const PROXY_VARS: [&str; 4] = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];

/// One request, as the transport builds it (again for each redirect followed).
pub(super) struct Req {
    /// The method.
    pub(super) method: Method,
    /// The absolute URL.
    pub(super) url: Url,
    /// Every header but `User-Agent` and `Content-Length`.
    pub(super) headers: HeaderMap,
    /// The body, if any.
    pub(super) body: Option<Bytes>,
}

/// The clients a transport sends with.
pub(super) struct Wire {
    /// For plain `http://` (none when a proxy is configured).
    plain: Option<Arc<Pool>>,
    /// For everything else, made when first needed.
    tls: OnceLock<reqwest::Client>,
    connect_timeout: Duration,
    /// The server URL and its [`Target`] (made once: nearly every request goes there).
    base: Option<(Url, Target)>,
}

impl Wire {
    /// The clients for a server at `url`; reqwest's is made now if `url` needs it.
    pub(super) fn new(url: &Url, connect_timeout: Duration) -> Result<Self, TransportError> {
        let proxied = PROXY_VARS.iter().any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
        let plain = (!proxied).then(|| Pool::new(connect_timeout));
        let base = target(url).ok().map(|t| (url.clone(), t));
        let wire = Self { plain, tls: OnceLock::new(), connect_timeout, base };
        if !wire.is_plain(url) {
            wire.tls()?;
        }
        Ok(wire)
    }

    /// Whether `url` goes through hyper directly.
    fn is_plain(&self, url: &Url) -> bool {
        self.plain.is_some() && url.scheme() == "http" && url.username().is_empty() && url.password().is_none()
    }

    fn tls(&self) -> Result<&reqwest::Client, TransportError> {
        if let Some(c) = self.tls.get() {
            return Ok(c);
        }
        // Redirects are followed by the transport itself (`Inner::send_following`), which
        // knows which headers are the user's: reqwest would carry custom headers to another
        // origin.
        let client = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(AGENT)
            .build()
            .map_err(|e| TransportError::Connect(describe(&e), Some(ErrorSource::new(e))))?;
        Ok(self.tls.get_or_init(|| client))
    }

    /// Sends `req` and waits for the response head. `display_url` names the server in
    /// connection errors.
    pub(super) async fn send(&self, req: Req, display_url: &str) -> Result<Resp, TransportError> {
        let plain = self.plain.as_ref().filter(|_| self.is_plain(&req.url));
        let Some(client) = plain else {
            let mut builder = self.tls()?.request(req.method, req.url).headers(req.headers);
            if let Some(body) = req.body {
                builder = builder.body(body);
            }
            let resp = builder.send().await.map_err(|e| super::map_reqwest(display_url, e))?;
            return Ok(Resp::Tls(resp));
        };
        let Target { uri, host: host_header, origin } = match &self.base {
            Some((url, t)) if *url == req.url => t.clone(),
            _ => target(&req.url)?,
        };
        let mut headers = req.headers;
        // What reqwest (or any HTTP/1.1 client) would add.
        headers.insert(HOST, host_header);
        headers.entry(ACCEPT).or_insert(HeaderValue::from_static("*/*"));
        headers.entry(USER_AGENT).or_insert(HeaderValue::from_static(AGENT));
        let mut request = hyper::Request::new(Full::new(req.body.unwrap_or_default()));
        *request.method_mut() = req.method;
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        let (head, body) = client.send(&origin, request).await.map_err(|e| map_send(display_url, e))?;
        Ok(Resp::Plain { head, body, url: req.url })
    }
}

/// What a request to a plain `http://` URL needs: its origin-form target, `Host` header and
/// where the pool connects.
#[derive(Clone)]
struct Target {
    uri: hyper::Uri,
    host: HeaderValue,
    origin: Arc<Origin>,
}

/// The [`Target`] of a plain `http://` URL.
fn target(url: &Url) -> Result<Target, TransportError> {
    let invalid = |e: String| TransportError::Connect(format!("invalid URL: {e}"), None);
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let uri = path.parse().map_err(|e: hyper::http::uri::InvalidUri| invalid(e.to_string()))?;
    let name = url.host_str().ok_or_else(|| invalid("no host".into()))?;
    let host = match url.port() {
        Some(p) => format!("{name}:{p}"),
        None => name.to_owned(),
    };
    let host = HeaderValue::try_from(host).map_err(|e| invalid(e.to_string()))?;
    // An IPv6 literal comes bracketed in a URL, bare in a socket address.
    let bare = name.trim_start_matches('[').trim_end_matches(']').to_owned();
    let origin = Arc::new(Origin { host: bare, port: url.port_or_known_default().unwrap_or(80) });
    Ok(Target { uri, host, origin })
}

/// Whether an error or one of its causes is a timeout.
fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
            || err.downcast_ref::<hyper::Error>().is_some_and(hyper::Error::is_timeout)
        {
            return true;
        }
        cur = err.source();
    }
    false
}

/// Maps a failure to send a request as reqwest's would be (see `map_reqwest`).
fn map_send(url: &str, e: SendError) -> TransportError {
    match e {
        SendError::ConnectTimeout => TransportError::Timeout,
        SendError::Connect(e) if e.kind() == std::io::ErrorKind::TimedOut => TransportError::Timeout,
        SendError::Connect(e) => TransportError::Connect(format!("{url}: {}", describe(&e)), Some(ErrorSource::new(e))),
        SendError::Hyper(e) if timed_out(&e) => TransportError::Timeout,
        SendError::Hyper(e) => TransportError::Closed(describe(&e)),
    }
}

/// A response whose head has arrived.
pub(super) enum Resp {
    /// From hyper.
    Plain {
        /// Status and headers.
        head: hyper::http::response::Parts,
        /// The body, not read yet (its connection goes back to the pool at its end).
        body: PooledBody,
        /// The URL requested.
        url: Url,
    },
    /// From reqwest.
    Tls(reqwest::Response),
}

impl Resp {
    /// The status code.
    pub(super) fn status(&self) -> StatusCode {
        match self {
            Self::Plain { head, .. } => head.status,
            Self::Tls(r) => r.status(),
        }
    }

    /// The headers.
    pub(super) fn headers(&self) -> &HeaderMap {
        match self {
            Self::Plain { head, .. } => &head.headers,
            Self::Tls(r) => r.headers(),
        }
    }

    /// The URL that answered.
    pub(super) fn url(&self) -> &Url {
        match self {
            Self::Plain { url, .. } => url,
            Self::Tls(r) => r.url(),
        }
    }

    /// The body's length, if known in advance.
    pub(super) fn content_length(&self) -> Option<u64> {
        match self {
            Self::Plain { head, body, .. } => body.exact_len().or_else(|| {
                head.headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|s| s.parse().ok())
            }),
            Self::Tls(r) => r.content_length(),
        }
    }

    /// The next piece of the body; `None` at its end.
    pub(super) async fn chunk(&mut self) -> Result<Option<Bytes>, TransportError> {
        match self {
            Self::Plain { body, .. } => loop {
                match body.frame().await {
                    None => return Ok(None),
                    Some(Err(e)) => {
                        return Err(if timed_out(&e) {
                            TransportError::Timeout
                        } else {
                            TransportError::Io(describe(&e), Some(ErrorSource::new(e)))
                        })
                    }
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            return Ok(Some(data));
                        }
                    }
                }
            },
            Self::Tls(r) => r.chunk().await.map_err(|e| super::map_reqwest("", e)),
        }
    }

    /// The body as a stream of pieces.
    pub(super) fn bytes_stream(self) -> impl Stream<Item = Result<Bytes, TransportError>> + Send + 'static {
        futures::stream::unfold(Some(self), |state| async move {
            let mut resp = state?;
            match resp.chunk().await {
                Ok(Some(b)) => Some((Ok(b), Some(resp))),
                Ok(None) => None,
                Err(e) => Some((Err(e), None)),
            }
        })
    }
}
