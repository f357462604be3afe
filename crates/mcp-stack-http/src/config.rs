//! [`EndpointConfig`]: what the endpoint checks and how it answers, wherever it is mounted;
//! and [`RequestBody`], the request bodies it reads.

use crate::cors::CorsConfig;
use mcp_auth::AuthConfig;
use mcp_protocol::strict::DEFAULT_MAX_DEPTH;
use std::sync::Arc;
use std::time::Duration;

/// Settings of the MCP endpoint ([`crate::McpService`]): what it checks and how it answers, wherever it
/// is mounted (under [`crate::serve`], in an axum `Router`, behind tower layers). Defaults are
/// safe for a local server. The connection settings of [`crate::serve`] (connection cap,
/// header and idle timeouts, listen-stream caps, drain time, the path) are in
/// [`crate::ServeConfig`]; under axum the hosting server's own connection settings apply.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Largest accepted request body in bytes (default 2 MiB); larger gets 413.
    pub max_body_bytes: usize,
    /// Deepest accepted JSON nesting (default 64).
    pub max_depth: usize,
    /// Accepted `Host` names without port (default: `localhost`, `127.0.0.1`, `[::1]`); empty = any.
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin`s: exact origins (`https://app.example`) or `host:NAME` for any scheme
    /// and port on NAME (default: the loopback hosts). Requests without `Origin` are accepted.
    pub allowed_origins: Vec<String>,
    /// Interval of SSE keep-alive comments on listen streams (default 15 s).
    pub keep_alive: Duration,
    /// Longest time to receive a whole request body (default 30 s); past it, 408.
    pub body_read_timeout: Duration,
    /// Longest gap between two pieces of a request body (default 10 s); past it, 408.
    pub body_idle_timeout: Duration,
    /// Most request-body bytes held in memory by all requests together (default 64 MiB).
    pub max_body_bytes_in_flight: usize,
    /// How long a request waits for room in [`EndpointConfig::max_body_bytes_in_flight`] before it
    /// gets 503 with `Retry-After` (default 2 s).
    pub body_budget_wait: Duration,
    /// After a refused body (413) the rest of the body is read and discarded in the background,
    /// up to this many bytes (default 64 MiB), so a client still writing its body reads the
    /// answer instead of a connection reset.
    pub linger_bytes: usize,
    /// Longest time spent discarding in that lingering read (default 5 s).
    pub linger_time: Duration,
    /// OAuth 2.1 resource-server protection (default `None`: open). When set, every request
    /// needs a valid bearer token (checked right after Host/Origin, before the body is read) and
    /// handlers see the token subject as `ctx.principal()`. The protected-resource metadata is
    /// served by [`crate::serve`] and `router` (feature `axum`) or an [`crate::AuthLayer`]; the
    /// `auth()` setter also accepts the resource's host.
    pub auth: Option<Arc<AuthConfig>>,
    /// Most open legacy (initialize-based) sessions (default 1024; 0 refuses legacy clients).
    /// When full, expired sessions are dropped first, then the least recently used one (by
    /// last request; an open GET stream does not protect it) that has no call in flight.
    pub max_sessions: usize,
    /// Most open legacy sessions of one client (default 64): its principal when authenticated,
    /// else its peer IP address (the `std::net::SocketAddr` in the request's extensions, which
    /// [`crate::serve`] puts there; behind a proxy every client shares one). A new session past
    /// it ends that client's least recently used one.
    pub max_sessions_per_client: usize,
    /// How long a new legacy session may wait for `notifications/initialized` (default 60 s);
    /// a session not initialized by then is dropped.
    pub session_init_timeout: Duration,
    /// Most bytes of `capabilities` and `clientInfo` (serialized) a legacy `initialize` may
    /// carry (default 64 KiB): the session keeps them for its life. Over it: `-32602`.
    pub max_initialize_params_bytes: usize,
    /// How long an unused legacy session lives (default 30 minutes).
    pub session_idle: Duration,
    /// Cross-origin access for browser clients (default `None`: no CORS headers, `OPTIONS`
    /// gets 405). Its origins are accepted by the `Origin` check too.
    pub cors: Option<CorsConfig>,
    /// Where legacy sessions live when several instances serve the same clients (default
    /// `None`: in this process). With a shared store any instance serves any session's
    /// requests, streams and answers (see [`crate::SessionStore`]).
    #[cfg(feature = "legacy")]
    pub session_store: Option<Arc<dyn crate::SessionStore>>,
    /// Most notifications one call holds while its client has not read them (default 256).
    /// When full, a progress notification replaces the queued one of the same `progressToken`;
    /// any other is dropped, counted and logged (`warn`, on the 1st, 2nd, 4th... drop).
    pub max_queued_notifications: usize,
    /// Drops past which a call is cancelled (default 100 000): its handler's cancellation
    /// token fires and its response ends with a `-32603` error.
    pub max_dropped_notifications: u64,
    /// How long a call's notification queue may stay full, its client taking nothing, before
    /// the call is cancelled the same way (default 30 s).
    pub notification_stall: Duration,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        let hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "[::1]".to_owned()];
        Self {
            max_body_bytes: 2 << 20,
            max_depth: DEFAULT_MAX_DEPTH,
            allowed_origins: hosts.iter().map(|h| format!("host:{h}")).collect(),
            allowed_hosts: hosts,
            keep_alive: Duration::from_secs(15),
            body_read_timeout: Duration::from_secs(30),
            body_idle_timeout: Duration::from_secs(10),
            max_body_bytes_in_flight: 64 << 20,
            body_budget_wait: Duration::from_secs(2),
            linger_bytes: 64 << 20,
            linger_time: Duration::from_secs(5),
            auth: None,
            max_sessions: 1024,
            session_idle: Duration::from_secs(30 * 60),
            max_sessions_per_client: 64,
            session_init_timeout: Duration::from_secs(60),
            max_initialize_params_bytes: 64 << 10,
            cors: None,
            #[cfg(feature = "legacy")]
            session_store: None,
            max_queued_notifications: 256,
            max_dropped_notifications: 100_000,
            notification_stall: Duration::from_secs(30),
        }
    }
}

impl EndpointConfig {
    /// Accepts `host` (a name without port, any case) as a `Host` and, on any scheme and port,
    /// as an `Origin`: the name clients use for this server beside the loopback defaults.
    pub fn allow_host(mut self, host: impl AsRef<str>) -> Self {
        let host = host.as_ref().to_ascii_lowercase();
        if !self.allowed_hosts.contains(&host) {
            self.allowed_origins.push(format!("host:{host}"));
            self.allowed_hosts.push(host);
        }
        self
    }

    /// Requires bearer tokens checked by `auth` (the `auth` field), and accepts the host
    /// of its canonical resource URI (`https://mcp.example/mcp` -> `mcp.example`) as a `Host` and
    /// `Origin`: the name clients use for this server.
    pub fn auth(mut self, auth: Arc<AuthConfig>) -> Self {
        if let Some((_, authority, _)) = mcp_auth::metadata::split_uri(auth.resource()) {
            let host =
                authority.rsplit_once(':').filter(|(_, p)| p.parse::<u16>().is_ok()).map_or(authority, |(h, _)| h);
            let host = host.to_owned();
            self = self.allow_host(host);
        }
        self.auth = Some(auth);
        self
    }

    /// Cross-origin access for browser clients (the `cors` field).
    pub fn cors(mut self, cors: CorsConfig) -> Self {
        self.cors = Some(cors);
        self
    }

    /// The largest accepted request body (the `max_body_bytes` field).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Where legacy sessions live (the `session_store` field).
    #[cfg(feature = "legacy")]
    pub fn session_store(mut self, store: Arc<dyn crate::SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }
}

/// A request body the endpoint can read: any `http_body::Body` of bytes (hyper's `Incoming`,
/// `axum::body::Body`, `http_body_util::Full`, ...).
pub trait RequestBody:
    http_body::Body<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}

impl<B> RequestBody for B where
    B: http_body::Body<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}
