//! Keep-alive connections for `http://` and `https://`: hyper's HTTP/1.1 connection API over
//! TCP or rustls, directly or through an HTTP proxy, with a small pool of our own.
//!
//! hyper-util's pooled client does more per request than an MCP transport needs: it hashes a
//! pool key, races a new connection against every checkout and spawns a task per response to
//! put the connection back. Here a connection goes back to its origin's idle list the moment
//! its response body ends (or at once when the body is empty), so the next request takes it
//! without a task or a lock held across an await.
//!
//! Bounds: at most [`MAX_IDLE`] idle connections are kept (more are closed), none for longer
//! than [`IDLE_FOR`]. A request sent on a reused connection that the server closed meanwhile
//! is sent again, once, on a new connection (only when hyper hands it back unsent).

use super::proxy::ProxyHop;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body as _, Frame, Incoming};
use hyper::client::conn::http1::SendRequest;
use parking_lot::Mutex;
use rustls_pki_types::ServerName;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio_rustls::rustls;
use tokio_rustls::TlsConnector;

/// Most idle connections kept, over all origins.
pub(super) const MAX_IDLE: usize = 256;

/// Longest an idle connection is kept for reuse.
pub(super) const IDLE_FOR: Duration = Duration::from_secs(90);

type Sender = SendRequest<Full<Bytes>>;

/// Why a request could not be sent.
#[derive(Debug)]
pub(super) enum SendError {
    /// No connection could be made (resolving, connecting, or the HTTP handshake).
    Connect(std::io::Error),
    /// The connection did not come up within the connect timeout.
    ConnectTimeout,
    /// The connection failed while the request was being sent or its head read.
    Hyper(hyper::Error),
    /// The TLS handshake failed (a certificate that is not valid for the host, or a server
    /// that does not speak TLS).
    Tls(std::io::Error),
    /// The proxy would not open a tunnel.
    Proxy(String),
}

/// Where a connection goes: the pool's key. Made once per server URL, so that a request
/// costs no string building here.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Origin {
    /// The host name or IP literal (an IPv6 one without brackets).
    pub(super) host: String,
    /// The port.
    pub(super) port: u16,
    /// TLS (`https://`), verified against the host name.
    pub(super) tls: bool,
    /// The HTTP proxy connections go through (a `CONNECT` tunnel for TLS).
    pub(super) proxy: Option<ProxyHop>,
}

struct Idle {
    origin: Arc<Origin>,
    sender: Sender,
    since: Instant,
}

/// The idle connections of one transport.
pub(super) struct Pool {
    connect_timeout: Duration,
    idle: Mutex<Vec<Idle>>,
    tls: TlsConnector,
}

impl Pool {
    /// An empty pool whose new connections must come up within `connect_timeout`, trusting
    /// `tls` for `https://`.
    pub(super) fn new(connect_timeout: Duration, tls: Arc<rustls::ClientConfig>) -> Arc<Self> {
        Arc::new(Self { connect_timeout, idle: Mutex::new(Vec::new()), tls: TlsConnector::from(tls) })
    }

    /// An idle connection to `origin` that is still open, newest first.
    fn checkout(&self, origin: &Origin) -> Option<Sender> {
        let mut idle = self.idle.lock();
        let now = Instant::now();
        idle.retain(|i| !i.sender.is_closed() && now.duration_since(i.since) < IDLE_FOR);
        let at = idle.iter().rposition(|i| *i.origin == *origin)?;
        Some(idle.swap_remove(at).sender)
    }

    /// Puts a connection whose last response is complete back for reuse.
    fn checkin(&self, origin: Arc<Origin>, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle.lock();
        if idle.len() >= MAX_IDLE {
            idle.remove(0); // the oldest goes (and closes)
        }
        idle.push(Idle { origin, sender, since: Instant::now() });
    }

    /// A new connection to `origin`, driven by a task of its own.
    async fn connect(&self, origin: &Origin) -> Result<Sender, SendError> {
        let up = async {
            let (host, port) = match &origin.proxy {
                Some(p) => (p.host.as_str(), p.port),
                None => (origin.host.as_str(), origin.port),
            };
            let mut stream = TcpStream::connect((host, port)).await.map_err(SendError::Connect)?;
            let _ = stream.set_nodelay(true);
            if !origin.tls {
                return handshake(stream).await;
            }
            if let Some(p) = &origin.proxy {
                tunnel(&mut stream, origin, p).await?;
            }
            let name = ServerName::try_from(origin.host.clone())
                .map_err(|e| SendError::Tls(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?;
            let tls = self.tls.connect(name, stream).await.map_err(SendError::Tls)?;
            handshake(tls).await
        };
        tokio::time::timeout(self.connect_timeout, up).await.map_err(|_| SendError::ConnectTimeout)?
    }

    /// Sends `req` (origin-form URI, `Host` set) to `origin` and waits for the response
    /// head. The connection returns to the pool when the body has been read to its end.
    pub(super) async fn send(
        self: &Arc<Self>,
        origin: &Arc<Origin>,
        req: hyper::Request<Full<Bytes>>,
    ) -> Result<(hyper::http::response::Parts, PooledBody), SendError> {
        let (mut sender, reused) = match self.checkout(origin) {
            Some(s) => (s, true),
            None => (self.connect(origin).await?, false),
        };
        let resp = match ready(&mut sender).await {
            Ok(()) => sender.try_send_request(req).await,
            Err(_) if reused => return self.send_fresh(origin, req).await,
            Err(e) => return Err(SendError::Hyper(e)),
        };
        let resp = match resp {
            Ok(r) => r,
            Err(mut e) => match e.take_message() {
                // Never written: the reused connection had been closed under us.
                Some(req) if reused => return self.send_fresh(origin, req).await,
                _ => return Err(SendError::Hyper(e.into_error())),
            },
        };
        let (head, body) = resp.into_parts();
        Ok((head, PooledBody::new(body, self.clone(), origin.clone(), sender)))
    }

    async fn send_fresh(
        self: &Arc<Self>,
        origin: &Arc<Origin>,
        req: hyper::Request<Full<Bytes>>,
    ) -> Result<(hyper::http::response::Parts, PooledBody), SendError> {
        let mut sender = self.connect(origin).await?;
        ready(&mut sender).await.map_err(SendError::Hyper)?;
        let resp = sender.send_request(req).await.map_err(SendError::Hyper)?;
        let (head, body) = resp.into_parts();
        Ok((head, PooledBody::new(body, self.clone(), origin.clone(), sender)))
    }
}

/// The HTTP/1.1 handshake over `io`; the connection is driven by a task of its own.
async fn handshake<T>(io: T) -> Result<Sender, SendError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io))
        .await
        .map_err(|e| SendError::Connect(std::io::Error::other(e)))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// Most bytes of a proxy's answer to `CONNECT` read.
const MAX_CONNECT_ANSWER: usize = 8 * 1024;

/// Asks the proxy on `stream` for a tunnel to `origin` (`CONNECT host:port`); `Ok` once the
/// proxy answered 2xx, after which `stream` carries the TLS connection end to end.
async fn tunnel(stream: &mut TcpStream, origin: &Origin, proxy: &ProxyHop) -> Result<(), SendError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = if origin.host.contains(':') {
        format!("[{}]:{}", origin.host, origin.port)
    } else {
        format!("{}:{}", origin.host, origin.port)
    };
    let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n").into_bytes();
    if let Some(auth) = &proxy.authorization {
        head.extend_from_slice(b"Proxy-Authorization: ");
        head.extend_from_slice(auth.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    stream.write_all(&head).await.map_err(SendError::Connect)?;
    let mut answer = Vec::with_capacity(256);
    let mut buf = [0u8; 512];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.map_err(SendError::Connect)?;
        if n == 0 || answer.len() + n > MAX_CONNECT_ANSWER {
            return Err(SendError::Proxy("the proxy closed the connection or answered CONNECT with too much".into()));
        }
        answer.extend_from_slice(&buf[..n]);
    }
    let status_line = answer.split(|b| *b == b'\n').next().unwrap_or_default();
    let status_line = String::from_utf8_lossy(status_line).trim().to_owned();
    let ok = status_line.split_whitespace().nth(1).is_some_and(|code| code.starts_with('2'));
    if ok {
        Ok(())
    } else {
        Err(SendError::Proxy(format!("the proxy refused the tunnel: {status_line}")))
    }
}

/// Waits until the connection can take a request (at once, unless its last response is
/// still being wound up).
async fn ready(sender: &mut Sender) -> Result<(), hyper::Error> {
    if sender.is_ready() {
        return Ok(());
    }
    sender.ready().await
}

/// A response body that gives its connection back to the pool at its end.
pub(super) struct PooledBody {
    body: Incoming,
    /// Until the body ends: where the connection goes back to.
    home: Option<(Arc<Pool>, Arc<Origin>, Sender)>,
}

impl PooledBody {
    fn new(body: Incoming, pool: Arc<Pool>, origin: Arc<Origin>, sender: Sender) -> Self {
        let mut b = Self { body, home: Some((pool, origin, sender)) };
        if b.body.is_end_stream() {
            b.release();
        }
        b
    }

    fn release(&mut self) {
        if let Some((pool, origin, sender)) = self.home.take() {
            pool.checkin(origin, sender);
        }
    }

    /// The body's exact length, when known.
    pub(super) fn exact_len(&self) -> Option<u64> {
        self.body.size_hint().exact()
    }

    /// The next frame; `None` at the end (and the connection is back in the pool).
    pub(super) async fn frame(&mut self) -> Option<Result<Frame<Bytes>, hyper::Error>> {
        let f = self.body.frame().await;
        if f.is_none() || self.body.is_end_stream() {
            self.release();
        }
        f
    }
}

impl Drop for PooledBody {
    fn drop(&mut self) {
        // A body dropped before its end leaves the connection mid-response: it is not reused
        // (dropping the sender lets hyper close it once the response is done with).
        if self.body.is_end_stream() {
            self.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// A server answering every request on a connection with a fixed body; counts accepts.
    async fn server(close_after_first: bool) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = l.local_addr().expect("addr").port();
        let accepts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let a = accepts.clone();
        tokio::spawn(async move {
            for _ in 0..16 {
                let Ok((mut s, _)) = l.accept().await else { return };
                a.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    for _ in 0..64 {
                        let Ok(n) = s.read(&mut buf).await else { return };
                        if n == 0 {
                            return;
                        }
                        let resp = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                        if s.write_all(resp).await.is_err() || close_after_first {
                            return;
                        }
                    }
                });
            }
        });
        (port, accepts)
    }

    fn local(port: u16) -> Arc<Origin> {
        Arc::new(Origin { host: "127.0.0.1".into(), port, tls: false, proxy: None })
    }

    fn get(port: u16) -> hyper::Request<Full<Bytes>> {
        hyper::Request::builder()
            .uri("/mcp")
            .header("host", format!("127.0.0.1:{port}"))
            .body(Full::new(Bytes::new()))
            .expect("request")
    }

    async fn read_all(mut b: PooledBody) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(f) = b.frame().await {
            if let Ok(d) = f.expect("frame").into_data() {
                out.extend_from_slice(&d);
            }
        }
        out
    }

    #[tokio::test]
    async fn a_finished_response_frees_its_connection_for_the_next_request() {
        let (port, accepts) = server(false).await;
        let pool = Pool::new(Duration::from_secs(5), super::super::wire::tls_config(&[]).unwrap());
        for _ in 0..5 {
            let (head, body) = pool.send(&local(port), get(port)).await.expect("sent");
            assert_eq!(head.status, 200);
            assert_eq!(read_all(body).await, b"ok");
        }
        assert_eq!(accepts.load(std::sync::atomic::Ordering::SeqCst), 1, "one connection reused");
    }

    #[tokio::test]
    async fn an_unread_body_keeps_its_connection_out_of_the_pool() {
        let (port, accepts) = server(false).await;
        let pool = Pool::new(Duration::from_secs(5), super::super::wire::tls_config(&[]).unwrap());
        let (_, held) = pool.send(&local(port), get(port)).await.expect("sent");
        let (_, body) = pool.send(&local(port), get(port)).await.expect("sent");
        assert_eq!(read_all(body).await, b"ok");
        drop(held);
        assert_eq!(accepts.load(std::sync::atomic::Ordering::SeqCst), 2, "the busy connection was not shared");
    }

    #[tokio::test]
    async fn a_connection_closed_by_the_server_is_replaced() {
        let (port, accepts) = server(true).await;
        let pool = Pool::new(Duration::from_secs(5), super::super::wire::tls_config(&[]).unwrap());
        for _ in 0..3 {
            let (_, body) = pool.send(&local(port), get(port)).await.expect("sent");
            assert_eq!(read_all(body).await, b"ok");
            // Let the server's close reach the client before the next checkout, sometimes.
            tokio::task::yield_now().await;
        }
        assert_eq!(accepts.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn nothing_listening_is_a_connect_error() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr").port()
        };
        let pool = Pool::new(Duration::from_secs(5), super::super::wire::tls_config(&[]).unwrap());
        match pool.send(&local(port), get(port)).await {
            Err(SendError::Connect(e)) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused),
            other => panic!("expected a connect error, got {:?}", other.map(|(h, _)| h.status)),
        }
    }
}
