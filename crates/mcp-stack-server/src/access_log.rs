//! An access log as an operation layer: one line per request, in `logfmt`, written straight to
//! a writer (a file, stderr, a pipe) without going through `tracing`.
//!
//! ```text
//! ts=2026-12-05T01:53:07.123Z era=modern method=tools/call target=echo caller=alice outcome=ok micros=84
//! ts=2026-12-05T01:53:07.130Z era=legacy method=tools/call target=nope caller=- outcome=-32602 micros=12
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
//! Each line is formatted into a buffer and handed to the writer in one `write_all`, under a
//! lock; the writer decides about buffering (stderr writes each line as it comes; wrap a file in
//! a `LineWriter` to do the same, or in a `BufWriter` to batch). A writer that fails is reported
//! once through `tracing` and the request is served regardless.
//!
//! Why a layer of its own beside `tracing`: the same line through `tracing-subscriber`'s
//! formatter costs about a tenth of a small request's time in the benchmarks
//! (`scripts/bench.sh`, `mcp-layered`), this one about half of that; use `tracing` when the
//! lines should join the rest of the application's events.

use crate::catalog::BoxFuture;
use crate::layers::{Era, Next, Operation, OperationLayer};
use crate::reply::Reply;
use mcp_protocol::{text, ProtocolError};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The longest value written (longer ones are cut, marked with `...`).
const MAX_VALUE: usize = 256;

/// The access-log layer; see the [module docs](self).
#[derive(Clone)]
pub struct AccessLog {
    inner: Arc<Inner>,
}

struct Inner {
    writer: parking_lot::Mutex<Box<dyn Write + Send>>,
    failed: AtomicBool,
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessLog").finish_non_exhaustive()
    }
}

impl AccessLog {
    /// Writes the lines to `writer`.
    pub fn new(writer: impl Write + Send + 'static) -> Self {
        AccessLog {
            inner: Arc::new(Inner {
                writer: parking_lot::Mutex::new(Box::new(writer)),
                failed: AtomicBool::new(false),
            }),
        }
    }

    /// Writes the lines to the process's standard error.
    pub fn stderr() -> Self {
        Self::new(std::io::stderr())
    }

    /// Appends the lines to the file at `path` (created if missing), one write per line.
    pub fn file(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self::new(std::io::LineWriter::new(file)))
    }

    fn write(&self, line: &str) {
        let result = self.inner.writer.lock().write_all(line.as_bytes());
        if let Err(e) = result {
            if !self.inner.failed.swap(true, Ordering::Relaxed) {
                tracing::error!(error = %e, "the access log cannot be written; requests are served regardless");
            }
        }
    }
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
            match &reply {
                Ok(_) => line.push_str(" outcome=ok"),
                Err(e) => {
                    line.push_str(" outcome=");
                    if e.code() < 0 {
                        line.push('-');
                    }
                    push_num(&mut line, e.code().unsigned_abs(), 1);
                }
            }
            line.push_str(" micros=");
            push_num(&mut line, u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX), 1);
            line.push('\n');
            log.write(&line);
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

/// Appends `when` as RFC 3339 in UTC with milliseconds (`2026-12-05T01:53:07.123Z`).
fn push_timestamp(line: &mut String, when: SystemTime) {
    let since = when.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    // Digits pushed by hand: `write!` costs more than the rest of the line together.
    push_num(line, year.max(0) as u64, 4);
    line.push('-');
    push_num(line, u64::from(month), 2);
    line.push('-');
    push_num(line, u64::from(day), 2);
    line.push('T');
    push_num(line, rem / 3600, 2);
    line.push(':');
    push_num(line, rem % 3600 / 60, 2);
    line.push(':');
    push_num(line, rem % 60, 2);
    line.push('.');
    push_num(line, u64::from(since.subsec_millis()), 3);
    line.push('Z');
}

/// Appends `n` in decimal, zero-padded to `width` digits.
fn push_num(line: &mut String, mut n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for _ in (digits.len() - at)..width {
        line.push('0');
    }
    line.push_str(std::str::from_utf8(&digits[at..]).expect("ASCII digits"));
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (the well-known era/day-of-era
/// arithmetic: 400-year eras of 146,097 days starting on March 1st).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let mut s = String::new();
        push_timestamp(&mut s, UNIX_EPOCH);
        assert_eq!(s, "1970-01-01T00:00:00.000Z");
        s.clear();
        // 2000-02-29 (a leap day in a year divisible by 400), 12:34:56.789
        push_timestamp(&mut s, UNIX_EPOCH + Duration::from_millis(951_827_696_789));
        assert_eq!(s, "2000-02-29T12:34:56.789Z");
        s.clear();
        push_timestamp(&mut s, UNIX_EPOCH + Duration::from_secs(1_796_435_587));
        assert_eq!(s, "2026-12-05T01:53:07.000Z");
        s.clear();
        // 2100-03-01: 2100 is not a leap year.
        push_timestamp(&mut s, UNIX_EPOCH + Duration::from_secs(4_107_542_400));
        assert_eq!(s, "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn numbers_are_padded_and_whole() {
        let mut s = String::new();
        for (n, w, want) in [
            (0, 1, "0"),
            (7, 3, "007"),
            (2026, 4, "2026"),
            (123_456, 2, "123456"),
            (u64::MAX, 1, "18446744073709551615"),
        ] {
            s.clear();
            push_num(&mut s, n, w);
            assert_eq!(s, want);
        }
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
}
