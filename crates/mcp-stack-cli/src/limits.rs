//! The transport limits of `mcp serve`, as flags. Every limit is on by default (the library's
//! defaults); the flags only move them.

use mcp::server::access_log::AccessLog;
use mcp::server::rate_limit::{Quota, RateLimits};
use std::time::Duration;

/// Limits of `mcp serve` (HTTP and stdio).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeLimits {
    /// Largest request body in bytes (HTTP, default 2 MiB) or request line (stdio, default 4 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_body_bytes: Option<usize>,
    /// Most request-body bytes held in memory by all HTTP requests together (default 64 MiB);
    /// past it requests wait briefly, then get 503 with Retry-After.
    #[arg(long, value_name = "BYTES")]
    pub max_body_bytes_in_flight: Option<usize>,
    /// Most open HTTP connections (default 4096, kept 64 below the file-descriptor limit); at
    /// the cap the longest-idle one (or one with an unfinished head), else the oldest listen
    /// stream, gives way.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Most open listen streams over HTTP (default 2048, at most half of --max-connections);
    /// past it the oldest stream is closed (the client reconnects).
    #[arg(long, value_name = "N")]
    pub max_listen_streams: Option<usize>,
    /// Most open listen streams of one caller: an authenticated principal, else a peer IP
    /// address (default 128; 0 = no cap; raise it behind a reverse proxy without auth). Past it
    /// that caller's oldest stream is closed.
    #[arg(long, value_name = "N")]
    pub max_listen_streams_per_peer: Option<usize>,
    /// Largest HTTP request head in bytes (default 32 KiB, at least 8 KiB); larger gets 431.
    #[arg(long, value_name = "BYTES")]
    pub max_head_bytes: Option<usize>,
    /// Seconds a request body may take in all (default 30; HTTP 408 past it).
    #[arg(long, value_name = "SECS")]
    pub body_timeout: Option<f64>,
    /// Seconds a request body may stall between two pieces (default 10; HTTP 408 past it).
    #[arg(long, value_name = "SECS")]
    pub body_idle_timeout: Option<f64>,
    /// Seconds an idle keep-alive HTTP connection stays open (default 10).
    #[arg(long, value_name = "SECS")]
    pub idle_timeout: Option<f64>,
    /// Seconds to receive a request's headers (default 30).
    #[arg(long, value_name = "SECS")]
    pub header_timeout: Option<f64>,
    /// Seconds requests in flight may take to finish after Ctrl-C or SIGTERM (HTTP, default 10);
    /// past it the connections still open are closed.
    #[arg(long, value_name = "SECS")]
    pub drain_timeout: Option<f64>,
    /// During that drain, seconds without a request in flight or arriving after which the idle
    /// kept-alive connections close (HTTP, default 1); until then a request on one is answered.
    #[arg(long, value_name = "SECS")]
    pub drain_idle_grace: Option<f64>,
    /// Most requests served at once on stdio (default 1024).
    #[arg(long, value_name = "N")]
    pub max_in_flight: Option<usize>,
    /// Most reply bytes queued for an unread stdout before stdin reading pauses (default 4 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_output_bytes: Option<usize>,
    /// Most `resourceSubscriptions` URIs and most `taskIds` of one `subscriptions/listen`
    /// stream (default 1,024 each); past it the listen is refused with -32602.
    #[arg(long, value_name = "N")]
    pub max_listen_filter: Option<usize>,
    /// Sends handler error source chains and panic messages to clients (for development; by
    /// default clients get the top-level message, or a fixed text with a reference for a
    /// panic, and the details are logged).
    #[arg(long)]
    pub expose_internal_errors: bool,
    /// Most open legacy (initialize-based) HTTP sessions (default 1024; 0 refuses legacy
    /// clients). At the cap the least recently used one without a call in flight is ended.
    #[arg(long, value_name = "N")]
    pub max_legacy_sessions: Option<usize>,
    /// Most open legacy sessions of one client, its principal or else its peer IP (default 64;
    /// raise it behind a reverse proxy). Past it that client's least recently used one ends.
    #[arg(long, value_name = "N")]
    pub max_legacy_sessions_per_client: Option<usize>,
    /// Seconds a new legacy session may wait for `notifications/initialized` (default 60).
    #[arg(long, value_name = "SECS")]
    pub legacy_init_timeout: Option<f64>,
    /// Most notifications one HTTP call holds for a client that does not read them (default
    /// 256); past it progress is coalesced per token and the rest dropped.
    #[arg(long, value_name = "N")]
    pub max_queued_notifications: Option<usize>,
    /// Dropped notifications past which an HTTP call is cancelled with -32603 (default 100000).
    #[arg(long, value_name = "N")]
    pub max_dropped_notifications: Option<u64>,
    /// Seconds an HTTP call's notification queue may stay full, unread, before the call is
    /// cancelled with -32603 (default 30).
    #[arg(long, value_name = "SECS")]
    pub notification_stall: Option<f64>,
    /// Most requests of one caller, written COUNT/PERIOD (`100/m`, `5/10s`): its principal, else
    /// its peer IP address (or --rate-limit-key-header). Past it: -32029 with
    /// `data.retryAfterMs`, HTTP 429 with Retry-After. With --redis every instance shares it.
    #[arg(long, value_name = "QUOTA")]
    pub rate_limit: Option<Quota>,
    /// Most calls of one tool by all callers together: NAME=COUNT/PERIOD (repeatable).
    #[arg(long, value_name = "NAME=QUOTA", value_parser = tool_quota)]
    pub rate_limit_tool: Vec<(String, Quota)>,
    /// Most requests to the whole server, COUNT/PERIOD.
    #[arg(long, value_name = "QUOTA")]
    pub rate_limit_global: Option<Quota>,
    /// Counts anonymous callers by this header (the client address a trusted reverse proxy
    /// sets, e.g. X-Forwarded-For) instead of the peer address, for every rate limit (the
    /// flags' and the tools' own): the entry --trusted-proxy-hops from the right of its list.
    #[arg(long, value_name = "HEADER")]
    pub rate_limit_key_header: Option<http::HeaderName>,
    /// How many reverse proxies in front append to --rate-limit-key-header (default 1, e.g.
    /// one nginx with `proxy_add_x_forwarded_for`): the caller is the entry this many from the
    /// right, so a client cannot pick its key by sending the header itself.
    #[arg(long, value_name = "N", requires = "rate_limit_key_header", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub trusted_proxy_hops: Option<u32>,
    /// Writes one line per request (time, era, method, tool/prompt/URI, caller, outcome,
    /// microseconds) to FILE (appended), or to stderr with `-`.
    #[arg(long, value_name = "FILE", value_parser = access_log)]
    pub access_log: Option<AccessLog>,
}

/// `-` for stderr, else a file opened for appending (so a bad path is a usage error).
fn access_log(s: &str) -> Result<AccessLog, String> {
    if s == "-" {
        return Ok(AccessLog::stderr());
    }
    AccessLog::file(s).map_err(|e| format!("cannot open {s:?} for the access log: {e}"))
}

/// `NAME=COUNT/PERIOD`.
fn tool_quota(s: &str) -> Result<(String, Quota), String> {
    let (name, quota) = s.split_once('=').ok_or_else(|| format!("{s:?}: write NAME=COUNT/PERIOD, e.g. search=10/m"))?;
    Ok((name.trim().to_owned(), quota.parse()?))
}

fn secs(v: Option<f64>, into: &mut Duration) {
    if let Some(s) = v.filter(|s| s.is_finite() && *s > 0.0) {
        *into = Duration::from_secs_f64(s);
    }
}

impl ServeLimits {
    /// Moves the HTTP connection limits of `config` that a flag names.
    pub fn apply_serve(&self, config: &mut mcp::http::ServeConfig) {
        if let Some(n) = self.max_connections.filter(|n| *n > 0) {
            config.max_connections = n;
        }
        if let Some(n) = self.max_listen_streams.filter(|n| *n > 0) {
            config.max_listen_streams = n;
        }
        if let Some(n) = self.max_listen_streams_per_peer {
            config.max_listen_streams_per_peer = n;
        }
        if let Some(n) = self.max_head_bytes {
            config.max_head_bytes = n;
        }
        secs(self.idle_timeout, &mut config.idle_timeout);
        secs(self.header_timeout, &mut config.header_read_timeout);
        secs(self.drain_timeout, &mut config.drain_timeout);
        secs(self.drain_idle_grace, &mut config.drain_idle_grace);
    }

    /// Moves the HTTP endpoint limits of `config` that a flag names.
    pub fn apply_http(&self, config: &mut mcp::http::EndpointConfig) {
        if let Some(n) = self.max_body_bytes {
            config.max_body_bytes = n;
        }
        if let Some(n) = self.max_body_bytes_in_flight {
            config.max_body_bytes_in_flight = n;
        }
        secs(self.body_timeout, &mut config.body_read_timeout);
        secs(self.body_idle_timeout, &mut config.body_idle_timeout);
        if let Some(n) = self.max_legacy_sessions {
            config.max_sessions = n;
        }
        if let Some(n) = self.max_legacy_sessions_per_client.filter(|n| *n > 0) {
            config.max_sessions_per_client = n;
        }
        secs(self.legacy_init_timeout, &mut config.session_init_timeout);
        if let Some(n) = self.max_queued_notifications.filter(|n| *n > 0) {
            config.max_queued_notifications = n;
        }
        if let Some(n) = self.max_dropped_notifications {
            config.max_dropped_notifications = n;
        }
        secs(self.notification_stall, &mut config.notification_stall);
    }

    /// Moves the server's own limits (listen filters, error details) that a flag names.
    pub fn apply_server(&self, builder: mcp::server::ServerBuilder) -> mcp::server::ServerBuilder {
        let mut b = builder.expose_internal_errors(self.expose_internal_errors);
        if let Some(log) = &self.access_log {
            b = b.layer(log.clone());
        }
        if let Some(n) = self.max_listen_filter.filter(|n| *n > 0) {
            b = b.listen_limits(mcp::server::ListenLimits::default().max_resource_subscriptions(n).max_task_ids(n));
        }
        // The key header alone still matters: tools have per-caller quotas of their own.
        let any = self.rate_limit.is_some() || self.rate_limit_global.is_some() || !self.rate_limit_tool.is_empty();
        if any || self.rate_limit_key_header.is_some() {
            let mut limits = RateLimits::new();
            if let Some(q) = self.rate_limit {
                limits = limits.per_caller(q);
            }
            if let Some(q) = self.rate_limit_global {
                limits = limits.global(q);
            }
            for (name, q) in &self.rate_limit_tool {
                limits = limits.per_tool(name.clone(), *q);
            }
            if let Some(h) = &self.rate_limit_key_header {
                limits = limits.anonymous_key_header(h.clone());
            }
            if let Some(n) = self.trusted_proxy_hops {
                limits = limits.trusted_hops(n as usize);
            }
            b = b.rate_limits(limits);
        }
        b
    }

    /// The stdio limits, defaults moved by the flags.
    pub fn stdio(&self) -> mcp::stdio::StdioConfig {
        let mut c = mcp::stdio::StdioConfig::default();
        if let Some(n) = self.max_body_bytes {
            c.max_line_bytes = n;
        }
        if let Some(n) = self.max_in_flight.filter(|n| *n > 0) {
            c.max_in_flight = n;
        }
        if let Some(n) = self.max_output_bytes {
            c.max_output_bytes = n;
        }
        c
    }
}
