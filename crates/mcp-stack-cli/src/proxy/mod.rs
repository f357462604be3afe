//! `mcp proxy`: the flags, mapped onto [`mcp_proxy::ProxyConfig`], and the front's transport
//! (Streamable HTTP with `--http ADDR`, or stdio with `--stdio`).
//!
//! The proxy acts with the operator's access to the upstream (see [`mcp_proxy`]). So an HTTP
//! front, which any process that reaches the address can call, refuses to start without
//! downstream auth (`--auth-issuer` and `--auth-audience`) unless `--no-auth` says the operator
//! accepts that, and then warns on stderr. A stdio front is owned by the process that launched
//! it and needs no auth.

pub mod auth;

use mcp_proxy::{Gateway, GatewayConfig, Proxy, ProxyConfig, ProxyError, ServerSpec, Upstream};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
    /// Expose only the upstream tools whose names, as clients see them (with --prefix or a
    /// gateway's NAME_ prefix), match this glob (`*`, `?`; repeatable). A glob that matches no
    /// tool is reported at start.
    #[arg(long = "tools", value_name = "GLOB")]
    pub tools: Vec<String>,
    /// Prefix every tool and prompt name with this (stripped again when forwarding).
    #[arg(long, value_name = "NAME_")]
    pub prefix: Option<String>,
    /// Serve the upstream tools matching GLOB only to callers whose token grants every one of
    /// the SCOPES (comma-separated); to others they do not exist. GLOB names tools as clients
    /// see them (`ev_echo` in front of a gateway, as --rate-limit-tool does). Repeatable: the
    /// first matching GLOB decides. A glob that matches no tool is reported at start.
    #[arg(long = "tool-scopes", value_name = "GLOB=SCOPES", value_parser = glob_scopes)]
    pub tool_scopes: Vec<(String, Vec<String>)>,
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
    /// With --config: serve tool and prompt names as the upstreams have them, instead of
    /// prefixed `NAME_` (a name several upstreams offer goes to the first by NAME; reported).
    #[arg(long)]
    pub no_prefix: bool,
    /// With --config: report each upstream's calls, errors and latency on stderr this often.
    #[arg(long, value_name = "SECS")]
    pub stats_interval: Option<u64>,
    /// With --config: how long a merged list (tools/list...) waits for each upstream; one that
    /// has not answered by then is left out of that list (and reported once until it answers).
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub list_timeout: f64,
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

/// `GLOB=SCOPE[,SCOPE..]`.
fn glob_scopes(s: &str) -> Result<(String, Vec<String>), String> {
    let (glob, scopes) = s.split_once('=').ok_or_else(|| format!("{s:?}: write GLOB=SCOPE[,SCOPE..]"))?;
    let scopes: Vec<String> = scopes.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    if scopes.is_empty() {
        return Err(format!("{s:?}: name at least one scope"));
    }
    Ok((glob.trim().to_owned(), scopes))
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
    /// `--config FILE`: serve every server of this `mcpServers` file as one (a gateway).
    pub config: Option<PathBuf>,
    /// `--max-list-bytes`, `--max-list-items`: the bounds of each upstream list and each
    /// merged one.
    pub list_bounds: crate::client::ListBounds,
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
                let auth = auth::provider(url, &headers, login).await?.map(|p| p as Arc<dyn mcp_client::AuthProvider>);
                let upstream = Upstream::new(ServerSpec::Http { url: url.clone(), headers });
                Ok(match auth {
                    Some(a) => upstream.auth(a),
                    None => upstream,
                })
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
                Ok(Upstream::new(ServerSpec::Stdio {
                    command: program.clone(),
                    args: args.to_vec(),
                    env,
                    cwd: self.cwd.clone(),
                }))
            }
            (None, None) => Err(err("name the upstream: mcp proxy --http ADDR URL, or ... -- COMMAND ARGS")),
        }
    }

    /// The library configuration these flags describe.
    pub async fn config(&self, globals: &ProxyGlobals) -> std::io::Result<ProxyConfig> {
        let config = self.upstream_config(self.upstream(globals).await?, globals);
        Ok(config.prefix(self.prefix.clone().unwrap_or_default()))
    }

    /// The gateway configuration of `--config FILE`: every server in it, each with the
    /// per-upstream flags (tool globs, tool scopes, bounds); HTTP ones with their stored tokens.
    pub async fn gateway_config(
        &self,
        globals: &ProxyGlobals,
        file: &std::path::Path,
    ) -> std::io::Result<GatewayConfig> {
        if self.url.is_some() || !self.command.is_empty() || self.prefix.is_some() {
            return Err(err("--config serves the file's servers: give no URL, command or --prefix with it"));
        }
        let file_config = mcp_client::config::McpConfig::load(file).map_err(|e| err(e.to_string()))?;
        let mut upstreams = Vec::new();
        for entry in file_config.servers() {
            let spec = entry.spec().map_err(|e| err(format!("server {}: {e}", entry.name())))?;
            let upstream = match spec {
                ServerSpec::Stdio { .. } => Upstream::new(spec.clone()),
                ServerSpec::Http { url, headers } => {
                    use std::io::IsTerminal;
                    let login = self.login || std::io::stderr().is_terminal();
                    match auth::provider(url, headers, login).await? {
                        Some(p) => Upstream::new(spec.clone()).auth(p as Arc<dyn mcp_client::AuthProvider>),
                        None => Upstream::new(spec.clone()),
                    }
                }
                other => {
                    return Err(err(format!(
                        "server {}: {} servers cannot be proxied",
                        entry.name(),
                        other.transport_name()
                    )))
                }
            };
            upstreams.push((entry.name().to_owned(), self.upstream_config(upstream, globals)));
        }
        if upstreams.is_empty() {
            return Err(err(format!("{}: no servers configured", file.display())));
        }
        if !(self.list_timeout.is_finite() && self.list_timeout > 0.0) {
            return Err(err(format!("--list-timeout must be a positive number of seconds, got {}", self.list_timeout)));
        }
        let bounds = globals.list_bounds;
        let mut config = GatewayConfig::new(upstreams)
            .no_prefix(self.no_prefix)
            .list_timeout(Duration::from_secs_f64(self.list_timeout))
            .max_list(bounds.max_bytes, bounds.max_items);
        if let Some(secs) = self.stats_interval.filter(|s| *s > 0) {
            config = config.stats_interval(Duration::from_secs(secs));
        }
        Ok(config)
    }

    /// One upstream's configuration with the flags that apply to every upstream.
    fn upstream_config(&self, upstream: Upstream, globals: &ProxyGlobals) -> ProxyConfig {
        let mut config = ProxyConfig::new(upstream)
            .tools(self.tools.iter().cloned())
            .max_sessions(self.max_sessions)
            .input_timeout(Duration::from_secs(self.input_timeout.max(1)))
            .max_waiting(self.max_waiting, self.max_waiting_per_caller)
            .connect_timeout(globals.timeout.unwrap_or(Duration::from_secs(30)))
            .max_list(globals.list_bounds.max_bytes, globals.list_bounds.max_items);
        if let Some(v) = &globals.force_legacy {
            config = config.force_legacy(v.as_str());
        }
        for (glob, scopes) in &self.tool_scopes {
            config = config.tool_access(glob.clone(), mcp::server::Access::scopes(scopes.iter().cloned()));
        }
        config
    }
}

/// Connects to the upstream and builds the front server with the flags' limits.
pub async fn front(args: &ProxyArgs, globals: &ProxyGlobals) -> std::io::Result<Proxy> {
    let config = args.config(globals).await?;
    let proxy = Proxy::connect_with(config, |b| args.limits.apply_server(b)).await.map_err(|e| match e {
        ProxyError::NotLegacy { version, known } => {
            err(format!("--force-legacy {version}: not a legacy protocol version ({known})"))
        }
        e => err(e.to_string()),
    })?;
    Ok(proxy)
}

/// The front server of `--config FILE`: a gateway of every server in it.
pub async fn gateway(args: &ProxyArgs, globals: &ProxyGlobals, file: &std::path::Path) -> std::io::Result<Gateway> {
    let config = args.gateway_config(globals, file).await?;
    Gateway::connect_with(config, |b| args.limits.apply_server(b)).await.map_err(|e| err(e.to_string()))
}

/// Runs `mcp proxy` until Ctrl-C or SIGTERM (both fronts; graceful), or the end of stdin (stdio).
pub async fn run(args: ProxyArgs, globals: ProxyGlobals) -> std::io::Result<()> {
    args.check_front_auth()?;
    let server = match (&globals.config, &args.url, args.command.is_empty()) {
        (Some(file), None, true) => gateway(&args, &globals, file).await?.server().clone(),
        _ => front(&args, &globals).await?.server().clone(),
    };
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
