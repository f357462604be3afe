//! `mcp proxy`: serve an upstream MCP server (a stdio command or a URL, of either era) as a
//! dual-era server of our own, over Streamable HTTP (`--http ADDR`) or stdio (`--stdio`).
//!
//! The front is our ordinary [`mcp::server::Server`] with a [`forward::Forward`] fallback, so
//! everything the server framework guarantees holds for proxied requests too: `_meta`
//! validation, sealed `requestState`, legacy sessions and their MRTR bridge, auth, limits.
//! Modules:
//! - `upstream`: reaching the upstream; one client session per input-capability set.
//! - `pool`: sessions keyed by (capabilities, principal), bounded, restarted with backoff.
//! - `flight`: upstream calls kept alive across MRTR rounds.
//! - `forward`: the fallback that forwards each catalog method.
//! - `filter`: `--tools` and `--prefix`.
//! - `tasks`: which upstream session owns each task (the tasks extension, passed through when
//!   a modern upstream offers it).
//!
//! The proxy acts with the operator's access to the upstream: its credentials (`--header`,
//! stored tokens, `--login`), its network position (an internal URL), or its account (a stdio
//! upstream runs as the operator). So an HTTP front, which any process that reaches the
//! address can call, refuses to start without downstream auth (`--auth-issuer` and
//! `--auth-audience`) unless `--no-auth` says the operator accepts that, and then warns on
//! stderr. A stdio front is owned by the process that launched it and needs no auth. No
//! downstream `_meta` is forwarded: the upstream request carries only what the proxy's own
//! client writes (its protocol version, capabilities, progress token, log level and, when
//! traced, the trace context of the proxy's own client span).

pub mod auth;
pub mod filter;
pub mod flight;
pub mod forward;
pub mod pool;
pub mod tasks;
pub mod upstream;

use pool::{Change, Key, Pool, PoolLimits};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use upstream::Upstream;

/// Most upstream resources whose updates the proxy follows.
const MAX_SUBSCRIPTIONS: usize = 100;

/// How long an unused upstream session stays open.
const IDLE_SESSION: Duration = Duration::from_secs(300);

/// The flags of `mcp proxy`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProxyArgs {
    /// Serve Streamable HTTP on this address (path /mcp), e.g. 127.0.0.1:3000.
    #[arg(long, conflicts_with = "stdio", required_unless_present = "stdio")]
    pub http: Option<SocketAddr>,
    /// Serve on stdin/stdout (for desktop hosts that launch servers as commands).
    #[arg(long)]
    pub stdio: bool,
    /// Extra Host names to accept on --http (loopback names only by default).
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,
    /// Expose only the upstream tools whose names match this glob (`*`, `?`; repeatable).
    #[arg(long = "tools", value_name = "GLOB")]
    pub tools: Vec<String>,
    /// Prefix every tool and prompt name with this (stripped again when forwarding).
    #[arg(long, value_name = "NAME_")]
    pub prefix: Option<String>,
    /// Most upstream sessions open at once (child processes for a stdio upstream).
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_sessions: usize,
    /// Seconds an upstream call waits for the client's answers to its questions.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub input_timeout: u64,
    /// Most upstream calls waiting for answers at once.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_waiting: usize,
    /// Most upstream calls of one downstream caller (authenticated principal; every caller
    /// is one with --no-auth) waiting for answers at once.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_waiting_per_caller: usize,
    /// OAuth protection of --http: --auth-issuer, --auth-audience, --auth-jwks, --auth-scopes.
    #[command(flatten)]
    pub auth: crate::ServeAuth,
    /// The front's transport limits, as for `mcp serve` (--max-connections, --max-body-bytes...).
    #[command(flatten)]
    pub limits: crate::ServeLimits,
    /// Serve --http without downstream auth: every caller that reaches the address uses the
    /// proxy's upstream access (its credentials, network, account). Required to run --http
    /// without --auth-issuer; a warning is printed.
    #[arg(long, conflicts_with_all = ["auth_issuer", "stdio"])]
    pub no_auth: bool,
    /// Authorize at an OAuth-protected upstream in the browser when no stored token works
    /// (default: only when stderr is a terminal; else run `mcp auth login URL` first).
    #[arg(long)]
    pub login: bool,
    /// Environment variable for a stdio upstream (repeatable).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Working directory of a stdio upstream.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The upstream server's URL.
    #[arg(value_name = "URL")]
    pub url: Option<String>,
    /// The upstream stdio server command and its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `mcp proxy` settings that come from the global options.
#[derive(Debug, Clone, Default)]
pub struct ProxyGlobals {
    /// `--header` lines for an HTTP upstream (the proxy's own credentials).
    pub headers: Vec<String>,
    /// `--timeout`: bound on connecting to the upstream.
    pub timeout: Option<Duration>,
    /// `--force-legacy VERSION`: open legacy sessions upstream without the era probe.
    pub force_legacy: Option<String>,
}

fn err(m: impl Into<String>) -> std::io::Error {
    std::io::Error::other(m.into())
}

impl ProxyArgs {
    /// Refuses an HTTP front without downstream auth unless `--no-auth` accepts it (then
    /// warns on stderr); see the module docs.
    pub fn check_front_auth(&self) -> std::io::Result<()> {
        let Some(addr) = self.http else { return Ok(()) };
        if self.auth.auth_issuer.is_some() {
            return Ok(());
        }
        if !self.no_auth {
            return Err(err(format!(
                "--http {addr} without downstream auth would let every caller that reaches {addr} use the \
                 proxy's access to the upstream (its credentials, its network, its account): give \
                 --auth-issuer URL --auth-audience URL, or --no-auth to accept that (or use --stdio)"
            )));
        }
        eprintln!(
            "mcp proxy: WARNING: --no-auth: every caller that reaches {addr} uses the proxy's access to the upstream"
        );
        Ok(())
    }

    /// The upstream the arguments name (with the proxy's own OAuth client for a URL).
    pub async fn upstream(&self, globals: &ProxyGlobals) -> std::io::Result<Upstream> {
        match (&self.url, self.command.split_first()) {
            (Some(_), Some(_)) => Err(err("give the upstream as a URL or as a command after `--`, not both")),
            (Some(url), None) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(err(format!("upstream URL must be http:// or https://, got {url:?}")));
                }
                let headers: Vec<(String, String)> = globals
                    .headers
                    .iter()
                    .map(|h| crate::client::args::parse_header(h).map_err(err))
                    .collect::<Result<_, _>>()?;
                use std::io::IsTerminal;
                let login = self.login || std::io::stderr().is_terminal();
                let auth = auth::provider(url, &headers, login).await?;
                Ok(Upstream::Http { url: url.clone(), headers, auth })
            }
            (None, Some((program, args))) => {
                let env = self
                    .env
                    .iter()
                    .map(|e| {
                        let (k, v) = crate::client::args::split_pair("--env", e).map_err(err)?;
                        Ok((k.to_owned(), v.to_owned()))
                    })
                    .collect::<std::io::Result<_>>()?;
                Ok(Upstream::Stdio { program: program.clone(), args: args.to_vec(), env, cwd: self.cwd.clone() })
            }
            (None, None) => Err(err("name the upstream: mcp proxy --http ADDR URL, or ... -- COMMAND ARGS")),
        }
    }
}

/// The downstream capabilities: what the upstream offers, with list changes announced (the
/// proxy feeds them from the upstream's notifications).
fn capabilities(upstream: &Value) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    for k in ["tools", "prompts", "resources"] {
        if let Some(Value::Object(c)) = upstream.get(k) {
            let mut c = c.clone();
            c.insert("listChanged".into(), json!(true));
            out.push((k, Value::Object(c)));
        }
    }
    if upstream.get("completions").is_some() {
        out.push(("completions", json!({})));
    }
    out
}

/// Maps an upstream notification onto the front server's change events.
fn announce(server: &mcp::server::Server, (method, params): Change) {
    use mcp::server::ChangeEvent;
    let event = match method.as_str() {
        "notifications/tools/list_changed" => ChangeEvent::ToolsListChanged,
        "notifications/prompts/list_changed" => ChangeEvent::PromptsListChanged,
        "notifications/resources/list_changed" => ChangeEvent::ResourcesListChanged,
        "notifications/resources/updated" => match params.get("uri").and_then(Value::as_str) {
            Some(uri) => ChangeEvent::ResourceUpdated(uri.to_owned()),
            None => return,
        },
        _ => return,
    };
    tracing::debug!(%method, "upstream change announced downstream");
    server.notify(event);
}

/// Connects to the upstream (once now, to learn what it offers and to fail early) and builds
/// the front server.
pub async fn front(args: &ProxyArgs, globals: &ProxyGlobals) -> std::io::Result<(mcp::server::Server, Arc<Pool>)> {
    let upstream = args.upstream(globals).await?;
    let legacy = mcp::server::mcp_protocol::version::LEGACY;
    if let Some(v) = globals.force_legacy.as_deref().filter(|v| !legacy.contains(v)) {
        return Err(err(format!("--force-legacy {v}: not a legacy protocol version ({})", legacy.join(", "))));
    }
    let limits = PoolLimits {
        max_sessions: args.max_sessions.max(1),
        connect_timeout: globals.timeout.unwrap_or(Duration::from_secs(30)),
        force_legacy: globals.force_legacy.clone(),
        ..PoolLimits::default()
    };
    let changes = Arc::new(pool::Changes::default());
    let pool = Pool::new(upstream.clone(), limits, changes.clone());
    let failed =
        |e: mcp_client::ClientError| err(upstream::redact_urls(&format!("upstream {}: {e}", upstream.describe())));
    let first = pool.lease(&Key::default()).await.map_err(failed)?;
    let client = first.session().client().clone();
    drop(first);
    // The proxy passes the upstream's answer on as it came.
    let info = client.discover().await.map_err(failed)?.into_raw();
    let server_info = info
        .get("serverInfo")
        .or_else(|| info.get("_meta").and_then(|m| m.get(mcp::server::mcp_protocol::meta::SERVER_INFO)))
        .cloned()
        .unwrap_or_else(|| json!({}));
    let name = server_info.get("name").and_then(Value::as_str).unwrap_or("upstream");
    let version = server_info.get("version").and_then(Value::as_str).unwrap_or("0");
    let era = pool::era(&client);
    eprintln!(
        "mcp proxy: upstream {} is {name} {version} ({era}, protocol {})",
        upstream.describe(),
        client.protocol_version()
    );
    let names = filter::Names { tools: args.tools.clone(), prefix: args.prefix.clone().unwrap_or_default() };
    let flights = flight::Flights::new(
        args.max_waiting.max(1),
        args.max_waiting_per_caller.max(1),
        Duration::from_secs(args.input_timeout.max(1)),
    );
    // The tasks extension is passed through exactly when the (modern) upstream offers it.
    let tasks =
        (client.is_modern() && client.server_supports_tasks()).then(|| Arc::new(tasks::Tasks::new(tasks::MAX_TASKS)));
    let forward = forward::Forward { pool: pool.clone(), flights: flights.clone(), names: Arc::new(names), tasks };
    let mut builder = mcp::server::Server::builder(name, version).fallback(Arc::new(forward));
    let upstream_caps = serde_json::to_value(client.server_capabilities()).map_err(|e| err(e.to_string()))?;
    for (k, v) in capabilities(&upstream_caps) {
        builder = builder.capability(k, v);
    }
    if let Some(text) = info.get("instructions").and_then(Value::as_str) {
        builder = builder.instructions(text);
    }
    let server = args.limits.apply_server(builder).build().map_err(|e| err(e.to_string()))?;
    if client.server_capabilities().resources.and_then(|r| r.subscribe) == Some(true) {
        // Listeners may ask for any listed resource: the shared session subscribes to them.
        match client.list_resources().await {
            Ok(listed) => {
                let uris = listed.into_iter().map(|r| r.into_inner().uri);
                pool.subscribe(uris.take(MAX_SUBSCRIPTIONS).collect()).await;
            }
            Err(e) => eprintln!(
                "mcp proxy: upstream resources/list: {}; resource updates are not followed",
                upstream::redact_urls(&e.to_string())
            ),
        }
    }
    let announcer = server.clone();
    tokio::spawn(async move {
        loop {
            for change in changes.next().await {
                announce(&announcer, change);
            }
        }
    });
    let idle = pool.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            idle.close_idle(IDLE_SESSION);
            let n = flights.sweep();
            if n > 0 {
                eprintln!("mcp proxy: {n} call(s) waiting for input expired; their upstream calls were cancelled");
            }
        }
    });
    Ok((server, pool))
}

/// Runs `mcp proxy` until Ctrl-C or SIGTERM (both fronts; graceful), or the end of stdin (stdio).
pub async fn run(args: ProxyArgs, globals: ProxyGlobals) -> std::io::Result<()> {
    args.check_front_auth()?;
    let (server, _pool) = front(&args, &globals).await?;
    match args.http {
        Some(addr) => {
            let shared = crate::Shared { redis: None, keys: None };
            crate::serve_http(server, addr, args.allow_hosts.clone(), args.auth.clone(), &shared, &args.limits).await
        }
        None => {
            crate::stop_on_signal(&server);
            mcp::stdio::serve_stdio_with(server, args.limits.stdio()).await
        }
    }
}
