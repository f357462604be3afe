//! `mcp-client-bench`: the cost of our client library (`mcp-stack-client`) next to raw loops.
//!
//! Spawns the ceiling servers (`mcp-ceiling-http` on 127.0.0.1 and `mcp-ceiling-stdio`, found
//! next to this binary unless `--bin-dir` says otherwise) and measures `tools/call echo`:
//!
//! - `ours`: [`mcp_client::Client::call_tool`] over the HTTP and stdio transports, one call at
//!   a time (`w=1`) and `--concurrency` calls at once from as many tasks sharing one client;
//! - `raw`: the same JSON-RPC requests (same body, `_meta` and headers) from a plain hyper
//!   HTTP/1.1 client (one keep-alive connection per task) or a pipelined NDJSON loop on the
//!   server's stdin/stdout, each response parsed into a `serde_json::Value` and checked;
//! - `demux` (stdio, concurrent case only): the textbook hand-written client for many callers
//!   on one pipe (a task per caller, a map of one-shots by id, a writer and a reader task).
//!   The pipelined loop has one task and no per-call wake-up at all; the demux client shows
//!   what having `--concurrency` caller tasks costs by itself, whatever the library.
//!
//! Prints one line per case, e.g. `client http w=1: ours 9000 req/s, raw 11000 req/s, ratio
//! 0.82`. Every measurement ends after `--secs` or `--requests` calls, whichever comes first;
//! traffic only goes to loopback.

use bytes::Bytes;
use clap::Parser;
use futures_like::BoxFuture;
use http::{header, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use mcp_bench::PROTOCOL_VERSION;
use mcp_client::transport::http::HttpTransport;
use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
use mcp_client::{Client, ClientBuilder};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// Boxed futures without a dependency on `futures`.
mod futures_like {
    /// A boxed, sendable future.
    pub(crate) type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;
}

/// Command-line options.
#[derive(Parser)]
#[command(name = "mcp-client-bench", about = "Our MCP client against raw hyper/NDJSON loops (echo tools/call)")]
struct Args {
    /// Seconds to measure each case (after a short warm-up).
    #[arg(long, default_value_t = 3.0)]
    secs: f64,
    /// Most calls per measurement.
    #[arg(long, default_value_t = 2_000_000)]
    requests: u64,
    /// Calls in flight in the concurrent cases.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Directory holding `mcp-ceiling-http` and `mcp-ceiling-stdio` (default: this binary's).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Which transports to run: `http`, `stdio` or `all`.
    #[arg(long, default_value = "all")]
    only: String,
    /// Measure only one side (`ours`, `raw`, `demux` or `reqwest`; for profiling and for
    /// counting cycles per call with `perf stat`); default all.
    #[arg(long, default_value = "all")]
    side: String,
    /// Which cases to run: `sequential` (w=1), `concurrent` or `all`.
    #[arg(long, default_value = "all")]
    cases: String,
    /// Pin the ceiling servers to this CPU (through `taskset -c`). With the client itself
    /// started under `taskset -c` on another CPU (as `scripts/bench.sh` does), the two never
    /// compete for a core and the client's runtime has one worker per CPU it may use.
    #[arg(long)]
    server_cpu: Option<usize>,
}

/// `--server-cpu`, once parsed.
static SERVER_CPU: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();

/// The program and arguments that start `program`, pinned when `--server-cpu` says so.
fn server_command(program: &Path) -> (String, Vec<String>) {
    let program = program.to_string_lossy().into_owned();
    match SERVER_CPU.get().copied().flatten() {
        Some(cpu) => ("taskset".to_owned(), vec!["-c".to_owned(), cpu.to_string(), program]),
        None => (program, Vec::new()),
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The text every call echoes.
const TEXT: &str = "hello";

/// Stops a measurement at its deadline or after its number of calls.
struct Budget {
    deadline: Instant,
    left: AtomicI64,
}

impl Budget {
    fn new(time: Duration, requests: u64) -> Arc<Self> {
        Arc::new(Self { deadline: Instant::now() + time, left: AtomicI64::new(requests.min(i64::MAX as u64) as i64) })
    }

    /// Whether one more call may start.
    fn take(&self) -> bool {
        self.left.fetch_sub(1, Ordering::Relaxed) > 0 && Instant::now() < self.deadline
    }
}

/// A worker: given the budget, makes calls until it runs out and returns how many succeeded.
type Worker = Box<dyn FnOnce(Arc<Budget>) -> BoxFuture<Result<u64, String>> + Send>;

/// Runs `workers` together within `time`/`requests`: calls made, seconds taken.
async fn run_workers(workers: Vec<Worker>, time: Duration, requests: u64) -> Result<(u64, f64), String> {
    let budget = Budget::new(time, requests);
    let started = Instant::now();
    let tasks: Vec<_> = workers.into_iter().map(|w| tokio::spawn(w(budget.clone()))).collect();
    let mut done = 0;
    for t in tasks {
        done += t.await.map_err(|e| e.to_string())??;
    }
    Ok((done, started.elapsed().as_secs_f64()))
}

/// Makes the workers of one side of a case, afresh for each slice.
type Side<'a> = Box<dyn FnMut() -> Vec<Worker> + 'a>;

/// Slices each side's measured time is cut into; the sides take turns, so that a change in
/// the machine's load (this is a shared 2-core box) hits both alike.
const SLICES: u32 = 3;

/// The `_meta` our client sends with a modern request (so the raw loops send the same bytes).
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-client-bench", "version": "0"},
    })
}

fn echo_call(id: u64) -> Vec<u8> {
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": TEXT}, "_meta": meta()}});
    serde_json::to_vec(&msg).expect("JSON serializes")
}

/// Checks a raw response: our id, the echoed text.
fn check(bytes: &[u8], id: u64) -> Result<(), String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("invalid JSON: {e}"))?;
    if v["id"] != id || v.pointer("/result/content/0/text").and_then(Value::as_str) != Some(TEXT) {
        return Err(format!("unexpected response {v}"));
    }
    Ok(())
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("mcp-client-bench", "0")
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(10))
}

/// Workers calling `echo` through our client, sharing one connection/session.
fn ours(client: &Client, n: usize) -> Vec<Worker> {
    (0..n)
        .map(|_| {
            let c = client.clone();
            Box::new(move |budget: Arc<Budget>| {
                Box::pin(async move {
                    let mut done: u64 = 0;
                    while budget.take() {
                        let r = c.call_tool("echo", json!({ "text": TEXT })).await.map_err(|e| e.to_string())?;
                        if r.text() != TEXT {
                            return Err(format!("unexpected result {r}"));
                        }
                        done += 1;
                    }
                    Ok(done)
                }) as BoxFuture<_>
            }) as Worker
        })
        .collect()
}

/// Workers on raw hyper HTTP/1.1 connections, one each.
fn raw_http(url: &Uri, n: usize) -> Vec<Worker> {
    (0..n)
        .map(|w| {
            let url = url.clone();
            Box::new(move |budget: Arc<Budget>| {
                Box::pin(async move { raw_http_worker(url, w as u64, budget).await.map_err(|e| e.to_string()) })
                    as BoxFuture<_>
            }) as Worker
        })
        .collect()
}

async fn raw_http_worker(url: Uri, worker: u64, budget: Arc<Budget>) -> Result<u64, BoxError> {
    let authority = url.authority().ok_or("no authority")?.as_str().to_owned();
    let stream = TcpStream::connect(&authority).await?;
    stream.set_nodelay(true)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let mut done = 0;
    let mut id = worker << 40;
    while budget.take() {
        id += 1;
        let req = Request::post(url.clone())
            .header(header::HOST, &authority)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL_VERSION)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "echo")
            .body(Full::new(Bytes::from(echo_call(id))))?;
        sender.ready().await?;
        let resp = sender.send_request(req).await?;
        if resp.status() != StatusCode::OK {
            return Err(format!("HTTP {}", resp.status()).into());
        }
        let body = resp.into_body().collect().await?.to_bytes();
        check(&body, id)?;
        done += 1;
    }
    Ok(done)
}

/// Workers doing the raw loop's requests with one shared `reqwest` client (the HTTP library
/// under our transport): how much of the gap is reqwest's.
fn reqwest_http(url: &str, n: usize) -> Vec<Worker> {
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    (0..n)
        .map(|w| {
            let (client, url) = (client.clone(), url.to_owned());
            Box::new(move |budget: Arc<Budget>| {
                Box::pin(async move {
                    let mut done: u64 = 0;
                    let mut id = (w as u64) << 40;
                    while budget.take() {
                        id += 1;
                        let resp = client
                            .post(&url)
                            .header(header::CONTENT_TYPE, "application/json")
                            .header(header::ACCEPT, "application/json, text/event-stream")
                            .header("mcp-protocol-version", PROTOCOL_VERSION)
                            .header("mcp-method", "tools/call")
                            .header("mcp-name", "echo")
                            .body(echo_call(id))
                            .send()
                            .await
                            .map_err(|e| e.to_string())?;
                        let body = resp.bytes().await.map_err(|e| e.to_string())?;
                        check(&body, id)?;
                        done += 1;
                    }
                    Ok(done)
                }) as BoxFuture<_>
            }) as Worker
        })
        .collect()
}

/// A pipelined NDJSON loop on a fresh stdio ceiling server, `n` requests in flight.
async fn raw_stdio(program: &Path, n: usize, budget: Arc<Budget>) -> Result<u64, BoxError> {
    let mut child = spawn_stdio(program)?;
    let mut input = BufWriter::new(child.stdin.take().ok_or("no stdin")?);
    let mut output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let window = Arc::new(Semaphore::new(n));
    let (sent, errors) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (w2, e2) = (window.clone(), errors.clone());
    // Responses come back in order (the ceiling answers one by one): check them against ids.
    let reader = tokio::spawn(async move {
        let mut line = Vec::with_capacity(256);
        let mut id = 0;
        loop {
            line.clear();
            match output.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            id += 1;
            if check(line.trim_ascii(), id).is_err() {
                e2.fetch_add(1, Ordering::Relaxed);
            }
            w2.add_permits(1);
        }
    });
    let mut id = 0;
    'outer: loop {
        window.acquire().await?.forget();
        // Write as many as the window allows, then flush once.
        loop {
            if !budget.take() {
                window.add_permits(1);
                break 'outer;
            }
            id += 1;
            input.write_all(&echo_call(id)).await?;
            input.write_all(b"\n").await?;
            sent.fetch_add(1, Ordering::Relaxed);
            match window.try_acquire() {
                Ok(p) => p.forget(),
                Err(_) => break,
            }
        }
        input.flush().await?;
    }
    input.flush().await?;
    // Every request answered: the whole window is free again (bounded wait).
    tokio::time::timeout(Duration::from_secs(10), window.acquire_many(n as u32)).await??.forget();
    reader.abort();
    drop(input);
    let _ = child.kill().await;
    let errors = errors.load(Ordering::Relaxed);
    if errors > 0 {
        return Err(format!("{errors} bad responses").into());
    }
    Ok(sent.load(Ordering::Relaxed))
}

/// The textbook hand-written client for many callers on one stdio server: `n` tasks, each
/// registering a one-shot under its request id in a shared map and queueing its line for a
/// writer task; a reader task parses each response and hands it to the waiting task. No
/// `_meta` handling, MRTR, timeouts or cancellation: the floor of what any client with `n`
/// concurrent callers on one pipe pays (task wake-ups, the map, the hand-offs).
async fn demux_stdio(program: &Path, n: usize, budget: Arc<Budget>) -> Result<u64, BoxError> {
    type Waiters = Arc<parking_lot::Mutex<std::collections::HashMap<u64, tokio::sync::oneshot::Sender<Value>>>>;
    let mut child = spawn_stdio(program)?;
    let mut input = BufWriter::new(child.stdin.take().ok_or("no stdin")?);
    let mut output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let waiters: Waiters = Arc::default();
    // One line in flight per caller at most, so `n` slots never make a caller wait.
    let (lines, mut queued) = tokio::sync::mpsc::channel::<Vec<u8>>(n.max(1));
    let writer = tokio::spawn(async move {
        while let Some(line) = queued.recv().await {
            input.write_all(&line).await?;
            while let Ok(more) = queued.try_recv() {
                input.write_all(&more).await?;
            }
            input.flush().await?;
        }
        Ok::<_, std::io::Error>(())
    });
    let w2 = waiters.clone();
    let reader = tokio::spawn(async move {
        let mut line = Vec::with_capacity(256);
        loop {
            line.clear();
            match output.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let Ok(v) = serde_json::from_slice::<Value>(line.trim_ascii()) else { continue };
            let waiter = v["id"].as_u64().and_then(|id| w2.lock().remove(&id));
            if let Some(tx) = waiter {
                let _ = tx.send(v);
            }
        }
    });
    let next = Arc::new(AtomicU64::new(0));
    let callers: Vec<_> = (0..n)
        .map(|_| {
            let (budget, waiters, lines, next) = (budget.clone(), waiters.clone(), lines.clone(), next.clone());
            tokio::spawn(async move {
                let mut done = 0u64;
                while budget.take() {
                    let id = next.fetch_add(1, Ordering::Relaxed) + 1;
                    let (tx, rx) = tokio::sync::oneshot::channel();
                    waiters.lock().insert(id, tx);
                    let mut line = echo_call(id);
                    line.push(b'\n');
                    lines.send(line).await.map_err(|_| "writer gone")?;
                    let v = tokio::time::timeout(Duration::from_secs(10), rx).await??;
                    if v.pointer("/result/content/0/text").and_then(Value::as_str) != Some(TEXT) {
                        return Err::<u64, BoxError>(format!("unexpected response {v}").into());
                    }
                    done += 1;
                }
                Ok(done)
            })
        })
        .collect();
    drop(lines);
    let mut done = 0;
    for c in callers {
        done += c.await??;
    }
    reader.abort();
    let _ = writer.await;
    let _ = child.kill().await;
    Ok(done)
}

fn spawn_stdio(program: &Path) -> Result<Child, BoxError> {
    let (program, args) = server_command(program);
    Ok(Command::new(program).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true).spawn()?)
}

/// Starts `mcp-ceiling-http` on a free loopback port; its URL.
async fn spawn_http(program: &Path) -> Result<(Child, String), BoxError> {
    let (program, args) = server_command(program);
    let mut child = Command::new(program)
        .args(args)
        .args(["--addr", "127.0.0.1:0", "--exit-after", "10m"])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut err = BufReader::new(child.stderr.take().ok_or("no stderr")?);
    let mut line = String::new();
    tokio::time::timeout(Duration::from_secs(10), err.read_line(&mut line)).await??;
    let url = line.trim().rsplit(' ').next().filter(|u| u.starts_with("http://127.0.0.1:")).ok_or("no URL")?;
    Ok((child, url.to_owned()))
}

/// Runs one case: a warm-up of every side, then the sides in turns; prints its line.
async fn case(label: &str, args: &Args, mut sides: Vec<(&'static str, Side<'_>)>) -> Result<(), String> {
    let wanted = match args.cases.as_str() {
        "sequential" => label.ends_with("w=1"),
        "concurrent" => !label.ends_with("w=1"),
        _ => true,
    };
    if !wanted {
        return Ok(());
    }
    sides.retain(|(name, _)| matches!(args.side.as_str(), "all" | "both") || *name == args.side);
    let time = Duration::from_secs_f64(args.secs.clamp(0.1, 600.0));
    let warm = (time / 5).min(Duration::from_secs(1));
    let per_slice = args.requests.div_ceil(u64::from(SLICES));
    for (_, make) in sides.iter_mut() {
        run_workers(make(), warm, per_slice).await?;
    }
    let mut tally = vec![(0u64, 0f64); sides.len()];
    for _ in 0..SLICES {
        for ((_, make), t) in sides.iter_mut().zip(tally.iter_mut()) {
            let (done, secs) = run_workers(make(), time / SLICES, per_slice).await?;
            t.0 += done;
            t.1 += secs;
        }
    }
    let rates: Vec<(&str, f64)> =
        sides.iter().zip(&tally).map(|((name, _), (done, secs))| (*name, *done as f64 / secs.max(1e-9))).collect();
    let rate = |name: &str| rates.iter().find(|(n, _)| *n == name).map(|(_, r)| *r);
    let mut line = format!("client {label}:");
    let mut parts = Vec::new();
    if let Some(o) = rate("ours") {
        parts.push(format!("ours {o:.0} req/s"));
    }
    if let Some(r) = rate("raw") {
        parts.push(format!("raw {r:.0} req/s"));
    }
    if let (Some(o), Some(r)) = (rate("ours"), rate("raw")) {
        parts.push(format!("ratio {:.2}", o / r.max(1e-9)));
    }
    line.push(' ');
    line.push_str(&parts.join(", "));
    if let Some(q) = rate("reqwest") {
        line.push_str(&format!("; reqwest-only loop {q:.0} req/s"));
    }
    if let Some(d) = rate("demux") {
        line.push_str(&format!("; {n}-caller demux client {d:.0} req/s", n = args.concurrency));
        if let Some(o) = rate("ours") {
            line.push_str(&format!(", ours/demux {:.2}", o / d.max(1e-9)));
        }
    }
    println!("{line}");
    Ok(())
}

async fn run(args: Args) -> Result<(), BoxError> {
    let dir = match &args.bin_dir {
        Some(d) => d.clone(),
        None => std::env::current_exe()?.parent().ok_or("no binary directory")?.to_path_buf(),
    };
    let c = args.concurrency.clamp(1, 4096);
    if matches!(args.only.as_str(), "all" | "http") {
        let (_server, url) = spawn_http(&dir.join("mcp-ceiling-http")).await?;
        let uri: Uri = url.parse()?;
        let client = builder().connect(HttpTransport::new(&url)?).await?;
        for (label, n) in [("http w=1".to_owned(), 1), (format!("http c={c}"), c)] {
            let sides: Vec<(&'static str, Side<'_>)> = vec![
                ("ours", Box::new(|| ours(&client, n))),
                ("raw", Box::new(|| raw_http(&uri, n))),
                ("reqwest", Box::new(|| reqwest_http(&url, n))),
            ];
            case(&label, &args, sides).await?;
        }
        client.close().await;
    }
    if matches!(args.only.as_str(), "all" | "stdio") {
        let program = dir.join("mcp-ceiling-stdio");
        let (command, command_args) = server_command(&program);
        let t = StdioTransport::spawn(StdioCommand::new(command).args(command_args))?;
        let client = builder().connect(t).await?;
        for (label, n) in [("stdio w=1".to_owned(), 1), (format!("stdio c={c}"), c)] {
            let raw = |_: ()| {
                let p = program.clone();
                vec![Box::new(move |b: Arc<Budget>| {
                    Box::pin(async move { raw_stdio(&p, n, b).await.map_err(|e| e.to_string()) }) as BoxFuture<_>
                }) as Worker]
            };
            let demux = |_: ()| {
                let p = program.clone();
                vec![Box::new(move |b: Arc<Budget>| {
                    Box::pin(async move { demux_stdio(&p, n, b).await.map_err(|e| e.to_string()) }) as BoxFuture<_>
                }) as Worker]
            };
            let mut sides: Vec<(&'static str, Side<'_>)> =
                vec![("ours", Box::new(|| ours(&client, n))), ("raw", Box::new(move || raw(())))];
            if n > 1 {
                sides.push(("demux", Box::new(move || demux(()))));
            }
            case(&label, &args, sides).await?;
        }
        client.close().await;
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let _ = SERVER_CPU.set(args.server_cpu);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    match rt.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-client-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
