//! The small HTTP/1.1 client pieces `mcp-hostile` uses past a status line: whole responses
//! (`Content-Length` or chunked), headers, JSON-RPC error codes in them, tallies of outcomes,
//! and the request bodies of its legacy (`initialize`-based) and listen floods.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The error type of these helpers.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Bound on every single wait.
pub const WAIT: Duration = Duration::from_secs(30);

/// The legacy revision the legacy floods speak.
pub const LEGACY_PV: &str = "2025-11-25";

/// One HTTP response head: its status and its header lines (names as sent).
#[derive(Debug, Clone)]
pub struct Head {
    /// The status code.
    pub status: u16,
    /// The head, status line included, without the blank line.
    pub text: String,
}

impl Head {
    /// The value of header `name` (case-insensitive), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.text.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// Whether the body is a server-sent event stream.
    pub fn is_sse(&self) -> bool {
        self.header("content-type").is_some_and(|v| v.to_ascii_lowercase().contains("text/event-stream"))
    }
}

/// Reads more bytes of `s` into `buf`; a closed connection is an error.
fn fill(s: &mut impl Read, buf: &mut Vec<u8>) -> Result<(), BoxError> {
    let mut chunk = [0u8; 16 * 1024];
    let n = s.read(&mut chunk)?;
    if n == 0 {
        return Err("the connection closed inside a response".into());
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(())
}

/// Reads a response head from `s`: the head and the bytes read past it.
pub fn read_head(s: &mut impl Read) -> Result<(Head, Vec<u8>), BoxError> {
    let mut buf = Vec::with_capacity(4096);
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        fill(s, &mut buf)?;
    };
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).ok_or("no status line")?;
    let rest = buf.split_off(end + 4);
    Ok((Head { status, text }, rest))
}

/// Reads the body that follows `head` (`rest`: what was read past the head): chunked or
/// `Content-Length` (none: empty).
pub fn read_body(s: &mut impl Read, head: &Head, mut rest: Vec<u8>) -> Result<Vec<u8>, BoxError> {
    if head.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        let mut body = Vec::new();
        loop {
            let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
                fill(s, &mut rest)?;
                continue;
            };
            let line = String::from_utf8_lossy(&rest[..eol]).into_owned();
            let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)?;
            if rest.len() < eol + 2 + size + 2 {
                fill(s, &mut rest)?;
                continue;
            }
            body.extend_from_slice(&rest[eol + 2..eol + 2 + size]);
            rest.drain(..eol + 2 + size + 2);
            if size == 0 {
                return Ok(body);
            }
        }
    }
    let len: usize = head.header("content-length").map_or(Ok(0), str::parse)?;
    while rest.len() < len {
        fill(s, &mut rest)?;
    }
    rest.truncate(len);
    Ok(rest)
}

/// Reads one whole response: its head and body.
pub fn read_response(s: &mut impl Read) -> Result<(Head, Vec<u8>), BoxError> {
    let (head, rest) = read_head(s)?;
    let body = read_body(s, &head, rest)?;
    Ok((head, body))
}

/// The last JSON-RPC message of a body: the JSON itself, or the last `data:` line of an SSE body.
pub fn last_message(body: &[u8]) -> Option<Value> {
    if let Ok(v) = serde_json::from_slice(body) {
        return Some(v);
    }
    let text = String::from_utf8_lossy(body);
    let data = text.lines().filter_map(|l| l.strip_prefix("data:")).rfind(|d| !d.trim().is_empty())?;
    serde_json::from_str(data.trim()).ok()
}

/// A response's outcome as a tally key: `"200"`, or `"400 -32602"` when it carries a JSON-RPC
/// error (the status, then the code).
pub fn outcome(status: u16, body: &[u8]) -> String {
    match last_message(body).and_then(|v| v["error"]["code"].as_i64()) {
        Some(code) => format!("{status} {code}"),
        None => status.to_string(),
    }
}

/// Counts of outcomes (see [`outcome`]; a failed exchange counts under `"error: ..."`).
#[derive(Debug, Clone, Default)]
pub struct Tally(pub BTreeMap<String, usize>);

impl Tally {
    /// Counts one `key`.
    pub fn add(&mut self, key: impl Into<String>) {
        *self.0.entry(key.into()).or_default() += 1;
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: Tally) {
        for (k, n) in other.0 {
            *self.0.entry(k).or_default() += n;
        }
    }

    /// How many were counted under `key`.
    pub fn get(&self, key: &str) -> usize {
        self.0.get(key).copied().unwrap_or(0)
    }

    /// As a JSON object of counts.
    pub fn to_json(&self) -> Value {
        json!(self.0)
    }
}

/// A tally (as JSON) in one line: `200: 64, 503 -32603: 3`.
pub fn tally_text(v: &Value) -> String {
    v.as_object().map(|m| m.iter().map(|(k, n)| format!("{k}: {n}")).collect::<Vec<_>>().join(", ")).unwrap_or_default()
}

/// The head of a legacy POST of `len` bytes: no modern headers; with a session, its id and
/// the legacy version.
pub fn legacy_head(host: &str, session: Option<&str>, len: usize) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nContent-Length: {len}\r\n"
    );
    if let Some(sid) = session {
        head.push_str(&format!("Mcp-Session-Id: {sid}\r\nMCP-Protocol-Version: {LEGACY_PV}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// A legacy `initialize` whose `capabilities` carry `junk` bytes of padding (an `experimental`
/// member holding one long string).
pub fn legacy_initialize(id: u64, junk: usize) -> Vec<u8> {
    let capabilities = if junk == 0 { json!({}) } else { json!({"experimental": {"junk": "x".repeat(junk)}}) };
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": LEGACY_PV, "capabilities": capabilities,
        "clientInfo": {"name": "mcp-hostile", "version": "1"}}}))
    .expect("JSON serializes")
}

/// `n` distinct resource URIs of stream `stream`, each padded to `len` bytes (if shorter).
pub fn resource_uris(stream: usize, n: usize, len: usize) -> Vec<String> {
    (0..n)
        .map(|j| {
            let mut u = format!("a://{stream}/{j}");
            if u.len() < len {
                u.push_str(&"x".repeat(len - u.len()));
            }
            u
        })
        .collect()
}

/// A connection to `addr`, without Nagle, every read and write bounded by [`WAIT`].
pub fn connect(addr: SocketAddr) -> Result<TcpStream, BoxError> {
    let s = TcpStream::connect_timeout(&addr, WAIT)?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(WAIT))?;
    s.set_write_timeout(Some(WAIT))?;
    Ok(s)
}

/// Sends `total` copies of `request` (head and body) from `workers` threads, each on its own
/// keep-alive connection (a new one after a failure or a close), as fast as answers come;
/// their outcomes. Bounded by 120 s.
pub fn flood(addr: SocketAddr, workers: usize, total: usize, request: Arc<Vec<u8>>) -> Result<Tally, BoxError> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let request = request.clone();
            std::thread::spawn(move || {
                let mut tally = Tally::default();
                let mut conn: Option<TcpStream> = None;
                for _ in (w..total).step_by(workers) {
                    if Instant::now() > deadline {
                        tally.add("not sent (120 s)");
                        continue;
                    }
                    let answer = (|| -> Result<_, BoxError> {
                        let s = match conn.as_mut() {
                            Some(s) => s,
                            None => conn.insert(connect(addr)?),
                        };
                        s.write_all(&request)?;
                        read_response(s)
                    })();
                    match answer {
                        Ok((head, body)) => {
                            tally.add(outcome(head.status, &body));
                            if head.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
                                conn = None;
                            }
                        }
                        Err(_) => {
                            tally.add("connection error");
                            conn = None;
                        }
                    }
                }
                tally
            })
        })
        .collect();
    let mut tally = Tally::default();
    for t in threads {
        tally.merge(t.join().map_err(|_| "a flood worker panicked")?);
    }
    Ok(tally)
}
