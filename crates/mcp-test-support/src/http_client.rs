//! The tests' HTTP clients: hyper with one connection per request, an SSE reader, and raw
//! HTTP/1.1 over a socket for byte-exact requests.

use super::*;

// ------------------------------------------------------------------------------------------
// HTTP client (hyper, one connection per request)
// ------------------------------------------------------------------------------------------

/// A complete HTTP response.
#[derive(Debug)]
pub struct Resp {
    /// The status code.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> &'a str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

impl Resp {
    /// The body as text (for messages).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A response header, or "".
    pub fn header(&self, name: &str) -> &str {
        header(&self.headers, name)
    }

    /// The `Content-Type` header, or "".
    pub fn content_type(&self) -> &str {
        self.header("content-type")
    }

    /// Parses and wire-checks a JSON body (asserting the content type).
    #[track_caller]
    /// The body as JSON (panics when it is not).
    pub fn json(&self) -> Value {
        let ct = self.content_type();
        let (status, text) = (self.status, self.text());
        let is_json = ct.starts_with("application/json");
        assert!(is_json, "{ct:?} ({status}): {text}");
        let v = serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("invalid JSON body ({e}): {text}"));
        assert_wire(&v);
        v
    }

    /// Every SSE event of a complete `text/event-stream` body (each wire-checked).
    #[track_caller]
    pub fn events(&self) -> Vec<Value> {
        let ct = self.content_type();
        let is_sse = ct.starts_with("text/event-stream");
        assert!(is_sse, "{ct:?}: {}", self.text());
        let mut p = SseParser::default();
        p.push(&self.body);
        let out: Vec<Value> = std::iter::from_fn(|| p.next_event()).collect();
        assert!(p.is_drained(), "trailing partial event: {}", self.text());
        out
    }

    /// The final JSON-RPC message: the JSON body, or the last SSE event.
    #[track_caller]
    pub fn message(&self) -> Value {
        if self.content_type().starts_with("text/event-stream") {
            self.events().pop().expect("an SSE response with no events")
        } else {
            self.json()
        }
    }
}

type Sender = hyper::client::conn::http1::SendRequest<BoxBody<Bytes, Infallible>>;

async fn connect(addr: SocketAddr) -> (Sender, JoinHandle<()>) {
    let tcp = within("connect", TcpStream::connect(addr)).await;
    let io = TokioIo::new(tcp.expect("connect"));
    let (sender, conn) = hyper::client::conn::http1::handshake(io).await.expect("handshake");
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    (sender, task)
}

/// A body with `Content-Length`.
pub fn full(b: impl Into<Bytes>) -> BoxBody<Bytes, Infallible> {
    Full::new(b.into()).boxed()
}

/// A body sent with chunked transfer encoding (no `Content-Length`), in 16 KiB chunks.
pub fn chunked(data: Vec<u8>) -> BoxBody<Bytes, Infallible> {
    let chunks = data.chunks(16 * 1024).map(Bytes::copy_from_slice);
    Chunks(chunks.collect()).boxed()
}

struct Chunks(VecDeque<Bytes>);

impl hyper::body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|b| Ok(Frame::data(b))))
    }
}

/// Sends one request and returns as soon as the response head arrives.
pub async fn open(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: BoxBody<Bytes, Infallible>,
) -> Streaming {
    let (mut sender, conn) = connect(addr).await;
    let mut b = http::Request::builder().method(method).uri(path);
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        b = b.header("host", addr.to_string());
    }
    for (k, v) in headers {
        // `from_bytes` (unlike `&str`) lets tests send obs-text bytes.
        let v = http::HeaderValue::from_bytes(v.as_bytes()).expect("header value");
        b = b.header(k.as_str(), v);
    }
    let request = b.body(body).expect("request");
    let resp = within("response head", sender.send_request(request)).await;
    let (parts, body) = resp.expect("send request").into_parts();
    Streaming {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body: Some(body),
        parser: SseParser::default(),
        conn,
    }
}

/// Sends one request and reads the whole response.
pub async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: BoxBody<Bytes, Infallible>,
) -> Resp {
    let mut s = open(addr, method, path, headers, body).await;
    let body = s.body.take().expect("body");
    let body = within("response body", body.collect()).await;
    let headers = std::mem::take(&mut s.headers);
    Resp { status: s.status, headers, body: body.expect("read body").to_bytes() }
}

/// POSTs `body` to `/mcp` with exactly `headers` (plus `Host` if absent).
pub async fn post(addr: SocketAddr, headers: &[(String, String)], body: impl Into<Bytes>) -> Resp {
    send(addr, "POST", "/mcp", headers, full(body)).await
}

/// A response whose body is read incrementally as SSE.
pub struct Streaming {
    /// The status code.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    body: Option<Incoming>,
    parser: SseParser,
    conn: JoinHandle<()>,
}

impl Drop for Streaming {
    fn drop(&mut self) {
        // Closing the connection is how an HTTP client cancels.
        self.conn.abort();
    }
}

impl Streaming {
    /// Checks events against the legacy (2025-11-25) schema instead.
    pub fn legacy(mut self) -> Self {
        self.parser.legacy = true;
        self
    }

    /// A response header, or "".
    pub fn header(&self, name: &str) -> &str {
        header(&self.headers, name)
    }

    /// The `Content-Type` header, or "".
    pub fn content_type(&self) -> &str {
        header(&self.headers, "content-type")
    }

    /// The next SSE event (wire-checked), or `None` when the stream ended (bounded by [`WAIT`]).
    pub async fn next(&mut self) -> Option<Value> {
        within("the next SSE event", self.read_event()).await
    }

    /// The next event that is a response (has an `id`), skipping notifications before it;
    /// panics if the stream ends first.
    pub async fn response(&mut self) -> Value {
        loop {
            let e = self.next().await.expect("the stream goes on to its response");
            if e.get("id").is_some() {
                return e;
            }
        }
    }

    /// Reads until the next event or the end; [`Self::next`] bounds how long.
    async fn read_event(&mut self) -> Option<Value> {
        loop {
            if let Some(e) = self.parser.next_event() {
                return Some(e);
            }
            let body = self.body.as_mut()?;
            let Some(frame) = body.frame().await else {
                self.body = None;
                let seen = String::from_utf8_lossy(&self.parser.buf);
                let drained = self.parser.is_drained();
                assert!(drained, "stream ended inside an event: {seen}");
                return None;
            };
            if let Some(d) = frame.expect("SSE body").data_ref() {
                self.parser.push(d);
            }
        }
    }
}

/// Splits an SSE byte stream into events and parses (and wire-checks) each event's `data`.
#[derive(Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// Check events against the legacy schema (see [`Streaming::legacy`]).
    legacy: bool,
}

impl SseParser {
    /// Feeds bytes received.
    pub fn push(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Whether only whitespace is left (no partial event).
    pub fn is_drained(&self) -> bool {
        self.buf.iter().all(u8::is_ascii_whitespace)
    }

    /// The next complete event that has data (comments and data-less events are skipped).
    pub fn next_event(&mut self) -> Option<Value> {
        loop {
            let (end, sep) = (0..self.buf.len()).find_map(|i| {
                let rest = &self.buf[i..];
                let sep = [&b"\n\n"[..], b"\r\n\r\n"].into_iter().find(|s| rest.starts_with(s));
                sep.map(|s| (i, s.len()))
            })?;
            let raw: Vec<u8> = self.buf.drain(..end + sep).collect();
            let event = String::from_utf8(raw).expect("SSE is UTF-8");
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            match data[..] {
                // No data, or the empty data of a priming event (an id and a retry delay).
                [] => continue,
                [one] if one.trim().is_empty() => continue,
                [one] => {
                    let v =
                        serde_json::from_str(one).unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {event:?}"));
                    if self.legacy {
                        assert_legacy_wire(&v);
                    } else if v["method"] != "notifications/tasks" {
                        // (`notifications/tasks` belongs to the tasks extension, not the core schema.)
                        assert_wire(&v);
                    }
                    return Some(v);
                }
                _ => panic!("one JSON message per event, on one data line: {event:?}"),
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// Raw HTTP/1.1 over a socket (byte-exact header names, oversized bodies)
// ------------------------------------------------------------------------------------------

/// A response read off a raw socket.
#[derive(Debug)]
pub struct RawResp {
    /// The status code.
    pub status: u16,
    /// The head (status line and headers, without the blank line).
    pub head: String,
    /// The body.
    pub body: Vec<u8>,
}

impl RawResp {
    /// The value of header `name` (any case), or "" when it is absent.
    pub fn header(&self, name: &str) -> &str {
        let name = name.to_ascii_lowercase();
        let value = self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim().to_ascii_lowercase() == name).then_some(v.trim())
        });
        value.unwrap_or_default()
    }

    /// The body as JSON (panics when it is not).
    pub fn json(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body);
        let v = serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("bad JSON ({e}): {text}"));
        assert_wire(&v);
        v
    }
}

/// A request head with `Host` and `Connection: close` plus `headers` written verbatim.
pub fn raw_head(addr: SocketAddr, method: &str, headers: &[(&str, &str)]) -> String {
    let mut s = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        s.push_str(&format!("{k}: {v}\r\n"));
    }
    s + "\r\n"
}

/// A plain TCP connection to `addr`.
pub async fn tcp(addr: SocketAddr) -> TcpStream {
    within("connect", TcpStream::connect(addr)).await.expect("connect")
}

/// Writes `head` then `body` (from a separate task, ignoring write errors: the server may answer
/// and close before reading it all) and reads one response.
pub async fn raw(addr: SocketAddr, head: String, body: Vec<u8>) -> RawResp {
    let (mut rd, mut wr) = tcp(addr).await.into_split();
    let writer = tokio::spawn(async move {
        if wr.write_all(head.as_bytes()).await.is_ok() && !body.is_empty() {
            let _ = wr.write_all(&body).await;
        }
        // Keep the write half open until the test has read the response.
        tokio::time::sleep(WAIT).await;
    });
    let r = within("raw response", read_response(&mut rd)).await;
    writer.abort();
    r
}

/// A raw HTTP/1.1 connection to `/mcp` kept alive between requests (no `Connection` header is
/// sent), to see what the server does with the connection itself.
pub struct KeepAlive {
    addr: SocketAddr,
    rd: tokio::net::tcp::OwnedReadHalf,
    wr: tokio::net::tcp::OwnedWriteHalf,
}

impl KeepAlive {
    /// Connects to `addr`.
    pub async fn open(addr: SocketAddr) -> Self {
        let (rd, wr) = tcp(addr).await.into_split();
        Self { addr, rd, wr }
    }

    /// POSTs `body` with [`std_headers`] and reads its response (bounded by [`WAIT`]).
    pub async fn post(&mut self, body: &Value) -> RawResp {
        let text = body.to_string();
        let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", self.addr, text.len());
        for (k, v) in std_headers(body) {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        let request = format!("{head}\r\n{text}");
        within("the request to be written", self.wr.write_all(request.as_bytes())).await.expect("write");
        within("the response", read_response(&mut self.rd)).await
    }

    /// Reads until the server closes the connection (bounded by [`WAIT`]); what it sent first.
    pub async fn closed(&mut self) -> Vec<u8> {
        let mut rest = Vec::new();
        let _ = within("the server to close the connection", self.rd.read_to_end(&mut rest)).await;
        rest
    }
}

/// Reads one response: head, then a `Content-Length` or chunked body (or up to EOF).
async fn read_response(rd: &mut tokio::net::tcp::OwnedReadHalf) -> RawResp {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut eof = false;
    let mut fill = async |buf: &mut Vec<u8>, eof: &mut bool| {
        let n = rd.read(&mut chunk).await.unwrap_or(0);
        *eof = n == 0;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        fill(&mut buf, &mut eof).await;
        assert!(!eof, "connection closed before the response head: {buf:?}");
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).expect("ASCII head");
    let mut rest = buf[head_end + 4..].to_vec();
    let status_line = head.lines().next().unwrap_or_default();
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok());
    let status = status.unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let lower = head.to_ascii_lowercase();
    let len =
        lower.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse::<usize>().ok());
    let is_chunked = lower.contains("transfer-encoding: chunked");
    loop {
        let body = match (len, is_chunked) {
            (Some(n), _) if rest.len() >= n => Some(rest[..n].to_vec()),
            (None, true) => decode_chunked(&rest),
            _ => None,
        };
        match body {
            Some(body) => return RawResp { status, head, body },
            None if eof => return RawResp { status, head, body: rest }, // close-delimited
            None => fill(&mut rest, &mut eof).await,
        }
    }
}

/// Decodes a complete chunked body, or `None` if the terminating chunk has not arrived.
fn decode_chunked(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n")?;
        let size_txt = std::str::from_utf8(&b[..eol]).ok()?;
        let size = usize::from_str_radix(size_txt.split(';').next()?.trim(), 16).ok()?;
        b = &b[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..)?;
    }
}
