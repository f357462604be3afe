//! Running the endpoint: the `tower::Service` impl and the hyper accept loop behind [`serve`].
//!
//! The accept loop keeps a table of open connections so that admission stays fair at the
//! connection cap: a connection that is idle between requests (keep-alive, nothing being read)
//! is the cheapest to lose, so a new client takes the place of the one idle the longest instead
//! of waiting behind it. Idle connections are also closed after [`HttpConfig::idle_timeout`].
//! HTTP/1.1 serves one request at a time per connection (pipelined requests wait in the socket,
//! bounded by hyper's read buffer), so a connection's concurrency is one by construction.

use crate::body::McpBody;
use crate::service::{HttpConfig, McpService, RequestBody};
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

impl<B: RequestBody> tower_service::Service<Request<B>> for McpService {
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let svc = self.clone();
        Box::pin(async move { Ok(svc.handle(req).await) })
    }
}

/// How long a new connection is not taken for idle (to give way at the connection cap): the
/// accept loop may be back at the cap before the connection's task has read its first request.
const FIRST_REQUEST_GRACE: Duration = Duration::from_secs(1);

/// What the accept loop knows about one connection.
struct Conn {
    /// Requests whose response has not been fully written.
    in_flight: AtomicU32,
    /// Bytes arrived while no request was in flight: the head of the next request is coming.
    reading_head: AtomicBool,
    /// When the connection last became idle, in nanoseconds since the table's epoch (fine
    /// enough that connections served one after another never tie). A new connection's is
    /// [`FIRST_REQUEST_GRACE`] ahead: its first request may not have been read yet.
    idle_since: AtomicU64,
    /// Tells the connection's task to close it (gracefully).
    evict: Notify,
}

impl Conn {
    /// Whether the connection is idle at `now` (nanoseconds since the table's epoch).
    fn is_idle(&self, now: u64) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
            && !self.reading_head.load(Ordering::Acquire)
            && self.idle_since.load(Ordering::Relaxed) <= now
    }
}

/// The open connections, for choosing which idle one gives way at the cap.
struct Table {
    epoch: Instant,
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl Table {
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn insert(&self, id: u64) -> Arc<Conn> {
        let c = Arc::new(Conn {
            in_flight: AtomicU32::new(0),
            reading_head: AtomicBool::new(false),
            idle_since: AtomicU64::new(self.now_ns() + FIRST_REQUEST_GRACE.as_nanos() as u64),
            evict: Notify::new(),
        });
        self.conns.lock().expect("connection table").insert(id, c.clone());
        c
    }

    fn remove(&self, id: u64) {
        self.conns.lock().expect("connection table").remove(&id);
    }

    /// Asks the connection idle the longest to close; false when none is idle.
    fn evict_oldest_idle(&self) -> bool {
        let now = self.now_ns();
        let conns = self.conns.lock().expect("connection table");
        // Ties (same instant) go to the connection accepted first.
        let oldest = conns
            .iter()
            .filter(|(_, c)| c.is_idle(now))
            .min_by_key(|(id, c)| (c.idle_since.load(Ordering::Relaxed), **id))
            .map(|(_, c)| c);
        match oldest {
            Some(c) => {
                // Not idle any more as far as the next eviction is concerned.
                c.reading_head.store(true, Ordering::Release);
                c.evict.notify_one();
                true
            }
            None => false,
        }
    }
}

/// A TCP stream that notes when bytes arrive on an idle connection.
struct Tracked {
    io: TcpStream,
    conn: Arc<Conn>,
}

impl AsyncRead for Tracked {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before && self.conn.in_flight.load(Ordering::Relaxed) == 0 {
            self.conn.reading_head.store(true, Ordering::Release);
        }
        r
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// A response body that marks its request finished when hyper is done with it.
pub(crate) struct TrackedBody {
    body: McpBody,
    /// Held only for its `Drop`.
    _guard: InFlight,
}

struct InFlight {
    conn: Arc<Conn>,
    table: Arc<Table>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.conn.idle_since.store(self.table.now_ns(), Ordering::Relaxed);
        self.conn.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Body for TrackedBody {
    type Data = bytes::Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<bytes::Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }
    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }
    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Accepts connections on `listener` and serves the MCP endpoint until the server shuts down.
///
/// Limits (see [`HttpConfig`]): at most `max_connections` open at once (an idle one gives way
/// to a new client at the cap), headers within `header_read_timeout`, idle keep-alive
/// connections closed after `idle_timeout`, bodies within the size, time and memory limits.
pub async fn serve(server: mcp_server::Server, listener: TcpListener, config: HttpConfig) -> std::io::Result<()> {
    let shutdown = server.shutdown_token();
    let limit = Arc::new(Semaphore::new(config.max_connections));
    let table = Arc::new(Table { epoch: Instant::now(), conns: Mutex::new(HashMap::new()) });
    let svc = McpService::new(server, config);
    let mut next_id = 0u64;
    loop {
        let (stream, peer): (_, SocketAddr) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => { tracing::warn!(error = %e, "accept failed"); tokio::time::sleep(Duration::from_millis(10)).await; continue; }
            },
            _ = shutdown.cancelled() => return Ok(()),
        };
        let permit = match limit.clone().try_acquire_owned() {
            Ok(p) => p,
            // At the cap: the connection idle the longest makes room; when none is idle, wait
            // (checking again as connections finish their requests).
            Err(_) => loop {
                table.evict_oldest_idle();
                tokio::select! {
                    p = limit.clone().acquire_owned() => break p.expect("semaphore open"),
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    _ = shutdown.cancelled() => return Ok(()),
                }
            },
        };
        let _ = stream.set_nodelay(true);
        next_id += 1;
        let id = next_id;
        let conn = table.insert(id);
        let (svc, shutdown, table) = (svc.clone(), shutdown.clone(), table.clone());
        tokio::spawn(async move {
            serve_connection(svc, Tracked { io: stream, conn: conn.clone() }, &table, &shutdown, peer).await;
            table.remove(id);
            drop(permit);
        });
    }
}

async fn serve_connection(
    svc: McpService,
    io: Tracked,
    table: &Arc<Table>,
    shutdown: &tokio_util::sync::CancellationToken,
    peer: SocketAddr,
) {
    let conn = io.conn.clone();
    let (header_timeout, idle_timeout) = (svc.config().header_read_timeout, svc.config().idle_timeout);
    let service = {
        let (conn, table) = (conn.clone(), table.clone());
        hyper::service::service_fn(move |req| {
            conn.in_flight.fetch_add(1, Ordering::AcqRel);
            conn.reading_head.store(false, Ordering::Release);
            let guard = InFlight { conn: conn.clone(), table: table.clone() };
            let svc = svc.clone();
            async move { Ok::<_, Infallible>(svc.handle(req).await.map(|body| TrackedBody { body, _guard: guard })) }
        })
    };
    let http = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true)
        .pipeline_flush(true)
        .serve_connection(hyper_util::rt::TokioIo::new(io), service);
    let mut http = std::pin::pin!(http);
    let idle_check = tokio::time::sleep(idle_timeout);
    let mut idle_check = std::pin::pin!(idle_check);
    let closing = loop {
        tokio::select! {
            r = http.as_mut() => {
                if let Err(e) = r { tracing::debug!(%peer, error = %e, "connection ended with error") }
                return;
            }
            _ = shutdown.cancelled() => break Duration::from_secs(5),
            _ = conn.evict.notified() => break Duration::from_secs(1),
            _ = idle_check.as_mut() => {
                let (since, now) = (conn.idle_since.load(Ordering::Relaxed), table.now_ns());
                let idle = conn.is_idle(now);
                let idle_for = Duration::from_nanos(now.saturating_sub(since));
                if idle && idle_for >= idle_timeout {
                    break Duration::from_secs(1);
                }
                let wait = if idle { idle_timeout - idle_for } else { idle_timeout };
                idle_check.as_mut().reset(Instant::now() + wait);
            }
        }
    };
    // Graceful: an idle connection closes at once, one with a request finishes it first.
    http.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(closing, http).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_a_tie_the_connection_accepted_first_gives_way() {
        let table = Table { epoch: Instant::now(), conns: Mutex::new(HashMap::new()) };
        let conns: Vec<_> = (1..=50).map(|id| table.insert(id)).collect();
        assert!(!table.evict_oldest_idle(), "a new connection (its first request maybe unread) is not idle");
        // Every connection became idle at the same instant (a coarse clock would do this).
        for c in &conns {
            c.idle_since.store(7, Ordering::Relaxed);
        }
        conns[0].idle_since.store(8, Ordering::Relaxed);
        assert!(table.evict_oldest_idle());
        assert!(conns[1].reading_head.load(Ordering::Acquire), "the second accepted is the oldest idle one");
        assert!(conns.iter().enumerate().all(|(i, c)| i == 1 || !c.reading_head.load(Ordering::Acquire)));
        assert!(table.evict_oldest_idle());
        assert!(conns[2].reading_head.load(Ordering::Acquire), "then the third");
    }
}
