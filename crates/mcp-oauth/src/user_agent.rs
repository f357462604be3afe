//! The user-agent step of the authorization code flow: something takes the authorization URL
//! to the authorization server and comes back with the redirect (callback) URL.

use crate::error::OAuthError;
use crate::http::Http;
use crate::safety::{check_url, is_loopback};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

/// Takes the user (or a stand-in) through the authorization request.
pub trait UserAgent: Send + Sync + 'static {
    /// The redirect URI to register and to send in the authorization request. It must be
    /// `https`, or `http` on a loopback host.
    fn redirect_uri(&self) -> String;

    /// Sends the user agent to `authorization_url` and returns the full URL the authorization
    /// server redirected it to (the callback, with `code`, `state`, `iss` or `error`).
    fn authorize<'a>(&'a self, authorization_url: &'a str) -> BoxFuture<'a, Result<String, OAuthError>>;
}

/// Whether `candidate` is a callback at `redirect_uri` (same scheme, host, port and path).
pub(crate) fn is_callback_for(candidate: &Url, redirect_uri: &Url) -> bool {
    candidate.scheme() == redirect_uri.scheme()
        && candidate.host_str() == redirect_uri.host_str()
        && candidate.port_or_known_default() == redirect_uri.port_or_known_default()
        && candidate.path() == redirect_uri.path()
}

/// A user agent without a user: it GETs the authorization URL without following the redirect
/// and reads the `Location` header. For authorization servers that approve without
/// interaction (test and conformance setups). Redirects elsewhere on https/loopback hosts are
/// followed (up to 5) until one reaches the redirect URI.
pub struct HeadlessRedirect {
    redirect_uri: String,
    http: Http,
}

impl std::fmt::Debug for HeadlessRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeadlessRedirect").field("redirect_uri", &self.redirect_uri).finish()
    }
}

impl HeadlessRedirect {
    /// A headless user agent that expects the authorization server to redirect to
    /// `redirect_uri` (nothing needs to listen there).
    pub fn new(redirect_uri: &str) -> Result<Self, OAuthError> {
        Ok(Self { redirect_uri: redirect_uri.to_owned(), http: Http::new(Duration::from_secs(30))? })
    }
}

impl UserAgent for HeadlessRedirect {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(&'a self, authorization_url: &'a str) -> BoxFuture<'a, Result<String, OAuthError>> {
        Box::pin(async move {
            let target =
                Url::parse(&self.redirect_uri).map_err(|e| OAuthError::Config(format!("invalid redirect URI: {e}")))?;
            let mut url = Url::parse(authorization_url)
                .map_err(|e| OAuthError::UserAgent(format!("invalid authorization URL: {e}")))?;
            for _ in 0..5 {
                let reply = self.http.get_raw(&url, "authorization endpoint").await?;
                let location = match (reply.status, reply.location) {
                    (300..=399, Some(l)) => l,
                    (status, _) => {
                        return Err(OAuthError::UserAgent(format!(
                            "the authorization endpoint answered HTTP {status} instead of redirecting"
                        )))
                    }
                };
                let next = url
                    .join(&location)
                    .map_err(|e| OAuthError::UserAgent(format!("invalid redirect location: {e}")))?;
                if is_callback_for(&next, &target) {
                    return Ok(next.to_string());
                }
                check_url(&next, "authorization redirect")?;
                url = next;
            }
            Err(OAuthError::UserAgent("too many redirects before the callback".into()))
        })
    }
}

/// How a [`LoopbackBrowser`] shows the authorization URL (e.g. opens the system browser).
pub type Opener = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// The native-app user agent (RFC 8252): opens the authorization URL in the browser and waits
/// for the redirect on a loopback HTTP listener (`http://127.0.0.1:PORT/callback`).
pub struct LoopbackBrowser {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: String,
    opener: Opener,
    timeout: Duration,
}

impl std::fmt::Debug for LoopbackBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackBrowser").field("redirect_uri", &self.redirect_uri).finish_non_exhaustive()
    }
}

impl LoopbackBrowser {
    /// Listens on `127.0.0.1:port` (0 picks a free port). Until [`Self::opener`] is set, the
    /// URL is printed to stderr for the user to open.
    pub async fn bind(port: u16) -> Result<Self, OAuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| OAuthError::UserAgent(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
        let port = listener.local_addr().map_err(|e| OAuthError::UserAgent(e.to_string()))?.port();
        Ok(Self {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
            opener: Arc::new(|url| {
                eprintln!("Open this URL in your browser to authorize:\n  {url}");
                Ok(())
            }),
            timeout: Duration::from_secs(300),
        })
    }

    /// Sets how the URL is opened.
    pub fn opener(mut self, opener: Opener) -> Self {
        self.opener = opener;
        self
    }

    /// How long to wait for the redirect (default 5 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn wait_for_callback(&self) -> Result<String, OAuthError> {
        let listener = self.listener.lock().await;
        loop {
            let (mut sock, _) = listener.accept().await.map_err(|e| OAuthError::UserAgent(e.to_string()))?;
            let mut buf = Vec::new();
            let mut chunk = [0u8; 2048];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
                match tokio::time::timeout(Duration::from_secs(10), sock.read(&mut chunk)).await {
                    Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                    _ => break,
                }
            }
            let head = String::from_utf8_lossy(&buf).into_owned();
            let mut first = head.lines().next().unwrap_or_default().split(' ');
            let (method, target) = (first.next().unwrap_or_default(), first.next().unwrap_or_default());
            let Ok(base) = Url::parse(&self.redirect_uri) else {
                return Err(OAuthError::Config("invalid redirect URI".into()));
            };
            let matches = method == "GET" && base.join(target).is_ok_and(|u| is_callback_for(&u, &base));
            let (status, body) = if matches {
                (
                    "200 OK",
                    "<!doctype html><title>Authorized</title><p>Authorization received. You can close this window.",
                )
            } else {
                ("404 Not Found", "not found")
            };
            let resp = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\ncache-control: no-store\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(resp.as_bytes()).await;
            if matches {
                return base.join(target).map(|u| u.to_string()).map_err(|e| OAuthError::UserAgent(e.to_string()));
            }
        }
    }
}

impl UserAgent for LoopbackBrowser {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(&'a self, authorization_url: &'a str) -> BoxFuture<'a, Result<String, OAuthError>> {
        Box::pin(async move {
            let url = Url::parse(authorization_url)
                .map_err(|e| OAuthError::UserAgent(format!("invalid authorization URL: {e}")))?;
            check_url(&url, "authorization endpoint")?;
            debug_assert!(is_loopback(&Url::parse(&self.redirect_uri).expect("valid")));
            (self.opener)(authorization_url).map_err(OAuthError::UserAgent)?;
            tokio::time::timeout(self.timeout, self.wait_for_callback())
                .await
                .map_err(|_| OAuthError::UserAgent("timed out waiting for the authorization redirect".into()))?
        })
    }
}
