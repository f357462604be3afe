//! What [`serve`](super::serve) is configured with and returns: the connection settings, the
//! running server as a future, and the usual shutdown signal.

use super::run;
use crate::service::EndpointConfig;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;

/// What ends a graceful [`Serve`].
pub(super) type Signal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Connection settings of [`serve`](super::serve): what takes effect on the TCP connections it accepts, and
/// the path it serves the endpoint at. Defaults are safe for a local server. Under axum (or any
/// other hosting server) these do not apply; that server's own settings do.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Path of the MCP endpoint (default `/mcp`); any other path gets 404 (the RFC 9728
    /// metadata paths excepted, when the endpoint requires authorization).
    pub path: String,
    /// Most concurrent connections (default 4096; kept below the file-descriptor limit). At
    /// the cap, a new connection closes the connection idle the longest (keep-alive, or a
    /// request head not complete), else the oldest listen stream; when every connection is busy
    /// with a request it waits in the accept queue.
    pub max_connections: usize,
    /// Longest wait for a request's headers on a connection (default 30 s; slow-loris guard).
    pub header_read_timeout: Duration,
    /// Largest request head (request line and headers) in bytes (default 32 KiB, at least
    /// 8 KiB): the read buffer of a connection; a larger head gets 431 and the connection closes.
    pub max_head_bytes: usize,
    /// How long a keep-alive connection may sit idle between requests (default 10 s; shorter
    /// than the header timeout so idle connections cannot hold the connection table).
    pub idle_timeout: Duration,
    /// Most open listen streams (`subscriptions/listen` responses and legacy GET streams;
    /// default 2048, at most half of [`ServeConfig::max_connections`]). Past it the oldest
    /// stream is closed cleanly (its SSE response ends; the client reconnects or resumes).
    pub max_listen_streams: usize,
    /// Most open listen streams of one caller (default 128; 0 = no per-caller cap): of one
    /// authenticated principal, or of one peer IP address without authorization. Past it that
    /// caller's oldest stream is closed, so one caller cannot push out the streams of others.
    /// Behind a reverse proxy unauthenticated clients share the proxy's address: raise it.
    pub max_listen_streams_per_peer: usize,
    /// At shutdown, how long requests in flight, and tasks of the tasks extension running in
    /// this process, may take to finish (default 10 s). Past it the connections still open are
    /// closed (their requests lost), the tasks still running fail, and both numbers are logged.
    pub drain_timeout: Duration,
    /// During the drain, how long the server must have been quiet (no request in flight, none
    /// arriving) before the kept-alive connections left open are closed (default 1 s; bounded
    /// by [`ServeConfig::drain_timeout`]). Until then a request arriving on one is answered,
    /// with `Connection: close`. See [`Serve::with_graceful_shutdown`].
    pub drain_idle_grace: Duration,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            path: "/mcp".into(),
            max_connections: 4096,
            header_read_timeout: Duration::from_secs(30),
            max_head_bytes: 32 << 10,
            idle_timeout: Duration::from_secs(10),
            max_listen_streams: 2048,
            max_listen_streams_per_peer: 128,
            drain_timeout: Duration::from_secs(10),
            drain_idle_grace: Duration::from_secs(1),
        }
    }
}

impl ServeConfig {
    /// The endpoint's path (the `path` field).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The connection cap (the `max_connections` field).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n;
        self
    }

    /// The bound on draining at shutdown (the `drain_timeout` field).
    pub fn drain_timeout(mut self, d: Duration) -> Self {
        self.drain_timeout = d;
        self
    }

    /// The quiet time that ends a drain (the `drain_idle_grace` field).
    pub fn drain_idle_grace(mut self, d: Duration) -> Self {
        self.drain_idle_grace = d;
        self
    }
}

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM (what systemd, Docker and Kubernetes send
/// to stop a service): the usual signal for [`Serve::with_graceful_shutdown`].
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    () = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => ctrl_c.await,
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await
}

type Running = Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>;

/// The running [`serve`](super::serve): a future (await it, or `tokio::spawn` it) with builder methods for
/// the connection settings and the shutdown signal, to be called before it is first polled.
#[must_use = "a Serve does nothing until awaited or spawned"]
pub struct Serve {
    pub(super) setup: Option<(mcp_server::Server, TcpListener, EndpointConfig, ServeConfig, Option<Signal>)>,
    pub(super) running: Option<Running>,
}

impl std::fmt::Debug for Serve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serve").field("started", &self.running.is_some()).finish_non_exhaustive()
    }
}

impl Serve {
    /// The connection settings (default [`ServeConfig::default`]).
    pub fn config(mut self, config: ServeConfig) -> Self {
        if let Some(setup) = &mut self.setup {
            setup.3 = config;
        }
        self
    }

    /// Shuts down gracefully when `signal` resolves (e.g. [`shutdown_signal`]), as when the
    /// server's [`mcp_server::Server::shutdown`] is called. The drain:
    /// - the listener closes (new connections are refused) and listen streams end with their
    ///   closing response;
    /// - requests in flight finish; every response that starts during the drain carries
    ///   `Connection: close`, and its connection closes once it is written;
    /// - kept-alive connections stay open: a request that arrives on one (a peer may have sent
    ///   it before it could know of the drain) is answered, with `Connection: close`;
    /// - the drain ends when no connection is left, or once no request has been in flight or
    ///   arriving for [`ServeConfig::drain_idle_grace`] (then the idle connections close), or
    ///   at [`ServeConfig::drain_timeout`] (then every connection still open is closed);
    ///
    /// then the future resolves (after the tasks of the tasks extension, within what is left
    /// of the drain time).
    pub fn with_graceful_shutdown(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        if let Some(setup) = &mut self.setup {
            setup.4 = Some(Box::pin(signal));
        }
        self
    }
}

impl Future for Serve {
    type Output = std::io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if let Some((server, listener, endpoint, config, signal)) = self.setup.take() {
            self.running = Some(Box::pin(run(server, listener, endpoint, config, signal)));
        }
        match &mut self.running {
            Some(f) => f.as_mut().poll(cx),
            None => Poll::Ready(Ok(())),
        }
    }
}
