//! The HTTP transport under hostile clients, against `mcp serve everything --http` as a child
//! process over loopback: trickled and stalled bodies, oversized bodies written before the
//! answer is read, the connection cap, the body-memory budget, Host tricks. Every loop is
//! bounded in count and time.

use crate::support::http_server;

use http_server::EverythingHttp as Server;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const PV: &str = "2026-07-28";
/// Bound on every wait.
const WAIT: Duration = Duration::from_secs(20);

/// A `tools/call echo` request whose serialized form is exactly `len` bytes (padded with spaces).
fn echo_body(id: u64, len: usize) -> Vec<u8> {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": PV,
        "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let v = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta}});
    let mut b = serde_json::to_vec(&v).unwrap();
    assert!(b.len() <= len, "body needs {} bytes", b.len());
    b.resize(len, b' ');
    b
}

/// The head of a POST to /mcp for `tools/call echo`, with `extra` header lines.
fn head(addr: SocketAddr, extra: &[&str]) -> String {
    let mut s = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nMCP-Protocol-Version: {PV}\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"
    );
    for h in extra {
        s.push_str(h);
        s.push_str("\r\n");
    }
    s + "\r\n"
}

async fn connect(addr: SocketAddr) -> TcpStream {
    let s = tokio::time::timeout(WAIT, TcpStream::connect(addr)).await.expect("connect in time").expect("connect");
    s.set_nodelay(true).unwrap();
    s
}

/// One response read from `s`: status, headers (lower-cased) and a Content-Length body.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

async fn answer(s: &mut TcpStream) -> Answer {
    let read = async {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).expect("a status line");
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().expect("a length"));
                while buf.len() < end + 4 + len {
                    let n = s.read(&mut chunk).await.expect("read the body");
                    assert!(n > 0, "the connection closed inside the body");
                    buf.extend_from_slice(&chunk[..n]);
                }
                return Answer { status, head, body: buf[end + 4..end + 4 + len].to_vec() };
            }
            let n = s.read(&mut chunk).await.expect("read the head");
            assert!(n > 0, "the connection closed before an answer: {}", String::from_utf8_lossy(&buf));
            buf.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(WAIT, read).await.expect("an answer in time")
}

/// Sends a 400-byte `tools/call echo` with id `id` on `s` and reads the answer.
async fn echo_on(s: &mut TcpStream, addr: SocketAddr, id: u64) -> Answer {
    s.write_all(head(addr, &["Content-Length: 400"]).as_bytes()).await.unwrap();
    s.write_all(&echo_body(id, 400)).await.unwrap();
    answer(s).await
}

/// Whether the server closes `s` (EOF or reset) within `limit`.
async fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let mut b = [0u8; 256];
    matches!(tokio::time::timeout(limit, s.read(&mut b)).await, Ok(Ok(0)) | Ok(Err(_)))
}

#[tokio::test]
async fn trickled_bodies_cost_memory_in_proportion_to_their_bytes() {
    let server = Server::start();
    let addr = server.addr();
    let (conns, len) = (50, 1200);
    let mut socks = Vec::new();
    for _ in 0..conns {
        let mut s = connect(addr).await;
        s.write_all(head(addr, &[&format!("Content-Length: {len}")]).as_bytes()).await.unwrap();
        socks.push(s);
    }
    let before = server.rss_kib();
    let bodies: Vec<Vec<u8>> = (0..conns).map(|i| echo_body(i as u64, len)).collect();
    // One byte per write per connection, with a pause so each arrives as its own segment.
    for i in 0..len {
        for (s, b) in socks.iter_mut().zip(&bodies) {
            s.write_all(&b[i..i + 1]).await.unwrap();
        }
        if i % 4 == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if i == len - 2 {
            let grown = server.rss_kib().saturating_sub(before);
            // 60,000 one-byte frames held as frames pinned ~300 MiB; copied, they are 60 KB.
            assert!(grown < 24 * 1024, "RSS grew by {grown} KiB for {} body bytes", conns * len);
        }
    }
    // Nothing is lost: every trickled request is answered.
    for (i, s) in socks.iter_mut().enumerate() {
        let a = answer(s).await;
        assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
        assert_eq!(a.json()["id"], i as u64);
    }
}

#[tokio::test]
async fn stalled_and_endless_bodies_get_408_and_the_connection_closes() {
    let server = Server::start_with(&["--body-idle-timeout", "1", "--body-timeout", "3"]);
    let addr = server.addr();
    // Headers, one byte, then silence.
    let mut s = connect(addr).await;
    s.write_all(head(addr, &["Content-Length: 500"]).as_bytes()).await.unwrap();
    s.write_all(b"{").await.unwrap();
    let t = Instant::now();
    let a = answer(&mut s).await;
    assert_eq!(a.status, 408, "{}", String::from_utf8_lossy(&a.body));
    assert_eq!(a.json()["error"]["code"], -32600);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("stalled for 1s"), "{}", a.json());
    assert!(t.elapsed() < Duration::from_secs(8), "took {:?}", t.elapsed());
    assert!(closed_within(&mut s, Duration::from_secs(5)).await, "the connection stays open");
    // A byte every 300 ms never stalls, but the whole body has 3 s.
    let s = connect(addr).await;
    let (mut rd, mut wr) = s.into_split();
    wr.write_all(head(addr, &["Content-Length: 500"]).as_bytes()).await.unwrap();
    let t = Instant::now();
    let trickle = tokio::spawn(async move {
        for _ in 0..60 {
            if wr.write_all(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });
    let mut rest = Vec::new();
    tokio::time::timeout(WAIT, rd.read_to_end(&mut rest)).await.expect("the server closes").ok();
    trickle.abort();
    let text = String::from_utf8_lossy(&rest);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("within 3s"), "{text}");
    assert!(t.elapsed() >= Duration::from_millis(2900) && t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[tokio::test]
async fn an_oversized_body_written_before_reading_gets_a_readable_413() {
    let server = Server::start();
    let addr = server.addr();
    let body = vec![b' '; 32 << 20];
    // Content-Length over the limit, the whole body written before anything is read.
    let mut s = connect(addr).await;
    let mut all = head(addr, &[&format!("Content-Length: {}", body.len())]).into_bytes();
    all.extend_from_slice(&body);
    tokio::time::timeout(WAIT, s.write_all(&all)).await.expect("bounded").expect("the whole body is taken in");
    let a = answer(&mut s).await;
    assert_eq!(a.status, 413);
    assert_eq!(a.json()["error"]["code"], -32600);
    assert!(a.head.contains("connection: close"), "{}", a.head);
    // Chunked, the same.
    let mut s = connect(addr).await;
    let mut all = head(addr, &["Transfer-Encoding: chunked"]).into_bytes();
    for c in body.chunks(1 << 20) {
        all.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        all.extend_from_slice(c);
        all.extend_from_slice(b"\r\n");
    }
    all.extend_from_slice(b"0\r\n\r\n");
    tokio::time::timeout(WAIT, s.write_all(&all)).await.expect("bounded").expect("the whole body is taken in");
    assert_eq!(answer(&mut s).await.status, 413);
}

#[tokio::test]
async fn at_the_connection_cap_an_idle_connection_gives_way_to_a_new_client() {
    let server = Server::start_with(&["--max-connections", "20", "--body-timeout", "2"]);
    let addr = server.addr();
    // 20 keep-alive connections, each served once and now idle.
    let mut idle = Vec::new();
    for i in 0..20 {
        let mut s = connect(addr).await;
        assert_eq!(echo_on(&mut s, addr, i).await.status, 200);
        idle.push(s);
    }
    // A new client is served at once, and the connection idle the longest was closed for it.
    let t = Instant::now();
    let mut s = connect(addr).await;
    assert_eq!(echo_on(&mut s, addr, 100).await.status, 200);
    assert!(t.elapsed() < Duration::from_secs(3), "a new client waited {:?}", t.elapsed());
    assert!(closed_within(&mut idle[0], Duration::from_secs(3)).await, "the oldest idle connection is closed");
    // With every connection busy on a slow body, a new client waits only until the body
    // deadline frees a place.
    drop(idle);
    drop(s);
    let mut busy = Vec::new();
    for _ in 0..20 {
        let mut s = connect(addr).await;
        s.write_all(head(addr, &["Content-Length: 400"]).as_bytes()).await.unwrap();
        s.write_all(b"{").await.unwrap();
        busy.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = Instant::now();
    let mut s = connect(addr).await;
    assert_eq!(echo_on(&mut s, addr, 101).await.status, 200);
    assert!(t.elapsed() < Duration::from_secs(8), "a new client waited {:?}", t.elapsed());
    assert_eq!(answer(&mut busy[0]).await.status, 408);
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed_after_the_idle_timeout() {
    let server = Server::start_with(&["--idle-timeout", "1"]);
    let addr = server.addr();
    let mut s = connect(addr).await;
    assert_eq!(echo_on(&mut s, addr, 1).await.status, 200);
    let t = Instant::now();
    assert!(closed_within(&mut s, Duration::from_secs(6)).await, "still open after {:?}", t.elapsed());
    assert!(t.elapsed() >= Duration::from_millis(900), "closed after {:?}", t.elapsed());
}

#[tokio::test]
async fn past_the_body_budget_a_request_waits_then_gets_503_with_retry_after() {
    let server = Server::start_with(&["--max-body-bytes", "60000", "--max-body-bytes-in-flight", "100000"]);
    let addr = server.addr();
    // Two bodies of 50 KB are declared and 45 KB of each sent: 90 KB of budget is taken (the
    // bytes received count, not the declared length).
    let mut holders = Vec::new();
    for i in 0..2 {
        let mut s = connect(addr).await;
        s.write_all(head(addr, &["Content-Length: 50000"]).as_bytes()).await.unwrap();
        s.write_all(&echo_body(i, 50000)[..45000]).await.unwrap();
        holders.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut s = connect(addr).await;
    s.write_all(head(addr, &["Content-Length: 50000"]).as_bytes()).await.unwrap();
    s.write_all(&echo_body(7, 50000)).await.unwrap();
    let a = answer(&mut s).await;
    assert_eq!(a.status, 503, "{}", String::from_utf8_lossy(&a.body));
    assert!(a.head.contains("retry-after: 1"), "{}", a.head);
    // The held bodies complete and are served; then there is room again.
    for (i, h) in holders.iter_mut().enumerate() {
        h.write_all(&echo_body(i as u64, 50000)[45000..]).await.unwrap();
        assert_eq!(answer(h).await.status, 200);
    }
    let mut s = connect(addr).await;
    s.write_all(head(addr, &["Content-Length: 50000"]).as_bytes()).await.unwrap();
    s.write_all(&echo_body(8, 50000)).await.unwrap();
    assert_eq!(answer(&mut s).await.status, 200);
}

#[tokio::test]
async fn a_duplicate_host_is_400_and_an_absolute_form_target_is_checked_like_host() {
    let server = Server::start();
    let addr = server.addr();
    let body = echo_body(1, 400);
    let send = |raw: String| {
        let body = body.clone();
        async move {
            let mut s = connect(addr).await;
            s.write_all(raw.as_bytes()).await.unwrap();
            s.write_all(&body).await.unwrap();
            answer(&mut s).await
        }
    };
    let dup = head(addr, &["Host: 127.0.0.1", "Content-Length: 400"]);
    let a = send(dup).await;
    assert_eq!(a.status, 400);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("more than one Host"), "{}", a.json());
    let evil = head(addr, &["Content-Length: 400"]).replacen("POST /mcp", "POST http://evil.example:80/mcp", 1);
    let a = send(evil).await;
    assert_eq!(a.status, 403);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("evil.example"), "{}", a.json());
    let good = head(addr, &["Content-Length: 400"]).replacen("POST /mcp", &format!("POST http://{addr}/mcp"), 1);
    assert_eq!(send(good).await.status, 200);
}

/// The head and body of a modern `subscriptions/listen` POST (tools list changes).
fn listen_request(addr: SocketAddr, id: u64) -> Vec<u8> {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": PV,
        "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let v = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}});
    let body = serde_json::to_vec(&v).unwrap();
    let mut out = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nMCP-Protocol-Version: {PV}\r\nMcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

/// Opens a listen stream and reads its response head (an SSE stream).
async fn open_listen(addr: SocketAddr, id: u64) -> TcpStream {
    let mut s = connect(addr).await;
    s.write_all(&listen_request(addr, id)).await.unwrap();
    let read = async {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 1024];
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = s.read(&mut chunk).await.expect("read the head");
            assert!(n > 0, "closed before the stream's head");
            buf.extend_from_slice(&chunk[..n]);
        }
        let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200") && head.contains("text/event-stream"), "{head}");
    };
    tokio::time::timeout(WAIT, read).await.expect("the stream opens in time");
    s
}

/// Whether the server ends the SSE response on `s` cleanly (the last chunk) and closes, within
/// `limit`.
async fn stream_ends_within(s: &mut TcpStream, limit: Duration) -> bool {
    let mut rest = Vec::new();
    match tokio::time::timeout(limit, s.read_to_end(&mut rest)).await {
        Ok(Ok(_)) => rest.ends_with(b"0\r\n\r\n"),
        _ => false,
    }
}

#[tokio::test]
async fn at_every_cap_listen_streams_give_way_to_a_new_client() {
    let server = Server::start_with(&["--max-connections", "8", "--max-listen-streams", "8"]);
    let addr = server.addr();
    // Eight listen streams, as many as there are connections. Half the connections is the most
    // streams may hold: from the fifth on, the oldest stream ends for each new one.
    let mut streams = Vec::new();
    for i in 0..8 {
        streams.push(open_listen(addr, i).await);
    }
    for s in &mut streams[..4] {
        assert!(stream_ends_within(s, WAIT).await, "an old stream ends cleanly at the stream cap");
    }
    // A new client is answered.
    let mut s = connect(addr).await;
    assert_eq!(echo_on(&mut s, addr, 100).await.status, 200);
    drop(s);
    // Every connection taken (four streams, four slow bodies that no one may cut short): a new
    // client takes the place of the oldest stream.
    let mut slow = Vec::new();
    for _ in 0..4 {
        let mut s = connect(addr).await;
        s.write_all(head(addr, &["Content-Length: 400"]).as_bytes()).await.unwrap();
        s.write_all(b"{").await.unwrap();
        slow.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut s = connect(addr).await;
    assert_eq!(echo_on(&mut s, addr, 101).await.status, 200);
    assert!(stream_ends_within(&mut streams[4], WAIT).await, "the oldest stream gave way");
}

#[tokio::test]
async fn at_the_connection_cap_unfinished_heads_give_way_to_a_new_client() {
    let server = Server::start_with(&["--max-connections", "8", "--header-timeout", "120"]);
    let addr = server.addr();
    let mut heads = Vec::new();
    for _ in 0..8 {
        let mut s = connect(addr).await;
        s.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes()).await.unwrap();
        heads.push(s);
    }
    // Answered well before the header timeout (after the one-second grace of a new connection).
    let mut s = connect(addr).await;
    assert_eq!(echo_on(&mut s, addr, 1).await.status, 200);
    assert!(closed_within(&mut heads[0], WAIT).await, "the oldest unfinished head gave way");
}

#[tokio::test]
async fn slow_bodies_hold_the_bytes_they_sent_not_the_bytes_they_declared() {
    let server = Server::start_with(&["--max-body-bytes-in-flight", "2097152"]);
    let addr = server.addr();
    // Four bodies declaring 1 MiB each (4 MiB, twice the budget), 40 bytes of each sent.
    let mut slow = Vec::new();
    for i in 0..4 {
        let mut s = connect(addr).await;
        s.write_all(head(addr, &["Content-Length: 1048576"]).as_bytes()).await.unwrap();
        s.write_all(&echo_body(i, 1048576)[..40]).await.unwrap();
        slow.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut s = connect(addr).await;
    let a = echo_on(&mut s, addr, 9).await;
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
}

#[tokio::test]
async fn an_oversized_head_gets_431_and_the_next_client_is_served() {
    let server = Server::start();
    let addr = server.addr();
    let mut s = connect(addr).await;
    let big = format!("X-Big: {}", "a".repeat(100 * 1024));
    // The server may answer and close before the whole head is written.
    let _ = s.write_all(head(addr, &[&big, "Content-Length: 400"]).as_bytes()).await;
    let mut got = Vec::new();
    let _ = tokio::time::timeout(WAIT, s.read_to_end(&mut got)).await.expect("the server answers and closes");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 431"), "{text}");
    // A head of 20 KB is fine.
    let mut s = connect(addr).await;
    let fine = format!("X-Fine: {}", "a".repeat(20 * 1024));
    s.write_all(head(addr, &[&fine, "Content-Length: 400"]).as_bytes()).await.unwrap();
    s.write_all(&echo_body(2, 400)).await.unwrap();
    assert_eq!(answer(&mut s).await.status, 200);
}

/// `mcp serve everything --http` under `ulimit -n LIMIT` (soft and hard), its stderr lines
/// forwarded; killed on drop.
struct LowFdServer {
    child: std::process::Child,
    addr: SocketAddr,
    lines: std::sync::mpsc::Receiver<String>,
}

impl LowFdServer {
    fn start(limit: u32) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -n {limit} && exec \"$0\" serve everything --http 127.0.0.1:0"))
            .arg(env!("CARGO_BIN_EXE_mcp"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = std::sync::mpsc::sync_channel(1024);
        let err = std::io::BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for l in err.lines().map_while(Result::ok) {
                // Past the buffer, lines are dropped (the test reads only the first ones).
                let _ = tx.try_send(l);
            }
        });
        let addr = loop {
            let l = lines.recv_timeout(WAIT).expect("the server announces its address");
            if let Some(url) = l.strip_prefix("mcp: serving on http://") {
                break url.split('/').next().unwrap().parse().unwrap();
            }
        };
        Self { child, addr, lines }
    }
}

impl Drop for LowFdServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn under_a_low_fd_limit_the_connection_cap_is_lowered_and_new_clients_are_served() {
    let server = LowFdServer::start(100);
    let addr = server.addr;
    // More keep-alive connections than the process has descriptors: the cap (100 - 50) is
    // below the limit, so the oldest idle ones give way instead of accept failing.
    let mut idle = Vec::new();
    for i in 0..120 {
        let mut s = connect(addr).await;
        let a = echo_on(&mut s, addr, i).await;
        assert_eq!(a.status, 200, "connection {i}");
        idle.push(s);
    }
    let lowered = std::iter::from_fn(|| server.lines.recv_timeout(WAIT).ok())
        .take(20)
        .find(|l| l.contains("max_connections lowered"));
    assert!(lowered.is_some_and(|l| l.contains("clamped=50")), "no clamp logged");
}
