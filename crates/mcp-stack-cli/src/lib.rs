//! Library half of the `mcp` tool: the client commands, the demo servers and serving helpers
//! (used by tests too).

pub mod client;
pub mod inspect;
pub mod install;
mod limits;
pub mod proxy;
pub mod telemetry;

pub use limits::ServeLimits;

use mcp::server::Server;
use mcp_auth::{AuthConfig, JwksOptions, JwtConfig, JwtValidator};
use std::net::SocketAddr;
use std::sync::Arc;

/// OAuth protection of `mcp serve --http`: JWT access tokens from one issuer.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeAuth {
    /// Require OAuth bearer tokens (JWT) issued by this authorization server (its issuer URL).
    #[arg(long, value_name = "URL", requires = "auth_audience", conflicts_with = "stdio")]
    pub auth_issuer: Option<String>,
    /// This server's canonical URI, the audience tokens must be issued for
    /// (e.g. `https://mcp.example.com/mcp`); also the metadata's `resource`.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub auth_audience: Option<String>,
    /// JWKS URL (default: the issuer metadata's jwks_uri, via RFC 8414 then OpenID discovery).
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub auth_jwks: Option<String>,
    /// Scopes every request needs, comma-separated (also advertised as scopes_supported).
    #[arg(long, value_name = "S1,S2", value_delimiter = ',', requires = "auth_issuer")]
    pub auth_scopes: Vec<String>,
}

/// The resource-server settings for `auth` (`None` when no issuer is given). Without
/// `--auth-jwks` the issuer's metadata is fetched now.
pub async fn auth_config(auth: &ServeAuth) -> std::io::Result<Option<AuthConfig>> {
    let (Some(issuer), Some(audience)) = (&auth.auth_issuer, &auth.auth_audience) else {
        return Ok(None);
    };
    let err = |e: mcp_auth::AuthError| std::io::Error::other(format!("auth: {e}"));
    let jwt = JwtConfig::new(issuer, audience);
    let opts = JwksOptions::default();
    let validator = match &auth.auth_jwks {
        Some(url) => JwtValidator::with_jwks_url(jwt, url, opts),
        None => JwtValidator::discover(jwt, opts).await,
    }
    .map_err(err)?;
    let config = AuthConfig::builder(audience.as_str(), Arc::new(validator))
        .authorization_server(issuer.as_str())
        .required_scopes(auth.auth_scopes.iter().map(|s| s.trim()))
        .build()
        .map_err(err)?;
    Ok(Some(config))
}

/// Running as one of several instances of a service: `mcp serve --redis URL`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeShared {
    /// Share state with the other instances of this service through Redis (legacy sessions,
    /// tasks, change events), so that any instance serves any request: redis://HOST:PORT[/DB].
    #[arg(long, value_name = "URL", env = "MCP_REDIS_URL", requires = "http")]
    pub redis: Option<String>,
    /// Keys sealing MRTR requestState, shared by every instance: one base64 secret (32+ bytes)
    /// per line; the first seals, all open (also `MCP_STATE_SECRETS`). Needed with --redis.
    #[arg(long, value_name = "PATH")]
    pub state_secret_file: Option<std::path::PathBuf>,
    /// Most legacy sessions stored in Redis across every instance (default 4096); a new one
    /// at the cap ends the one expiring first (the least recently used) everywhere.
    #[arg(long, value_name = "N", requires = "redis")]
    pub redis_max_sessions: Option<usize>,
}

/// What a server shares with the other instances of its service.
#[derive(Debug, Clone)]
pub struct Shared {
    /// The Redis backend (sessions, tasks, change events).
    pub redis: Option<mcp_redis::RedisBackend>,
    /// The shared requestState key ring.
    pub keys: Option<mcp::server::mcp_protocol::state::KeyRing>,
}

impl ServeShared {
    /// Reads the key ring and connects to Redis (refusing to start when it does not answer).
    pub async fn open(&self, namespace: &str) -> std::io::Result<Shared> {
        let err = |m: String| std::io::Error::other(m);
        let text = match (&self.state_secret_file, std::env::var("MCP_STATE_SECRETS")) {
            (Some(path), _) => Some(
                std::fs::read_to_string(path)
                    .map_err(|e| err(format!("--state-secret-file {}: {e}", path.display())))?,
            ),
            (None, Ok(v)) => Some(v),
            (None, Err(_)) => None,
        };
        let keys = text
            .map(|t| mcp::server::mcp_protocol::state::KeyRing::from_base64_lines(&t))
            .transpose()
            .map_err(|e| err(format!("requestState keys: {e}")))?;
        let redis = match &self.redis {
            None => None,
            Some(url) => {
                if keys.is_none() {
                    return Err(err(
                        "--redis needs keys shared by every instance: --state-secret-file PATH or MCP_STATE_SECRETS"
                            .into(),
                    ));
                }
                let mut options = mcp_redis::RedisOptions::default();
                if let Some(n) = self.redis_max_sessions {
                    options = options.max_sessions(n);
                }
                let backend = mcp_redis::RedisBackend::connect_with(url, namespace, options)
                    .await
                    .map_err(|e| err(e.to_string()))?;
                Some(backend)
            }
        };
        Ok(Shared { redis, keys })
    }
}

impl Shared {
    /// `builder` with the shared keys, change bus, task store and rate-limit buckets.
    pub fn apply(&self, mut builder: mcp::server::ServerBuilder) -> mcp::server::ServerBuilder {
        if let Some(keys) = &self.keys {
            builder = builder.state_keys(keys.clone());
        }
        if let Some(redis) = &self.redis {
            let store = redis.task_store(mcp::server::tasks::TaskLimits::default());
            builder = builder
                .bus(redis.bus())
                .tasks(mcp::server::tasks::TaskConfig::new().store(store))
                .rate_limit_store(redis.rate_limit_store());
        }
        builder
    }
}

/// Shuts `server` down gracefully on Ctrl-C or SIGTERM (for stdio: input ends, listen streams
/// get their closing response, requests in flight have the grace period to finish).
pub fn stop_on_signal(server: &Server) {
    let server = server.clone();
    tokio::spawn(async move {
        mcp::http::shutdown_signal().await;
        server.shutdown();
    });
}

/// Serves `server` over Streamable HTTP on `addr` (path `/mcp`) until Ctrl-C or SIGTERM, then
/// shuts down gracefully ([`mcp::http::Serve::with_graceful_shutdown`]: new connections are
/// refused, listen streams get their closing response, requests in flight finish within
/// `--drain-timeout`). With `auth.auth_issuer` every request needs a valid bearer token (see
/// [`ServeAuth`]); with `shared.redis` legacy sessions live in Redis.
pub async fn serve_http(
    server: Server,
    addr: SocketAddr,
    extra_hosts: Vec<String>,
    auth: ServeAuth,
    shared: &Shared,
    limits: &ServeLimits,
) -> std::io::Result<()> {
    let mut endpoint = mcp::http::EndpointConfig::default();
    if let Some(redis) = &shared.redis {
        endpoint = endpoint.session_store(redis.sessions());
    }
    limits.apply_http(&mut endpoint);
    if let Some(auth) = auth_config(&auth).await? {
        eprintln!("mcp: bearer tokens required; metadata at {}", auth.metadata_url());
        endpoint = endpoint.auth(Arc::new(auth));
    }
    for host in &extra_hosts {
        endpoint = endpoint.allow_host(host);
    }
    let mut config = mcp::http::ServeConfig::default();
    limits.apply_serve(&mut config);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("mcp: serving on http://{}{}", listener.local_addr()?, config.path);
    let serving = mcp::http::serve(server, listener, endpoint)
        .config(config)
        .with_graceful_shutdown(mcp::http::shutdown_signal());
    // Run the accept loop on the runtime's workers, not on the thread blocked in `block_on`.
    tokio::spawn(serving).await.map_err(std::io::Error::other)?
}
