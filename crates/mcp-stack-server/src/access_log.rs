//! An access log as an operation layer: one line per request, in `logfmt`, written to a writer
//! (a file, stderr, a pipe) by a thread of its own, without going through `tracing`.
//!
//! ```text
//! ts=2026-12-05T01:53:07.123Z era=modern method=tools/call target=echo caller=alice outcome=ok micros=84
//! ts=2026-12-05T01:53:07.130Z era=legacy method=tools/call target=nope caller=- outcome=-32602 micros=12
//! ts=2026-12-05T01:53:07.131Z era=modern method=tools/list target=- caller=bob outcome=ok micros=9 dropped=42
//! ```
//!
//! ```
//! use mcp_server::access_log::AccessLog;
//! use mcp_server::{Server, Tool};
//!
//! let server = Server::builder("s", "1")
//!     .layer(AccessLog::stderr())
//!     .tool(Tool::new("ping").handler(|| async { "pong" }))
//!     .build()
//!     .unwrap();
//! ```
//!
//! Names and principals come from the caller, so every value is checked before it is written:
//! anything but plain printable ASCII without spaces, quotes, `=` or `\` is written quoted, with
//! `"`, `\`, control characters and bidi controls escaped (`\n`, `\u{1b}`, `\u{202e}`: see
//! [`mcp_protocol::text`]), so a tool named `"x\nts=..."` cannot forge a line, nor one named
//! with U+202E reorder what a reader sees. Values are cut at 256 bytes.
//!
//! A request never waits for the writer. Each line is formatted on the request's thread and
//! handed over a bounded queue (8,192 lines by default, [`AccessLog::bounded`]) to one writer
//! thread. When the queue is full (the writer is slower than the requests: a stalled pipe, a
//! slow disk) the line is dropped and counted, and the next line written ends with
//! `dropped=N`, the number of lines left out since the line before it. The writer writes the
//! lines in the order they were queued and flushes whenever the queue is empty;
//! [`AccessLog::flush`] waits for the lines queued so far, and dropping the last clone of an
//! `AccessLog` (when the server is dropped at shutdown) writes and flushes what is queued, waiting
//! at most 2 seconds for a stalled writer. A writer that fails is reported once through
//! `tracing` and requests are served regardless.
//!
//! Why a layer of its own beside `tracing`: one line per request needs no event or subscriber
//! machinery, and goes where the operator says; use `tracing` when the lines should join the
//! rest of the application's events.

use crate::catalog::BoxFuture;
use crate::layers::{Era, Next, Operation, OperationLayer};
use crate::reply::Reply;
use mcp_protocol::{text, ProtocolError};
use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The longest value written (longer ones are cut, marked with `...`).
const MAX_VALUE: usize = 256;

/// Lines queued for the writer by default (about 1 MiB of typical lines).
const DEFAULT_QUEUE: usize = 8192;

/// How long dropping the last clone waits for the writer to write what is queued.
const DROP_WAIT: Duration = Duration::from_secs(2);

/// The access-log layer; see the [module docs](self).
#[derive(Clone)]
pub struct AccessLog {
    inner: Arc<Inner>,
}

/// What the requests share: the queue's sending end and the count of lines dropped.
struct Inner {
    /// `None` only while being dropped.
    queue: Option<SyncSender<Msg>>,
    shared: Arc<Shared>,
    /// Disconnected when the writer thread ends (it holds the sending end).
    finished: parking_lot::Mutex<Receiver<()>>,
}

/// Shared with the writer thread.
struct Shared {
    /// Lines dropped at the bound and not yet reported in a written line.
    dropped: AtomicU64,
}

enum Msg {
    Line(String),
    /// Write and flush what came before, then answer.
    Flush(SyncSender<()>),
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessLog").finish_non_exhaustive()
    }
}

impl AccessLog {
    /// Writes the lines to `writer`, from a thread of its own, with a queue of 8,192 lines.
    pub fn new(writer: impl Write + Send + 'static) -> Self {
        Self::bounded(writer, DEFAULT_QUEUE)
    }

    /// [`AccessLog::new`] with a queue of `lines` lines (at least 1): past it, lines are dropped
    /// and counted (see the [module docs](self)).
    pub fn bounded(writer: impl Write + Send + 'static, lines: usize) -> Self {
        let (queue, rx) = std::sync::mpsc::sync_channel(lines.max(1));
        let (done, finished) = std::sync::mpsc::sync_channel(0);
        let shared = Arc::new(Shared { dropped: AtomicU64::new(0) });
        let writer: Box<dyn Write + Send> = Box::new(writer);
        let for_thread = shared.clone();
        let spawned = std::thread::Builder::new().name("mcp-access-log".into()).spawn(move || {
            write_lines(rx, writer, &for_thread);
            drop(done);
        });
        if let Err(e) = spawned {
            // The receiver is gone with the closure: every line is dropped (and counted).
            tracing::error!(error = %e, "the access log's writer thread cannot start; requests are served regardless");
        }
        AccessLog { inner: Arc::new(Inner { queue: Some(queue), shared, finished: parking_lot::Mutex::new(finished) }) }
    }

    /// Writes the lines to the process's standard error (a write per line, so they do not mix
    /// with other output).
    pub fn stderr() -> Self {
        Self::new(std::io::stderr())
    }

    /// Appends the lines to the file at `path` (created if missing); written in batches, and
    /// flushed whenever no line is waiting.
    pub fn file(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self::new(std::io::BufWriter::with_capacity(64 << 10, file)))
    }

    /// Waits until every line queued before this call is written and the writer is flushed.
    /// Blocks the calling thread (call it at shutdown, or from a blocking context).
    pub fn flush(&self) {
        let (ack, acked) = std::sync::mpsc::sync_channel(1);
        if let Some(queue) = &self.inner.queue {
            if queue.send(Msg::Flush(ack)).is_ok() {
                let _ = acked.recv();
            }
        }
    }

    /// Hands `line` to the writer, or counts it as dropped when the queue is full.
    fn submit(&self, line: String) {
        let Some(queue) = &self.inner.queue else { return };
        match queue.try_send(Msg::Line(line)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.inner.shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The writer drains the queue, flushes and ends; a stalled one is not waited for long.
        drop(self.queue.take());
        match self.finished.get_mut().recv_timeout(DROP_WAIT) {
            Err(RecvTimeoutError::Disconnected) | Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => {
                tracing::warn!("the access log's writer did not finish within 2 s; lines still queued may be lost");
            }
        }
    }
}

/// The writer thread: writes each line (with the count of lines dropped since the last one),
/// flushes whenever the queue is empty, ends when every sender is gone.
fn write_lines(queue: Receiver<Msg>, mut writer: Box<dyn Write + Send>, shared: &Shared) {
    let mut failed = false;
    let mut report = |r: std::io::Result<()>| {
        if let Err(e) = r {
            if !std::mem::replace(&mut failed, true) {
                tracing::error!(error = %e, "the access log cannot be written; requests are served regardless");
            }
        }
    };
    loop {
        let msg = match queue.try_recv() {
            Ok(msg) => msg,
            Err(TryRecvError::Empty) => {
                report(writer.flush());
                match queue.recv() {
                    Ok(msg) => msg,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        match msg {
            Msg::Line(mut line) => {
                let dropped = shared.dropped.swap(0, Ordering::Relaxed);
                if dropped > 0 && line.ends_with('\n') {
                    line.pop();
                    line.push_str(" dropped=");
                    line.push_str(itoa::Buffer::new().format(dropped));
                    line.push('\n');
                }
                report(writer.write_all(line.as_bytes()));
            }
            Msg::Flush(ack) => {
                report(writer.flush());
                let _ = ack.send(());
            }
        }
    }
    report(writer.flush());
}

impl OperationLayer for AccessLog {
    fn call(&self, op: Operation, next: Next) -> BoxFuture<Result<Reply, ProtocolError>> {
        let log = self.clone();
        Box::pin(async move {
            let when = SystemTime::now();
            let started = Instant::now();
            // The line's start is written before the call: the operation moves into the chain.
            let mut line = String::with_capacity(160);
            line.push_str("ts=");
            push_timestamp(&mut line, when);
            line.push_str(match op.era() {
                Era::Modern => " era=modern",
                Era::Legacy => " era=legacy",
            });
            push_field(&mut line, "method", op.method());
            push_field(&mut line, "target", op.target().unwrap_or("-"));
            push_field(&mut line, "caller", op.principal().unwrap_or("-"));
            let reply = next.run(op).await;
            let mut num = itoa::Buffer::new();
            line.push_str(" outcome=");
            match &reply {
                Ok(_) => line.push_str("ok"),
                Err(e) => line.push_str(num.format(e.code())),
            }
            line.push_str(" micros=");
            line.push_str(num.format(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX)));
            line.push('\n');
            log.submit(line);
            reply
        })
    }
}

/// Appends ` key=value`, quoting and escaping the value when it needs it.
fn push_field(line: &mut String, key: &str, value: &str) {
    line.push(' ');
    line.push_str(key);
    line.push('=');
    let cut = value.len() > MAX_VALUE;
    let value = if cut { &value[..floor_boundary(value, MAX_VALUE)] } else { value };
    let plain = !value.is_empty() && value.bytes().all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b'\\' | b'='));
    if plain && !cut {
        line.push_str(value);
        return;
    }
    line.push('"');
    for c in value.chars() {
        match c {
            '"' => line.push_str("\\\""),
            '\\' => line.push_str("\\\\"),
            c if text::needs_escape(c) => text::push_escaped(line, c),
            c => line.push(c),
        }
    }
    if cut {
        line.push_str("...");
    }
    line.push('"');
}

/// The largest char boundary at or below `at`.
fn floor_boundary(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `YYYY-MM-DDTHH:MM:SS.`: the part of a timestamp that changes once a second.
type SecondPrefix = [u8; 20];

thread_local! {
    /// The last second formatted on this thread, and its prefix (hyper's `CachedDate` idea: the
    /// calendar is worked out once a second per thread, not once per line).
    static PREFIX: Cell<(u64, SecondPrefix)> = const { Cell::new((u64::MAX, [0; 20])) };
}

/// Appends `when` as RFC 3339 in UTC with milliseconds (`2026-12-05T01:53:07.123Z`).
fn push_timestamp(line: &mut String, when: SystemTime) {
    let since = when.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let prefix = PREFIX.with(|cached| {
        let (at, prefix) = cached.get();
        if at == secs {
            return prefix;
        }
        let prefix = second_prefix(secs);
        cached.set((secs, prefix));
        prefix
    });
    line.push_str(std::str::from_utf8(&prefix).expect("ASCII digits"));
    let millis = since.subsec_millis();
    line.push(char::from(b'0' + (millis / 100) as u8));
    push_two(line, millis % 100);
    line.push('Z');
}

/// The prefix of second `secs` since the epoch (the calendar is the `time` crate's); years past
/// 9999 are written as 9999-12-31T23:59:59.
fn second_prefix(secs: u64) -> SecondPrefix {
    let max = time::PrimitiveDateTime::MAX.assume_utc();
    let t = i64::try_from(secs).ok().and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok()).unwrap_or(max);
    let mut s = String::with_capacity(20);
    let year = u32::try_from(t.year()).unwrap_or(0);
    push_two(&mut s, year / 100);
    push_two(&mut s, year % 100);
    for (sep, n) in [('-', u8::from(t.month())), ('-', t.day()), ('T', t.hour()), (':', t.minute()), (':', t.second())]
    {
        s.push(sep);
        push_two(&mut s, u32::from(n));
    }
    s.push('.');
    s.as_bytes().try_into().expect("20 ASCII bytes")
}

/// Appends `n` (below 100) as two digits.
fn push_two(line: &mut String, n: u32) {
    line.push(char::from(b'0' + (n / 10 % 10) as u8));
    line.push(char::from(b'0' + (n % 10) as u8));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;

    fn timestamp(t: SystemTime) -> String {
        let mut s = String::new();
        push_timestamp(&mut s, t);
        s
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a year divisible by 400), 12:34:56.789
        assert_eq!(timestamp(UNIX_EPOCH + Duration::from_millis(951_827_696_789)), "2000-02-29T12:34:56.789Z");
        assert_eq!(timestamp(UNIX_EPOCH + Duration::from_secs(1_796_435_587)), "2026-12-05T01:53:07.000Z");
        // 2100-03-01: 2100 is not a leap year.
        assert_eq!(timestamp(UNIX_EPOCH + Duration::from_secs(4_107_542_400)), "2100-03-01T00:00:00.000Z");
        assert_eq!(timestamp(UNIX_EPOCH + Duration::from_millis(5)), "1970-01-01T00:00:00.005Z");
        assert_eq!(timestamp(UNIX_EPOCH + Duration::from_millis(1_050)), "1970-01-01T00:00:01.050Z");
    }

    #[test]
    fn the_cached_second_is_renewed_when_the_second_changes() {
        let at = |ms| UNIX_EPOCH + Duration::from_millis(ms);
        // The last millisecond of a day, the first of the next, and back (a clock set back).
        assert_eq!(timestamp(at(1_796_515_199_999)), "2026-12-05T23:59:59.999Z");
        assert_eq!(timestamp(at(1_796_515_199_001)), "2026-12-05T23:59:59.001Z");
        assert_eq!(timestamp(at(1_796_515_200_000)), "2026-12-06T00:00:00.000Z");
        assert_eq!(timestamp(at(1_796_515_199_500)), "2026-12-05T23:59:59.500Z");
        // Past what the calendar holds: the last second it can write.
        assert_eq!(timestamp(UNIX_EPOCH + Duration::from_secs(u64::MAX / 2)), "9999-12-31T23:59:59.000Z");
    }

    #[test]
    fn values_cannot_forge_lines_or_fields() {
        let mut s = String::new();
        push_field(&mut s, "target", "echo");
        assert_eq!(s, " target=echo");
        s.clear();
        push_field(&mut s, "target", "x\nts=1 method=forged");
        assert_eq!(s, r#" target="x\nts=1 method=forged""#);
        s.clear();
        push_field(&mut s, "caller", "a\"b\\c\u{1b}[31m\u{2028}");
        assert_eq!(s, r#" caller="a\"b\\c\u{1b}[31m\u{2028}""#);
        s.clear();
        push_field(&mut s, "caller", "");
        assert_eq!(s, r#" caller="""#);
        s.clear();
        push_field(&mut s, "target", "k=v");
        assert_eq!(s, r#" target="k=v""#);
    }

    #[test]
    fn bidi_controls_from_callers_are_escaped() {
        let mut s = String::new();
        // `exe.txt` on screen with the override; the line shows what was sent, in order.
        push_field(&mut s, "target", "report\u{202e}txt.exe\u{2066}\u{2069}\u{200f}\u{61c}\r");
        assert_eq!(s, r#" target="report\u{202e}txt.exe\u{2066}\u{2069}\u{200f}\u{61c}\r""#);
        assert!(!s.chars().any(mcp_protocol::text::needs_escape), "{s:?}");
    }

    #[test]
    fn long_values_are_cut_on_a_char_boundary() {
        let mut s = String::new();
        let long = "é".repeat(300);
        push_field(&mut s, "target", &long);
        assert!(s.ends_with("...\""), "{s}");
        assert!(s.len() <= " target=\"\"...".len() + MAX_VALUE + 1, "{}", s.len());
    }

    /// A writer whose first write waits until the test releases it (saying when it started).
    struct Gate {
        entered: Option<SyncSender<()>>,
        release: Receiver<()>,
        out: Arc<parking_lot::Mutex<Vec<u8>>>,
    }

    impl Write for Gate {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Some(entered) = self.entered.take() {
                entered.send(()).expect("the test waits");
                self.release.recv().expect("released");
            }
            self.out.lock().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// An access log with a queue of `bound` lines over a [`Gate`]: the log, "the writer has
    /// started its first write", the release, and what was written.
    #[allow(clippy::type_complexity)]
    fn gated(bound: usize) -> (AccessLog, Receiver<()>, SyncSender<()>, Arc<parking_lot::Mutex<Vec<u8>>>) {
        let ((entered_tx, entered), (release, release_rx)) = (sync_channel(1), sync_channel(1));
        let out = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let gate = Gate { entered: Some(entered_tx), release: release_rx, out: out.clone() };
        (AccessLog::bounded(gate, bound), entered, release, out)
    }

    fn text(out: &parking_lot::Mutex<Vec<u8>>) -> String {
        String::from_utf8(out.lock().clone()).unwrap()
    }

    #[test]
    fn lines_past_the_bound_are_dropped_and_counted_in_the_next_line_written() {
        let (log, entered, release, out) = gated(2);
        log.submit("one\n".into());
        // The writer holds "one" (stuck in the write); the queue is empty.
        entered.recv().unwrap();
        for line in ["two", "three", "four", "five", "six"] {
            log.submit(format!("{line}\n"));
        }
        assert_eq!(text(&out), "", "nothing is written while the writer is stuck");
        release.send(()).unwrap();
        log.flush();
        assert_eq!(text(&out), "one\ntwo dropped=3\nthree\n", "two fit in the queue; three were dropped");
        log.submit("seven\n".into());
        log.flush();
        assert_eq!(text(&out), "one\ntwo dropped=3\nthree\nseven\n", "the count is reported once");
    }

    #[test]
    fn every_line_accepted_is_written_when_the_last_clone_is_dropped() {
        let (log, entered, release, out) = gated(4);
        let clone = log.clone();
        log.submit("one\n".into());
        entered.recv().unwrap();
        for line in ["two", "three", "four", "five"] {
            clone.submit(format!("{line}\n"));
        }
        drop(clone);
        release.send(()).unwrap();
        drop(log);
        assert_eq!(text(&out), "one\ntwo\nthree\nfour\nfive\n");
    }
}
