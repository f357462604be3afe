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
            let target = Url::parse(&self.redirect_uri)
                .map_err(|e| OAuthError::config(format!("invalid redirect URI: {e}")).caused_by(e))?;
            let mut url = Url::parse(authorization_url)
                .map_err(|e| OAuthError::user_agent(format!("invalid authorization URL: {e}")).caused_by(e))?;
            for _ in 0..5 {
                let reply = self.http.get_raw(&url, "authorization endpoint").await?;
                let location = match (reply.status, reply.location) {
                    (300..=399, Some(l)) => l,
                    (status, _) => {
                        return Err(OAuthError::user_agent(format!(
                            "the authorization endpoint answered HTTP {status} instead of redirecting"
                        )))
                    }
                };
                let next = url
                    .join(&location)
                    .map_err(|e| OAuthError::user_agent(format!("invalid redirect location: {e}")).caused_by(e))?;
                if is_callback_for(&next, &target) {
                    return Ok(next.to_string());
                }
                check_url(&next, "authorization redirect")?;
                url = next;
            }
            Err(OAuthError::user_agent("too many redirects before the callback"))
        })
    }
}

/// How a [`LoopbackBrowser`] shows the authorization URL (e.g. opens the system browser).
pub type Opener = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// The native-app user agent (RFC 8252): opens the authorization URL in the browser and waits
/// for the redirect on a loopback HTTP listener (`http://127.0.0.1:PORT/callback`).
///
/// The listener answers only a `GET` of the callback path carrying the `state` of the pending
/// authorization request; a callback with another (or no) `state` gets a 400 page and the
/// listener keeps waiting, until [`Self::timeout`]. Connections are served concurrently, at
/// most [`Self::max_connections`] at a time (default 16; further ones wait in the listen
/// backlog), each given at most [`Self::connection_timeout`] (default 10 s) to send its request
/// head (at most 16 KiB).
pub struct LoopbackBrowser {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: String,
    opener: Opener,
    timeout: Duration,
    max_connections: usize,
    connection_timeout: Duration,
}

/// Largest request head the callback listener reads.
const MAX_CALLBACK_HEAD: usize = 16 * 1024;

/// What one callback connection brought.
enum Callback {
    /// The redirect with the expected `state`: the full callback URL.
    Accepted(String),
    /// Anything else (answered with 400 or 404, or dropped).
    Ignored,
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
            .map_err(|e| OAuthError::user_agent(format!("cannot listen on 127.0.0.1:{port}: {e}")).caused_by(e))?;
        let port = listener.local_addr().map_err(|e| OAuthError::user_agent(e.to_string()).caused_by(e))?.port();
        Ok(Self {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
            opener: Arc::new(|url| {
                eprintln!("Open this URL in your browser to authorize:\n  {url}");
                Ok(())
            }),
            timeout: Duration::from_secs(300),
            max_connections: 16,
            connection_timeout: Duration::from_secs(10),
        })
    }

    /// Most callback connections served at once (default 16, at least 1).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// How long one callback connection may take to send its request head (default 10 s).
    pub fn connection_timeout(mut self, t: Duration) -> Self {
        self.connection_timeout = t;
        self
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

    /// Serves callback connections (concurrently, bounded) until one carries `state`.
    async fn wait_for_callback(&self, state: &str) -> Result<String, OAuthError> {
        use futures::stream::{FuturesUnordered, StreamExt};
        let base = Url::parse(&self.redirect_uri).map_err(|_| OAuthError::config("invalid redirect URI"))?;
        let listener = self.listener.lock().await;
        let mut conns = FuturesUnordered::new();
        loop {
            tokio::select! {
                accepted = listener.accept(), if conns.len() < self.max_connections => {
                    match accepted {
                        Ok((sock, _)) => conns.push(self.serve_callback(sock, &base, state)),
                        Err(e) => tracing::debug!(error = %e, "callback listener: accept failed"),
                    }
                }
                Some(done) = conns.next(), if !conns.is_empty() => {
                    if let Callback::Accepted(url) = done {
                        return Ok(url);
                    }
                }
            }
        }
    }

    /// One callback connection: reads the request head (bounded in size and time), answers it.
    async fn serve_callback(&self, mut sock: tokio::net::TcpStream, base: &Url, state: &str) -> Callback {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 2048];
        let read = tokio::time::timeout(self.connection_timeout, async {
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_CALLBACK_HEAD {
                match sock.read(&mut chunk).await {
                    Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                    _ => return false,
                }
            }
            true
        })
        .await;
        if !matches!(read, Ok(true)) {
            return Callback::Ignored;
        }
        let head = String::from_utf8_lossy(&buf).into_owned();
        let mut first = head.lines().next().unwrap_or_default().split(' ');
        let (method, target) = (first.next().unwrap_or_default(), first.next().unwrap_or_default());
        let url = base.join(target).ok().filter(|u| method == "GET" && is_callback_for(u, base));
        let verdict = match &url {
            None => ("404 Not Found", "not found", Callback::Ignored),
            Some(u) if u.query_pairs().any(|(k, v)| k == "state" && v == state) => (
                "200 OK",
                "<!doctype html><title>Authorized</title><p>Authorization received. You can close this window.",
                Callback::Accepted(u.to_string()),
            ),
            Some(_) => {
                tracing::warn!("ignored an authorization callback with a wrong or missing state");
                (
                    "400 Bad Request",
                    "<!doctype html><title>Not authorized</title><p>This authorization response does not belong to the pending request and was ignored.",
                    Callback::Ignored,
                )
            }
        };
        let (status, body, outcome) = verdict;
        let resp = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\ncache-control: no-store\r\n\r\n{body}",
            body.len()
        );
        let _ = tokio::time::timeout(self.connection_timeout, sock.write_all(resp.as_bytes())).await;
        outcome
    }
}

impl UserAgent for LoopbackBrowser {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(&'a self, authorization_url: &'a str) -> BoxFuture<'a, Result<String, OAuthError>> {
        Box::pin(async move {
            let url = Url::parse(authorization_url)
                .map_err(|e| OAuthError::user_agent(format!("invalid authorization URL: {e}")).caused_by(e))?;
            check_url(&url, "authorization endpoint")?;
            debug_assert!(is_loopback(&Url::parse(&self.redirect_uri).expect("valid")));
            let state = url
                .query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
                .filter(|s| !s.is_empty())
                .ok_or_else(|| OAuthError::user_agent("the authorization URL has no state"))?;
            (self.opener)(authorization_url).map_err(OAuthError::user_agent)?;
            tokio::time::timeout(self.timeout, self.wait_for_callback(&state))
                .await
                .map_err(|_| OAuthError::user_agent("timed out waiting for the authorization redirect"))?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpStream;

    async fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    /// `browser` with an opener that only tells the test the browser would be opened now (the
    /// callback listener is up).
    fn opened(browser: LoopbackBrowser) -> (LoopbackBrowser, tokio::sync::oneshot::Receiver<()>) {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let tx = parking_lot::Mutex::new(Some(tx));
        let browser = browser.opener(Arc::new(move |_| {
            if let Some(tx) = tx.lock().take() {
                let _ = tx.send(());
            }
            Ok(())
        }));
        (browser, rx)
    }

    #[tokio::test]
    async fn callback_needs_the_state_and_slow_connections_do_not_block() {
        let browser = LoopbackBrowser::bind(0).await.unwrap().timeout(Duration::from_secs(60));
        let port = Url::parse(&browser.redirect_uri()).unwrap().port().unwrap();
        let (browser, rx) = opened(browser);
        let auth = "https://as.example/authorize?client_id=c&state=good-state";
        let client = async {
            rx.await.unwrap();
            // A connection that never sends anything is served alongside the others.
            let mut slow = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let forged = get(port, "/callback?code=evil&state=forged").await;
            assert!(forged.starts_with("HTTP/1.1 400"), "{forged}");
            let missing = get(port, "/callback?code=evil").await;
            assert!(missing.starts_with("HTTP/1.1 400"), "{missing}");
            assert!(get(port, "/other?state=good-state").await.starts_with("HTTP/1.1 404"));
            // Those were answered while the slow connection is still open (not served first,
            // not timed out): reading from it finds nothing, not the end of the stream.
            let mut b = [0u8; 1];
            assert!(tokio::time::timeout(Duration::from_millis(50), slow.read(&mut b)).await.is_err());
            let ok = get(port, "/callback?code=c1&state=good-state").await;
            assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        };
        let (got, ()) = tokio::join!(browser.authorize(auth), client);
        let got = got.unwrap();
        assert!(got.contains("code=c1") && got.contains("state=good-state"), "{got}");
    }

    #[tokio::test]
    async fn at_the_connection_bound_a_silent_connection_only_delays_until_its_read_timeout() {
        let browser = LoopbackBrowser::bind(0)
            .await
            .unwrap()
            .max_connections(1)
            .connection_timeout(Duration::from_millis(200))
            .timeout(Duration::from_secs(60));
        let port = Url::parse(&browser.redirect_uri()).unwrap().port().unwrap();
        let (browser, rx) = opened(browser);
        let client = async {
            rx.await.unwrap();
            // Takes the only slot and never sends a byte; the callback waits in the backlog.
            let mut silent = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let ok = get(port, "/callback?code=c2&state=s2").await;
            assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
            // The silent connection was closed by its read timeout.
            let mut b = [0u8; 1];
            assert_eq!(silent.read(&mut b).await.unwrap_or(0), 0);
        };
        let (got, ()) = tokio::join!(browser.authorize("https://as.example/authorize?state=s2"), client);
        assert!(got.unwrap().contains("code=c2"));
    }
}
