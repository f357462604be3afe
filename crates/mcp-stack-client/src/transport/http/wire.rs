//! The HTTP client under the transport, one stack for `http://` and `https://`: hyper's
//! HTTP/1.1 connections with our own keep-alive pool ([`super::pool`]), TLS by rustls with the
//! Mozilla roots (webpki-roots) plus any the builder adds, and HTTP proxies from the
//! environment ([`super::proxy`]).
//!
//! Why not reqwest (used before for `https://`): an MCP transport sends one kind of request to
//! one origin, and hyper's connection API with a pool that returns a connection the moment its
//! body ends does far less per request than a general client (no pool-key hashing, no task per
//! response); one stack also means one set of timeouts, errors and redirect rules for both
//! schemes. HTTP/2 is not used: an MCP session is a few concurrent requests, and HTTP/1.1
//! keep-alive connections serve them without head-of-line blocking between streams.

use super::describe;
use super::pool::{Origin, Pool, PooledBody, SendError};
use super::proxy::{basic_credentials, ProxyEnv};
use crate::error::{ErrorSource, TransportError};
use bytes::Bytes;
use futures::Stream;
use http::header::{
    HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_LENGTH, HOST, PROXY_AUTHORIZATION, USER_AGENT,
};
use http::{Method, StatusCode};
use http_body_util::Full;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::rustls;
use url::Url;

/// The `User-Agent` of every request.
const AGENT: &str = concat!("mcp-client/", env!("CARGO_PKG_VERSION"));

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

/// The TLS settings of `https://` connections: the Mozilla roots and `extra_roots_pem` (PEM
/// certificates the builder was given), HTTP/1.1 by ALPN.
pub(super) fn tls_config(extra_roots_pem: &[Vec<u8>]) -> Result<Arc<rustls::ClientConfig>, TransportError> {
    let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    for pem in extra_roots_pem {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| TransportError::Connect(format!("invalid root certificate: {e}"), None))?;
            roots.add(cert).map_err(|e| TransportError::Connect(format!("invalid root certificate: {e}"), None))?;
            added += 1;
        }
        if added == 0 {
            return Err(TransportError::Connect("invalid root certificate: no PEM certificate found".into(), None));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::Connect(format!("TLS setup: {e}"), None))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The client a transport sends with.
pub(super) struct Wire {
    pool: Arc<Pool>,
    proxies: ProxyEnv,
    /// The server URL and its [`Target`] (made once: nearly every request goes there).
    base: Option<(Url, Target)>,
}

impl Wire {
    /// The client for a server at `url`.
    pub(super) fn new(
        url: &Url,
        connect_timeout: Duration,
        extra_roots_pem: &[Vec<u8>],
    ) -> Result<Self, TransportError> {
        let pool = Pool::new(connect_timeout, tls_config(extra_roots_pem)?);
        let proxies = ProxyEnv::from_env();
        let base = Some((url.clone(), target(url, &proxies)?));
        Ok(Self { pool, proxies, base })
    }

    /// Sends `req` and waits for the response head. `display_url` names the server in
    /// connection errors.
    pub(super) async fn send(&self, req: Req, display_url: &str) -> Result<Resp, TransportError> {
        let Target { uri, host: host_header, origin, basic } = match &self.base {
            Some((url, t)) if *url == req.url => t.clone(),
            _ => target(&req.url, &self.proxies)?,
        };
        let mut headers = req.headers;
        headers.insert(HOST, host_header);
        headers.entry(ACCEPT).or_insert(HeaderValue::from_static("*/*"));
        headers.entry(USER_AGENT).or_insert(HeaderValue::from_static(AGENT));
        if let Some(b) = basic {
            headers.entry(AUTHORIZATION).or_insert(b);
        }
        if let Some(auth) = origin.proxy.as_ref().filter(|_| !origin.tls).and_then(|p| p.authorization.clone()) {
            headers.insert(PROXY_AUTHORIZATION, auth);
        }
        let mut request = hyper::Request::new(Full::new(req.body.unwrap_or_default()));
        *request.method_mut() = req.method;
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        let (head, body) = self.pool.send(&origin, request).await.map_err(|e| map_send(display_url, &origin, e))?;
        Ok(Resp { head, body, url: req.url })
    }
}

/// What a request to a URL needs: its request target (origin-form, or absolute-form through
/// a proxy), `Host` header, where the pool connects, and Basic credentials from the URL.
#[derive(Clone)]
struct Target {
    uri: hyper::Uri,
    host: HeaderValue,
    origin: Arc<Origin>,
    basic: Option<HeaderValue>,
}

/// The [`Target`] of an `http://` or `https://` URL.
fn target(url: &Url, proxies: &ProxyEnv) -> Result<Target, TransportError> {
    let invalid = |e: String| TransportError::Connect(format!("invalid URL: {e}"), None);
    let tls = match url.scheme() {
        "http" => false,
        "https" => true,
        other => return Err(invalid(format!("unsupported scheme {other:?}"))),
    };
    let proxy = if proxies.is_empty() { None } else { proxies.hop_for(url)? };
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let name = url.host_str().ok_or_else(|| invalid("no host".into()))?;
    let host = match url.port() {
        Some(p) => format!("{name}:{p}"),
        None => name.to_owned(),
    };
    // Through a proxy, plain HTTP names the whole URL (without userinfo or fragment).
    let uri = if proxy.is_some() && !tls { format!("http://{host}{path}") } else { path };
    let uri = uri.parse().map_err(|e: hyper::http::uri::InvalidUri| invalid(e.to_string()))?;
    let host = HeaderValue::try_from(host).map_err(|e| invalid(e.to_string()))?;
    // An IPv6 literal comes bracketed in a URL, bare in a socket address.
    let bare = name.trim_start_matches('[').trim_end_matches(']').to_owned();
    let port = url.port_or_known_default().unwrap_or(if tls { 443 } else { 80 });
    let basic = basic_credentials(url).map_err(|e| invalid(e.to_string()))?;
    let origin = Arc::new(Origin { host: bare, port, tls, proxy });
    Ok(Target { uri, host, origin, basic })
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

/// Maps a failure to send a request onto the transport's errors.
fn map_send(url: &str, origin: &Origin, e: SendError) -> TransportError {
    match e {
        SendError::ConnectTimeout => TransportError::Timeout,
        SendError::Connect(e) if e.kind() == std::io::ErrorKind::TimedOut => TransportError::Timeout,
        SendError::Connect(e) => TransportError::Connect(format!("{url}: {}", describe(&e)), Some(ErrorSource::new(e))),
        SendError::Tls(e) => {
            let why = describe(&e);
            // A plain-HTTP server answers the ClientHello with an HTTP error page, or hangs up.
            let plain = why.contains("InvalidContentType")
                || why.contains("corrupt message")
                || e.kind() == std::io::ErrorKind::UnexpectedEof;
            let msg = if plain {
                format!(
                    "{url}: the server at {}:{} did not answer with TLS ({why}): is it plain http://?",
                    origin.host, origin.port
                )
            } else {
                format!("{url}: TLS handshake failed: {why}")
            };
            TransportError::Connect(msg, Some(ErrorSource::new(e)))
        }
        SendError::Proxy(m) => TransportError::Connect(format!("{url}: {m}"), None),
        SendError::Hyper(e) if timed_out(&e) => TransportError::Timeout,
        SendError::Hyper(e) => TransportError::Closed(describe(&e)),
    }
}

/// A response whose head has arrived.
pub(super) struct Resp {
    /// Status and headers.
    head: hyper::http::response::Parts,
    /// The body, not read yet (its connection goes back to the pool at its end).
    body: PooledBody,
    /// The URL requested.
    url: Url,
}

impl Resp {
    /// The status code.
    pub(super) fn status(&self) -> StatusCode {
        self.head.status
    }

    /// The headers.
    pub(super) fn headers(&self) -> &HeaderMap {
        &self.head.headers
    }

    /// The URL that answered.
    pub(super) fn url(&self) -> &Url {
        &self.url
    }

    /// The body's length, if known in advance.
    pub(super) fn content_length(&self) -> Option<u64> {
        self.body.exact_len().or_else(|| {
            self.head.headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|s| s.parse().ok())
        })
    }

    /// The next piece of the body; `None` at its end.
    pub(super) async fn chunk(&mut self) -> Result<Option<Bytes>, TransportError> {
        loop {
            match self.body.frame().await {
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
