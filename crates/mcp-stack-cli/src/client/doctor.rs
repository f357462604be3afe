//! `mcp doctor TARGET`: walks every step a connection takes and reports each one (`✓` passed,
//! `!` works with a caveat, `✗` failed, `–` skipped) with a fix for every failure.
//!
//! HTTP: URL, DNS, TCP, TLS, the stored token, era detection (`server/discover`, then the
//! `initialize` fallback, then the deprecated HTTP+SSE transport) with the headers the server
//! rejects and answers that are not MCP at all, authorization discovery on a `401`, and finally
//! a real connection with the client library. stdio: the command, the spawn, era detection,
//! and the child's stderr when it exits early. The exit code is 1 when a step failed.

#[path = "doctor_era.rs"]
mod era;
#[path = "doctor_auth.rs"]
mod oauth;
use super::probe;
use super::{args, describe, http_transport, program_exists, Options, Target, TargetArgs};
use era::{capability_names, server_label, Verdict};
use mcp::protocol::{meta, version};
use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
use mcp_client::{ClientBuilder, ClientError, ServerEra, TransportError};
use probe::{ProbeError, Prober};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use url::{Host, Url};

/// Default time limit of each network step (`--timeout` overrides it).
const STEP_TIMEOUT: Duration = Duration::from_secs(10);
/// Addresses tried by the TCP step.
const MAX_ADDRS: usize = 4;

/// How a step went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Pass,
    Warn,
    Fail,
    Skip,
}

impl Status {
    fn mark(self) -> String {
        let s = console::style(match self {
            Status::Pass => "✓",
            Status::Warn => "!",
            Status::Fail => "✗",
            Status::Skip => "–",
        });
        match self {
            Status::Pass => s.green(),
            Status::Warn => s.yellow(),
            Status::Fail => s.red(),
            Status::Skip => s.dim(),
        }
        .to_string()
    }

    fn as_str(self) -> &'static str {
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
struct Step {
    name: &'static str,
    status: Status,
    detail: String,
    hints: Vec<String>,
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
#[derive(Debug, Default)]
struct Report {
    target: String,
    transport: &'static str,
    steps: Vec<Step>,
    /// `modern`, `legacy` (and the protocol version) once the client connected.
    era: Option<(&'static str, String)>,
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

    fn failed(&self) -> usize {
        self.steps.iter().filter(|s| s.status == Status::Fail).count()
    }

    fn to_json(&self) -> Value {
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

    fn to_text(&self) -> String {
        let mut out = format!("mcp doctor {}\n", self.target);
        let width = self.steps.iter().map(|s| s.name.len()).max().unwrap_or(0);
        for s in &self.steps {
            out.push_str(&format!("  {} {:width$}  {}\n", s.status.mark(), s.name, s.detail));
            for h in &s.hints {
                out.push_str(&format!("    {:width$}  → {h}\n", ""));
            }
        }
        out.push_str(&match (self.failed(), &self.era) {
            (0, Some((era, v))) => format!("No problems found: the client connects to this {era} server with {v}.\n"),
            (0, None) => "No problems found.\n".to_owned(),
            (1, _) => "1 step failed.\n".to_owned(),
            (n, _) => format!("{n} steps failed.\n"),
        });
        out
    }
}

/// The HTTP steps, in order (the ones not reached are reported as skipped).
const HTTP_STEPS: &[&str] = &["url", "dns", "tcp", "tls", "token", "discover", "initialize", "http+sse", "connect"];
/// The stdio steps.
const STDIO_STEPS: &[&str] = &["command", "spawn", "discover", "initialize", "connect"];

/// Runs `mcp doctor` on `target` and prints the report (one JSON document with `--json`).
/// Exit code 0 when no step failed, 1 when one did, 2 for bad usage, 130 when interrupted.
pub async fn run(opts: Options, target: TargetArgs) -> ExitCode {
    let walk = async {
        let mut report = Report::default();
        walk(&mut report, &opts, target).await.map(|()| report)
    };
    let outcome = tokio::select! {
        r = walk => r,
        _ = tokio::signal::ctrl_c() => Err(("interrupted".to_owned(), 130)),
    };
    match outcome {
        Ok(report) => {
            if opts.json {
                super::render::print_json(&report.to_json());
            } else {
                super::render::Stream::Out.write(&report.to_text());
            }
            ExitCode::from(u8::from(report.failed() > 0))
        }
        Err((message, exit)) => {
            eprintln!("mcp: {}", super::terminal::err(&message));
            if opts.json {
                super::render::print_json(&json!({ "error": { "message": message } }));
            }
            ExitCode::from(exit)
        }
    }
}

async fn walk(report: &mut Report, opts: &Options, t: TargetArgs) -> Result<(), (String, u8)> {
    let usage = |m: String| (m, 2u8);
    let headers = opts.headers.iter().map(|h| args::parse_header(h)).collect::<Result<Vec<_>, _>>().map_err(usage)?;
    let timeout = opts.timeout.unwrap_or(STEP_TIMEOUT);
    if !t.command.is_empty() {
        if let Some(extra) = t.positionals.first() {
            return Err(usage(format!("unexpected argument `{extra}` (the stdio command comes after `--`)")));
        }
        if !headers.is_empty() {
            return Err(usage("--header applies to HTTP targets only".into()));
        }
        let mut env = Vec::new();
        for e in &t.env {
            let (k, v) = args::split_pair("--env", e).map_err(usage)?;
            env.push((k.to_owned(), v.to_owned()));
        }
        let mut cmd = t.command;
        let program = cmd.remove(0);
        let target = Target::Stdio { program, args: cmd, env, cwd: t.cwd };
        report.target = command_line(&target);
        report.transport = "stdio";
        stdio(report, opts, &target, timeout).await;
        return Ok(());
    }
    let raw = match t.positionals.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(usage(
                "no server given: pass an http(s):// URL, a configured server name, or `-- COMMAND [ARGS...]` \
                 to start a stdio server"
                    .into(),
            ))
        }
        [_, extra, ..] => return Err(usage(format!("unexpected argument `{extra}`"))),
    };
    let lower = raw.trim().to_ascii_lowercase();
    let mut name_hints = Vec::new();
    if !lower.starts_with("http://") && !lower.starts_with("https://") && !raw.contains("://") {
        // A server named in a config file (`--config`, ./.mcp.json...)?
        match super::servers::named_target(opts, &raw, headers.clone(), &t.env, t.cwd.clone()) {
            Ok(target @ Target::Stdio { .. }) => {
                report.target = format!("{raw} = {}", command_line(&target));
                report.transport = "stdio";
                stdio(report, opts, &target, timeout).await;
                return Ok(());
            }
            Ok(Target::Http { url, headers }) => {
                report.target = format!("{raw} = {url}");
                report.transport = "http";
                http(report, opts, &url, headers, timeout, Vec::new()).await;
                return Ok(());
            }
            Err(f) => {
                if !f.message.contains("is not an http(s):// URL") {
                    name_hints.push(format!("as a server name: {}", f.message));
                }
                name_hints.extend(f.hints.into_iter().filter(|h| h.starts_with("configured servers:")));
            }
        }
    }
    if !t.env.is_empty() || t.cwd.is_some() {
        return Err(usage("--env and --cwd apply to stdio targets (`-- COMMAND ...`) only".into()));
    }
    report.target = raw.clone();
    report.transport = "http";
    http(report, opts, &raw, headers, timeout, name_hints).await;
    Ok(())
}

/// A stdio target as a command line (for display).
fn command_line(t: &Target) -> String {
    match t {
        Target::Stdio { program, args, .. } => {
            std::iter::once(program).chain(args.iter()).map(|a| shell_word(a)).collect::<Vec<_>>().join(" ")
        }
        Target::Http { url, .. } => url.clone(),
    }
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
                .fail("url", format!("{raw}: the scheme {scheme:?} is not http or https"))
                .hint("MCP over HTTP needs an http:// or https:// URL; for a stdio server pass `-- COMMAND [ARGS...]`");
            return None;
        }
        if !trimmed.contains(['.', ':', '/']) && trimmed != "localhost" {
            report.fail("url", format!("{raw} is not a URL or a configured server name")).hint(
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
            .fail("url", format!("{raw} has no scheme"))
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
            report.fail("url", format!("{raw} has no host"));
            None
        }
        Err(e) => {
            report.fail("url", format!("{raw} is not a valid URL: {e}"));
            None
        }
    }
}

/// A URL fit for the report: no user name or password.
fn shown_url(u: &Url) -> String {
    let mut u = u.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.to_string()
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
async fn http(
    report: &mut Report,
    opts: &Options,
    raw: &str,
    headers: Vec<(String, String)>,
    timeout: Duration,
    name_hints: Vec<String>,
) {
    let Some(url) = check_url(report, raw) else {
        if let Some(step) = report.steps.last_mut() {
            step.hints.extend(name_hints);
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
    let token = oauth::Token::load(raw, &url, &headers).await;
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
        oauth::walk(report, &prober, &a, &token, raw).await;
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
        Err(f) => {
            report.fail("connect", f.message);
            return;
        }
    };
    let target = Target::Http { url: raw.to_owned(), headers };
    connect(report, opts, &target, transport, timeout).await;
}

/// The `connect` step: what the client library does with this server.
async fn connect(
    report: &mut Report,
    opts: &Options,
    target: &Target,
    transport: impl mcp_client::transport::Transport,
    timeout: Duration,
) {
    let b = ClientBuilder::new("mcp-doctor", env!("CARGO_PKG_VERSION"))
        .timeout(timeout)
        .probe_timeout(timeout)
        .connect_timeout(timeout * 3);
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
            let f = describe(e, target, None, "server/discover", opts);
            let step = report.fail("connect", f.message);
            for h in f.hints {
                step.hint(h);
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// stdio
// ------------------------------------------------------------------------------------------

/// The stdio walk.
async fn stdio(report: &mut Report, opts: &Options, target: &Target, timeout: Duration) {
    let Target::Stdio { program, args, env, cwd } = target else { return };
    if let Some(d) = cwd.as_ref().filter(|d| !d.is_dir()) {
        report.fail("command", format!("the working directory {} does not exist", d.display())).hint("fix --cwd DIR");
        return report.skip_rest(STDIO_STEPS, "no working directory");
    }
    if !program_exists(program, env, cwd.as_deref()) {
        let step = report.fail("command", format!("command not found: {program}"));
        if program.contains('/') {
            step.hint("check the path, and that the file is executable (chmod +x)");
        } else {
            step.hint(format!("check the spelling, install it, or give its full path: {program} is not on PATH"));
        }
        return report.skip_rest(STDIO_STEPS, "no command to run");
    }
    report.pass(
        "command",
        format!("{} found", which(program, env).map(|p| p.display().to_string()).unwrap_or(program.clone())),
    );
    let mut cmd = StdioCommand::new(program.clone()).args(args.iter().cloned()).envs(env.iter().cloned());
    if let Some(d) = cwd {
        cmd = cmd.cwd(d.clone());
    }
    let transport = match StdioTransport::spawn(cmd) {
        Ok(t) => t,
        Err(e) => {
            report
                .fail("spawn", e.to_string())
                .hint("check the file's permissions and format (a script needs a #! line)");
            return report.skip_rest(STDIO_STEPS, "the server did not start");
        }
    };
    report.pass("spawn", format!("started (pid {})", transport.pid().map(|p| p.to_string()).unwrap_or("?".into())));
    let b = ClientBuilder::new("mcp-doctor", env!("CARGO_PKG_VERSION"))
        .timeout(timeout)
        .probe_timeout(timeout)
        .connect_timeout(timeout * 3);
    match b.connect(transport).await {
        Ok(client) => {
            match client.era() {
                Some(ServerEra::Modern { version, discover }) => {
                    let discover = discover.into_raw();
                    let versions: Vec<&str> = discover
                        .get("supportedVersions")
                        .and_then(Value::as_array)
                        .map(|v| v.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let versions = versions.join(", ");
                    let label =
                        server_label(discover.pointer(&format!("/_meta/{}", meta::SERVER_INFO.replace('/', "~1"))));
                    report.pass(
                        "discover",
                        format!(
                            "{label} speaks {version}; supports {versions}; capabilities: {}",
                            capability_names(&discover)
                        ),
                    );
                    report.skip("initialize", format!("not needed: the server speaks {}", version::LATEST));
                    report.pass(
                        "connect",
                        format!("the client connects as modern {version}: one request at a time over stdio"),
                    );
                    report.era = Some(("modern", version));
                }
                Some(ServerEra::Legacy { version, initialize }) => {
                    report.warn(
                        "discover",
                        format!(
                            "not a {} server: no DiscoverResult; the client fell back to initialize",
                            version::LATEST
                        ),
                    );
                    report.pass(
                        "initialize",
                        format!(
                            "{} negotiated {version}; capabilities: {}",
                            server_label(initialize.get("serverInfo")),
                            capability_names(&initialize)
                        ),
                    );
                    report.pass(
                        "connect",
                        format!("the client connects as legacy {version}: an initialize session over stdio"),
                    );
                    report.era = Some(("legacy", version));
                }
                None => {
                    report.fail("discover", "connected, but no era was detected");
                }
            }
            client.close().await;
        }
        Err(e) => {
            stdio_failure(report, e, target, opts, timeout);
            report.skip_rest(STDIO_STEPS, "the server did not answer");
        }
    }
}

/// A failed stdio handshake: the exit, the silence, or the error, with the child's stderr.
fn stdio_failure(report: &mut Report, e: ClientError, target: &Target, opts: &Options, timeout: Duration) {
    match e {
        ClientError::Transport(TransportError::Closed(why)) => {
            let (why, stderr) = match why.split_once("; last stderr lines: ") {
                Some((w, s)) => (w.to_owned(), Some(s.to_owned())),
                None => (why, None),
            };
            let why = if why.contains("closed its output") { "it closed its output".to_owned() } else { why };
            let step = report.fail("discover", format!("the server exited before answering ({why})"));
            match stderr {
                Some(s) => step.hint(format!("its stderr: {}", probe::clip(&s, 400))),
                None => step.hint("it wrote nothing to stderr; run the command by hand to see what it does"),
            };
        }
        ClientError::Timeout(_) => {
            report
                .fail("discover", format!("no answer to server/discover or initialize within {}s", (timeout * 3).as_secs_f64()))
                .hint("is this an MCP stdio server? It must read JSON-RPC lines on stdin and write only JSON-RPC to stdout (logs go to stderr)");
        }
        other => {
            let f = describe(other, target, None, "server/discover", opts);
            let step = report.fail("discover", f.message);
            for h in f.hints {
                step.hint(h);
            }
        }
    }
}

/// `w` as a shell would need it quoted (for display only).
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Where `program` is on `PATH` (or the path itself).
fn which(program: &str, env: &[(String, String)]) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path =
        env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).or_else(|| std::env::var("PATH").ok())?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}
