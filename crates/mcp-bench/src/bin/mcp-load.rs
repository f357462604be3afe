//! `mcp-load`: load generator for MCP servers (revision 2026-07-28), driving the `echo` tool.
//!
//! - `mcp-load http --url http://127.0.0.1:PORT/mcp --connections 16 --duration 10s --warmup 2s`
//!   opens N keep-alive HTTP/1.1 connections (hyper client connections, each driven by its own
//!   task with one request in flight) and sends `tools/call echo` requests with unique ids.
//! - `mcp-load stdio --command "target/release/mcp serve everything --stdio" --in-flight 64`
//!   spawns the server (via `sh -c "exec COMMAND"`, so the pid is the server's) and keeps N
//!   requests in flight on its stdin, pipelined, while a reader task matches responses by id.
//!
//! Every response must be a success (HTTP 200) that carries the request's id and the echoed
//! text, or it counts as an error. Latencies of requests completed after the warm-up are
//! recorded in an HDR histogram; the report gives requests/s, p50/p90/p99/p99.9/max latency and
//! errors, human-readable or (`--json`) as one JSON line. With a known server pid (`--server-pid`
//! for HTTP, the child for stdio) it also reports the server's idle RSS (`VmRSS` before the
//! load), peak RSS (`VmHWM` at the end) and CPU time per request.
//!
//! Traffic only goes to loopback addresses; every loop ends by the deadline.

use bytes::Bytes;
use clap::{Args, Parser, Subcommand};
use http::{header, HeaderValue, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use mcp_bench::{
    build_report, contains, echo_request, has_id, parse_duration, proc_cpu_time, proc_status_kib, worker_threads,
    Report, RunInfo, ServerUsage, Stats, PROTOCOL_VERSION,
};
use parking_lot::Mutex;
use serde::Deserialize;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// Command-line interface.
#[derive(Parser)]
#[command(name = "mcp-load", about = "Load generator for MCP servers (echo tools/call)")]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

/// The transport to load.
#[derive(Subcommand)]
enum Mode {
    /// Streamable HTTP: N keep-alive connections, one request in flight each.
    Http(HttpArgs),
    /// stdio: spawn the server and keep N requests in flight, pipelined.
    Stdio(StdioArgs),
}

/// Options shared by both modes.
#[derive(Args)]
struct Common {
    /// How long to measure (after the warm-up), e.g. 10s.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    duration: Duration,
    /// How long to send before measuring, e.g. 2s.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    warmup: Duration,
    /// The text to echo.
    #[arg(long, default_value = "hello")]
    text: String,
    /// Print one JSON line instead of the human-readable report.
    #[arg(long)]
    json: bool,
    /// Label of this run in the report.
    #[arg(long, default_value = "")]
    label: String,
}

/// Options of `mcp-load http`.
#[derive(Args)]
struct HttpArgs {
    /// Endpoint URL, e.g. http://127.0.0.1:3000/mcp (loopback hosts only).
    #[arg(long)]
    url: String,
    /// Number of keep-alive connections (one request in flight each).
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Pid of the server, to report its idle/peak RSS and CPU use.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Send `Authorization: Bearer TOKEN` with every request (a server that validates tokens).
    #[arg(long)]
    bearer: Option<String>,
    #[command(flatten)]
    common: Common,
}

/// Options of `mcp-load stdio`.
#[derive(Args)]
struct StdioArgs {
    /// The server command line (run as `sh -c "exec COMMAND"`).
    #[arg(long)]
    command: String,
    /// Requests kept in flight.
    #[arg(long, default_value_t = 64)]
    in_flight: usize,
    /// How long to let the server settle before reading its idle RSS and starting.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    settle: Duration,
    #[command(flatten)]
    common: Common,
}

/// Per-request timeout (a stuck request counts as an error).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long to wait for outstanding responses after sending stops.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads())
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result = rt.block_on(async move {
        match cli.mode {
            Mode::Http(a) => run_http(a).await,
            Mode::Stdio(a) => run_stdio(a).await,
        }
    });
    rt.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok((report, json)) => {
            report.print(json);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mcp-load: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Where an HTTP run sends its requests.
struct HttpTarget {
    addr: SocketAddr,
    authority: HeaderValue,
    path: String,
    text_json: String,
    text_needle: Vec<u8>,
    authorization: Option<HeaderValue>,
}

/// Time window of a run: measure completions in `[measure_from, end)`.
#[derive(Clone, Copy)]
struct Window {
    measure_from: Instant,
    end: Instant,
}

fn parse_target(url: &str, text: &str, bearer: Option<&str>) -> Result<HttpTarget, BoxError> {
    let uri: Uri = url.parse()?;
    if uri.scheme_str() != Some("http") {
        return Err("only http:// URLs are supported".into());
    }
    let auth = uri.authority().ok_or("URL has no host")?;
    let host = auth.host().trim_start_matches('[').trim_end_matches(']');
    let port = auth.port_u16().unwrap_or(80);
    let ip: std::net::IpAddr = if host.eq_ignore_ascii_case("localhost") {
        std::net::Ipv4Addr::LOCALHOST.into()
    } else {
        host.parse().map_err(|_| format!("host {host:?} must be a loopback IP or localhost"))?
    };
    if !ip.is_loopback() {
        return Err(format!("refusing to send traffic to non-loopback {ip}").into());
    }
    let text_json = serde_json::to_string(text)?;
    Ok(HttpTarget {
        addr: SocketAddr::new(ip, port),
        authority: HeaderValue::from_str(auth.as_str())?,
        path: uri.path_and_query().map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned()),
        text_needle: format!("\"text\":{text_json}").into_bytes(),
        text_json,
        authorization: bearer.map(|t| HeaderValue::from_str(&format!("Bearer {t}"))).transpose()?,
    })
}

async fn run_http(a: HttpArgs) -> Result<(Report, bool), BoxError> {
    if a.connections == 0 {
        return Err("--connections must be at least 1".into());
    }
    let target = Arc::new(parse_target(&a.url, &a.common.text, a.bearer.as_deref())?);
    let pid = a.server_pid;
    let idle_rss_kib = pid.and_then(|p| proc_status_kib(p, "VmRSS"));
    // Check that the server answers before starting the clock.
    let mut probe = Stats::new();
    let mut sender = connect(&target).await?;
    let probe_window = Window { measure_from: Instant::now(), end: Instant::now() + REQUEST_TIMEOUT };
    if !one_http_request(&mut sender, &target, 0, probe_window, &mut probe).await {
        return Err(format!("the server at {} did not answer the echo request correctly", a.url).into());
    }
    drop(sender);

    let start = Instant::now();
    let w = Window { measure_from: start + a.common.warmup, end: start + a.common.warmup + a.common.duration };
    let tasks: Vec<_> =
        (0..a.connections).map(|i| tokio::spawn(http_connection(i as u64 + 1, target.clone(), w))).collect();
    let usage = measure_usage(pid, w).await;
    let mut stats = Stats::new();
    for t in tasks {
        match tokio::time::timeout(REQUEST_TIMEOUT + DRAIN_GRACE, t).await {
            Ok(Ok(s)) => stats.merge(&s),
            Ok(Err(e)) => return Err(format!("connection task failed: {e}").into()),
            Err(_) => stats.errors += 1,
        }
    }
    let usage = ServerUsage { idle_rss_kib, peak_rss_kib: pid.and_then(|p| proc_status_kib(p, "VmHWM")), ..usage };
    let info = RunInfo {
        label: a.common.label.clone(),
        transport: "http",
        target: a.url.clone(),
        concurrency: a.connections,
        warmup: a.common.warmup,
        measured: a.common.duration,
    };
    Ok((build_report(&info, &stats, usage), a.common.json))
}

/// Samples server and own CPU time at the start and end of the measured window.
async fn measure_usage(pid: Option<u32>, w: Window) -> ServerUsage {
    tokio::time::sleep_until(w.measure_from).await;
    let (s0, l0) = (pid.and_then(|p| proc_cpu_time(Some(p))), proc_cpu_time(None));
    tokio::time::sleep_until(w.end).await;
    let (s1, l1) = (pid.and_then(|p| proc_cpu_time(Some(p))), proc_cpu_time(None));
    let diff = |a: Option<Duration>, b: Option<Duration>| Some(b?.saturating_sub(a?));
    ServerUsage { server_cpu: diff(s0, s1), load_cpu: diff(l0, l1), ..ServerUsage::default() }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(t: &HttpTarget) -> Result<Sender, BoxError> {
    let stream = tokio::time::timeout(REQUEST_TIMEOUT, TcpStream::connect(t.addr)).await??;
    stream.set_nodelay(true)?;
    let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// One connection's loop: sends requests back to back until the window ends.
async fn http_connection(conn_id: u64, t: Arc<HttpTarget>, w: Window) -> Stats {
    let mut stats = Stats::new();
    let mut seq: u64 = 0;
    let mut sender: Option<Sender> = None;
    while Instant::now() < w.end {
        if sender.is_none() {
            match connect(&t).await {
                Ok(s) => sender = Some(s),
                Err(_) => {
                    stats.errors += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            }
        }
        let s = sender.as_mut().expect("connected above");
        seq += 1;
        let id = (conn_id << 40) | seq;
        if !one_http_request(s, &t, id, w, &mut stats).await && s.is_closed() {
            sender = None;
        }
    }
    stats
}

/// Sends one echo request on `s`; records its latency or counts an error. Returns success.
async fn one_http_request(s: &mut Sender, t: &HttpTarget, id: u64, w: Window, stats: &mut Stats) -> bool {
    let body = echo_request(id, &t.text_json);
    let mut req = Request::new(Full::new(Bytes::from(body)));
    *req.method_mut() = http::Method::POST;
    *req.uri_mut() = t.path.parse().expect("path parsed before");
    let h = req.headers_mut();
    h.insert(header::HOST, t.authority.clone());
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
    h.insert("mcp-protocol-version", HeaderValue::from_static(PROTOCOL_VERSION));
    h.insert("mcp-method", HeaderValue::from_static("tools/call"));
    h.insert("mcp-name", HeaderValue::from_static("echo"));
    if let Some(auth) = &t.authorization {
        h.insert(header::AUTHORIZATION, auth.clone());
    }
    let t0 = Instant::now();
    let exchange = async {
        s.ready().await?;
        let resp = s.send_request(req).await?;
        let status = resp.status();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok::<_, hyper::Error>((status, body))
    };
    let ok = match tokio::time::timeout(REQUEST_TIMEOUT, exchange).await {
        Ok(Ok((status, body))) => status == StatusCode::OK && has_id(&body, id) && contains(&body, &t.text_needle),
        _ => false,
    };
    let t1 = Instant::now();
    if !ok {
        stats.errors += 1;
    } else if t1 >= w.measure_from && t1 < w.end {
        stats.record(t1 - t0);
    }
    ok
}

/// The fields of a response line the stdio reader looks at.
#[derive(Deserialize)]
struct Line<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    result: Option<&'a serde_json::value::RawValue>,
}

async fn run_stdio(a: StdioArgs) -> Result<(Report, bool), BoxError> {
    if a.in_flight == 0 {
        return Err("--in-flight must be at least 1".into());
    }
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec {}", a.command))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().ok_or("child exited at once")?;
    let stdin = child.stdin.take().ok_or("no child stdin")?;
    let stdout = child.stdout.take().ok_or("no child stdout")?;
    tokio::time::sleep(a.settle).await;
    let idle_rss_kib = proc_status_kib(pid, "VmRSS");

    let text_json = serde_json::to_string(&a.common.text)?;
    let needle: Arc<[u8]> = format!("\"text\":{text_json}").into_bytes().into();
    let pending: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let permits = Arc::new(Semaphore::new(a.in_flight));
    let start = Instant::now();
    let w = Window { measure_from: start + a.common.warmup, end: start + a.common.warmup + a.common.duration };
    let writer = tokio::spawn(stdio_writer(stdin, text_json, pending.clone(), permits.clone(), w));
    let reader = tokio::spawn(stdio_reader(stdout, needle, pending.clone(), permits.clone(), w));
    let usage = measure_usage(Some(pid), w).await;
    let (stdin, mut write_errors) = match tokio::time::timeout(DRAIN_GRACE, writer).await {
        Ok(Ok(r)) => r,
        _ => return Err("the stdio writer did not finish".into()),
    };
    // Wait (bounded) for the outstanding responses, then read the peak RSS while it still runs.
    let drain_until = Instant::now() + DRAIN_GRACE;
    while !pending.lock().is_empty() && Instant::now() < drain_until {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let peak_rss_kib = proc_status_kib(pid, "VmHWM");
    let lost = pending.lock().len() as u64;
    write_errors += lost;
    // End of input: the server finishes and closes stdout, which ends the reader.
    drop(stdin);
    let mut stats = match tokio::time::timeout(DRAIN_GRACE, reader).await {
        Ok(Ok(s)) => s,
        _ => Stats::new(),
    };
    stats.errors += write_errors;
    if tokio::time::timeout(DRAIN_GRACE, child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
    let usage = ServerUsage { idle_rss_kib, peak_rss_kib, ..usage };
    let info = RunInfo {
        label: a.common.label.clone(),
        transport: "stdio",
        target: a.command.clone(),
        concurrency: a.in_flight,
        warmup: a.common.warmup,
        measured: a.common.duration,
    };
    Ok((build_report(&info, &stats, usage), a.common.json))
}

/// Writes requests while permits are available; flushes when it has to wait. Stops at the end
/// of the window and returns stdin (still open) and the number of failed writes.
async fn stdio_writer(
    stdin: tokio::process::ChildStdin,
    text_json: String,
    pending: Arc<Mutex<HashMap<u64, Instant>>>,
    permits: Arc<Semaphore>,
    w: Window,
) -> (Option<tokio::process::ChildStdin>, u64) {
    let mut out = BufWriter::with_capacity(64 * 1024, stdin);
    let mut id: u64 = 0;
    let mut line = String::with_capacity(512);
    while Instant::now() < w.end {
        match permits.try_acquire() {
            Ok(p) => p.forget(),
            Err(_) => {
                if out.flush().await.is_err() {
                    return (None, 1);
                }
                match tokio::time::timeout_at(w.end, permits.acquire()).await {
                    Ok(Ok(p)) => p.forget(),
                    _ => break,
                }
            }
        }
        id += 1;
        line.clear();
        line.push_str(&echo_request(id, &text_json));
        line.push('\n');
        pending.lock().insert(id, Instant::now());
        if out.write_all(line.as_bytes()).await.is_err() {
            return (None, 1);
        }
    }
    if out.flush().await.is_err() {
        return (None, 1);
    }
    (Some(out.into_inner()), 0)
}

/// Reads response lines, matches them to pending requests by id, records latencies.
async fn stdio_reader(
    stdout: tokio::process::ChildStdout,
    needle: Arc<[u8]>,
    pending: Arc<Mutex<HashMap<u64, Instant>>>,
    permits: Arc<Semaphore>,
    w: Window,
) -> Stats {
    let mut stats = Stats::new();
    let mut input = BufReader::with_capacity(64 * 1024, stdout);
    let mut buf = Vec::with_capacity(4096);
    let stop = w.end + DRAIN_GRACE * 2;
    loop {
        buf.clear();
        match tokio::time::timeout_at(stop, input.read_until(b'\n', &mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(_)) => {}
        }
        let now = Instant::now();
        let Ok(msg) = serde_json::from_slice::<Line<'_>>(buf.trim_ascii()) else {
            stats.errors += 1;
            continue;
        };
        let Some(id) = msg.id else {
            continue; // a notification
        };
        let Some(sent) = pending.lock().remove(&id) else {
            stats.errors += 1; // an id we did not send (or answered twice)
            continue;
        };
        permits.add_permits(1);
        let ok = msg.result.is_some_and(|r| contains(r.get().as_bytes(), &needle));
        if !ok {
            stats.errors += 1;
        } else if now >= w.measure_from && now < w.end {
            stats.record(now - sent);
        }
    }
    stats
}
