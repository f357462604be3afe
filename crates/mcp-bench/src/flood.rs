//! `mcp-hostile`'s notification floods: a stdio MCP server that floods its client with
//! unsolicited notifications ([`serve_flood`], the hidden `--flood-server` mode), the cases
//! that put `mcp tools list` ([`unsolicited_cli`]) and `mcp proxy --stdio`
//! ([`unsolicited_proxy`]) in front of it, and an in-process HTTP server whose tool logs into a
//! call whose client never reads ([`notify_flood`]); and the text line of each ([`describe`]).
//!
//! Everything is pipes or 127.0.0.1, bounded in count and time.

use crate::hostile::{self, connect, BoxError};
use crate::{ceiling_response, proc_status_kib, PROTOCOL_VERSION};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the flood server floods, at most.
pub const FLOOD_TIME: Duration = Duration::from_secs(10);

/// How many notifications the flood server writes, at most.
pub const FLOOD_MESSAGES: u64 = 2_000_000;

/// The RSS past which a measured process is killed (the flood is stopped there, not measured
/// further): 4 GiB.
const RSS_CAP_KIB: u64 = 4 << 20;

/// The bytes of `data` in each flood notification.
const NOTE_BYTES: usize = 1024;

/// Writes what the flood server did so far (`{"mode", "messages", "flood_s"}`) to `report`.
fn write_report(report: Option<&Path>, mode: &str, messages: u64, flood_s: f64) {
    if let Some(path) = report {
        let _ = std::fs::write(path, json!({"mode": mode, "messages": messages, "flood_s": flood_s}).to_string());
    }
}

/// Runs the flood server on stdin/stdout: `modern` answers `server/discover` (a
/// `DiscoverResult`), `legacy` refuses it (-32601) and answers `initialize` (2025-11-25); on
/// `tools/list` either first writes up to [`FLOOD_MESSAGES`] notifications of 1 KiB for up to
/// [`FLOOD_TIME`] as fast as the pipe takes them, then answers. Other requests get -32601,
/// notifications are ignored. What it wrote goes to `report` (a JSON object). Ends at EOF on
/// stdin or a failed write.
pub fn serve_flood(mode: &str, report: Option<&Path>) -> Result<(), BoxError> {
    let legacy = match mode {
        "modern" => false,
        "legacy" => true,
        other => return Err(format!("--flood-server takes modern or legacy, not {other:?}").into()),
    };
    let mut note = serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "x".repeat(NOTE_BYTES)}}))?;
    note.push(b'\n');
    let stdin = std::io::stdin().lock();
    let mut out = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    let mut total = 0u64;
    write_report(report, mode, 0, 0.0);
    for line in stdin.lines() {
        let Ok(request) = serde_json::from_str::<Value>(&line?) else { continue };
        let Some(id) = request.get("id").cloned() else { continue };
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let answer = match (method, legacy) {
            ("server/discover", false) => ceiling_response(request),
            ("initialize", true) => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": hostile::LEGACY_PV, "capabilities": {"tools": {}},
                "serverInfo": {"name": "mcp-hostile-flood", "version": "1"}}}),
            ("tools/list", _) => {
                let t = Instant::now();
                let mut n = 0u64;
                while n < FLOOD_MESSAGES && t.elapsed() < FLOOD_TIME {
                    out.write_all(&note)?;
                    n += 1;
                    if n.is_multiple_of(100_000) {
                        write_report(report, mode, total + n, t.elapsed().as_secs_f64());
                    }
                }
                out.flush()?;
                total += n;
                write_report(report, mode, total, t.elapsed().as_secs_f64());
                let mut answer = ceiling_response(request);
                if legacy {
                    answer["result"].as_object_mut().map(|r| r.remove("resultType"));
                }
                answer
            }
            _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}}),
        };
        serde_json::to_writer(&mut out, &answer)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}

/// A file for the flood server's report, unique to this process and `tag`.
fn report_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("mcp-hostile-flood-{}-{tag}.json", std::process::id()))
}

/// The report the flood server left in `path` (removed): its `messages` and `flood_s`.
fn read_report(path: &Path) -> (Value, Value) {
    let v: Value = std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(Value::Null);
    let _ = std::fs::remove_file(path);
    (v["messages"].clone(), v["flood_s"].clone())
}

/// A process's RSS, sampled every 100 ms: the largest `VmRSS` seen and the last `VmHWM`.
#[derive(Debug, Default, Clone, Copy)]
struct Peak {
    rss_kib: u64,
    hwm_kib: u64,
    samples: u64,
    capped: bool,
}

impl Peak {
    /// Takes one sample of `pid`; whether it is past [`RSS_CAP_KIB`] (then `capped` is set).
    fn sample(&mut self, pid: u32) -> bool {
        if let Some(rss) = proc_status_kib(pid, "VmRSS") {
            self.rss_kib = self.rss_kib.max(rss);
            self.samples += 1;
        }
        if let Some(hwm) = proc_status_kib(pid, "VmHWM") {
            self.hwm_kib = self.hwm_kib.max(hwm);
        }
        self.capped |= self.rss_kib > RSS_CAP_KIB;
        self.capped
    }
}

/// An exit status as text: `exit 0`, `signal 9`.
fn status_text(status: Option<ExitStatus>) -> String {
    let Some(s) = status else { return "still running (killed)".into() };
    if let Some(c) = s.code() {
        return format!("exit {c}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("signal {sig}");
        }
    }
    s.to_string()
}

/// Reads `r` to its end in a thread: everything, or its last 4 KiB with `tail_only`.
fn drain(mut r: impl Read + Send + 'static, tail_only: bool) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let (mut all, mut chunk) = (Vec::new(), [0u8; 16 << 10]);
        while let Ok(n) = r.read(&mut chunk) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&chunk[..n]);
            if tail_only && all.len() > 8 << 10 {
                all.drain(..all.len() - (4 << 10));
            }
        }
        all
    })
}

/// Kills `child` (if still running) and reaps it.
fn finish(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// `mcp tools list -- <this binary> --flood-server MODE`: the client's peak RSS while the
/// server floods, what the server wrote, the exit status and the time taken (bounded: 60 s).
fn cli_round(mcp: &Path, mode: &str) -> Result<Value, BoxError> {
    let me = std::env::current_exe()?;
    let report = report_path(&format!("cli-{mode}"));
    let t = Instant::now();
    let mut child = Command::new(mcp)
        .args(["tools", "list", "--"])
        .arg(&me)
        .args(["--flood-server", mode, "--flood-report"])
        .arg(&report)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = child.id();
    let out = drain(child.stdout.take().ok_or("no stdout")?, false);
    let err = drain(child.stderr.take().ok_or("no stderr")?, true);
    let mut peak = Peak::default();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if peak.sample(pid) || t.elapsed() > Duration::from_secs(60) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let took = t.elapsed().as_secs_f64();
    finish(&mut child);
    let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    // The flood server ends at its next write once the client is gone.
    std::thread::sleep(Duration::from_millis(200));
    let (messages, flood_s) = read_report(&report);
    let listed = status.is_some_and(|s| s.success()) && crate::contains(&stdout, b"echo");
    let stderr_tail = String::from_utf8_lossy(&stderr).lines().last().unwrap_or("").to_owned();
    Ok(json!({"mode": mode, "peak_rss_kib": peak.rss_kib, "hwm_kib": peak.hwm_kib, "rss_samples": peak.samples,
        "rss_cap_hit": peak.capped, "messages": messages, "flood_s": flood_s, "status": status_text(status),
        "tools_listed": listed, "duration_s": took, "stderr_tail": stderr_tail}))
}

/// The `unsolicited-cli` case: `cli_round` against a modern, then a legacy flood server.
pub fn unsolicited_cli(mcp: &Path) -> Result<Value, BoxError> {
    Ok(json!({"modern": cli_round(mcp, "modern")?, "legacy": cli_round(mcp, "legacy")?}))
}

/// One modern request line (with `_meta`, and `extra_meta` merged into it), without a newline.
fn modern_line(id: u64, method: &str, mut params: Value, extra_meta: Value) -> Vec<u8> {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-hostile", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let (Some(m), Some(extra)) = (meta.as_object_mut(), extra_meta.as_object()) {
        m.extend(extra.clone());
    }
    params["_meta"] = meta;
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .expect("JSON serializes")
}

/// The `unsolicited-proxy` case: `mcp proxy --stdio -- <this binary> --flood-server modern`,
/// sent a modern `server/discover` and `tools/list` on its stdin (its stdout read): its peak
/// RSS until the `tools/list` is answered (bounded: 30 s), and what came back.
pub fn unsolicited_proxy(mcp: &Path) -> Result<Value, BoxError> {
    let me = std::env::current_exe()?;
    let report = report_path("proxy");
    let t = Instant::now();
    let mut child = Command::new(mcp)
        .args(["proxy", "--stdio", "--"])
        .arg(&me)
        .args(["--flood-server", "modern", "--flood-report"])
        .arg(&report)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = child.id();
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let err = drain(child.stderr.take().ok_or("no stderr")?, true);
    let (lines, answered_ms, discovered) =
        (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
    let reader = std::thread::spawn({
        let (lines, answered_ms, discovered) = (lines.clone(), answered_ms.clone(), discovered.clone());
        move || -> Option<usize> {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                lines.fetch_add(1, Ordering::Relaxed);
                let Ok(v) = serde_json::from_str::<Value>(&line) else { continue };
                match v["id"].as_u64() {
                    Some(1) => discovered.store(v.get("result").is_some(), Ordering::Relaxed),
                    Some(2) => {
                        answered_ms.store(t.elapsed().as_millis().max(1) as u64, Ordering::Relaxed);
                        return v["result"]["tools"].as_array().map(Vec::len);
                    }
                    _ => {}
                }
            }
            None
        }
    });
    for (id, method) in [(1, "server/discover"), (2, "tools/list")] {
        let mut line = modern_line(id, method, json!({}), json!({}));
        line.push(b'\n');
        stdin.write_all(&line)?;
    }
    stdin.flush()?;
    let mut peak = Peak::default();
    let mut exited = None;
    // At least FLOOD_TIME, then until the answer (30 s at most), and 0.5 s past it.
    while t.elapsed() < Duration::from_secs(30) {
        if let Some(s) = child.try_wait()? {
            exited = Some(s);
            break;
        }
        let answered = answered_ms.load(Ordering::Relaxed);
        if peak.sample(pid) || (answered > 0 && t.elapsed() > FLOOD_TIME.max(Duration::from_millis(answered + 500))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = t.elapsed().as_secs_f64();
    drop(stdin);
    finish(&mut child);
    let tools = reader.join().ok().flatten();
    let stderr = err.join().unwrap_or_default();
    std::thread::sleep(Duration::from_millis(200));
    let (messages, flood_s) = read_report(&report);
    let answered = answered_ms.load(Ordering::Relaxed);
    Ok(json!({"peak_rss_kib": peak.rss_kib, "hwm_kib": peak.hwm_kib, "rss_samples": peak.samples,
        "rss_cap_hit": peak.capped, "messages": messages, "flood_s": flood_s,
        "discovered": discovered.load(Ordering::Relaxed), "tools_list_answered": tools.is_some(), "tools": tools,
        "answered_after_s": (answered > 0).then(|| answered as f64 / 1000.0), "lines_downstream": lines.load(Ordering::Relaxed),
        "exited": exited.map(|s| status_text(Some(s))), "sampled_s": took,
        "stderr_tail": String::from_utf8_lossy(&stderr).lines().last().unwrap_or("").to_owned()}))
}

/// What the flooding tool of [`notify_flood`] did.
#[derive(Debug, Default)]
struct Seen {
    /// Log notifications sent (loop iterations).
    sent: AtomicU64,
    /// Whether the loop saw its call cancelled.
    cancelled: AtomicBool,
    /// When the handler ended, in ms since the attack began (0: not ended).
    ended_ms: AtomicU64,
}

/// Log notifications the flooding tool sends at most.
const NOTIFY_MAX: u64 = 1_000_000;

/// A modern POST of `method` to `addr` (`extra_meta` merged into `_meta`): head and body.
fn modern_post(
    addr: SocketAddr,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: Value,
    extra_meta: Value,
) -> Vec<u8> {
    let body = modern_line(id, method, params, extra_meta);
    let name = name.map(|n| format!("Mcp-Name: {n}\r\n")).unwrap_or_default();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nMCP-Protocol-Version: {PROTOCOL_VERSION}\r\nMcp-Method: {method}\r\n{name}\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    request
}

/// One `tools/list` on `conn` (a new connection to `addr` when `None` or after a failure):
/// its latency, or `None` when it failed or did not get 200.
fn timed_tools_list(conn: &mut Option<TcpStream>, addr: SocketAddr, id: u64) -> Option<f64> {
    let t = Instant::now();
    let r = (|| -> Result<u16, BoxError> {
        let s = match conn.as_mut() {
            Some(s) => s,
            None => conn.insert(connect(addr)?),
        };
        s.write_all(&modern_post(addr, id, "tools/list", None, json!({}), json!({})))?;
        Ok(hostile::read_response(s)?.0.status)
    })();
    match r {
        Ok(200) => Some(t.elapsed().as_secs_f64() * 1000.0),
        _ => {
            *conn = None;
            None
        }
    }
}

/// The `notify-flood` case, in this process: a server (`mcp::http::serve` on 127.0.0.1:0,
/// `notification_stall` 2 s) whose one tool logs 1 KiB messages in a loop (up to 1,000,000,
/// stopping when cancelled); an attacker POSTs a `tools/call` of it asking for logs and never
/// reads. For 10 s: this process's RSS every 100 ms, and a second client's `tools/list`
/// latency every 200 ms; whether the handler saw its call cancelled, and after how many logs.
/// Twice: with the default drop limit (`max_dropped_notifications` 100,000, which cancels the
/// call first), then without one (the 2 s stall cancels it).
pub fn notify_flood(_mcp: &Path) -> Result<Value, BoxError> {
    Ok(json!({"drops": notify_round(None)?, "stall": notify_round(Some(u64::MAX))?}))
}

/// One round of [`notify_flood`], `max_dropped` replacing the default drop limit.
fn notify_round(max_dropped: Option<u64>) -> Result<Value, BoxError> {
    use mcp::server::{Context, HandlerError, Server, Tool};
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let seen = Arc::new(Seen::default());
    let start = Arc::new(std::sync::OnceLock::<Instant>::new());
    let tool = Tool::new("chatty").description("Logs 1 KiB messages until cancelled.").handler({
        let (seen, start) = (seen.clone(), start.clone());
        move |ctx: Context| {
            let (seen, start) = (seen.clone(), start.clone());
            async move {
                let data = Value::String("x".repeat(NOTE_BYTES));
                for i in 0..NOTIFY_MAX {
                    if ctx.is_cancelled() {
                        seen.cancelled.store(true, Ordering::SeqCst);
                        break;
                    }
                    ctx.log(mcp::protocol::types::LoggingLevel::Info, None, data.clone());
                    seen.sent.fetch_add(1, Ordering::Relaxed);
                    if i % 1000 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                let since = start.get().map_or(0, |s| s.elapsed().as_millis().max(1) as u64);
                seen.ended_ms.store(since, Ordering::SeqCst);
                Ok::<_, HandlerError>("done".to_owned())
            }
        }
    });
    let server = Server::builder("mcp-hostile-notify", "1").tool(tool).build()?;
    let shutdown = server.shutdown_token();
    let mut config = mcp::http::EndpointConfig { notification_stall: Duration::from_secs(2), ..Default::default() };
    config.max_dropped_notifications = max_dropped.unwrap_or(config.max_dropped_notifications);
    let max_dropped = config.max_dropped_notifications;
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    let serving = rt.spawn(mcp::http::serve(server, listener, config));
    let me = std::process::id();
    // A first tools/list warms the server up; the baseline is taken after it.
    let mut conn = None;
    let warm = timed_tools_list(&mut conn, addr, 1).ok_or("the server did not answer tools/list")?;
    std::thread::sleep(Duration::from_millis(200));
    let before = proc_status_kib(me, "VmRSS").unwrap_or(0);
    let mut attacker = connect(addr)?;
    let call = modern_post(
        addr,
        2,
        "tools/call",
        Some("chatty"),
        json!({"name": "chatty", "arguments": {}}),
        json!({"io.modelcontextprotocol/logLevel": "debug"}),
    );
    let t = Instant::now();
    let _ = start.set(t);
    attacker.write_all(&call)?;
    let window = Duration::from_secs(10);
    let latencies = std::thread::spawn(move || {
        let (mut ms, mut failed, mut id) = (Vec::new(), 0u64, 100u64);
        while t.elapsed() < window {
            id += 1;
            match timed_tools_list(&mut conn, addr, id) {
                Some(l) => ms.push(l),
                None => failed += 1,
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        (ms, failed)
    });
    let mut peak = Peak::default();
    while t.elapsed() < window {
        if peak.sample(me) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let after = proc_status_kib(me, "VmRSS").unwrap_or(0);
    let (mut ms, failed) = latencies.join().map_err(|_| "the latency thread panicked")?;
    ms.sort_by(f64::total_cmp);
    let pick = |q: f64| ms.get(((ms.len() as f64 - 1.0) * q).round() as usize).copied();
    let (sent, cancelled, ended) =
        (seen.sent.load(Ordering::SeqCst), seen.cancelled.load(Ordering::SeqCst), seen.ended_ms.load(Ordering::SeqCst));
    drop(attacker);
    shutdown.cancel();
    let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(5), serving).await });
    rt.shutdown_timeout(Duration::from_secs(2));
    Ok(json!({"max_logs": NOTIFY_MAX, "log_bytes": NOTE_BYTES, "notification_stall_s": 2, "max_dropped": max_dropped,
        "rss_before_kib": before, "peak_rss_kib": peak.rss_kib, "rss_growth_kib": peak.rss_kib.saturating_sub(before),
        "rss_after_kib": after, "rss_cap_hit": peak.capped, "logs_sent": sent, "handler_cancelled": cancelled,
        "handler_ended_after_s": (ended > 0).then(|| ended as f64 / 1000.0), "warm_tools_list_ms": warm,
        "tools_list_answered": ms.len(), "tools_list_failed": failed, "tools_list_p50_ms": pick(0.5),
        "tools_list_max_ms": pick(1.0)}))
}

/// The text line of a case of this module (`None`: not one of them).
pub fn describe(name: &str, v: &Value) -> Option<String> {
    let mib = |k: &Value| format!("{:.1} MiB", k.as_f64().unwrap_or(0.0) / 1024.0);
    let f = |k: &Value| k.as_f64().map_or_else(|| "n/a".to_owned(), |x| format!("{x:.2}"));
    let cap = |v: &Value| if v["rss_cap_hit"] == true { " (killed at the 4 GiB cap)" } else { "" };
    Some(match name {
        "unsolicited-cli" => {
            let round = |v: &Value| {
                format!(
                    "{}: {} notifications of 1 KiB in {} s: `mcp tools list` peak RSS {} (VmHWM {}){}, {}, tools listed: {}, {} s",
                    v["mode"].as_str().unwrap_or("?"),
                    v["messages"],
                    f(&v["flood_s"]),
                    mib(&v["peak_rss_kib"]),
                    mib(&v["hwm_kib"]),
                    cap(v),
                    v["status"].as_str().unwrap_or("?"),
                    v["tools_listed"],
                    f(&v["duration_s"])
                )
            };
            format!("unsolicited flood, CLI: {}\nunsolicited flood, CLI: {}", round(&v["modern"]), round(&v["legacy"]))
        }
        "unsolicited-proxy" => format!(
            "unsolicited flood, proxy --stdio: {} notifications of 1 KiB in {} s upstream: proxy peak RSS {} (VmHWM {}){}; \
             tools/list answered: {} (after {} s), {} lines downstream",
            v["messages"],
            f(&v["flood_s"]),
            mib(&v["peak_rss_kib"]),
            mib(&v["hwm_kib"]),
            cap(v),
            v["tools_list_answered"],
            f(&v["answered_after_s"]),
            v["lines_downstream"]
        ),
        "notify-flood" => {
            let round = |v: &Value| {
                let limit = match v["max_dropped"].as_u64() {
                    Some(u64::MAX) => "no drop limit, 2 s stall".to_owned(),
                    Some(n) => format!("drop limit {n}, 2 s stall"),
                    None => "?".to_owned(),
                };
                format!(
                    "{limit}: {} logs, handler cancelled: {} (ended after {} s); RSS {} -> peak {} (+{}){}; \
                     a second client's tools/list: {} answered, {} failed, p50 {} ms, max {} ms",
                    v["logs_sent"],
                    v["handler_cancelled"],
                    f(&v["handler_ended_after_s"]),
                    mib(&v["rss_before_kib"]),
                    mib(&v["peak_rss_kib"]),
                    mib(&v["rss_growth_kib"]),
                    cap(v),
                    v["tools_list_answered"],
                    v["tools_list_failed"],
                    f(&v["tools_list_p50_ms"]),
                    f(&v["tools_list_max_ms"])
                )
            };
            let what = "notify flood (a tool logging 1 KiB messages into a call never read)";
            format!("{what}, {}\n{what}, {}", round(&v["drops"]), round(&v["stall"]))
        }
        _ => return None,
    })
}
