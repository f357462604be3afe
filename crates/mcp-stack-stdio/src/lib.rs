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

use mcp_protocol::strict::DEFAULT_MAX_DEPTH;
use mcp_protocol::ProtocolError;
use mcp_server::{NotificationSink, RequestEnv, Server};
use mcp_session::{Call, Driver, Event, SessionConfig, Transport};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Limits and behaviour of the stdio transport.
#[derive(Debug, Clone)]
pub struct StdioConfig {
    /// Longest accepted line in bytes (default 4 MiB).
    pub max_line_bytes: usize,
    /// Deepest accepted JSON nesting (default 64).
    pub max_depth: usize,
    /// Most requests served at once; further lines wait (default 1024).
    pub max_in_flight: usize,
    /// How long to wait for in-flight requests, and tasks of the tasks extension, after end of
    /// input or shutdown (default 5 s; see [`Server::drain_tasks`]).
    pub shutdown_grace: Duration,
    /// Most bytes of replies and notifications waiting to be written (default 4 MiB). When the
    /// client does not read stdout, the server stops reading stdin once this much is queued
    /// and resumes as the queue drains; handlers' notifications past it are dropped (counted,
    /// logged at `warn` on the 1st, 2nd, 4th... drop) and listen streams wait for room, so
    /// memory stays bounded whatever the client does.
    pub max_output_bytes: usize,
}

impl Default for StdioConfig {
    fn default() -> Self {
        Self {
            max_line_bytes: 4 << 20,
            max_depth: DEFAULT_MAX_DEPTH,
            max_in_flight: 1024,
            shutdown_grace: Duration::from_secs(5),
            max_output_bytes: 4 << 20,
        }
    }
}

/// Serves `server` on the process's stdin/stdout until stdin closes or the server shuts down
/// ([`Server::shutdown`], e.g. on SIGTERM): then listen streams get their closing response and
/// requests in flight have [`StdioConfig::shutdown_grace`] to finish.
///
/// The read loop runs as a runtime task (not on the thread that called `block_on`), so on a
/// multi-threaded runtime reading, handlers and writing share worker threads instead of
/// bouncing between the caller's thread and the workers.
///
/// When stdin/stdout are pipes (the normal case: a client spawned us), they are driven by the
/// runtime's reactor directly instead of through tokio's blocking-thread stdio, which would
/// hand every read and write to another thread.
pub async fn serve_stdio(server: Server) -> std::io::Result<()> {
    serve_stdio_with(server, StdioConfig::default()).await
}

/// [`serve_stdio`] with explicit limits.
pub async fn serve_stdio_with(server: Server, config: StdioConfig) -> std::io::Result<()> {
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

/// The session core of the process: one that also serves legacy clients when the build does.
#[cfg(feature = "legacy")]
type Core = mcp_session::LegacySession;
/// The session core of the process: one that also serves legacy clients when the build does.
#[cfg(not(feature = "legacy"))]
type Core = mcp_session::Session;

/// Answers served inline between two chances for the writer to flush.
const FLUSH_EVERY: u32 = 16;

/// Serves `server` over any byte streams (used by tests and by [`serve_stdio`]).
///
/// The process's one session core holds the protocol state (era routing, the legacy session,
/// calls in flight, the MRTR-to-legacy bridge); this loop only moves bytes and runs handlers.
pub async fn serve<R, W>(server: Server, input: R, output: W, config: StdioConfig) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let backlog = Arc::new(Backlog::default());
    let out_tx = Out::new(backlog.clone());
    let writer = tokio::spawn(write_loop(output, backlog.clone()));
    let stop = CancellationToken::new();
    // Stops the change forwarder on every way out, errors included (it holds a writer sender).
    let _stop_on_exit = stop.clone().drop_guard();
    let core = Core::new(server.clone(), SessionConfig::default().max_depth(config.max_depth));
    let session = Driver::new(server.clone(), core, Stdio::new(out_tx.clone(), stop.clone(), config.max_output_bytes));
    let io = session.io();
    let limit = Arc::new(tokio::sync::Semaphore::new(config.max_in_flight));
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::with_capacity(4096);
    let mut inline_budget = FLUSH_EVERY;
    let (mut events, mut done) = (VecDeque::with_capacity(4), VecDeque::with_capacity(4));
    let shutdown = server.shutdown_token();
    // One waiter for the whole loop (not one registered and dropped per line read).
    let mut stopping = std::pin::pin!(shutdown.cancelled());
    loop {
        // Backpressure: while the client leaves replies unread, read no more requests.
        backlog.wait_below(config.max_output_bytes).await;
        line.clear();
        // `Server::shutdown` (e.g. on SIGTERM) ends the input like end of file does.
        let read = tokio::select! {
            biased;
            r = read_line_bounded(&mut reader, &mut line, config.max_line_bytes) => r?,
            () = &mut stopping => LineRead::Eof,
        };
        match read {
            LineRead::Eof => break,
            LineRead::TooLong => {
                let e = ProtocolError::InvalidRequest(format!("line exceeds {} bytes", config.max_line_bytes));
                out_tx.send(encode(&e.to_response(None)));
                continue;
            }
            LineRead::Line => {}
        }
        let text = trim_line(&line);
        if text.is_empty() {
            continue;
        }
        session.with(|s, now| s.handle_bytes(text, now), &mut events);
        while let Some(event) = events.pop_front() {
            match event {
                Event::Call(mut call) => {
                    // Poll the handler once right here: most requests complete without waiting,
                    // and then need no task and no wake-ups.
                    let env = io.env.with_cancel(call.cancellation().clone());
                    session.start(&mut call, env);
                    if let Poll::Ready(outcome) = futures::poll!(&mut call) {
                        session.finish_into(outcome, &mut done);
                        while let Some(e) = done.pop_front() {
                            io.handle(&session, e);
                        }
                        // Let the writer flush every few answers while more input is queued: the
                        // client can consume them (and send more) while we keep working.
                        inline_budget -= 1;
                        if inline_budget == 0 || backlog.bytes() > config.max_output_bytes {
                            inline_budget = FLUSH_EVERY;
                            tokio::task::yield_now().await;
                        }
                        continue;
                    }
                    let permit = limit.clone().acquire_owned().await.expect("semaphore open");
                    io.spawn_call(&session, call, Some(permit));
                }
                Event::Listen(call) => {
                    let permit = limit.clone().acquire_owned().await.expect("semaphore open");
                    io.spawn_listen(&session, call, Some(permit));
                }
                other => io.handle(&session, other),
            }
        }
    }
    // End of input: close listen streams gracefully, fail what waits for the client's answers,
    // give in-flight requests a grace period, then cancel them.
    server.shutdown();
    stop.cancel();
    session.run(|s, now| s.handle_peer_gone(now));
    io.tasks.close();
    let deadline = tokio::time::Instant::now() + config.shutdown_grace;
    if tokio::time::timeout_at(deadline, io.tasks.wait()).await.is_err() {
        session.run(|s, now| s.close(now));
        let _ = tokio::time::timeout(config.shutdown_grace, io.tasks.wait()).await;
    }
    // Tasks (the tasks extension) get what is left of the grace period.
    server.drain_tasks(deadline.saturating_duration_since(tokio::time::Instant::now())).await;
    // The driver holds a sender too: the writer ends when every sender is gone.
    drop(session);
    drop(out_tx);
    writer.await.map_err(std::io::Error::other)?
}

/// Bytes queued for stdout and not yet written: the lines themselves, appended by every
/// [`Out`] and taken all at once by the writer, and their count.
#[derive(Default)]
struct Backlog {
    bytes: AtomicUsize,
    drained: Notify,
    queue: parking_lot::Mutex<OutQueue>,
    /// Wakes the writer: lines were queued, or the last [`Out`] is gone.
    ready: Notify,
    /// Live [`Out`]s: the writer finishes once none is left and the queue is written.
    senders: AtomicUsize,
}

#[derive(Default)]
struct OutQueue {
    lines: Vec<u8>,
    /// The writer stopped (the output broke): nothing more is queued.
    gone: bool,
}

impl Backlog {
    fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    async fn wait_below(&self, max: usize) {
        loop {
            let drained = self.drained.notified();
            let mut drained = std::pin::pin!(drained);
            drained.as_mut().enable();
            if self.bytes() <= max {
                return;
            }
            drained.await;
        }
    }
}

/// The queue to the writer, counting what it holds.
struct Out {
    backlog: Arc<Backlog>,
}

impl Clone for Out {
    fn clone(&self) -> Self {
        Self::new(self.backlog.clone())
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        if self.backlog.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.backlog.ready.notify_one();
        }
    }
}

impl Out {
    fn new(backlog: Arc<Backlog>) -> Self {
        backlog.senders.fetch_add(1, Ordering::AcqRel);
        Self { backlog }
    }

    /// Queues one message; false once the writer is gone.
    fn send(&self, msg: Vec<u8>) -> bool {
        let mut q = self.backlog.queue.lock();
        if q.gone {
            return false;
        }
        let was_empty = q.lines.is_empty();
        q.lines.extend_from_slice(&msg);
        q.lines.push(b'\n');
        self.backlog.bytes.fetch_add(msg.len() + 1, Ordering::AcqRel);
        drop(q);
        if was_empty {
            self.backlog.ready.notify_one();
        }
        true
    }
}

/// What the session's events turn into on stdio: writes to stdout and spawned handlers.
struct Stdio {
    out: Out,
    /// What every request's handler gets: the sink writing to stdout.
    env: RequestEnv,
    tasks: TaskTracker,
    /// Ends the legacy session's change forwarder.
    #[cfg_attr(not(feature = "legacy"), allow(dead_code))]
    stop: CancellationToken,
    /// [`StdioConfig::max_output_bytes`]: streams wait while more is queued.
    max_output_bytes: usize,
}

impl Stdio {
    fn new(out: Out, stop: CancellationToken, max_output_bytes: usize) -> Self {
        let tx = out.clone();
        let dropped = AtomicUsize::new(0);
        let sink = NotificationSink::new(move |v: Value| {
            // The client is not reading: a handler notifying in a loop loses notifications
            // rather than growing the queue.
            if tx.backlog.bytes() > max_output_bytes {
                let n = dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!(dropped = n, "dropping notifications: the client does not read stdout");
                }
                return;
            }
            tx.send(encode(&v));
        });
        Self {
            out,
            env: RequestEnv { sink: Some(sink), ..RequestEnv::default() },
            tasks: TaskTracker::new(),
            stop,
            max_output_bytes,
        }
    }

    /// Runs a started handler that did not finish at once (tracked from now on, so the client
    /// can cancel it); its outcome goes back to the session.
    fn spawn_call(&self, session: &Arc<Driver<Self>>, mut call: Call, permit: Option<OwnedSemaphorePermit>) {
        session.track(&mut call);
        let session = session.clone();
        self.tasks.spawn(async move {
            let outcome = (&mut call).await;
            session.finish(outcome);
            drop((call, permit));
        });
    }

    /// Serves a `subscriptions/listen` stream until it ends or is cancelled.
    fn spawn_listen(&self, session: &Arc<Driver<Self>>, call: Call, permit: Option<OwnedSemaphorePermit>) {
        let (session, out, max) = (session.clone(), self.out.clone(), self.max_output_bytes);
        self.tasks.spawn(async move {
            let (id, key) = (call.id().clone(), call.key().clone());
            let cancel = call.cancellation().clone();
            match call.listen(session.server(), RequestEnv::default()).await {
                Ok(stream) => pump_out(stream, cancel.cancelled(), &out, max).await,
                Err(e) => {
                    out.send(encode(&e.to_response(Some(&id))));
                }
            }
            session.end_stream(&key);
            drop(permit);
        });
    }

    /// Writes the change notifications the legacy session should see until `stop`.
    #[cfg(feature = "legacy")]
    fn forward_changes(&self, session: &Arc<Driver<Self>>) {
        let (session, out, stop, max) = (session.clone(), self.out.clone(), self.stop.clone(), self.max_output_bytes);
        let changes = mcp_session::legacy_changes(session);
        // A client that does not read gets its changes later, not more memory used.
        tokio::spawn(async move { pump_out(changes, stop.cancelled(), &out, max).await });
    }
}

impl Transport for Stdio {
    type Core = Core;

    fn handle(&self, session: &Arc<Driver<Self>>, event: Event) {
        match event {
            Event::Transmit(t) => {
                self.out.send(t.message);
            }
            Event::Call(mut call) => {
                let env = self.env.with_cancel(call.cancellation().clone());
                session.start(&mut call, env);
                self.spawn_call(session, call, None);
            }
            Event::Listen(call) => self.spawn_listen(session, call, None),
            #[cfg(feature = "legacy")]
            Event::LegacyOpened => self.forward_changes(session),
            _ => {}
        }
    }
}

/// Pumps `stream` to stdout until `stop` (or the writer is gone): each message is queued, then
/// the stream waits while the client leaves more than `max` bytes unread.
async fn pump_out(
    stream: impl futures::Stream<Item = Value>,
    stop: impl std::future::Future<Output = ()>,
    out: &Out,
    max: usize,
) {
    mcp_session::pump(stream, stop, None, |v| {
        let queued = v.is_none_or(|v| out.send(encode(&v)));
        let backlog = out.backlog.clone();
        async move {
            if queued {
                backlog.wait_below(max).await;
            }
            queued
        }
    })
    .await;
}

fn encode(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("JSON serializes")
}

async fn write_loop<W: AsyncWrite + Unpin>(mut output: W, backlog: Arc<Backlog>) -> std::io::Result<()> {
    /// Marks the queue gone however the writer ends, so that nothing more piles up.
    struct Gone<'a>(&'a Backlog);
    impl Drop for Gone<'_> {
        fn drop(&mut self) {
            let mut q = self.0.queue.lock();
            q.gone = true;
            q.lines = Vec::new();
        }
    }
    let _gone = Gone(&backlog);
    let mut batch = Vec::new();
    loop {
        let ready = backlog.ready.notified();
        let mut ready = std::pin::pin!(ready);
        ready.as_mut().enable();
        std::mem::swap(&mut backlog.queue.lock().lines, &mut batch);
        if batch.is_empty() {
            if backlog.senders.load(Ordering::Acquire) == 0 {
                break;
            }
            ready.await;
            continue;
        }
        // Everything queued goes out in one write: one syscall for many responses.
        output.write_all(&batch).await?;
        output.flush().await?;
        backlog.bytes.fetch_sub(batch.len(), Ordering::AcqRel);
        backlog.drained.notify_waiters();
        // Keep a typical batch's buffer; give back what a burst grew.
        if batch.capacity() > 1 << 20 {
            batch = Vec::new();
        } else {
            batch.clear();
        }
    }
    output.flush().await
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

/// Entry points for the fuzz targets in `fuzz/` (not a public API).
#[doc(hidden)]
pub mod __fuzz {
    /// Splits `input` (delivered in pieces of `piece` bytes) into lines the way the server
    /// does, with lines over `max` bytes rejected; returns each line (`None` for too long).
    pub async fn frame(input: &[u8], piece: usize, max: usize) -> std::io::Result<Vec<Option<Vec<u8>>>> {
        let reader = tokio_test_reader(input, piece.max(1));
        let mut r = super::BufReader::with_capacity(64, reader);
        let mut out = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            match super::read_line_bounded(&mut r, &mut line, max).await? {
                super::LineRead::Eof => return Ok(out),
                super::LineRead::TooLong => out.push(None),
                super::LineRead::Line => {
                    assert!(line.len() <= max + 1, "a line longer than the limit was kept");
                    out.push(Some(super::trim_line(&line).to_vec()));
                }
            }
        }
    }

    /// A reader handing out `input` at most `piece` bytes at a time.
    fn tokio_test_reader(input: &[u8], piece: usize) -> Pieces {
        Pieces { data: input.to_vec(), at: 0, piece }
    }

    struct Pieces {
        data: Vec<u8>,
        at: usize,
        piece: usize,
    }

    impl tokio::io::AsyncRead for Pieces {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let n = self.piece.min(buf.remaining()).min(self.data.len() - self.at);
            let at = self.at;
            buf.put_slice(&self.data[at..at + n]);
            self.at += n;
            std::task::Poll::Ready(Ok(()))
        }
    }
}
