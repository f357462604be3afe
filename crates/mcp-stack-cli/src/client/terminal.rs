//! Terminal safety: text a server supplies (names, titles, descriptions, results, errors, log
//! lines, elicitation messages, server info...) may carry control characters and escape
//! sequences that a terminal would act on: an OSC 52 clipboard write, a title change, erasing
//! lines, moving the cursor, or bidi overrides that reorder what is shown. On a terminal they
//! are shown escaped instead (`\x1b`, `\u{9b}`, `\u{202e}`); `--json` output and output to a
//! pipe or file keep the raw bytes.
//!
//! Everything written through [`Stream`](super::render::Stream) goes through [`clean`], which
//! escapes, on a terminal, every C0 control character except `\n` and `\t`, DEL, the C1
//! controls U+0080..U+009F, and the bidi controls (U+061C, U+200E, U+200F, U+202A..U+202E,
//! U+2066..U+2069), and lets
//! through only the SGR sequences (`ESC [ ... m`) of this tool's own styling: reset, bold, dim,
//! underline, and red/green/yellow text (server text may use those too, harmlessly: none hides
//! text, moves the cursor or sets a background). Table cells are escaped whole before layout. `MCP_ESCAPE=always|never|auto` (default `auto`: when the stream is a
//! terminal) forces either way.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

/// When escaping applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// When the stream is a terminal.
    Auto,
    /// Always (testing).
    Always,
    /// Never.
    Never,
}

/// `MCP_ESCAPE`, read once.
pub(super) fn mode() -> Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    *MODE.get_or_init(|| match std::env::var("MCP_ESCAPE").as_deref() {
        Ok("always") | Ok("1") => Mode::Always,
        Ok("never") | Ok("0") => Mode::Never,
        _ => Mode::Auto,
    })
}

/// Whether text written to stdout is escaped.
pub(super) fn stdout_escapes() -> bool {
    applies(std::io::stdout().is_terminal())
}

/// Whether text written to stderr is escaped.
pub(super) fn stderr_escapes() -> bool {
    applies(std::io::stderr().is_terminal())
}

fn applies(tty: bool) -> bool {
    match mode() {
        Mode::Auto => tty,
        Mode::Always => true,
        Mode::Never => false,
    }
}

/// Whether `c` must not reach a terminal raw (the bidi controls as the SDK's log lines name
/// them: `mcp_protocol::text`).
fn dangerous(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
        || mcp::server::mcp_protocol::text::is_bidi_control(c)
}

fn push_escaped(out: &mut String, c: char) {
    let n = c as u32;
    if n < 0x80 {
        out.push_str(&format!("\\x{n:02x}"));
    } else {
        out.push_str(&format!("\\u{{{n:x}}}"));
    }
}

/// `s` with every dangerous character escaped (always; see [`clean`] for the terminal check).
pub(super) fn escape(s: &str) -> Cow<'_, str> {
    mcp::server::mcp_protocol::text::escape_where(s, dangerous, push_escaped)
}

/// The SGR parameters this tool's own styling uses (reset, bold, dim, underline, their resets,
/// and the red/green/yellow of `mcp doctor`): an `ESC [ ... m` made of these only is let
/// through. None of them hides text, moves the cursor or sets a background.
fn own_sgr(params: &str) -> bool {
    params
        .split(';')
        .all(|p| p.is_empty() || matches!(p.parse::<u8>(), Ok(0 | 1 | 2 | 4 | 22 | 24 | 31 | 32 | 33 | 39)))
}

/// [`escape`], letting through the plain SGR sequences of this tool's own styling.
pub(super) fn escape_styled(s: &str) -> Cow<'_, str> {
    if !s.chars().any(dangerous) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}' {
            if let Some(body) = rest.strip_prefix("\u{1b}[") {
                let end = body.find(|ch: char| !(ch.is_ascii_digit() || ch == ';'));
                if let Some(e) = end.filter(|&e| e <= 16 && body[e..].starts_with('m')) {
                    if own_sgr(&body[..e]) {
                        out.push_str(&rest[..2 + e + 1]);
                        rest = &rest[2 + e + 1..];
                        continue;
                    }
                }
            }
        }
        if dangerous(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Server text bound for stderr: escaped when stderr escapes.
pub(super) fn err(s: &str) -> Cow<'_, str> {
    if stderr_escapes() {
        escape(s)
    } else {
        Cow::Borrowed(s)
    }
}

/// Anything bound for a stream (this tool's styling kept), escaped when that stream escapes.
pub(super) fn clean(s: &str, escapes: bool) -> Cow<'_, str> {
    if escapes {
        escape_styled(s)
    } else {
        Cow::Borrowed(s)
    }
}

/// A writer to stderr that escapes what it is given (line by line, so that an escape sequence
/// split over several writes is still seen whole) when stderr escapes.
pub(super) struct ErrWriter {
    buf: Vec<u8>,
    escapes: bool,
}

/// The most bytes buffered before a partial line is written out anyway.
const MAX_LINE: usize = 64 * 1024;

impl ErrWriter {
    /// A writer to stderr.
    pub(super) fn new() -> Self {
        Self { buf: Vec::new(), escapes: stderr_escapes() }
    }

    fn emit(&mut self, upto: usize) -> std::io::Result<()> {
        let chunk: Vec<u8> = self.buf.drain(..upto).collect();
        let text = String::from_utf8_lossy(&chunk);
        std::io::stderr().lock().write_all(clean(&text, self.escapes).as_bytes())
    }
}

impl Write for ErrWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if let Some(i) = self.buf.iter().rposition(|&b| b == b'\n') {
            self.emit(i + 1)?;
        } else if self.buf.len() > MAX_LINE {
            self.emit(self.buf.len())?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.emit(self.buf.len())?;
        }
        std::io::stderr().flush()
    }
}

impl Drop for ErrWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_keeps_own_styling() {
        let evil = "a\u{1b}]52;c;aGk=\u{7}b\u{1b}]0;title\u{7}\u{1b}[2K\r\u{9b}31m\u{202e}x\u{2066}\u{7f}\u{0}";
        let e = escape(evil);
        assert_eq!(e, "a\\x1b]52;c;aGk=\\x07b\\x1b]0;title\\x07\\x1b[2K\\x0d\\u{9b}31m\\u{202e}x\\u{2066}\\x7f\\x00");
        assert_eq!(escape("plain\tand\nlines — ünïcode"), "plain\tand\nlines — ünïcode");
        assert!(matches!(escape("ok"), Cow::Borrowed(_)));
        let styled = format!("{} {}", console::style("b").bold().force_styling(true), "\u{1b}[8mhidden\u{1b}[2J");
        let c = escape_styled(&styled);
        assert!(c.starts_with("\u{1b}[1mb\u{1b}[0m "), "{c:?}");
        assert!(c.ends_with("\\x1b[8mhidden\\x1b[2J"), "{c:?}");
    }

    #[test]
    fn err_writer_buffers_lines() {
        // Only the buffering logic: the output goes to stderr.
        let mut w = ErrWriter { buf: Vec::new(), escapes: true };
        w.write_all(b"\x1b").unwrap();
        assert_eq!(w.buf, b"\x1b");
        w.write_all(b"[1mx\n").unwrap();
        assert!(w.buf.is_empty());
    }
}
