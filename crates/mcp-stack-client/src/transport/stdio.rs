//! stdio client transport: spawns the server, speaks newline-delimited JSON on its
//! stdin/stdout, keeps its stderr apart, and terminates its whole process tree on close/drop.

use super::{Exchange, OutgoingRequest, SplitTx, Transport, TransportKind, Unsolicited, UnsolicitedStats};
use crate::error::{ErrorSource, TransportError};
use futures::future::BoxFuture;
use mcp_protocol::meta::SUBSCRIPTION_ID;
use mcp_protocol::types::RequestId;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot, watch};

/// How to start a stdio server.
#[derive(Debug, Clone)]
pub struct StdioCommand {
    program: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    max_line_bytes: usize,
}

impl StdioCommand {
    /// Runs `program` (looked up on `PATH`).
    pub fn new(program: impl Into<String>) -> Self {
        Self { program: program.into(), args: Vec::new(), env: Vec::new(), cwd: None, max_line_bytes: 16 << 20 }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the server.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets several environment variables for the server, in order (a later one wins).
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.env.extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Sets the server's working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Longest accepted line from the server (default 16 MiB).
    pub fn max_line_bytes(mut self, n: usize) -> Self {
        self.max_line_bytes = n;
        self
    }
}

/// Where a pending request's messages go: a stream when the server may send notifications
/// about it (progress, log messages, subscriptions), else a one-shot for the response alone,
/// which carries the response's JSON text: the caller parses it on its own thread, so the
/// reader task only finds the id (no allocation per response there, and none freed across
/// threads).
enum Route {
    /// `listen`: a `subscriptions/listen` stream, which never carries log messages; `logs`:
    /// it takes a log message that names no request while it is the one in flight.
    Stream {
        tx: SplitTx,
        listen: bool,
        logs: bool,
    },
    Once(oneshot::Sender<Result<Vec<u8>, TransportError>>),
}

impl Route {
    /// Delivers a failure.
    fn fail(self, e: TransportError) {
        let _ = match self {
            Route::Stream { tx, .. } => {
                tx.finish(Err(e));
                Ok(())
            }
            Route::Once(tx) => tx.send(Err(e)).map_err(drop),
        };
    }
}

/// Pending requests by id, in shards: callers registering requests on one thread and the
/// reader routing responses on another rarely meet on the same lock.
struct Pending([Mutex<HashMap<RequestId, Route>>; SHARDS]);

/// Shards of [`Pending`].
const SHARDS: usize = 16;

impl Default for Pending {
    fn default() -> Self {
        Self(std::array::from_fn(|_| Mutex::new(HashMap::new())))
    }
}

impl Pending {
    fn shard(&self, k: &RequestId) -> parking_lot::MutexGuard<'_, HashMap<RequestId, Route>> {
        let h = match k {
            RequestId::Integer(i) => *i as u64,
            RequestId::String(s) => s.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))),
        };
        self.0[(h % SHARDS as u64) as usize].lock()
    }

    fn insert(&self, k: RequestId, route: Route) {
        self.shard(&k).insert(k, route);
    }

    fn remove(&self, k: &RequestId) -> Option<Route> {
        self.shard(k).remove(k)
    }

    /// The request a log message that names none belongs to: the one request in flight
    /// (listen streams aside: log messages never travel on them), when there is exactly one and
    /// it takes notifications and such log messages (see `ClientBuilder::log_attribution`).
    /// Over stdio a `notifications/message` belongs to the request in
    /// flight; with several in flight nothing says which.
    fn sole_call(&self) -> Option<RequestId> {
        let mut found = None;
        for shard in &self.0 {
            for (k, route) in shard.lock().iter() {
                if matches!(route, Route::Stream { listen: true, .. }) {
                    continue;
                }
                if found.is_some() {
                    return None;
                }
                found = Some((k.clone(), matches!(route, Route::Stream { logs: true, .. })));
            }
        }
        found.and_then(|(k, streams)| streams.then_some(k))
    }

    fn drain(&self) -> Vec<Route> {
        self.0.iter().flat_map(|s| s.lock().drain().map(|(_, r)| r).collect::<Vec<_>>()).collect()
    }
}

/// Bytes queued for the server past which answers to dropped server requests are dropped too.
const REPLY_BACKLOG: usize = 1 << 20;

/// Lines waiting for the writer task. Callers serialize straight into one buffer (no
/// allocation and no channel message per request) and the writer takes everything queued
/// at once, so requests made together leave in one write.
#[derive(Default)]
struct Outbox {
    state: Mutex<OutState>,
    ready: tokio::sync::Notify,
}

#[derive(Default)]
struct OutState {
    bytes: Vec<u8>,
    /// `close` asked the writer to finish what is queued and close the server's stdin.
    closing: bool,
    /// The writer has stopped (closed, or the pipe broke): nothing more can be sent.
    gone: bool,
}

impl Outbox {
    /// Queues `msg` as one line; wakes the writer when the queue was empty (a non-empty queue
    /// has a wake-up pending already).
    fn push(&self, msg: &Value) -> Result<(), TransportError> {
        self.push_with(|out| serde_json::to_writer(out, msg).map_err(|e| TransportError::Malformed(e.to_string())))
    }

    /// Queues the line `write` appends (without its newline); see [`Outbox::push`].
    /// Queues an answer the client owes the server (an error for a request it dropped), unless
    /// [`REPLY_BACKLOG`] bytes already wait: a server that floods requests and does not read
    /// its input loses the answers, not our memory.
    fn push_reply(&self, msg: &Value) {
        if self.state.lock().bytes.len() > REPLY_BACKLOG {
            super::note_dropped();
            return;
        }
        let _ = self.push(msg);
    }

    fn push_with(&self, write: impl FnOnce(&mut Vec<u8>) -> Result<(), TransportError>) -> Result<(), TransportError> {
        let mut st = self.state.lock();
        if st.closing || st.gone {
            return Err(TransportError::Closed("the server's input is closed".into()));
        }
        let start = st.bytes.len();
        if let Err(e) = write(&mut st.bytes) {
            st.bytes.truncate(start);
            return Err(e);
        }
        st.bytes.push(b'\n');
        drop(st);
        if start == 0 {
            self.ready.notify_one();
        }
        Ok(())
    }

    /// Asks the writer to write what is queued, then close the server's stdin.
    fn close(&self) {
        self.state.lock().closing = true;
        self.ready.notify_one();
    }

    /// The writer task: moves queued lines to `stdin` until closed or the pipe breaks.
    async fn run(&self, mut stdin: impl tokio::io::AsyncWrite + Unpin) {
        let mut batch = Vec::new();
        loop {
            self.ready.notified().await;
            let closing = {
                let mut st = self.state.lock();
                std::mem::swap(&mut st.bytes, &mut batch);
                st.closing
            };
            if !batch.is_empty() && (stdin.write_all(&batch).await.is_err() || stdin.flush().await.is_err()) {
                break;
            }
            // Keep a typical batch's buffer; give back what a burst grew.
            if batch.capacity() > 1 << 20 {
                batch = Vec::new();
            } else {
                batch.clear();
            }
            if closing {
                break;
            }
        }
        {
            let mut st = self.state.lock();
            st.gone = true;
            st.bytes = Vec::new();
        }
        // Shutting down (a stream that is one half of a socket or duplex) and dropping `stdin`
        // close the server's input: its signal to exit.
        let _ = stdin.shutdown().await;
    }
}

#[derive(Default)]
struct Shared {
    pending: Pending,
    outbox: Outbox,
    /// `closed` is set (read on every write without taking the lock).
    is_closed: AtomicBool,
    closed: Mutex<Option<String>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// Messages tied to no request of ours, for the consumer that takes them (bounded).
    unsolicited: Unsolicited,
}

impl Shared {
    fn fail_all(&self, why: String) {
        *self.closed.lock() = Some(why.clone());
        self.is_closed.store(true, Ordering::Release);
        for route in self.pending.drain() {
            route.fail(TransportError::Closed(why.clone()));
        }
        self.unsolicited.close();
    }

    fn closed_reason(&self) -> Option<String> {
        if !self.is_closed.load(Ordering::Acquire) {
            return None;
        }
        self.closed.lock().clone()
    }
}

/// A running stdio server.
pub struct StdioTransport {
    shared: Arc<Shared>,
    /// Set when the server process exited (`None`: no process, [`StdioTransport::from_io`]).
    exited: Option<watch::Receiver<bool>>,
    pgid: Option<i32>,
}

/// Starts the writer and reader tasks of a server speaking on `output` and listening on
/// `input`, lines of at most `max` bytes. When the output ends, pending requests fail with the
/// reason and the last lines of `tail` (waiting a moment for `stderr_done`, when there is a
/// stderr, so that a server's last words make it in).
fn start(
    output: impl tokio::io::AsyncRead + Send + Unpin + 'static,
    input: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
    max: usize,
    tail: Arc<Mutex<VecDeque<String>>>,
    stderr_done: Option<watch::Receiver<bool>>,
) -> Arc<Shared> {
    let shared = Arc::new(Shared { unsolicited: Unsolicited::new(), stderr_tail: tail, ..Shared::default() });
    let out = shared.clone();
    tokio::spawn(async move { out.outbox.run(input).await });
    let reader_shared = shared.clone();
    tokio::spawn(async move {
        let mut r = BufReader::with_capacity(64 * 1024, output);
        let why = loop {
            let mut buf = Vec::with_capacity(256);
            match (&mut r).take(max as u64 + 1).read_until(b'\n', &mut buf).await {
                Ok(0) => break "the server closed its output (exited?)".to_owned(),
                Ok(_) if buf.len() > max => break format!("the server sent a line longer than {max} bytes"),
                Ok(_) => {}
                Err(e) => break format!("reading from the server failed: {e}"),
            }
            route_line(&reader_shared, buf);
        };
        // A server that exits closes stdout and stderr together: read what stderr still
        // holds (bounded: a live server keeps its stderr open).
        if let Some(mut done) = stderr_done {
            let _ = tokio::time::timeout(Duration::from_millis(200), done.wait_for(|d| *d)).await;
        }
        let tail: Vec<String> = reader_shared.stderr_tail.lock().iter().cloned().collect();
        let why = if tail.is_empty() { why } else { format!("{why}; last stderr lines: {}", tail.join(" | ")) };
        reader_shared.fail_all(why);
    });
    shared
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport").field("pgid", &self.pgid).finish()
    }
}

impl StdioTransport {
    /// Spawns the server in its own process group.
    pub fn spawn(cmd: StdioCommand) -> Result<Self, TransportError> {
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        #[cfg(unix)]
        c.process_group(0);
        for (k, v) in &cmd.env {
            c.env(k, v);
        }
        if let Some(d) = &cmd.cwd {
            c.current_dir(d);
        }
        let mut child = c.spawn().map_err(|e| {
            TransportError::Connect(format!("cannot start {:?}: {e}", cmd.program), Some(ErrorSource::new(e)))
        })?;
        let pgid = child.id().map(|p| p as i32);
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let tail_of = Arc::new(Mutex::new(VecDeque::new()));
        let tail = tail_of.clone();
        // Set when stderr ends, so that a server's last words make it into the error.
        let (stderr_done_tx, stderr_done) = watch::channel(false);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "mcp_client::server_stderr", "{line}");
                let mut t = tail.lock();
                if t.len() == 20 {
                    t.pop_front();
                }
                t.push_back(line);
            }
            let _ = stderr_done_tx.send(true);
        });
        let shared = start(stdout, stdin, cmd.max_line_bytes, tail_of, Some(stderr_done));

        // Watch the process itself: a grandchild holding the stdout pipe open must not hide
        // the server's death from pending calls.
        let (exit_tx, exited) = watch::channel(false);
        let exit_shared = shared.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            // Let the reader drain what the server wrote before it exited.
            tokio::time::sleep(Duration::from_millis(100)).await;
            let why = match status {
                Ok(s) => format!("the server process exited ({s})"),
                Err(e) => format!("lost track of the server process: {e}"),
            };
            let tail: Vec<String> = exit_shared.stderr_tail.lock().iter().cloned().collect();
            let why = if tail.is_empty() { why } else { format!("{why}; last stderr lines: {}", tail.join(" | ")) };
            if exit_shared.closed_reason().is_none() {
                exit_shared.fail_all(why);
            }
            let _ = exit_tx.send(true);
        });
        Ok(Self { shared, exited: Some(exited), pgid })
    }

    /// A server reached through `reader` (its output) and `writer` (its input) rather than a
    /// process: newline-delimited JSON as over a child's stdio, lines of at most 16 MiB. For
    /// servers in the same process, e.g. over the two halves of a [`tokio::io::duplex`] (tests),
    /// or an already-connected pipe or socket. Closing the transport closes `writer` (the
    /// server's signal to stop); there is no process to wait for or signal.
    pub fn from_io<R, W>(reader: R, writer: W) -> Self
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let shared = start(reader, writer, 16 << 20, Arc::default(), None);
        Self { shared, exited: None, pgid: None }
    }

    /// The server's process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.pgid.map(|p| p as u32)
    }

    fn write(&self, msg: &Value) -> Result<(), TransportError> {
        if let Some(why) = self.shared.closed_reason() {
            return Err(TransportError::Closed(why));
        }
        self.shared.outbox.push(msg)
    }

    /// Counters of the unsolicited queue (for tests and diagnostics).
    #[doc(hidden)]
    pub fn unsolicited_stats(&self) -> UnsolicitedStats {
        self.shared.unsolicited.stats()
    }

    /// Signals the server's whole process tree: its process group on Unix; on Windows,
    /// `taskkill /T` (which has no gentle form, so `Term` kills too).
    fn signal_group(&self, sig: Signal) {
        let Some(pg) = self.pgid else { return };
        #[cfg(unix)]
        {
            use nix::sys::signal::{killpg, Signal as S};
            let s = match sig {
                Signal::Term => S::SIGTERM,
                Signal::Kill => S::SIGKILL,
            };
            let _ = killpg(nix::unistd::Pid::from_raw(pg), s);
        }
        #[cfg(windows)]
        {
            let _ = sig;
            let _ = std::process::Command::new("taskkill")
                .args(["/PID", &pg.to_string(), "/T", "/F"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        #[cfg(not(any(unix, windows)))]
        let _ = (pg, sig);
    }
}

/// How [`StdioTransport`] ends the server's process tree.
#[derive(Debug, Clone, Copy)]
enum Signal {
    /// Ask it to stop.
    Term,
    /// Make it stop.
    Kill,
}

/// Where a message from the server goes: `(request, is_response)`, or `None` for the
/// unsolicited channel.
fn target(msg: &Value) -> Option<(RequestId, bool)> {
    let is_response = msg.get("id").is_some() && (msg.get("result").is_some() || msg.get("error").is_some());
    let k = if is_response {
        msg.get("id").and_then(RequestId::from_id)
    } else if msg.get("id").is_none() {
        // Progress and subscription notifications name their request.
        let params = msg.get("params");
        params
            .and_then(|p| p.get("progressToken"))
            .or_else(|| params.and_then(|p| p.get("_meta")).and_then(|m| m.get(SUBSCRIPTION_ID)))
            .and_then(RequestId::from_id)
    } else {
        None
    };
    k.map(|k| (k, is_response))
}

/// The top of a message, read without building it: enough to tell a response to one of our
/// requests from everything else.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    result: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// The id of `line` when it is a response (an id, a result or an error, no method).
fn response_id(line: &[u8]) -> Option<RequestId> {
    let e: Envelope<'_> = serde_json::from_slice(line).ok()?;
    if e.method.is_some() || (e.result.is_none() && e.error.is_none()) {
        return None;
    }
    RequestId::from_id(&serde_json::from_str(e.id?.get()).ok()?)
}

/// The method of `m` when it is one of our own requests coming back: a request with the id of
/// one we are waiting on, for a method only clients send (a server's own requests, `ping`,
/// `roots/list`, `sampling/...`, `elicitation/...` and the tasks methods, may reuse our ids).
fn echoed_request<'m>(shared: &Shared, m: &'m Value) -> Option<&'m str> {
    let method = m.get("method")?.as_str()?;
    let client_only = method == "initialize"
        || mcp_protocol::Method::parse(method).is_some_and(|k| {
            !matches!(
                k,
                mcp_protocol::Method::TasksGet | mcp_protocol::Method::TasksUpdate | mcp_protocol::Method::TasksCancel
            )
        });
    let id = RequestId::from_id(m.get("id")?)?;
    (client_only && shared.pending.shard(&id).contains_key(&id)).then_some(method)
}

/// Delivers one line from the server to whoever waits for it. A response is read only for its
/// id, and a plain request takes its text as it came; anything else is parsed here to find
/// its way.
fn route_line(shared: &Shared, line: Vec<u8>) {
    let text = line.trim_ascii();
    if text.is_empty() {
        return;
    }
    let parse = |text: &[u8]| match crate::elicit::order::parse(text) {
        Ok(msg) => Some(msg),
        Err(e) => {
            tracing::warn!(error = %e, "ignoring a non-JSON line from the server");
            None
        }
    };
    let (to, mut msg) = match response_id(text) {
        Some(k) => (Some((k, true)), None),
        None => {
            let Some(m) = parse(text) else { return };
            if let Some(method) = echoed_request(shared, &m) {
                shared.fail_all(format!(
                    "the server sent our own `{method}` request back: it does not speak MCP \
                     (a program that echoes its input, like `cat`?)"
                ));
                return;
            }
            (target(&m), Some(m))
        }
    };
    match to {
        Some((k, true)) => match shared.pending.remove(&k) {
            Some(Route::Once(tx)) => {
                let _ = tx.send(Ok(line));
                return;
            }
            Some(Route::Stream { tx, .. }) => {
                if let Some(m) = msg.or_else(|| parse(text)) {
                    tx.finish(Ok(m));
                }
                return;
            }
            None => {}
        },
        Some((k, false)) => {
            if let Some(Route::Stream { tx, .. }) = shared.pending.shard(&k).get(&k) {
                if let Some(m) = msg.take() {
                    tx.note(m);
                }
                return;
            }
        }
        None => {
            // A log message names no request: it belongs to the one in flight, if only one is.
            let is_log =
                msg.as_ref().and_then(|m| m.get("method")).and_then(Value::as_str) == Some("notifications/message");
            if let Some(k) = is_log.then(|| shared.pending.sole_call()).flatten() {
                if let Some(Route::Stream { tx, .. }) = shared.pending.shard(&k).get(&k) {
                    if let Some(m) = msg.take() {
                        tx.note(m);
                    }
                    return;
                }
            }
        }
    }
    if let Some(m) = msg.or_else(|| parse(text)) {
        if let Some(reply) = shared.unsolicited.deliver(m) {
            shared.outbox.push_reply(&reply);
        }
    }
}

/// One line from a stdio server, read and routed as the reader task does, with request `1`
/// pending: `Some(true)` if it reached that request, `Some(false)` if it went to the
/// unsolicited channel, `None` if it was skipped (blank or not JSON). For [`crate::__fuzz`].
pub(crate) fn fuzz_line(line: &[u8]) -> Option<bool> {
    let text = line.trim_ascii();
    // What the reader drops (blank, or not a JSON value it can build: `IgnoredAny` would take
    // a number out of range such as `1e400`, which `Value` refuses).
    if text.is_empty() || serde_json::from_slice::<Value>(text).is_err() {
        return None;
    }
    let (tx, mut other) = mpsc::channel(super::UNSOLICITED_CAP);
    let shared = Shared { unsolicited: Unsolicited::new(), ..Shared::default() };
    shared.unsolicited.route(Some(tx));
    let (tx, mut exchange) = Exchange::split();
    shared.pending.insert(RequestId::Integer(1), Route::Stream { tx, listen: false, logs: true });
    route_line(&shared, line.to_vec());
    // Whatever reached the request is ready at once (a response ended the exchange).
    drop(shared.pending.drain());
    let reached = futures::FutureExt::now_or_never(exchange.next()).flatten().is_some();
    assert!(reached != other.try_recv().is_ok(), "a message is delivered exactly once");
    Some(reached)
}

impl Transport for StdioTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn request<'a>(&'a self, req: OutgoingRequest<'a>) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        Box::pin(async move {
            let (id, k) = (req.id().clone(), req.key());
            // Only requests that may get notifications (a progress token, a log level, a
            // listen) need a stream; any other gets its response through a one-shot.
            let (route, exchange) = if req.streams() {
                let (tx, exchange) = Exchange::split();
                (Route::Stream { tx, listen: req.is_listen(), logs: req.takes_unnamed_logs() }, exchange)
            } else {
                let (tx, rx) = oneshot::channel();
                (Route::Once(tx), Exchange::once_text(rx))
            };
            self.shared.pending.insert(k.clone(), route);
            let sent = match self.shared.closed_reason() {
                Some(why) => Err(TransportError::Closed(why)),
                None => self.shared.outbox.push_with(|out| req.write_json(out)),
            };
            if let Err(e) = sent {
                self.shared.pending.remove(&k);
                return Err(e);
            }
            let shared = self.shared.clone();
            Ok(exchange.on_cancel(move || {
                shared.pending.remove(&k);
                if let Some(note) = super::cancelled(&id, None) {
                    let _ = shared.outbox.push(&note);
                }
            }))
        })
    }

    fn send(&self, message: Value, _headers: Vec<(String, String)>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move { self.write(&message) })
    }

    fn route_unsolicited(&self, sink: Option<mpsc::Sender<Value>>) {
        self.shared.unsolicited.route(sink);
    }

    fn route_logs(&self, sink: Option<mpsc::Sender<Value>>) {
        self.shared.unsolicited.route_logs(sink);
    }

    fn unsolicited_stats(&self) -> UnsolicitedStats {
        self.shared.unsolicited.stats()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let Some(exited) = &self.exited else {
                // No process: closing its input is all there is to do.
                if self.shared.closed_reason().is_none() {
                    self.shared.fail_all("the client closed the connection".into());
                }
                self.shared.outbox.close();
                return;
            };
            if *exited.borrow() {
                self.signal_group(Signal::Kill);
                return;
            }
            if self.shared.closed_reason().is_none() {
                self.shared.fail_all("the client closed the connection".into());
            }
            // 1. Close stdin, 2. wait, 3. SIGTERM the group, 4. SIGKILL the group.
            self.shared.outbox.close();
            let mut exited = exited.clone();
            let wait = |d| {
                let mut e = exited.clone();
                async move { tokio::time::timeout(d, e.wait_for(|x| *x)).await.is_ok() }
            };
            if !wait(Duration::from_secs(2)).await {
                self.signal_group(Signal::Term);
                if !wait(Duration::from_secs(2)).await {
                    self.signal_group(Signal::Kill);
                    let _ = tokio::time::timeout(Duration::from_secs(2), exited.wait_for(|x| *x)).await;
                }
            }
            // Whatever the server left behind in its group goes too.
            self.signal_group(Signal::Kill);
        })
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Never leave the server's process tree behind.
        self.signal_group(Signal::Kill);
    }
}

#[cfg(test)]
mod tests;
