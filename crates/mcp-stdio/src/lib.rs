//! stdio transport for MCP servers (revision 2026-07-28, and legacy clients: dual-era).
//!
//! A legacy client's `initialize` opens the process's legacy session: its later requests (no
//! modern `_meta`) are served in it, server-to-client requests (elicitation, sampling, roots)
//! are written to stdout and their answers read from stdin, and list changes and subscribed
//! resource updates are sent as notifications. Modern requests keep being served statelessly.
//!
//! Reads newline-delimited JSON-RPC from an input, serves requests concurrently, and writes
//! responses and notifications as they are ready through one buffered writer. Lines longer than
//! the configured limit are rejected (the rest of the line is skipped) without stopping the
//! server. `notifications/cancelled` cancels an in-flight request or closes a listen stream. On
//! end of input the server stops reading, closes listen streams gracefully, waits for in-flight
//! requests (bounded by a grace period), flushes and returns.

use futures::StreamExt;
use mcp_protocol::jsonrpc::{parse_incoming, Incoming};
use mcp_protocol::strict::DEFAULT_MAX_DEPTH;
use mcp_protocol::version::Era;
use mcp_protocol::ProtocolError;
use mcp_server::{is_modern_request, ClientPeer, LegacySession, NotificationSink, PendingRequests, RequestEnv, Server};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Limits and behaviour of the stdio transport.
#[derive(Debug, Clone)]
pub struct StdioConfig {
    /// Longest accepted line in bytes (default 4 MiB).
    pub max_line_bytes: usize,
    /// Deepest accepted JSON nesting (default 64).
    pub max_depth: usize,
    /// Most requests served at once; further lines wait (default 1024).
    pub max_in_flight: usize,
    /// How long to wait for in-flight requests after end of input (default 5 s).
    pub shutdown_grace: Duration,
}

impl Default for StdioConfig {
    fn default() -> Self {
        Self {
            max_line_bytes: 4 << 20,
            max_depth: DEFAULT_MAX_DEPTH,
            max_in_flight: 1024,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

/// Serves `server` on the process's stdin/stdout until stdin closes.
///
/// The read loop runs as a runtime task (not on the thread that called `block_on`), so on a
/// multi-threaded runtime reading, handlers and writing share worker threads instead of
/// bouncing between the caller's thread and the workers.
///
/// When stdin/stdout are pipes (the normal case: a client spawned us), they are driven by the
/// runtime's reactor directly instead of through tokio's blocking-thread stdio, which would
/// hand every read and write to another thread.
pub async fn serve_stdio(server: Server) -> std::io::Result<()> {
    let config = StdioConfig::default();
    #[cfg(not(unix))]
    let task = tokio::spawn(serve(server, tokio::io::stdin(), tokio::io::stdout(), config));
    #[cfg(unix)]
    let task = match (pipe_in(), pipe_out()) {
        (Some(input), Some(output)) => tokio::spawn(serve(server, input, output, config)),
        (Some(input), None) => tokio::spawn(serve(server, input, tokio::io::stdout(), config)),
        (None, Some(output)) => tokio::spawn(serve(server, tokio::io::stdin(), output, config)),
        (None, None) => tokio::spawn(serve(server, tokio::io::stdin(), tokio::io::stdout(), config)),
    };
    task.await.map_err(std::io::Error::other)?
}

/// stdin as a non-blocking pipe reader, if it is a pipe.
#[cfg(unix)]
fn pipe_in() -> Option<tokio::net::unix::pipe::Receiver> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()
}

/// stdout as a non-blocking pipe writer, if it is a pipe.
#[cfg(unix)]
fn pipe_out() -> Option<tokio::net::unix::pipe::Sender> {
    use std::os::fd::AsFd;
    let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok()
}

type InFlight = Arc<Mutex<HashMap<String, CancellationToken>>>;

/// Answers served inline between two chances for the writer to flush.
const FLUSH_EVERY: u32 = 16;

fn id_key(id: &Value) -> String {
    id.to_string()
}

/// Serves `server` over any byte streams (used by tests and by [`serve_stdio`]).
pub async fn serve<R, W>(server: Server, input: R, output: W, config: StdioConfig) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let sink = {
        let tx = out_tx.clone();
        NotificationSink::new(move |v: Value| {
            let _ = tx.send(encode(&v));
        })
    };
    let writer = tokio::spawn(write_loop(output, out_rx));
    let in_flight: InFlight = Arc::default();
    let limit = Arc::new(tokio::sync::Semaphore::new(config.max_in_flight));
    let mut tasks = tokio::task::JoinSet::new();
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::with_capacity(4096);
    let mut inline_budget = FLUSH_EVERY;
    // Set by a legacy client's `initialize`; requests without modern `_meta` are then served in it.
    let mut session: Option<LegacySession> = None;
    let peer = Arc::new(Peer { out: out_tx.clone(), pending: PendingRequests::default() });
    let stop = CancellationToken::new();
    // Stops the change forwarder on every way out, errors included (it holds a writer sender).
    let _stop_on_exit = stop.clone().drop_guard();
    loop {
        line.clear();
        match read_line_bounded(&mut reader, &mut line, config.max_line_bytes).await? {
            LineRead::Eof => break,
            LineRead::TooLong => {
                let e = ProtocolError::InvalidRequest(format!("line exceeds {} bytes", config.max_line_bytes));
                let _ = out_tx.send(encode(&e.to_response(None)));
                continue;
            }
            LineRead::Line => {}
        }
        let text = trim_line(&line);
        if text.is_empty() {
            continue;
        }
        match parse_incoming(text, config.max_depth) {
            // A legacy session's client answers our requests: hand each answer to its waiter.
            Err(_) if session.is_some() && peer.take_response(text) => {}
            Err(rej) => {
                let _ = out_tx.send(encode(&rej.error.to_response(rej.id.as_ref())));
            }
            Ok(Incoming::Notification(n)) => {
                if n.method == "notifications/cancelled" {
                    if let Some(id) = n.params.get("requestId") {
                        if let Some(tok) = in_flight.lock().expect("lock").remove(&id_key(id)) {
                            tok.cancel();
                        }
                    }
                } else if let Some(session) = &session {
                    session.notification(&n.method);
                }
            }
            Ok(Incoming::Request(req)) if req.method == "initialize" && !is_modern_request(&req.params) => {
                let outcome = match &session {
                    Some(_) => Err(ProtocolError::InvalidRequest("the session is already initialized".into())),
                    None => server.initialize(&req.params).map(|(s, result)| {
                        forward_changes(&server, &s, out_tx.clone(), stop.clone());
                        session = Some(s);
                        result
                    }),
                };
                let era = if session.is_some() { Era::Legacy } else { Era::Modern };
                let _ = out_tx.send(server.encode_response_in(era, &req.id, &outcome));
            }
            Ok(Incoming::Request(req)) if req.method != "subscriptions/listen" || legacy(&session, &req) => {
                // Poll the handler once right here: most requests complete without waiting,
                // and then need no task, no registration and no wake-ups.
                let cancel = CancellationToken::new();
                let env = RequestEnv {
                    principal: None,
                    sink: Some(sink.clone()),
                    cancel: cancel.clone(),
                    close_stream: None,
                    http: None,
                };
                let id = req.id.clone();
                let (mut fut, era) = match &session {
                    Some(s) if legacy(&session, &req) => {
                        let (s, peer) = (s.clone(), peer.clone() as Arc<dyn ClientPeer>);
                        let fut: Handling = Box::pin(async move { s.handle(req, env, Some(peer)).await });
                        (fut, Era::Legacy)
                    }
                    _ => {
                        let s = server.clone();
                        let fut: Handling = Box::pin(async move { s.process(req, env).await });
                        (fut, Era::Modern)
                    }
                };
                if let Poll::Ready(result) = futures::poll!(fut.as_mut()) {
                    let _ = out_tx.send(server.encode_response_in(era, &id, &result));
                    // Let the writer flush every few answers while more input is queued: the
                    // client can consume them (and send more) while we keep working.
                    inline_budget -= 1;
                    if inline_budget == 0 {
                        inline_budget = FLUSH_EVERY;
                        tokio::task::yield_now().await;
                    }
                    continue;
                }
                // A legacy request may be waiting for answers only this loop can read: never
                // block the reader for it (it runs without a permit when none is free).
                let permit = match era {
                    Era::Modern => Some(limit.clone().acquire_owned().await.expect("semaphore open")),
                    Era::Legacy => limit.clone().try_acquire_owned().ok(),
                };
                let key = id_key(&id);
                in_flight.lock().expect("lock").insert(key.clone(), cancel.clone());
                let (out, in_flight, server) = (out_tx.clone(), in_flight.clone(), server.clone());
                tasks.spawn(async move {
                    tokio::select! {
                        r = fut => { let _ = out.send(server.encode_response_in(era, &id, &r)); }
                        _ = cancel.cancelled() => {} // cancelled: no response
                    }
                    in_flight.lock().expect("lock").remove(&key);
                    drop(permit);
                });
            }
            Ok(Incoming::Request(req)) => {
                let permit = limit.clone().acquire_owned().await.expect("semaphore open");
                let cancel = CancellationToken::new();
                let key = id_key(&req.id);
                in_flight.lock().expect("lock").insert(key.clone(), cancel.clone());
                let env =
                    RequestEnv { principal: None, sink: None, cancel: cancel.clone(), close_stream: None, http: None };
                let (server, out, in_flight) = (server.clone(), out_tx.clone(), in_flight.clone());
                tasks.spawn(async move {
                    listen_one(&server, req, env, &out).await;
                    in_flight.lock().expect("lock").remove(&key);
                    drop(permit);
                });
            }
        }
        while tasks.try_join_next().is_some() {}
    }
    // End of input: close listen streams gracefully, give in-flight requests a grace period.
    server.shutdown();
    stop.cancel();
    peer.pending.fail_all();
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(config.shutdown_grace, drain).await.is_err() {
        tasks.abort_all();
    }
    // The sink and the peer hold senders too: the writer ends when every sender is gone.
    drop(sink);
    drop(peer);
    drop(out_tx);
    writer.await.map_err(std::io::Error::other)?
}

type Handling = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, ProtocolError>> + Send>>;

/// Whether a request belongs to the legacy session (there is one and the request has no modern `_meta`).
fn legacy(session: &Option<LegacySession>, req: &mcp_protocol::Request) -> bool {
    session.is_some() && !is_modern_request(&req.params)
}

/// Server-to-client requests of a legacy session: written to stdout, answered on stdin.
struct Peer {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: PendingRequests,
}

impl Peer {
    /// Routes a line that is a JSON-RPC response to the request waiting for it.
    fn take_response(&self, text: &[u8]) -> bool {
        matches!(serde_json::from_slice::<Value>(text), Ok(Value::Object(msg)) if self.pending.resolve(&msg))
    }
}

impl ClientPeer for Peer {
    fn request(&self, method: &str, params: Value) -> mcp_server::BoxFuture<Result<Value, ProtocolError>> {
        let (message, answer) = self.pending.start(method, params);
        if self.out.send(encode(&message)).is_err() {
            return Box::pin(async { Err(ProtocolError::Internal("the client is gone".into())) });
        }
        answer
    }
}

/// Writes the change notifications a legacy session should see until `stop`.
fn forward_changes(
    server: &Server,
    session: &LegacySession,
    out: mpsc::UnboundedSender<Vec<u8>>,
    stop: CancellationToken,
) {
    let mut feed = server.change_feed();
    let session = session.clone();
    tokio::spawn(async move {
        loop {
            let changes = tokio::select! {
                _ = stop.cancelled() => return,
                c = feed.next(|| session.subscribed_uris()) => c,
            };
            let Some(changes) = changes else { return };
            for n in changes.iter().filter_map(|e| session.notification_for(e)) {
                if out.send(encode(&n)).is_err() {
                    return;
                }
            }
        }
    });
}

fn encode(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("JSON serializes")
}

/// Serves a `subscriptions/listen` request until it ends or is cancelled.
async fn listen_one(
    server: &Server,
    req: mcp_protocol::Request,
    env: RequestEnv,
    out: &mpsc::UnboundedSender<Vec<u8>>,
) {
    let id = req.id.clone();
    let cancel = env.cancel.clone();
    match server.listen(req, env) {
        Ok(stream) => {
            let mut stream = std::pin::pin!(stream);
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    item = stream.next() => match item {
                        Some(v) => { let _ = out.send(encode(&v)); }
                        None => return,
                    }
                }
            }
        }
        Err(e) => {
            let _ = out.send(encode(&e.to_response(Some(&id))));
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(output: W, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(64 * 1024, output);
    while let Some(msg) = rx.recv().await {
        w.write_all(&msg).await?;
        w.write_all(b"\n").await?;
        // Batch whatever is already queued before flushing: one write syscall for many responses.
        while let Ok(more) = rx.try_recv() {
            w.write_all(&more).await?;
            w.write_all(b"\n").await?;
        }
        w.flush().await?;
    }
    w.flush().await
}

enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Reads one `\n`-terminated line into `buf`, never holding more than `max` bytes.
async fn read_line_bounded<R: AsyncRead + Unpin>(
    r: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    let mut too_long = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if too_long {
                LineRead::TooLong
            } else if buf.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > max + 1 {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(take);
        if done {
            return Ok(if too_long { LineRead::TooLong } else { LineRead::Line });
        }
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let mut s = line;
    while let [rest @ .., b'\n' | b'\r'] = s {
        s = rest;
    }
    s
}
