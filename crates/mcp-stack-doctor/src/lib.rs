//! Connection diagnostics for MCP servers: walk every step a connection takes and report each
//! one (passed, works with a caveat, failed, skipped) with a fix for every failure. The library
//! behind `mcp doctor`, for any program (an IDE, a gateway's health page) to call.
//!
//! HTTP: URL, DNS, TCP, TLS, the stored token, era detection (`server/discover`, then the
//! `initialize` fallback, then the deprecated HTTP+SSE transport) with the headers the server
//! rejects and answers that are not MCP at all, authorization discovery on a `401`, and finally
//! a real connection with the client library. stdio: the command, the spawn, era detection,
//! and the child's stderr when it exits early.
//!
//! ```no_run
//! # async fn run() {
//! use mcp_doctor::{diagnose, Options, Status, Target};
//! let target = Target::Http { url: "http://127.0.0.1:3000/mcp".into(), headers: vec![] };
//! let report = diagnose(&target, &Options::default()).await;
//! for step in &report.steps {
//!     if step.status == Status::Fail {
//!         println!("{}: {} ({})", step.name, step.detail, step.hints.join("; "));
//!     }
//! }
//! # }
//! ```
//!
//! Probes go only where the target says; nothing is sent to any other host except the
//! authorization metadata URLs the server itself names (read-only GETs), and no credential is
//! sent anywhere but the target.

mod era;
mod oauth;
pub mod probe;
mod stdio;

use era::Verdict;
use mcp_client::{ClientBuilder, ClientError, ServerEra};
use mcp_protocol::version;
use probe::{ProbeError, Prober};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use url::{Host, Url};

/// What to diagnose.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target {
    /// A Streamable HTTP (or legacy HTTP+SSE) endpoint.
    Http {
        /// The URL as given (checked by the `url` step).
        url: String,
        /// Headers every request carries (lower-case names), e.g. an `authorization` the
        /// caller holds.
        headers: Vec<(String, String)>,
    },
    /// A stdio server started as a child process.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
}

impl Target {
    /// The target as a user would type it (a command line is shell-quoted; a URL's userinfo,
    /// query and fragment are redacted).
    pub fn display(&self) -> String {
        match self {
            Target::Stdio { program, args, .. } => {
                std::iter::once(program).chain(args.iter()).map(|a| shell_word(a)).collect::<Vec<_>>().join(" ")
            }
            Target::Http { url, .. } => redacted(url),
        }
    }
}

/// A client error turned into words for the report: a message and hints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Explanation {
    /// One line.
    pub message: String,
    /// What to try.
    pub hints: Vec<String>,
}

/// Turns a client error into an [`Explanation`] (the default uses the error's own message).
pub type Explain = Arc<dyn Fn(ClientError, &Target) -> Explanation + Send + Sync>;

/// How to diagnose.
#[derive(Clone)]
#[non_exhaustive]
pub struct Options {
    /// Time limit of each network step; the final connection gets three times this. Default 10 s.
    pub step_timeout: Duration,
    /// Where `mcp auth login` keeps tokens (`mcp_oauth::FileStore`): the `token` step
    /// describes the one stored for the target. `None` skips that part.
    pub token_store: Option<PathBuf>,
    /// The authorization the connection would use (e.g. an `mcp_oauth::OAuthProvider` over
    /// `token_store`), unless the target's headers carry an `authorization`.
    pub auth: Option<Arc<mcp_oauth::OAuthProvider>>,
    /// Follow redirects to other origins in the final connection.
    pub follow_cross_origin_redirects: bool,
    /// Extra hints for a target that is not a valid URL (e.g. why it is not a configured
    /// server name either).
    pub url_hints: Vec<String>,
    /// How client errors are worded (default: their own message, URL secrets redacted).
    pub explain: Option<Explain>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            step_timeout: STEP_TIMEOUT,
            token_store: None,
            auth: None,
            follow_cross_origin_redirects: false,
            url_hints: Vec::new(),
            explain: None,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("step_timeout", &self.step_timeout)
            .field("token_store", &self.token_store)
            .field("auth", &self.auth.is_some())
            .field("follow_cross_origin_redirects", &self.follow_cross_origin_redirects)
            .field("url_hints", &self.url_hints)
            .field("explain", &self.explain.is_some())
            .finish()
    }
}

impl Options {
    /// Sets [`Options::step_timeout`].
    pub fn step_timeout(mut self, d: Duration) -> Self {
        self.step_timeout = d;
        self
    }

    /// Sets [`Options::token_store`] and [`Options::auth`].
    pub fn stored_auth(mut self, store: Option<PathBuf>, auth: Option<Arc<mcp_oauth::OAuthProvider>>) -> Self {
        self.token_store = store;
        self.auth = auth;
        self
    }

    /// Sets [`Options::explain`].
    pub fn explain(mut self, f: impl Fn(ClientError, &Target) -> Explanation + Send + Sync + 'static) -> Self {
        self.explain = Some(Arc::new(f));
        self
    }

    fn explained(&self, e: ClientError, target: &Target) -> Explanation {
        match &self.explain {
            Some(f) => f(e, target),
            None => {
                let mut message = e.to_string();
                if let Target::Http { url, .. } = target {
                    message = message.replace(url.as_str(), &redacted(url));
                }
                Explanation { message, hints: Vec::new() }
            }
        }
    }
}

/// Default time limit of each network step (`--timeout` overrides it).
const STEP_TIMEOUT: Duration = Duration::from_secs(10);
/// Addresses tried by the TCP step.
const MAX_ADDRS: usize = 4;

/// How a step went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// It worked.
    Pass,
    /// It works, with a caveat.
    Warn,
    /// It failed (the step's hints say what to try).
    Fail,
    /// Not run (an earlier step failed, or it was not needed).
    Skip,
}

impl Status {
    /// `pass`, `warn`, `fail` or `skip`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skip => "skip",
        }
    }
}

/// One step of the walk.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Step {
    /// Its name: `url`, `dns`, `tcp`, `tls`, `token`, `discover`, `initialize`, `http+sse`,
    /// `connect` (HTTP); `command`, `spawn`, `discover`, `initialize`, `connect` (stdio); and
    /// on a `401`, the authorization steps.
    pub name: &'static str,
    /// How it went.
    pub status: Status,
    /// What was found, in one line.
    pub detail: String,
    /// What to try (for a failure, at least one).
    pub hints: Vec<String>,
}

impl Step {
    fn new(name: &'static str, status: Status, detail: impl Into<String>) -> Self {
        Self { name, status, detail: detail.into(), hints: Vec::new() }
    }

    fn hint(&mut self, h: impl Into<String>) -> &mut Self {
        self.hints.push(h.into());
        self
    }
}

/// Everything the walk found.
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct Report {
    /// The target as given.
    pub target: String,
    /// `http` or `stdio`.
    pub transport: &'static str,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// `modern` or `legacy`, and the protocol version, once the client connected.
    pub era: Option<(&'static str, String)>,
}

impl Report {
    fn add(&mut self, name: &'static str, status: Status, detail: impl Into<String>) -> &mut Step {
        self.steps.push(Step::new(name, status, detail));
        self.steps.last_mut().expect("just pushed")
    }

    fn pass(&mut self, name: &'static str, detail: impl Into<String>) -> &mut Step {
        self.add(name, Status::Pass, detail)
    }

    fn warn(&mut self, name: &'static str, detail: impl Into<String>) -> &mut Step {
        self.add(name, Status::Warn, detail)
    }

    fn fail(&mut self, name: &'static str, detail: impl Into<String>) -> &mut Step {
        self.add(name, Status::Fail, detail)
    }

    fn skip(&mut self, name: &'static str, detail: impl Into<String>) -> &mut Step {
        self.add(name, Status::Skip, detail)
    }

    /// Marks every step of `names` not reported yet as skipped ("skipped: WHY").
    fn skip_rest(&mut self, names: &[&'static str], why: &str) {
        self.skip_rest_as(names, &format!("skipped: {why}"));
    }

    /// Marks every step of `names` not reported yet as skipped, with `detail`.
    fn skip_rest_as(&mut self, names: &[&'static str], detail: &str) {
        for n in names {
            if !self.steps.iter().any(|s| s.name == *n) {
                self.skip(n, detail);
            }
        }
    }

    /// How many steps failed.
    pub fn failed(&self) -> usize {
        self.steps.iter().filter(|s| s.status == Status::Fail).count()
    }

    /// The report as JSON: `target`, `transport`, `ok`, `era`, `protocolVersion`, `steps`
    /// (each `name`, `status`, `detail`, `hints`).
    pub fn to_json(&self) -> Value {
        let steps: Vec<Value> = self
            .steps
            .iter()
            .map(|s| json!({ "name": s.name, "status": s.status.as_str(), "detail": s.detail, "hints": s.hints }))
            .collect();
        json!({
            "target": self.target,
            "transport": self.transport,
            "ok": self.failed() == 0,
            "era": self.era.as_ref().map(|e| e.0),
            "protocolVersion": self.era.as_ref().map(|e| e.1.clone()),
            "steps": steps,
        })
    }
}

/// The HTTP steps, in order (the ones not reached are reported as skipped).
const HTTP_STEPS: &[&str] = &["url", "dns", "tcp", "tls", "token", "discover", "initialize", "http+sse", "connect"];
/// The stdio steps.
const STDIO_STEPS: &[&str] = &["command", "spawn", "discover", "initialize", "connect"];

/// Walks every step of connecting to `target` and reports each one. Never fails: what went
/// wrong is in the report ([`Report::failed`]).
pub async fn diagnose(target: &Target, options: &Options) -> Report {
    let mut report = Report { target: target.display(), ..Report::default() };
    match target {
        Target::Http { url, headers } => {
            report.transport = "http";
            http(&mut report, options, url, headers.clone()).await;
        }
        Target::Stdio { .. } => {
            report.transport = "stdio";
            stdio::walk(&mut report, options, target).await;
        }
    }
    report
}

// ------------------------------------------------------------------------------------------
// HTTP: URL, DNS, TCP
// ------------------------------------------------------------------------------------------

/// The `url` step: an http(s) URL with a host, or a hint that fixes it.
fn check_url(report: &mut Report, raw: &str) -> Option<Url> {
    let trimmed = raw.trim();
    let lower = trimmed.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        if let Some((scheme, _)) = trimmed.split_once("://") {
            report
                .fail("url", format!("{}: the scheme {scheme:?} is not http or https", redacted(raw)))
                .hint("MCP over HTTP needs an http:// or https:// URL; for a stdio server pass `-- COMMAND [ARGS...]`");
            return None;
        }
        if !trimmed.contains(['.', ':', '/']) && trimmed != "localhost" {
            report.fail("url", format!("{} is not a URL or a configured server name", redacted(raw))).hint(
                "pass an http(s):// URL, a server name from a config file (see `mcp servers list`), or \
                 `-- COMMAND [ARGS...]` for a stdio server",
            );
            return None;
        }
        // A scheme-less URL: guess which scheme to suggest from the host.
        let host = trimmed.split(['/', ':']).next().unwrap_or("");
        let local = matches!(host, "localhost" | "127.0.0.1" | "[") || host.starts_with("127.") || host.is_empty();
        let suggestion = format!("{}://{trimmed}", if local { "http" } else { "https" });
        report
            .fail("url", format!("{} has no scheme", redacted(raw)))
            .hint(format!("add http:// or https:// in front: mcp doctor {suggestion}"));
        return None;
    }
    match Url::parse(trimmed) {
        Ok(u) if u.host_str().is_some_and(|h| !h.is_empty()) => {
            let port = u.port_or_known_default().unwrap_or(0);
            let path = if u.path().is_empty() { "/" } else { u.path() };
            report.pass("url", format!("{} (host {}, port {port}, path {path})", shown_url(&u), u.host_str()?));
            Some(u)
        }
        Ok(_) => {
            report.fail("url", format!("{} has no host", redacted(raw)));
            None
        }
        Err(e) => {
            report.fail("url", format!("{} is not a valid URL: {e}", redacted(raw)));
            None
        }
    }
}

/// A URL fit for the report: no user name or password.
/// `raw` with its userinfo, query and fragment (which may hold secrets) redacted, for messages.
fn redacted(raw: &str) -> String {
    mcp_client::redact_url(raw)
}

/// [`redacted`] for a parsed URL.
fn shown_url(u: &Url) -> String {
    mcp_client::redact_url(u.as_str())
}

/// The `dns` step: the addresses of the URL's host.
async fn resolve(report: &mut Report, url: &Url, timeout: Duration) -> Option<Vec<SocketAddr>> {
    let port = url.port_or_known_default().unwrap_or(80);
    let host = match url.host() {
        Some(Host::Ipv4(ip)) => {
            report.pass("dns", format!("{ip} (an IP address: nothing to resolve)"));
            return Some(vec![SocketAddr::new(ip.into(), port)]);
        }
        Some(Host::Ipv6(ip)) => {
            report.pass("dns", format!("{ip} (an IP address: nothing to resolve)"));
            return Some(vec![SocketAddr::new(ip.into(), port)]);
        }
        Some(Host::Domain(d)) => d.to_owned(),
        None => return None,
    };
    let looked_up = tokio::time::timeout(timeout, tokio::net::lookup_host((host.as_str(), port))).await;
    match looked_up {
        Ok(Ok(addrs)) => {
            let mut all: Vec<SocketAddr> = Vec::new();
            for a in addrs {
                if !all.contains(&a) {
                    all.push(a);
                }
            }
            if all.is_empty() {
                report.fail("dns", format!("{host} resolves to no address"));
                return None;
            }
            let shown: Vec<String> = all.iter().take(6).map(|a| a.ip().to_string()).collect();
            let more = if all.len() > 6 { format!(" and {} more", all.len() - 6) } else { String::new() };
            report.pass("dns", format!("{host} → {}{more}", shown.join(", ")));
            Some(all)
        }
        Ok(Err(e)) => {
            report
                .fail("dns", format!("{host} could not be resolved: {e}"))
                .hint(format!("check the host name for typos; `getent hosts {host}` shows what this system resolves"));
            None
        }
        Err(_) => {
            report
                .fail("dns", format!("resolving {host} took longer than {}s", timeout.as_secs_f64()))
                .hint("check this machine's DNS settings and network connection");
            None
        }
    }
}

/// The `tcp` step: connects to the first address that accepts.
async fn connect_tcp(report: &mut Report, url: &Url, addrs: &[SocketAddr], timeout: Duration) -> bool {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    let mut errors = Vec::new();
    let mut refused = 0;
    for a in addrs.iter().take(MAX_ADDRS) {
        let start = Instant::now();
        match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(a)).await {
            Ok(Ok(_stream)) => {
                report.pass("tcp", format!("connected to {a} in {} ms", start.elapsed().as_millis()));
                return true;
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                refused += 1;
                errors.push(format!("{a}: connection refused"));
            }
            Ok(Err(e)) => errors.push(format!("{a}: {e}")),
            Err(_) => errors.push(format!("{a}: no answer within {}s", timeout.as_secs_f64())),
        }
    }
    if refused == errors.len() {
        report
            .fail("tcp", format!("nothing listening on {host}:{port}; is the server running?"))
            .hint(format!("start the server, or check the port in the URL ({})", errors.join("; ")));
    } else {
        report
            .fail("tcp", format!("cannot connect to {host}:{port}: {}", errors.join("; ")))
            .hint("a firewall may be dropping the connection, or the host is down");
    }
    false
}

/// The HTTP walk.
async fn http(report: &mut Report, opts: &Options, raw: &str, headers: Vec<(String, String)>) {
    let timeout = opts.step_timeout;
    let Some(url) = check_url(report, raw) else {
        if let Some(step) = report.steps.last_mut() {
            step.hints.extend(opts.url_hints.iter().cloned());
        }
        return report.skip_rest(HTTP_STEPS, "no valid URL");
    };
    let Some(addrs) = resolve(report, &url, timeout).await else {
        return report.skip_rest(HTTP_STEPS, "the host name did not resolve");
    };
    if !connect_tcp(report, &url, &addrs, timeout).await {
        return report.skip_rest(HTTP_STEPS, "no connection");
    }
    let prober = match Prober::new(url.clone(), headers.clone(), timeout) {
        Ok(p) => p,
        Err(e) => {
            report.fail("tls", format!("cannot set up the HTTP client: {e}"));
            return report.skip_rest(HTTP_STEPS, "no HTTP client");
        }
    };
    let token = oauth::Token::load(raw, &url, &headers, opts).await;
    let discover = era::discover_message();
    let mut extra = vec![
        ("mcp-protocol-version".to_owned(), version::LATEST.to_owned()),
        ("mcp-method".to_owned(), "server/discover".to_owned()),
    ];
    extra.extend(token.headers("POST", &url).await);
    let first = prober.post(&discover, &extra).await;
    match (&first, url.scheme()) {
        (Err(ProbeError::Tls(what, fix)), _) => {
            report.fail("tls", what.clone()).hint(fix.clone());
            return report.skip_rest(HTTP_STEPS, "no TLS connection");
        }
        (Ok(_), "https") => {
            report.pass("tls", "handshake completed; the certificate is valid for the host");
        }
        (Err(_), "https") => {
            report.skip("tls", "unknown: the request failed (see below)");
        }
        _ => {
            report.skip("tls", "plain http (no TLS)");
        }
    }
    report.steps.push(token.step.clone());
    let answer = match first {
        Ok(a) => a,
        Err(e) => {
            let step = report.fail("discover", format!("POST server/discover: {}", e.line()));
            if matches!(e, ProbeError::Timeout(_)) {
                step.hint(
                    "the server accepted the connection but sent no answer: is it overloaded, or not an HTTP server?",
                );
            } else if url.scheme() == "http" {
                step.hint("if the server speaks TLS on this port, use https://");
            }
            return report.skip_rest(HTTP_STEPS, "no answer to server/discover");
        }
    };
    let mut verdict = era::discover_verdict(report, &answer, &url);
    let mut auth_answer = matches!(verdict, Verdict::Auth).then_some(answer);
    if matches!(verdict, Verdict::Fallback) {
        let init = era::initialize_message();
        let mut extra = token.headers("POST", &url).await;
        let a = prober.post(&init, &extra).await;
        extra = token.headers("DELETE", &url).await;
        verdict = match a {
            Ok(a) => {
                let v = era::initialize_verdict(report, &prober, &a, &extra).await;
                if matches!(v, Verdict::Auth) {
                    auth_answer = Some(a);
                }
                v
            }
            Err(e) => {
                report.fail("initialize", format!("POST initialize: {}", e.line()));
                Verdict::Stop
            }
        };
    }
    if matches!(verdict, Verdict::Fallback) {
        let extra = token.headers("GET", &url).await;
        verdict = match prober.get_stream(&extra).await {
            Ok(a) => {
                let v = era::sse_verdict(report, &a, &url);
                if matches!(v, Verdict::Auth) {
                    auth_answer = Some(a);
                }
                v
            }
            Err(e) => {
                report.fail("http+sse", format!("GET (HTTP+SSE): {}", e.line()));
                Verdict::Stop
            }
        };
        if matches!(verdict, Verdict::Stop) {
            let step = report.steps.last_mut().expect("just reported");
            step.hint(format!("no era of MCP answered at {url}"));
            step.hint(era::endpoint_hint(&url));
        }
    }
    if let Some(a) = auth_answer {
        oauth::walk(report, &prober, &a, &token, raw, opts.token_store.as_deref()).await;
        return report.skip_rest(HTTP_STEPS, "the server requires authorization");
    }
    if token.sent && matches!(verdict, Verdict::Found) {
        // One token line: its state, then the server's verdict.
        if let Some(s) = report.steps.iter_mut().find(|s| s.name == "token") {
            s.detail.push_str("; accepted: the server answered a request carrying it");
        }
    }
    if !matches!(verdict, Verdict::Found) {
        return report.skip_rest(HTTP_STEPS, "the probes above failed");
    }
    let legacy = report.steps.iter().any(|s| s.name == "initialize" && s.status == Status::Pass);
    let why = if legacy { "initialize worked".to_owned() } else { format!("the server speaks {}", version::LATEST) };
    report.skip_rest_as(&["initialize", "http+sse"], &format!("not needed: {why}"));
    let transport = match http_transport(raw, &headers, opts) {
        Ok(t) => t,
        Err(e) => {
            report.fail("connect", format!("{}: {e}", redacted(raw)));
            return;
        }
    };
    let target = Target::Http { url: raw.to_owned(), headers };
    connect(report, opts, &target, transport).await;
}

/// The client transport the `connect` step uses: the target's headers, else the stored
/// authorization.
fn http_transport(
    url: &str,
    headers: &[(String, String)],
    opts: &Options,
) -> Result<mcp_client::transport::http::HttpTransport, mcp_client::TransportError> {
    let mut b = mcp_client::transport::http::HttpTransport::builder(url)
        .follow_cross_origin_redirects(opts.follow_cross_origin_redirects)
        .connect_timeout(opts.step_timeout);
    for (k, v) in headers {
        b = b.header(k.clone(), v.clone());
    }
    if let Some(p) = opts.auth.as_ref().filter(|_| !headers.iter().any(|(k, _)| k == "authorization")) {
        b = b.auth(p.clone());
    }
    b.build()
}

/// The `connect` step: what the client library does with this server.
async fn connect(
    report: &mut Report,
    opts: &Options,
    target: &Target,
    transport: impl mcp_client::transport::Transport,
) {
    let b = client_builder(opts.step_timeout);
    let wire = if report.transport == "stdio" { "stdio" } else { "Streamable HTTP" };
    match b.connect(transport).await {
        Ok(client) => {
            let (era, v) = match client.era() {
                Some(ServerEra::Modern { version, .. }) => ("modern", version),
                Some(ServerEra::Legacy { version, .. }) => ("legacy", version),
                None => ("unknown", String::new()),
            };
            let how = match (era, report.steps.iter().any(|s| s.name == "http+sse" && s.status == Status::Pass)) {
                ("modern", _) => format!("one request at a time over {wire}, no session"),
                (_, true) => "the deprecated HTTP+SSE transport (GET stream + POST endpoint)".to_owned(),
                _ => format!("an initialize session over {wire}"),
            };
            report.pass("connect", format!("the client connects as {era} {v}: {how}"));
            report.era = Some((era, v));
            client.close().await;
        }
        Err(e) => {
            let f = opts.explained(e, target);
            let step = report.fail("connect", f.message);
            for h in f.hints {
                step.hint(h);
            }
        }
    }
}

/// The client the `connect` steps use.
fn client_builder(timeout: Duration) -> ClientBuilder {
    ClientBuilder::new("mcp-doctor", env!("CARGO_PKG_VERSION"))
        .timeout(timeout)
        .probe_timeout(timeout)
        .connect_timeout(timeout * 3)
}

/// Whether `program` can be started (looked up on `PATH` unless it names a path; relative to
/// `cwd` first when given).
pub fn program_exists(program: &str, env: &[(String, String)], cwd: Option<&Path>) -> bool {
    #[cfg(unix)]
    let runnable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    #[cfg(not(unix))]
    let runnable = |p: &Path| ["", "exe", "cmd", "bat"].iter().any(|ext| p.with_extension(ext).is_file());
    if program.contains('/') {
        let p = Path::new(program);
        return match cwd {
            Some(d) if p.is_relative() => runnable(&d.join(p)) || runnable(p),
            _ => runnable(p),
        };
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    std::env::split_paths(&path).any(|d| runnable(&d.join(program)))
}

/// `w` as a shell would need it quoted (for display only).
pub fn shell_word(w: &str) -> String {
    let plain = !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}
