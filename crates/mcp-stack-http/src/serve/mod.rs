//! Running the endpoint: the `tower::Service` impl and the hyper accept loop behind [`serve`].
//!
//! The accept loop keeps a table of open connections so that admission stays fair at every cap.
//! At the connection cap a new client takes the place of another instead of waiting behind it:
//! first the connection idle the longest (keep-alive between requests, or a request head not yet
//! complete: both cost nothing to lose), else the oldest listen stream (closed cleanly: its SSE
//! response ends and the client resumes or reconnects). Only connections reading a body or
//! running a handler are never taken; they end within the body and handler limits. Listen
//! streams have their own caps below the connection cap (all of them, and per peer address),
//! where the oldest gives way. Idle connections are also closed after
//! [`ServeConfig::idle_timeout`]. HTTP/1.1 serves one request at a time per connection
//! (pipelined requests wait in the socket, bounded by the head buffer), so a connection's
//! concurrency is one by construction.
//!
//! The drain at shutdown never closes a kept-alive connection under a peer that may be sending
//! on it: a peer cannot know of the drain before it reads a `Connection: close`, so closing an
//! idle connection at the signal loses the request it sent meanwhile (behind a proxy:
//! "upstream prematurely closed connection"). Every response that starts during the drain
//! carries `Connection: close` (its connection closes once it is written); idle connections
//! stay open and answer what arrives, until the whole server has been quiet (nothing in flight
//! or arriving) for [`ServeConfig::drain_idle_grace`], or the drain time is over.

mod config;
mod drain;
mod watch;

use config::Signal;
pub use config::{shutdown_signal, Serve, ServeConfig};
use drain::{close_if, Shutdown};

use crate::body::McpBody;
use crate::service::{EndpointConfig, McpService};
use futures::future::Either;
use futures::task::AtomicWaker;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

/// How long a new connection is not taken for idle (to give way at the connection cap): the
/// accept loop may be back at the cap before the connection's task has read its first request.
const FIRST_REQUEST_GRACE: Duration = Duration::from_secs(1);

/// File descriptors kept free below `RLIMIT_NOFILE` when `max_connections` is clamped to it: the
/// listener, logs, outgoing connections (Redis, token introspection), files a handler opens.
const FD_HEADROOM: u64 = 64;

/// What the accept loop knows about one connection.
struct Conn {
    /// Accept order (ties in age go to the connection accepted first).
    id: u64,
    /// The peer's address (the per-peer cap of listen streams).
    peer: IpAddr,
    /// Requests whose response has not been fully written.
    in_flight: AtomicU32,
    /// When bytes arrived while no request was in flight (nanoseconds since the table's epoch,
    /// plus one; 0 when not reading a head): the head of the next request is coming. The
    /// connection is not idle for the idle timeout; the header timeout runs from here.
    head_since: AtomicU64,
    /// When the connection last became idle, in nanoseconds since the table's epoch (fine
    /// enough that connections served one after another never tie). A new connection's is
    /// [`FIRST_REQUEST_GRACE`] ahead: its first request may not have been read yet.
    idle_since: AtomicU64,
    /// Asked to close: not chosen again.
    evicted: AtomicBool,
    /// When its listen stream opened (nanoseconds since the epoch, plus one), 0 when none is
    /// open. Changed only under the table's lock.
    listen_since: AtomicU64,
    /// Wakes the listen stream's body so that it ends when the stream is evicted.
    stream_waker: AtomicWaker,
    /// Tells the connection's task to close it (gracefully).
    evict: Notify,
}

impl Conn {
    /// Whether the connection is idle at `now` (nanoseconds since the table's epoch).
    fn is_idle(&self, now: u64) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
            && self.head_since.load(Ordering::Acquire) == 0
            && self.idle_since.load(Ordering::Relaxed) <= now
    }

    /// Whether the connection may give way at the connection cap as a cheap one: no request in
    /// flight (idle, or its next head not complete) and past its first-request grace.
    fn is_cheap(&self, now: u64) -> bool {
        !self.evicted.load(Ordering::Acquire)
            && self.in_flight.load(Ordering::Acquire) == 0
            && self.idle_since.load(Ordering::Relaxed) <= now
    }
}

/// The open connections and their listen streams.
struct Inner {
    conns: HashMap<u64, Arc<Conn>>,
    /// Open listen streams, all peers.
    listening: usize,
    /// Open listen streams per owner (entries removed at zero: at most `listening`).
    per_peer: HashMap<StreamKey, usize>,
    /// The owner of each open listen stream, by connection id.
    owners: HashMap<u64, StreamKey>,
}

/// Whom a listen stream counts against for the per-owner cap: its authenticated principal
/// (many users behind one proxy address are told apart), else its peer's address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum StreamKey {
    Principal(Arc<str>),
    Peer(IpAddr),
}

/// The open connections, for choosing which one gives way at a cap.
struct Table {
    epoch: Instant,
    inner: Mutex<Inner>,
    /// Most listen streams at once (all peers).
    listen_cap: usize,
    /// Most listen streams of one peer address (0: no per-peer cap).
    peer_cap: usize,
    /// Connections asked to close that are still open (so one new client evicts one).
    closing: AtomicUsize,
}

impl Table {
    fn new(listen_cap: usize, peer_cap: usize) -> Self {
        let inner = Inner { conns: HashMap::new(), listening: 0, per_peer: HashMap::new(), owners: HashMap::new() };
        Self { epoch: Instant::now(), inner: Mutex::new(inner), listen_cap, peer_cap, closing: AtomicUsize::new(0) }
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    fn insert(&self, id: u64, peer: IpAddr) -> Arc<Conn> {
        let c = Arc::new(Conn {
            id,
            peer,
            in_flight: AtomicU32::new(0),
            head_since: AtomicU64::new(0),
            idle_since: AtomicU64::new(self.now_ns() + FIRST_REQUEST_GRACE.as_nanos() as u64),
            evicted: AtomicBool::new(false),
            listen_since: AtomicU64::new(0),
            stream_waker: AtomicWaker::new(),
            evict: Notify::new(),
        });
        self.lock().conns.insert(id, c.clone());
        c
    }

    fn remove(&self, conn: &Conn) {
        let mut g = self.lock();
        g.conns.remove(&conn.id);
        Self::end_stream(&mut g, conn);
        drop(g);
        if conn.evicted.load(Ordering::Acquire) {
            self.closing.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Connections asked to close that have not closed yet.
    fn closing(&self) -> usize {
        self.closing.load(Ordering::Acquire)
    }

    /// Asks `c` to close (its listen stream, if any, ends first).
    fn evict_locked(&self, g: &mut Inner, c: &Conn) {
        if !c.evicted.swap(true, Ordering::AcqRel) {
            self.closing.fetch_add(1, Ordering::AcqRel);
        }
        if Self::end_stream(g, c) {
            c.stream_waker.wake();
        }
        c.evict.notify_one();
    }

    /// Uncounts `c`'s listen stream; false when it had none open.
    fn end_stream(g: &mut Inner, c: &Conn) -> bool {
        if c.listen_since.swap(0, Ordering::AcqRel) == 0 {
            return false;
        }
        g.listening -= 1;
        let key = g.owners.remove(&c.id).unwrap_or(StreamKey::Peer(c.peer));
        if let Some(n) = g.per_peer.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                g.per_peer.remove(&key);
            }
        }
        true
    }

    /// Makes room for one connection at the connection cap: asks the cheapest connection to
    /// close, the one idle the longest (or with an unfinished head), else the oldest listen
    /// stream. False when every connection is busy with a request.
    fn evict_one(&self) -> bool {
        let now = self.now_ns();
        let mut g = self.lock();
        let cheap = g
            .conns
            .values()
            .filter(|c| c.is_cheap(now))
            .min_by_key(|c| (c.idle_since.load(Ordering::Relaxed), c.id))
            .cloned();
        let victim = cheap.or_else(|| Self::oldest_stream(&g, |_| true));
        match victim {
            Some(c) => {
                self.evict_locked(&mut g, &c);
                true
            }
            None => false,
        }
    }

    /// The open listen stream opened first among connections `keep` selects.
    fn oldest_stream(g: &Inner, keep: impl Fn(&Conn) -> bool) -> Option<Arc<Conn>> {
        g.conns
            .values()
            .filter(|c| c.listen_since.load(Ordering::Acquire) != 0 && !c.evicted.load(Ordering::Acquire) && keep(c))
            .min_by_key(|c| (c.listen_since.load(Ordering::Acquire), c.id))
            .cloned()
    }

    /// Counts `conn`'s new listen stream, owned by `owner` (an authenticated principal) or else
    /// by the peer's address; past the per-owner or the global cap the oldest stream (of that
    /// owner, or of all) is closed to make room for it.
    fn open_stream(&self, conn: &Conn, owner: Option<Arc<str>>) {
        let mut g = self.lock();
        if conn.listen_since.load(Ordering::Acquire) != 0 {
            return;
        }
        conn.listen_since.store(self.now_ns() + 1, Ordering::Release);
        g.listening += 1;
        let key = owner.map_or(StreamKey::Peer(conn.peer), StreamKey::Principal);
        let of_owner = {
            let n = g.per_peer.entry(key.clone()).or_insert(0);
            *n += 1;
            *n
        };
        g.owners.insert(conn.id, key.clone());
        let victim = if self.peer_cap > 0 && of_owner > self.peer_cap {
            Self::oldest_stream(&g, |c| c.id != conn.id && g.owners.get(&c.id) == Some(&key))
        } else if g.listening > self.listen_cap {
            Self::oldest_stream(&g, |c| c.id != conn.id)
        } else {
            None
        };
        if let Some(c) = victim {
            tracing::debug!(peer = %c.peer, listening = g.listening, "listen stream cap: the oldest stream is closed");
            self.evict_locked(&mut g, &c);
        }
    }

    /// Uncounts `conn`'s listen stream when its response is over.
    fn close_stream(&self, conn: &Conn) {
        if conn.listen_since.load(Ordering::Acquire) != 0 {
            Self::end_stream(&mut self.lock(), conn);
        }
    }
}

/// A TCP stream that notes when bytes arrive on an idle connection.
struct Tracked {
    io: TcpStream,
    conn: Arc<Conn>,
    /// The table's epoch (for [`Conn::head_since`]).
    epoch: Instant,
}

impl AsyncRead for Tracked {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before
            && self.conn.in_flight.load(Ordering::Relaxed) == 0
            && self.conn.head_since.load(Ordering::Relaxed) == 0
        {
            let now = self.epoch.elapsed().as_nanos() as u64;
            self.conn.head_since.store(now + 1, Ordering::Release);
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

/// A response body that marks its request finished when hyper is done with it; a listen
/// stream's also ends when the stream is evicted.
pub(crate) struct TrackedBody {
    body: McpBody,
    /// Held for its `Drop`, and for the listen stream's state.
    guard: InFlight,
}

struct InFlight {
    conn: Arc<Conn>,
    table: Arc<Table>,
    /// This response is a listen stream (counted in the table).
    listen: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.listen {
            self.table.close_stream(&self.conn);
        }
        self.conn.idle_since.store(self.table.now_ns(), Ordering::Relaxed);
        self.conn.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Body for TrackedBody {
    type Data = bytes::Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<bytes::Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.guard.listen {
            // Evicted: the stream ends cleanly (the last chunk is written) and the client
            // resumes or reconnects.
            this.guard.conn.stream_waker.register(cx.waker());
            if this.guard.conn.listen_since.load(Ordering::Acquire) == 0 {
                return Poll::Ready(None);
            }
        }
        Pin::new(&mut this.body).poll_frame(cx)
    }
    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }
    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit (once is enough; later calls
/// change nothing) and returns the soft limit now in force; `None` where there is none to read
/// (not Unix) or it is unlimited. [`serve`] calls it and keeps `max_connections` below it.
pub fn raise_fd_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        let lim = getrlimit(Resource::Nofile);
        // An unlimited hard limit is refused for NOFILE on some systems: aim at a large number.
        let target = lim.maximum.unwrap_or(1 << 20);
        if lim.current.is_some_and(|c| c < target) {
            let raised = Rlimit { current: Some(target), maximum: lim.maximum };
            if let Err(e) = setrlimit(Resource::Nofile, raised) {
                tracing::debug!(error = %e, "could not raise RLIMIT_NOFILE");
            }
        }
        getrlimit(Resource::Nofile).current
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// `max` connections kept below a file-descriptor limit of `fd_limit` (one descriptor each,
/// [`FD_HEADROOM`] or half the limit, whichever is less, left for everything else); at least 1.
pub(crate) fn clamp_to_fd_limit(max: usize, fd_limit: Option<u64>) -> usize {
    let Some(limit) = fd_limit else { return max };
    let room = limit - FD_HEADROOM.min(limit / 2);
    max.min(usize::try_from(room).unwrap_or(usize::MAX)).max(1)
}

/// The listen-stream cap in force: the configured one, at most half the connection cap (so
/// streams never hold every connection), at least 1.
pub(crate) fn listen_cap(configured: usize, max_connections: usize) -> usize {
    configured.min(max_connections / 2).max(1)
}

/// Whether an accept error means the process or system is out of file descriptors.
fn out_of_fds(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        let raw = e.raw_os_error();
        raw == Some(rustix::io::Errno::MFILE.raw_os_error()) || raw == Some(rustix::io::Errno::NFILE.raw_os_error())
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// A log line at most once a second, with the count of the ones left out.
struct RateLimited {
    last: Option<Instant>,
    suppressed: u64,
}

impl RateLimited {
    /// Whether to log now, and how many were suppressed since the last line.
    fn allow(&mut self, now: Instant) -> Option<u64> {
        match self.last {
            Some(t) if now.duration_since(t) < Duration::from_secs(1) => {
                self.suppressed += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.suppressed))
            }
        }
    }
}

/// Accepts connections on `listener` and serves the MCP endpoint at [`ServeConfig::path`]
/// (default `/mcp`) until the server shuts down ([`mcp_server::Server::shutdown`]) or the
/// signal of [`Serve::with_graceful_shutdown`] resolves, then drains (see there).
///
/// Limits (see [`ServeConfig`] and [`EndpointConfig`]): at most `max_connections` open at once,
/// kept below the file descriptor limit (raised to its hard limit first, [`raise_fd_limit`]);
/// at the cap an idle connection, one with an unfinished request head, or else the oldest
/// listen stream gives way to a new client; listen streams capped in all and per peer (the
/// oldest gives way); request heads within `max_head_bytes` (431) and `header_read_timeout`;
/// idle keep-alive connections closed after `idle_timeout`; bodies within the size, time and
/// memory limits. Running out of file descriptors on accept is handled like the cap (one
/// connection gives way, a short pause, one log line a second at most).
///
/// ```no_run
/// # async fn demo(server: mcp_server::Server) -> std::io::Result<()> {
/// use mcp_http::{serve, shutdown_signal, EndpointConfig, ServeConfig};
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// serve(server, listener, EndpointConfig::default())
///     .config(ServeConfig::default().max_connections(1024))
///     .with_graceful_shutdown(shutdown_signal())
///     .await
/// # }
/// ```
pub fn serve(server: mcp_server::Server, listener: TcpListener, config: EndpointConfig) -> Serve {
    Serve { setup: Some((server, listener, config, ServeConfig::default(), None)), running: None }
}

pub(super) async fn run(
    server: mcp_server::Server,
    listener: TcpListener,
    endpoint: EndpointConfig,
    mut config: ServeConfig,
    signal: Option<Signal>,
) -> std::io::Result<()> {
    let fd_limit = raise_fd_limit();
    let max = clamp_to_fd_limit(config.max_connections, fd_limit);
    if max < config.max_connections {
        tracing::warn!(
            max_connections = config.max_connections,
            fd_limit = fd_limit.unwrap_or_default(),
            clamped = max,
            "max_connections lowered below the file-descriptor limit (RLIMIT_NOFILE)"
        );
        config.max_connections = max;
    }
    let shutdown = server.shutdown_token();
    if let Some(signal) = signal {
        let (server, shutdown) = (server.clone(), shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = signal => server.shutdown(),
                () = shutdown.cancelled() => {}
            }
        });
    }
    let limit = Arc::new(Semaphore::new(config.max_connections));
    let table = Arc::new(Table::new(
        listen_cap(config.max_listen_streams, config.max_connections),
        config.max_listen_streams_per_peer,
    ));
    let (max_conns, drain) = (config.max_connections, config.drain_timeout);
    let quiet_for = (config.drain_idle_grace, config.header_read_timeout);
    let config = Arc::new(config);
    let stop = Arc::new(Shutdown {
        started: shutdown.clone(),
        quiet: tokio_util::sync::CancellationToken::new(),
        abort: tokio_util::sync::CancellationToken::new(),
    });
    let svc = McpService::new(server.clone(), endpoint);
    let mut next_id = 0u64;
    let mut accept_log = RateLimited { last: None, suppressed: 0 };
    'accept: loop {
        let (stream, peer): (_, SocketAddr) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // Out of descriptors: like the cap, one connection gives way; a short
                    // pause either way (the failing connection stays in the backlog).
                    let fds = out_of_fds(&e);
                    if fds && table.closing() == 0 {
                        table.evict_one();
                    }
                    if let Some(suppressed) = accept_log.allow(Instant::now()) {
                        tracing::warn!(error = %e, suppressed, "accept failed");
                    }
                    tokio::time::sleep(Duration::from_millis(if fds { 50 } else { 10 })).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break 'accept,
        };
        let permit = match limit.clone().try_acquire_owned() {
            Ok(p) => p,
            // At the cap: one connection makes room (unless one asked already is closing); when
            // none can, wait (checking again as connections finish their requests).
            Err(_) => loop {
                if table.closing() == 0 {
                    table.evict_one();
                }
                tokio::select! {
                    p = limit.clone().acquire_owned() => break p.expect("semaphore open"),
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    _ = shutdown.cancelled() => break 'accept,
                }
            },
        };
        let _ = stream.set_nodelay(true);
        next_id += 1;
        let conn = table.insert(next_id, peer.ip());
        let (svc, stop, table, config) = (svc.clone(), stop.clone(), table.clone(), config.clone());
        tokio::spawn(async move {
            let io = Tracked { io: stream, conn: conn.clone(), epoch: table.epoch };
            serve_connection(svc, io, &table, &config, &stop, peer).await;
            table.remove(&conn);
            drop(permit);
        });
    }
    // Stop accepting: new connections are refused from here on.
    drop(listener);
    // The drain (see the module docs): listen streams end with their closing response (the
    // server's shutdown), responses carry `Connection: close`, idle connections stay open until
    // the server is quiet; all are closed when every permit is back.
    let all = u32::try_from(max_conns).unwrap_or(u32::MAX);
    let open = max_conns - limit.available_permits();
    if open > 0 {
        tracing::info!(connections = open, drain_secs = drain.as_secs_f64(), "shutting down: draining connections");
    }
    let deadline = tokio::time::Instant::now() + drain;
    let all_closed = limit.acquire_many(all);
    let mut all_closed = std::pin::pin!(all_closed);
    let closed = tokio::select! {
        _ = all_closed.as_mut() => true,
        () = table.quiet(table.now_ns(), quiet_for, deadline) => false,
    };
    stop.quiet.cancel();
    if !closed && tokio::time::timeout_at(deadline, all_closed.as_mut()).await.is_err() {
        let left = max_conns - limit.available_permits();
        tracing::warn!(connections = left, "drain time over: closing the connections still open");
        stop.abort.cancel();
        // Dropped connections give their permits back at once.
        let _ = tokio::time::timeout(Duration::from_secs(1), all_closed).await;
    }
    // Tasks (the tasks extension) ran on meanwhile; they get what is left of the drain time.
    server.drain_tasks(deadline.saturating_duration_since(tokio::time::Instant::now())).await;
    Ok(())
}

async fn serve_connection(
    svc: McpService,
    io: Tracked,
    table: &Arc<Table>,
    config: &Arc<ServeConfig>,
    stop: &Shutdown,
    peer: SocketAddr,
) {
    let conn = io.conn.clone();
    let (header_timeout, idle_timeout) = (config.header_read_timeout, config.idle_timeout);
    let head_bytes = config.max_head_bytes.max(MIN_HEAD_BYTES);
    let known_peer = svc.server.needs_peer_address().then_some(peer);
    let service = {
        let (conn, table, config, draining) = (conn.clone(), table.clone(), config.clone(), stop.started.clone());
        // One pointer to clone per request rather than the service's four.
        let svc = Arc::new(svc);
        hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
            conn.in_flight.fetch_add(1, Ordering::AcqRel);
            conn.head_since.store(0, Ordering::Release);
            let mut guard = InFlight { conn: conn.clone(), table: table.clone(), listen: false };
            if req.uri().path() != config.path {
                let mut off = off_path(&svc, &req, &config.path);
                close_if(&draining, &mut off);
                return futures::future::Either::Left(std::future::ready(Ok(
                    off.map(|body| TrackedBody { body, guard })
                )));
            }
            let (svc, draining) = (svc.clone(), draining.clone());
            // The request's own future: what it holds is moved whole per request.
            futures::future::Either::Right(async move {
                let mut resp = svc.handle_from(req, crate::service::Peer { known: known_peer, conn: Some(peer) }).await;
                close_if(&draining, &mut resp);
                let listen = resp.extensions().get::<crate::service::StreamOwner>();
                if let Some(owner) = listen.filter(|_| resp.status() == http::StatusCode::OK) {
                    guard.table.open_stream(&guard.conn, owner.0.clone());
                    guard.listen = true;
                }
                Ok::<_, Infallible>(resp.map(|body| TrackedBody { body, guard }))
            })
        })
    };
    // The header timeout is this task's (below), not hyper's: hyper's sets a timer per request
    // (about 3% of a request's instructions) and polls the socket once more after each head.
    let http = hyper::server::conn::http1::Builder::new()
        .header_read_timeout(None)
        .max_buf_size(head_bytes)
        .keep_alive(true)
        // One write per response (head and body flattened). Not `pipeline_flush`, which also
        // sets this but holds back every flush while the read buffer has bytes: a head too
        // large for the buffer would never see its 431.
        .writev(false)
        .serve_connection(hyper_util::rt::TokioIo::new(io), service);
    let mut http = std::pin::pin!(http);
    let timeouts = watch::Timeouts { header: header_timeout, idle: idle_timeout };
    let side = watch::watch(&conn, table, &stop.started, timeouts, peer);
    let mut side = std::pin::pin!(side);
    let closing = match watch::first(http.as_mut(), side.as_mut()).await {
        Either::Left(r) => {
            if let Err(e) = r {
                tracing::debug!(%peer, error = %e, "connection ended with error");
            }
            return;
        }
        Either::Right(watch::Stop::Now) => return,
        Either::Right(watch::Stop::Graceful(bound)) => Some(bound),
        Either::Right(watch::Stop::Drain) => None,
    };
    let Some(bound) = closing else {
        // The drain: served on (each response closes its connection, `close_if`) until the
        // server is quiet, then closed like below; dropped at the drain's bound.
        let quiet = stop.quiet.cancelled();
        let mut quiet = std::pin::pin!(quiet);
        if let Either::Left(r) = watch::first(http.as_mut(), quiet.as_mut()).await {
            if let Err(e) = r {
                tracing::debug!(%peer, error = %e, "connection ended with error");
            }
            return;
        }
        http.as_mut().graceful_shutdown();
        tokio::select! {
            _ = http => {}
            () = stop.abort.cancelled() => tracing::debug!(%peer, "drain time over: connection closed"),
        }
        return;
    };
    // Graceful: an idle connection closes at once, one with a request finishes it first (and
    // then closes, `Connection: close`).
    http.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(bound, http).await;
}

/// The answer to a request off the endpoint's path: the protected-resource metadata at its
/// well-known paths when the endpoint requires authorization, else 404.
fn off_path<B>(svc: &McpService, req: &Request<B>, path: &str) -> Response<McpBody> {
    if let Some(auth) = &svc.config().auth {
        if auth.is_metadata_path(req.uri().path(), path) {
            return crate::service::metadata_response(auth, req.method());
        }
    }
    crate::service::status_only(http::StatusCode::NOT_FOUND)
}

/// hyper's smallest read buffer: [`ServeConfig::max_head_bytes`] below it is raised to it.
pub(crate) const MIN_HEAD_BYTES: usize = 8192;

#[cfg(test)]
mod tests;
