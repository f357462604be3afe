//! stdio client transport: spawns the server, speaks newline-delimited JSON on its
//! stdin/stdout, keeps its stderr apart, and terminates its whole process tree on close/drop.

use super::{Exchange, OutgoingRequest, Transport, TransportKind};
use crate::error::{ErrorSource, TransportError};
use futures::future::BoxFuture;
use mcp_protocol::meta::SUBSCRIPTION_ID;
use mcp_protocol::types::RequestId;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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
/// about it (progress, subscriptions), else a one-shot for the response alone.
enum Route {
    Stream(mpsc::UnboundedSender<Result<Value, TransportError>>),
    Once(oneshot::Sender<Result<Value, TransportError>>),
}

impl Route {
    fn deliver(self, m: Result<Value, TransportError>) {
        let _ = match self {
            Route::Stream(tx) => tx.send(m).map_err(drop),
            Route::Once(tx) => tx.send(m).map_err(drop),
        };
    }
}

#[derive(Default)]
struct Shared {
    pending: Mutex<HashMap<RequestId, Route>>,
    /// `closed` is set (read on every write without taking the lock).
    is_closed: AtomicBool,
    closed: Mutex<Option<String>>,
    stderr_tail: Mutex<VecDeque<String>>,
}

impl Shared {
    fn fail_all(&self, why: String) {
        *self.closed.lock().expect("lock") = Some(why.clone());
        self.is_closed.store(true, Ordering::Release);
        for (_, route) in self.pending.lock().expect("lock").drain() {
            route.deliver(Err(TransportError::Closed(why.clone())));
        }
    }

    fn closed_reason(&self) -> Option<String> {
        if !self.is_closed.load(Ordering::Acquire) {
            return None;
        }
        self.closed.lock().expect("lock").clone()
    }
}

/// A running stdio server.
pub struct StdioTransport {
    shared: Arc<Shared>,
    writer: mpsc::UnboundedSender<Vec<u8>>,
    unsolicited: Mutex<Option<mpsc::UnboundedReceiver<Value>>>,
    exited: watch::Receiver<bool>,
    pgid: Option<i32>,
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport").field("pgid", &self.pgid).finish()
    }
}

use super::request_key as key;

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
        let shared = Arc::new(Shared::default());
        let (writer, mut write_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let (unsolicited_tx, unsolicited_rx) = mpsc::unbounded_channel();

        tokio::spawn(async move {
            // An empty buffer is the close marker (real lines always end with '\n').
            let mut w = tokio::io::BufWriter::new(stdin);
            'outer: while let Some(line) = write_rx.recv().await {
                if line.is_empty() || w.write_all(&line).await.is_err() {
                    break;
                }
                while let Ok(more) = write_rx.try_recv() {
                    if more.is_empty() {
                        break 'outer;
                    }
                    if w.write_all(&more).await.is_err() {
                        return;
                    }
                }
                if w.flush().await.is_err() {
                    return;
                }
            }
            let _ = w.flush().await;
            // Dropping the writer closes the server's stdin: its signal to exit.
        });

        let tail = shared.clone();
        // Set when stderr ends, so that a server's last words make it into the error.
        let (stderr_done_tx, mut stderr_done) = watch::channel(false);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "mcp_client::server_stderr", "{line}");
                let mut t = tail.stderr_tail.lock().expect("lock");
                if t.len() == 20 {
                    t.pop_front();
                }
                t.push_back(line);
            }
            let _ = stderr_done_tx.send(true);
        });

        let reader_shared = shared.clone();
        let max = cmd.max_line_bytes;
        tokio::spawn(async move {
            let mut r = BufReader::with_capacity(64 * 1024, stdout);
            let mut buf = Vec::with_capacity(4096);
            let mut batch = Vec::new();
            let why = loop {
                buf.clear();
                match (&mut r).take(max as u64 + 1).read_until(b'\n', &mut buf).await {
                    Ok(0) => break "the server closed its output (exited?)".to_owned(),
                    Ok(_) if buf.len() > max => break format!("the server sent a line longer than {max} bytes"),
                    Ok(_) => {}
                    Err(e) => break format!("reading from the server failed: {e}"),
                }
                let line = buf.trim_ascii();
                if line.is_empty() {
                    continue;
                }
                match serde_json::from_slice::<Value>(line) {
                    Ok(msg) => batch.push(msg),
                    Err(e) => tracing::warn!(error = %e, "ignoring a non-JSON line from the server"),
                }
                // Lines already buffered are routed together, under one lock; nothing waits
                // for a line that has not fully arrived.
                if batch.len() >= 64 || !r.buffer().contains(&b'\n') {
                    route_all(&reader_shared, &unsolicited_tx, &mut batch);
                }
            };
            route_all(&reader_shared, &unsolicited_tx, &mut batch);
            // A server that exits closes stdout and stderr together: read what stderr still
            // holds (bounded: a live server keeps its stderr open).
            let _ = tokio::time::timeout(Duration::from_millis(200), stderr_done.wait_for(|d| *d)).await;
            let tail: Vec<String> = reader_shared.stderr_tail.lock().expect("lock").iter().cloned().collect();
            let why = if tail.is_empty() { why } else { format!("{why}; last stderr lines: {}", tail.join(" | ")) };
            reader_shared.fail_all(why);
        });

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
            let tail: Vec<String> = exit_shared.stderr_tail.lock().expect("lock").iter().cloned().collect();
            let why = if tail.is_empty() { why } else { format!("{why}; last stderr lines: {}", tail.join(" | ")) };
            if exit_shared.closed_reason().is_none() {
                exit_shared.fail_all(why);
            }
            let _ = exit_tx.send(true);
        });
        Ok(Self { shared, writer, unsolicited: Mutex::new(Some(unsolicited_rx)), exited, pgid })
    }

    /// The server's process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.pgid.map(|p| p as u32)
    }

    fn write(&self, msg: &Value) -> Result<(), TransportError> {
        if let Some(why) = self.shared.closed_reason() {
            return Err(TransportError::Closed(why));
        }
        // Room for a typical request up front: growing the buffer costs copies.
        let mut line = Vec::with_capacity(512);
        serde_json::to_writer(&mut line, msg).map_err(|e| TransportError::Malformed(e.to_string()))?;
        line.push(b'\n');
        self.writer.send(line).map_err(|_| TransportError::Closed("the server's input is closed".into()))
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
        msg.get("id").and_then(key)
    } else if msg.get("id").is_none() {
        // Progress and subscription notifications name their request.
        let params = msg.get("params");
        params
            .and_then(|p| p.get("progressToken"))
            .or_else(|| params.and_then(|p| p.get("_meta")).and_then(|m| m.get(SUBSCRIPTION_ID)))
            .and_then(key)
    } else {
        None
    };
    k.map(|k| (k, is_response))
}

/// Delivers one message from the server to whoever waits for it.
fn route(shared: &Shared, unsolicited: &mpsc::UnboundedSender<Value>, msg: Value) {
    route_all(shared, unsolicited, &mut vec![msg]);
}

/// Delivers messages from the server in order, taking the lock once; empties `batch`.
fn route_all(shared: &Shared, unsolicited: &mpsc::UnboundedSender<Value>, batch: &mut Vec<Value>) {
    if batch.is_empty() {
        return;
    }
    let mut others = Vec::new();
    {
        let mut pending = shared.pending.lock().expect("lock");
        for msg in batch.drain(..) {
            match target(&msg) {
                Some((k, true)) => match pending.remove(&k) {
                    Some(route) => route.deliver(Ok(msg)),
                    None => others.push(msg),
                },
                Some((k, false)) => match pending.get(&k) {
                    Some(Route::Stream(tx)) => {
                        let _ = tx.send(Ok(msg));
                    }
                    _ => others.push(msg),
                },
                None => others.push(msg),
            }
        }
    }
    for msg in others {
        let _ = unsolicited.send(msg);
    }
}

/// One line from a stdio server, read and routed as the reader task does, with request `1`
/// pending: `Some(true)` if it reached that request, `Some(false)` if it went to the
/// unsolicited channel, `None` if it was skipped (blank or not JSON). For [`crate::__fuzz`].
pub(crate) fn fuzz_line(line: &[u8]) -> Option<bool> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return None;
    }
    let msg = serde_json::from_slice::<Value>(line).ok()?;
    let shared = Shared::default();
    let (tx, mut rx) = mpsc::unbounded_channel();
    shared.pending.lock().expect("lock").insert(RequestId::Integer(1), Route::Stream(tx));
    let (unsolicited, mut other) = mpsc::unbounded_channel();
    route(&shared, &unsolicited, msg);
    let reached = rx.try_recv().is_ok();
    assert!(reached != other.try_recv().is_ok(), "a message is delivered exactly once");
    Some(reached)
}

impl Transport for StdioTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn request(&self, req: OutgoingRequest) -> BoxFuture<'_, Result<Exchange, TransportError>> {
        Box::pin(async move {
            let id =
                req.message.get("id").cloned().ok_or_else(|| TransportError::Malformed("request without id".into()))?;
            let k =
                key(&id).ok_or_else(|| TransportError::Malformed("request id is not a string or integer".into()))?;
            // Notifications name their request by progress token or subscription id: only
            // such requests need a stream; any other gets its response through a one-shot.
            let params = req.message.get("params");
            let streams = req.message.get("method").and_then(Value::as_str) == Some("subscriptions/listen")
                || params
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get(mcp_protocol::meta::PROGRESS_TOKEN))
                    .is_some();
            let (route, exchange) = if streams {
                let (tx, rx) = mpsc::unbounded_channel();
                (Route::Stream(tx), Exchange::stream(rx))
            } else {
                let (tx, rx) = oneshot::channel();
                (Route::Once(tx), Exchange::once(rx))
            };
            self.shared.pending.lock().expect("lock").insert(k.clone(), route);
            if let Err(e) = self.write(&req.message) {
                self.shared.pending.lock().expect("lock").remove(&k);
                return Err(e);
            }
            let shared = self.shared.clone();
            let writer = self.writer.clone();
            Ok(exchange.on_cancel(move || {
                shared.pending.lock().expect("lock").remove(&k);
                let note = mcp_protocol::jsonrpc::notification(
                    "notifications/cancelled",
                    serde_json::json!({"requestId": id}),
                );
                if let Ok(mut line) = serde_json::to_vec(&note) {
                    line.push(b'\n');
                    let _ = writer.send(line);
                }
            }))
        })
    }

    fn send(&self, message: Value, _headers: Vec<(String, String)>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move { self.write(&message) })
    }

    fn take_unsolicited(&self) -> Option<mpsc::UnboundedReceiver<Value>> {
        self.unsolicited.lock().expect("lock").take()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if *self.exited.borrow() {
                self.signal_group(Signal::Kill);
                return;
            }
            if self.shared.closed_reason().is_none() {
                self.shared.fail_all("the client closed the connection".into());
            }
            // 1. Close stdin, 2. wait, 3. SIGTERM the group, 4. SIGKILL the group.
            let _ = self.writer.send(Vec::new());
            let mut exited = self.exited.clone();
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
