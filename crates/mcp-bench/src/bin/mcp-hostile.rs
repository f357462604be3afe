//! `mcp-hostile`: measures how `mcp serve everything` holds up against hostile clients, with
//! the figures a reviewer asks for (the integration tests in `crates/mcp-stack-cli/tests/hostile_*.rs`
//! assert the behaviour; this prints the numbers):
//!
//! - `trickle`: 50 connections each trickle 1,500 one-byte body writes of a 2,000-byte body
//!   (75 KB in all, no body complete): the server's RSS before and after, then every body is
//!   completed and must be answered;
//! - `stalled`: headers and one body byte, then silence: time until the 408 and the close;
//! - `cap`: 4,096 idle keep-alive connections fill the default connection cap: how long a new
//!   client waits for its answer (five new clients, one after the other);
//! - `listen`: 4,096 listen streams opened (as many as connections; per-peer stream cap off,
//!   everything is loopback): how many stay open (the stream cap), and how long a new client
//!   waits for its answer;
//! - `heads`: 2,000 request heads of 30 KB each, never finished: RSS per 1,000 of them, and a
//!   new client's answer;
//! - `slowbody`: 32 bodies declaring 2 MiB and sending 40 bytes each: a legitimate POST's
//!   status and wait (the body budget counts bytes received);
//! - `burst`: 300 concurrent echoes of 1.9 MiB each: peak RSS, and RSS 0.5 s and 2 s after;
//! - `legacy-flood`: 1,500 legacy `initialize` POSTs (no session header) with 60 KiB of
//!   `capabilities` each, from one client (8 keep-alive connections) as fast as it can: their
//!   outcomes and the server's RSS before, after and at its peak, then how long a new legacy
//!   client (initialize, `notifications/initialized`, `tools/list`) waits; then, on a fresh
//!   server, 300 initializes of 1.9 MiB `capabilities` (over the 64 KiB cap: -32602): the same;
//! - `listen-filters`: 300 `subscriptions/listen` POSTs of 110,000 `resourceSubscriptions`
//!   each (over the 1,024 cap: refused): their outcomes and RSS; then 300 streams at the
//!   per-stream caps (1,024 URIs of 250 bytes: 256,000 filter bytes) held open: how many the
//!   server-wide filter budget (64 MiB) takes, RSS, and a new client's `tools/list` wait;
//! - `stdio`: 100,000 pipelined 1 KiB echoes on stdio with stdout left unread: how many
//!   requests the server takes before it stops reading, its RSS then, and whether all
//!   100,000 answers arrive once stdout is read;
//! - `unsolicited-cli`, `unsolicited-proxy`, `notify-flood` (in [`mcp_bench::flood`]): a stdio
//!   server (this binary, `--flood-server modern|legacy`) writing 1 KiB notifications for 10 s
//!   before answering `tools/list`: the peak RSS of `mcp tools list` and of `mcp proxy --stdio`
//!   in front of it; and an in-process HTTP server whose tool logs into a call never read: RSS
//!   growth, whether the call is cancelled, and a second client's `tools/list` latency.
//!
//! `mcp-hostile --mcp target/release/mcp [--only NAME] [--json]`. Everything goes to
//! 127.0.0.1 or pipes; every loop is bounded in count and time. The `cap` and `listen` cases
//! need about 8,300 file descriptors (`ulimit -n`) for this process; the server raises its own.

use clap::Parser;
use mcp_bench::hostile::{self, connect, flood, BoxError, Tally, WAIT};
use mcp_bench::{echo_request, proc_status_kib};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Command-line options.
#[derive(Parser)]
#[command(name = "mcp-hostile", about = "Hostile-client measurements against `mcp serve everything`")]
struct Args {
    /// The `mcp` binary to measure.
    #[arg(long, default_value = "target/release/mcp")]
    mcp: PathBuf,
    /// Run one case only: trickle, stalled, cap, listen, heads, slowbody, burst, legacy-flood,
    /// listen-filters, stdio, unsolicited-cli, unsolicited-proxy or notify-flood.
    #[arg(long)]
    only: Option<String>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
    /// Act as the flooding stdio server (`modern` or `legacy`) of the unsolicited cases.
    #[arg(long, hide = true)]
    flood_server: Option<String>,
    /// Where the flooding server writes what it sent.
    #[arg(long, hide = true)]
    flood_report: Option<PathBuf>,
}

/// A running `mcp serve everything --http` child, killed on drop.
struct HttpServer {
    child: Child,
    addr: SocketAddr,
}

impl HttpServer {
    fn start(mcp: &PathBuf, extra: &[&str]) -> Result<Self, BoxError> {
        let mut child = Command::new(mcp)
            .args(["serve", "everything", "--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let mut err = BufReader::new(child.stderr.take().ok_or("no stderr")?);
        let deadline = Instant::now() + WAIT;
        let mut line = String::new();
        let addr = loop {
            line.clear();
            if err.read_line(&mut line)? == 0 || Instant::now() > deadline {
                let _ = child.kill();
                return Err("the server exited before printing its address".into());
            }
            if let Some(at) = line.find("http://127.0.0.1:") {
                let rest = &line[at + "http://".len()..];
                let end = rest.find('/').unwrap_or(rest.len());
                break rest[..end].trim().parse()?;
            }
        };
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        Ok(Self { child, addr })
    }

    fn rss_kib(&self) -> u64 {
        proc_status_kib(self.child.id(), "VmRSS").unwrap_or(0)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An echo request body padded with spaces to exactly `len` bytes.
fn padded_echo(id: u64, text_len: usize, len: usize) -> Vec<u8> {
    let text = serde_json::to_string(&"x".repeat(text_len)).expect("a string serializes");
    let mut b = echo_request(id, &text).into_bytes();
    assert!(b.len() <= len, "an echo needs {} bytes", b.len());
    b.resize(len, b' ');
    b
}

/// The head of an echo POST with `Content-Length: len`.
fn post_head(addr: SocketAddr, len: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nMCP-Protocol-Version: {}\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n\
         Content-Length: {len}\r\n\r\n",
        mcp_bench::PROTOCOL_VERSION
    )
}

/// Reads one response with a `Content-Length` body: its status.
fn read_status(s: &mut TcpStream) -> Result<u16, BoxError> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).ok_or("no status line")?;
            let len: usize =
                head.lines().find_map(|l| l.strip_prefix("content-length:")).map_or(Ok(0), |v| v.trim().parse())?;
            while buf.len() < end + 4 + len {
                let n = s.read(&mut chunk)?;
                if n == 0 {
                    return Err("the connection closed inside a body".into());
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return Ok(status);
        }
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err("the connection closed before an answer".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// One small echo on `s`; its status.
fn echo_on(s: &mut TcpStream, addr: SocketAddr, id: u64) -> Result<u16, BoxError> {
    let body = padded_echo(id, 2, 300);
    s.write_all(post_head(addr, body.len()).as_bytes())?;
    s.write_all(&body)?;
    read_status(s)
}

fn trickle(mcp: &PathBuf) -> Result<Value, BoxError> {
    let server = HttpServer::start(mcp, &[])?;
    let addr = server.addr;
    let (conns, len, sent) = (50, 2000, 1500);
    let bodies: Vec<Vec<u8>> = (0..conns).map(|i| padded_echo(i, 2, len)).collect();
    let mut socks = Vec::new();
    for _ in 0..conns {
        let mut s = connect(addr)?;
        s.write_all(post_head(addr, len).as_bytes())?;
        socks.push(s);
    }
    std::thread::sleep(Duration::from_millis(200));
    let before = server.rss_kib();
    for i in 0..sent {
        for (s, b) in socks.iter_mut().zip(&bodies) {
            s.write_all(&b[i..i + 1])?;
        }
        // A pause now and then, so that bytes arrive as separate segments.
        if i % 4 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    let after = server.rss_kib();
    let mut answered = 0;
    for (s, b) in socks.iter_mut().zip(&bodies) {
        s.write_all(&b[sent..])?;
        if read_status(s)? == 200 {
            answered += 1;
        }
    }
    Ok(json!({"connections": conns, "body_bytes_sent": conns * sent as u64,
        "rss_before_kib": before, "rss_after_kib": after, "answered": answered}))
}

fn stalled(mcp: &PathBuf) -> Result<Value, BoxError> {
    let server = HttpServer::start(mcp, &[])?;
    let mut s = connect(server.addr)?;
    s.write_all(post_head(server.addr, 500).as_bytes())?;
    s.write_all(b"{")?;
    let t = Instant::now();
    let status = read_status(&mut s)?;
    let answer = t.elapsed();
    let mut rest = [0u8; 64];
    let closed = matches!(s.read(&mut rest), Ok(0) | Err(_));
    Ok(json!({"status": status, "answer_after_s": answer.as_secs_f64(),
        "closed_after_s": t.elapsed().as_secs_f64(), "closed": closed}))
}

fn cap(mcp: &PathBuf) -> Result<Value, BoxError> {
    let server = HttpServer::start(mcp, &[])?;
    let addr = server.addr;
    let full = 4096;
    let mut idle = Vec::with_capacity(full);
    let fill = Instant::now();
    for i in 0..full {
        let mut s = connect(addr)?;
        if echo_on(&mut s, addr, i as u64)? != 200 {
            return Err("a filling request failed".into());
        }
        idle.push(s);
        if fill.elapsed() > Duration::from_secs(120) {
            return Err("filling the cap took over 2 minutes".into());
        }
    }
    let mut waits = Vec::new();
    let mut fresh = Vec::new();
    for i in 0..5 {
        let t = Instant::now();
        let mut s = connect(addr)?;
        let status = echo_on(&mut s, addr, 10_000 + i)?;
        waits.push(t.elapsed().as_secs_f64() * 1000.0);
        if status != 200 {
            return Err(format!("a new client got {status}").into());
        }
        fresh.push(s);
    }
    let mut sorted = waits.clone();
    sorted.sort_by(f64::total_cmp);
    Ok(json!({"idle_connections": full, "new_client_ms": waits, "median_ms": sorted[sorted.len() / 2],
        "rss_kib": server.rss_kib()}))
}

/// A modern POST of `method` with `params` (their `_meta` added): head and body.
fn modern_request(addr: SocketAddr, id: u64, method: &str, mut params: Value) -> Vec<u8> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": mcp_bench::PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-hostile", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .expect("JSON serializes");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nMCP-Protocol-Version: {}\r\nMcp-Method: {method}\r\n\
         Content-Length: {}\r\n\r\n",
        mcp_bench::PROTOCOL_VERSION,
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    request
}

/// Writes a `subscriptions/listen` POST with the filter `notifications` on `s` and reads its
/// response head; when it is not an SSE stream, its body too.
fn open_listen_with(
    s: &mut TcpStream,
    addr: SocketAddr,
    id: u64,
    notifications: Value,
) -> Result<(hostile::Head, Vec<u8>), BoxError> {
    s.write_all(&modern_request(addr, id, "subscriptions/listen", json!({"notifications": notifications})))?;
    let (head, rest) = hostile::read_head(s)?;
    if head.is_sse() {
        return Ok((head, rest));
    }
    let body = hostile::read_body(s, &head, rest)?;
    Ok((head, body))
}

/// Writes a `subscriptions/listen` POST on `s` and reads its response head: whether it is an
/// SSE stream.
fn open_listen(s: &mut TcpStream, addr: SocketAddr, id: u64) -> Result<bool, BoxError> {
    let (head, _) = open_listen_with(s, addr, id, json!({"toolsListChanged": true}))?;
    Ok(head.status == 200 && head.is_sse())
}

/// A modern `tools/list` on `s`; its status.
fn tools_list_on(s: &mut TcpStream, addr: SocketAddr, id: u64) -> Result<u16, BoxError> {
    s.write_all(&modern_request(addr, id, "tools/list", json!({})))?;
    Ok(hostile::read_response(s)?.0.status)
}

/// Whether the server has closed `s` (a read returns EOF or an error without waiting).
fn is_closed(s: &mut TcpStream) -> bool {
    let _ = s.set_nonblocking(true);
    let mut buf = [0u8; 4096];
    let closed = loop {
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    let _ = s.set_nonblocking(false);
    closed
}

/// One exchange of a new client on a fresh connection: its status.
type Exchange = fn(&mut TcpStream, SocketAddr, u64) -> Result<u16, BoxError>;

/// How long each of five new clients waits for an echo's answer, in ms (and their median).
fn new_client_waits(addr: SocketAddr) -> Result<(Vec<f64>, f64), BoxError> {
    new_client_waits_with(addr, echo_on)
}

/// How long each of five new clients waits for the answer of `exchange`, in ms (and their
/// median).
fn new_client_waits_with(addr: SocketAddr, exchange: Exchange) -> Result<(Vec<f64>, f64), BoxError> {
    let mut waits = Vec::new();
    for i in 0..5 {
        let t = Instant::now();
        let mut s = connect(addr)?;
        let status = exchange(&mut s, addr, 20_000 + i)?;
        waits.push(t.elapsed().as_secs_f64() * 1000.0);
        if status != 200 {
            return Err(format!("a new client got {status}").into());
        }
    }
    let mut sorted = waits.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    Ok((waits, median))
}

fn listen(mcp: &PathBuf) -> Result<Value, BoxError> {
    let server = HttpServer::start(mcp, &["--max-listen-streams-per-peer", "0"])?;
    let addr = server.addr;
    let n = 4096;
    let mut streams = Vec::with_capacity(n);
    let fill = Instant::now();
    for i in 0..n {
        let mut s = connect(addr)?;
        if !open_listen(&mut s, addr, i as u64)? {
            return Err("a listen stream was refused".into());
        }
        streams.push(s);
        if fill.elapsed() > Duration::from_secs(120) {
            return Err("opening the streams took over 2 minutes".into());
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let open = streams.iter_mut().map(is_closed).filter(|closed| !closed).count();
    let (waits, median) = new_client_waits(addr)?;
    Ok(json!({"streams_opened": n, "streams_open": open, "new_client_ms": waits, "median_ms": median,
        "rss_kib": server.rss_kib()}))
}

fn heads(mcp: &PathBuf) -> Result<Value, BoxError> {
    let server = HttpServer::start(mcp, &[])?;
    let addr = server.addr;
    let (n, pad) = (2000, 30_000);
    std::thread::sleep(Duration::from_millis(200));
    let before = server.rss_kib();
    let part = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Pad: {}", "a".repeat(pad));
    let mut socks = Vec::with_capacity(n);
    for _ in 0..n {
        let mut s = connect(addr)?;
        s.write_all(part.as_bytes())?;
        socks.push(s);
    }
    std::thread::sleep(Duration::from_millis(500));
    let after = server.rss_kib();
    let (waits, median) = new_client_waits(addr)?;
    let per_1000 = (after.saturating_sub(before)) as f64 * 1000.0 / n as f64;
    Ok(json!({"heads": n, "head_bytes": part.len(), "rss_before_kib": before, "rss_after_kib": after,
        "rss_per_1000_kib": per_1000, "new_client_ms": waits, "median_ms": median}))
}

fn slowbody(mcp: &PathBuf) -> Result<Value, BoxError> {
    let server = HttpServer::start(mcp, &[])?;
    let addr = server.addr;
    let (n, declared, sent) = (32, 2 << 20, 40);
    let body = padded_echo(0, 2, declared);
    let mut socks = Vec::with_capacity(n);
    for _ in 0..n {
        let mut s = connect(addr)?;
        s.write_all(post_head(addr, declared).as_bytes())?;
        s.write_all(&body[..sent])?;
        socks.push(s);
    }
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let mut s = connect(addr)?;
    let status = echo_on(&mut s, addr, 1)?;
    let wait = t.elapsed().as_secs_f64() * 1000.0;
    Ok(json!({"slow_bodies": n, "declared_bytes": declared, "sent_bytes": sent, "status": status, "wait_ms": wait}))
}

fn burst(mcp: &PathBuf) -> Result<Value, BoxError> {
    let server = HttpServer::start(mcp, &[])?;
    let addr = server.addr;
    let (n, len) = (300, 1_900_000);
    let idle = server.rss_kib();
    let ok = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..n)
        .map(|i| {
            let ok = ok.clone();
            std::thread::spawn(move || -> Result<(), String> {
                let mut s = connect(addr).map_err(|e| e.to_string())?;
                let body = padded_echo(i, len - 400, len);
                s.write_all(post_head(addr, len).as_bytes()).map_err(|e| e.to_string())?;
                s.write_all(&body).map_err(|e| e.to_string())?;
                // 503 past the body budget is an expected answer too.
                if read_status(&mut s).map_err(|e| e.to_string())? == 200 {
                    ok.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            })
        })
        .collect();
    for w in workers {
        w.join().map_err(|_| "a worker panicked")??;
    }
    let peak = proc_status_kib(server.child.id(), "VmHWM").unwrap_or(0);
    let right_after = server.rss_kib();
    std::thread::sleep(Duration::from_millis(500));
    let half = server.rss_kib();
    std::thread::sleep(Duration::from_millis(1500));
    let two = server.rss_kib();
    Ok(json!({"requests": n, "body_bytes": len, "answered_200": ok.load(Ordering::Relaxed),
        "rss_idle_kib": idle, "peak_rss_kib": peak, "rss_right_after_kib": right_after,
        "rss_after_0_5s_kib": half, "rss_after_2s_kib": two}))
}

/// A legacy POST on `s` (with `session`, or none): the whole response.
fn legacy_exchange(
    s: &mut TcpStream,
    addr: SocketAddr,
    session: Option<&str>,
    body: &[u8],
) -> Result<(hostile::Head, Vec<u8>), BoxError> {
    s.write_all(hostile::legacy_head(&addr.to_string(), session, body.len()).as_bytes())?;
    s.write_all(body)?;
    hostile::read_response(s)
}

/// A new legacy client on `s`: `initialize`, `notifications/initialized`, then `tools/list` in
/// its session; the status of the `tools/list` (an error if a step before it fails).
fn legacy_client_on(s: &mut TcpStream, addr: SocketAddr, id: u64) -> Result<u16, BoxError> {
    let (head, body) = legacy_exchange(s, addr, None, &hostile::legacy_initialize(id, 0))?;
    if head.status != 200 {
        return Err(format!("a new legacy client's initialize got {}", hostile::outcome(head.status, &body)).into());
    }
    let sid = head.header("mcp-session-id").ok_or("initialize answered without Mcp-Session-Id")?.to_owned();
    let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (head, _) = legacy_exchange(s, addr, Some(&sid), note)?;
    if head.status != 202 {
        return Err(format!("notifications/initialized got {}", head.status).into());
    }
    let list = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/list", "params": {}}))?;
    let (head, body) = legacy_exchange(s, addr, Some(&sid), &list)?;
    let tools = hostile::last_message(&body).and_then(|v| v["result"]["tools"].as_array().map(Vec::len));
    if head.status == 200 && tools.unwrap_or(0) == 0 {
        return Err("a legacy tools/list answered without tools".into());
    }
    Ok(head.status)
}

/// `n` legacy initializes of `junk` bytes of capabilities against a fresh server: outcomes,
/// RSS before, after and at its peak, and five new legacy clients' waits.
fn legacy_round(mcp: &PathBuf, n: usize, junk: usize, workers: usize) -> Result<Value, BoxError> {
    let server = HttpServer::start(mcp, &[])?;
    let addr = server.addr;
    std::thread::sleep(Duration::from_millis(200));
    let before = server.rss_kib();
    let body = hostile::legacy_initialize(1, junk);
    let mut request = hostile::legacy_head(&addr.to_string(), None, body.len()).into_bytes();
    request.extend_from_slice(&body);
    let t = Instant::now();
    let outcomes = flood(addr, workers, n, Arc::new(request))?;
    let took = t.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(300));
    let after = server.rss_kib();
    let peak = proc_status_kib(server.child.id(), "VmHWM").unwrap_or(0);
    let (waits, median) = new_client_waits_with(addr, legacy_client_on)?;
    Ok(json!({"initializes": n, "capabilities_bytes": junk, "body_bytes": body.len(), "connections": workers,
        "flood_s": took, "outcomes": outcomes.to_json(), "answered_200": outcomes.get("200"),
        "rss_before_kib": before, "rss_after_kib": after, "peak_rss_kib": peak,
        "new_client_ms": waits, "median_ms": median}))
}

fn legacy_flood(mcp: &PathBuf) -> Result<Value, BoxError> {
    let flood = legacy_round(mcp, 1500, 60 << 10, 8)?;
    let big = legacy_round(mcp, 300, 1_992_294, 16)?;
    Ok(json!({"flood": flood, "big": big}))
}

fn listen_filters(mcp: &PathBuf) -> Result<Value, BoxError> {
    // Every stream comes from 127.0.0.1: the per-peer stream cap is off, as in `listen`.
    let server = HttpServer::start(mcp, &["--max-listen-streams-per-peer", "0"])?;
    let addr = server.addr;
    std::thread::sleep(Duration::from_millis(200));
    let before = server.rss_kib();
    let (n, over) = (300, 110_000);
    let huge = json!({"notifications": {"resourceSubscriptions": hostile::resource_uris(0, over, 0)}});
    let request = modern_request(addr, 1, "subscriptions/listen", huge);
    let request_bytes = request.len();
    let refused = flood(addr, 16, n, Arc::new(request))?;
    std::thread::sleep(Duration::from_millis(300));
    let after_refused = server.rss_kib();
    let peak_refused = proc_status_kib(server.child.id(), "VmHWM").unwrap_or(0);
    // Streams at the per-stream caps, held open.
    let (per, uri_len) = (1024, 250);
    let mut streams = Vec::with_capacity(n);
    let mut not_opened = Tally::default();
    let fill = Instant::now();
    for i in 0..n {
        let mut s = connect(addr)?;
        let filter = json!({"resourceSubscriptions": hostile::resource_uris(i + 1, per, uri_len)});
        let (head, body) = open_listen_with(&mut s, addr, 1000 + i as u64, filter)?;
        if head.status == 200 && head.is_sse() {
            streams.push(s);
        } else {
            not_opened.add(hostile::outcome(head.status, &body));
        }
        if fill.elapsed() > Duration::from_secs(120) {
            return Err("opening the streams took over 2 minutes".into());
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let open = streams.iter_mut().map(is_closed).filter(|closed| !closed).count();
    let rss_streams = server.rss_kib();
    let (waits, median) = new_client_waits_with(addr, tools_list_on)?;
    Ok(json!({"requests": n, "uris_each": over, "request_bytes": request_bytes,
        "refused_outcomes": refused.to_json(), "rss_before_kib": before, "rss_after_refused_kib": after_refused,
        "peak_rss_refused_kib": peak_refused, "streams": n, "stream_uris": per, "uri_bytes": uri_len,
        "streams_opened": streams.len(), "streams_not_opened": not_opened.to_json(), "streams_open": open,
        "rss_streams_kib": rss_streams, "peak_rss_kib": proc_status_kib(server.child.id(), "VmHWM").unwrap_or(0),
        "new_client_ms": waits, "median_ms": median}))
}

fn stdio(mcp: &PathBuf) -> Result<Value, BoxError> {
    let mut child = Command::new(mcp)
        .args(["serve", "everything", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = child.id();
    let (mut stdin, stdout) = (child.stdin.take().ok_or("no stdin")?, child.stdout.take().ok_or("no stdout")?);
    let (total, reply_bytes) = (100_000, 1024);
    let text = serde_json::to_string(&"x".repeat(reply_bytes))?;
    let written = Arc::new(AtomicUsize::new(0));
    let writer = std::thread::spawn({
        let written = written.clone();
        move || {
            for id in 0..total {
                let mut line = echo_request(id as u64, &text);
                line.push('\n');
                if stdin.write_all(line.as_bytes()).is_err() {
                    return;
                }
                written.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    // Wait until the writer stalls (the server stopped reading), bounded.
    let deadline = Instant::now() + WAIT;
    let mut last = usize::MAX;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        let now = written.load(Ordering::Relaxed);
        if now == last || now == total {
            break;
        }
        last = now;
    }
    let taken = written.load(Ordering::Relaxed);
    let rss = proc_status_kib(pid, "VmRSS").unwrap_or(0);
    // Read everything: each of the 100,000 requests must be answered once.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = vec![false; total];
        let mut answers = 0;
        for line in BufReader::new(stdout).lines().take(total) {
            let Ok(line) = line else { break };
            let id = serde_json::from_str::<Value>(&line).ok().and_then(|v| v["id"].as_u64());
            if let Some(slot) = id.and_then(|id| seen.get_mut(id as usize)) {
                if !*slot {
                    *slot = true;
                    answers += 1;
                }
            }
        }
        let _ = tx.send(answers);
    });
    let answers = rx.recv_timeout(Duration::from_secs(120)).unwrap_or(0);
    // Killed before the writer is joined: a server that stopped reading for good would
    // otherwise leave the writer blocked on its pipe.
    let _ = child.kill();
    let _ = child.wait();
    let _ = writer.join();
    Ok(json!({"requests": total, "reply_bytes": reply_bytes, "taken_before_stall": taken, "rss_stalled_kib": rss,
        "answers": answers}))
}

/// One line of text for a case's figures.
fn describe(name: &str, v: &Value) -> String {
    let mib = |k: &Value| format!("{:.1} MiB", k.as_f64().unwrap_or(0.0) / 1024.0);
    match name {
        "trickle" => format!(
            "trickle: {} connections, {} body bytes trickled one per write: RSS {} -> {}; {} of {} answered once completed",
            v["connections"], v["body_bytes_sent"], mib(&v["rss_before_kib"]), mib(&v["rss_after_kib"]),
            v["answered"], v["connections"]
        ),
        "stalled" => format!(
            "stalled body: HTTP {} after {:.2} s, connection closed: {} ({:.2} s)",
            v["status"],
            v["answer_after_s"].as_f64().unwrap_or(0.0),
            v["closed"],
            v["closed_after_s"].as_f64().unwrap_or(0.0)
        ),
        "cap" => format!(
            "connection cap full ({} idle keep-alive): a new client answered in {:.2} ms (median of 5; all: {})",
            v["idle_connections"],
            v["median_ms"].as_f64().unwrap_or(0.0),
            v["new_client_ms"]
                .as_array()
                .map(|a| a.iter().map(|x| format!("{:.2}", x.as_f64().unwrap_or(0.0))).collect::<Vec<_>>().join(", "))
                .unwrap_or_default()
        ),
        "listen" => format!(
            "listen streams: {} opened, {} still open (the stream cap); a new client answered in {:.2} ms (median of 5)",
            v["streams_opened"],
            v["streams_open"],
            v["median_ms"].as_f64().unwrap_or(0.0)
        ),
        "heads" => format!(
            "unfinished heads: {} of {} bytes: RSS {} -> {} ({:.1} MiB per 1,000); a new client answered in {:.2} ms (median of 5)",
            v["heads"],
            v["head_bytes"],
            mib(&v["rss_before_kib"]),
            mib(&v["rss_after_kib"]),
            v["rss_per_1000_kib"].as_f64().unwrap_or(0.0) / 1024.0,
            v["median_ms"].as_f64().unwrap_or(0.0)
        ),
        "slowbody" => format!(
            "slow bodies: {} declaring {} bytes, {} sent each: a legitimate POST got HTTP {} in {:.2} ms",
            v["slow_bodies"],
            v["declared_bytes"],
            v["sent_bytes"],
            v["status"],
            v["wait_ms"].as_f64().unwrap_or(0.0)
        ),
        "burst" => format!(
            "burst: {} concurrent echoes of {} bytes ({} got 200, the rest 503): RSS idle {}, peak {}, right after {}, 0.5 s after {}, 2 s after {}",
            v["requests"], v["body_bytes"], v["answered_200"], mib(&v["rss_idle_kib"]), mib(&v["peak_rss_kib"]),
            mib(&v["rss_right_after_kib"]), mib(&v["rss_after_0_5s_kib"]), mib(&v["rss_after_2s_kib"])
        ),
        "stdio" => format!(
            "stdio, stdout unread: {} of {} requests of {} bytes taken before the server stopped reading; RSS {}; {} answers once read",
            v["taken_before_stall"], v["requests"], v["reply_bytes"], mib(&v["rss_stalled_kib"]), v["answers"]
        ),
        "legacy-flood" => {
            let round = |v: &Value| {
                format!(
                    "{} initializes of {} capability bytes on {} connections in {:.1} s ({}): RSS {} -> {}, peak {}; \
                     a new legacy client (initialize, initialized, tools/list) answered in {:.2} ms (median of 5)",
                    v["initializes"],
                    v["capabilities_bytes"],
                    v["connections"],
                    v["flood_s"].as_f64().unwrap_or(0.0),
                    hostile::tally_text(&v["outcomes"]),
                    mib(&v["rss_before_kib"]),
                    mib(&v["rss_after_kib"]),
                    mib(&v["peak_rss_kib"]),
                    v["median_ms"].as_f64().unwrap_or(0.0)
                )
            };
            format!("legacy flood: {}\nlegacy flood, oversized: {}", round(&v["flood"]), round(&v["big"]))
        }
        "listen-filters" => format!(
            "listen filters: {} listens of {} URIs ({} bytes): {}; RSS {} -> {}, peak {}\n\
             listen filters at the caps: {} streams of {} URIs of {} bytes: {} opened ({}), {} still open; RSS {}, \
             peak {}; a new client's tools/list answered in {:.2} ms (median of 5)",
            v["requests"],
            v["uris_each"],
            v["request_bytes"],
            hostile::tally_text(&v["refused_outcomes"]),
            mib(&v["rss_before_kib"]),
            mib(&v["rss_after_refused_kib"]),
            mib(&v["peak_rss_refused_kib"]),
            v["streams"],
            v["stream_uris"],
            v["uri_bytes"],
            v["streams_opened"],
            match hostile::tally_text(&v["streams_not_opened"]) {
                t if t.is_empty() => "none refused".to_owned(),
                t => format!("refused: {t}"),
            },
            v["streams_open"],
            mib(&v["rss_streams_kib"]),
            mib(&v["peak_rss_kib"]),
            v["median_ms"].as_f64().unwrap_or(0.0)
        ),
        _ => mcp_bench::flood::describe(name, v).unwrap_or_else(|| v.to_string()),
    }
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if let Some(mode) = &args.flood_server {
        return match mcp_bench::flood::serve_flood(mode, args.flood_report.as_deref()) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(_) => std::process::ExitCode::FAILURE,
        };
    }
    type Case = fn(&PathBuf) -> Result<Value, BoxError>;
    let cases: [(&str, Case); 13] = [
        ("trickle", trickle),
        ("stalled", stalled),
        ("cap", cap),
        ("listen", listen),
        ("heads", heads),
        ("slowbody", slowbody),
        ("burst", burst),
        ("legacy-flood", legacy_flood),
        ("listen-filters", listen_filters),
        ("stdio", stdio),
        ("unsolicited-cli", |m| mcp_bench::flood::unsolicited_cli(m)),
        ("unsolicited-proxy", |m| mcp_bench::flood::unsolicited_proxy(m)),
        ("notify-flood", |m| mcp_bench::flood::notify_flood(m)),
    ];
    let mut all = serde_json::Map::new();
    let mut failed = false;
    for (name, run) in cases {
        if args.only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        match run(&args.mcp) {
            Ok(v) => {
                if !args.json {
                    println!("{}", describe(name, &v));
                }
                all.insert(name.into(), v);
            }
            Err(e) => {
                eprintln!("mcp-hostile: {name}: {e}");
                failed = true;
            }
        }
    }
    if args.json {
        println!("{}", Value::Object(all));
    }
    if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}
