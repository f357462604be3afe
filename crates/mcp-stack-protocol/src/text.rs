//! Text from a peer on its way into a log line: the characters that would let it act on a
//! terminal or on the line itself, and one way to escape them.
//!
//! A peer's text (a tool name, a principal, an upstream's server name or error message) may
//! hold control characters that break a line (`\n`), return to its start and overwrite it
//! (`\r`), start a terminal escape sequence (ESC, the C1 controls), or bidirectional controls
//! that reorder what is shown (U+202E RIGHT-TO-LEFT OVERRIDE makes `txt.exe` look like
//! `exe.txt`). [`escape_line`] writes each of them as `\n`, `\r`, `\t` or `\u{..}`, so the
//! line shows what was sent, on one line, in order. Every log line of this SDK that carries a
//! peer's text goes through it (the access log, the proxy's notices about its upstream).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is a bidirectional formatting control: the marks U+061C, U+200E, U+200F, the
/// embeddings and overrides U+202A..U+202E and the isolates U+2066..U+2069.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether `c` must not reach a log line raw: a control character (C0 including `\n`, `\r`
/// and `\t`, DEL, C1), a line or paragraph separator (U+2028, U+2029) or a bidi control.
pub fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_bidi_control(c)
}

/// Appends `c` escaped: `\n`, `\r`, `\t`, else `\u{HEX}`.
pub fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `s` with every character [`needs_escape`] names escaped ([`push_escaped`]); borrowed when
/// there is none. Other text, quotes and backslashes included, is left as it is.
pub fn escape_line(s: &str) -> Cow<'_, str> {
    escape_where(s, needs_escape, push_escaped)
}

/// `s` with every character `needs` names written by `push` (a terminal keeps `\n` and
/// writes ESC as `\x1b`; a log line escapes `\n` too and writes `\u{1b}`); borrowed when
/// there is none.
pub fn escape_where(s: &str, needs: impl Fn(char) -> bool, push: impl Fn(&mut String, char)) -> Cow<'_, str> {
    if !s.chars().any(&needs) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if needs(c) {
            push(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_are_escaped_and_the_rest_kept() {
        assert!(matches!(escape_line("plain \"text\" \\ é 漢"), Cow::Borrowed(_)));
        assert_eq!(escape_line("a\r\nb\tc\u{1b}[2Jd\u{9b}"), "a\\r\\nb\\tc\\u{1b}[2Jd\\u{9b}");
        let bidi = "\u{202e}\u{2066}\u{2067}\u{2068}\u{2069}\u{200e}\u{200f}\u{061c}\u{202a}\u{2028}";
        assert_eq!(
            escape_line(&format!("x{bidi}y")),
            "x\\u{202e}\\u{2066}\\u{2067}\\u{2068}\\u{2069}\\u{200e}\\u{200f}\\u{61c}\\u{202a}\\u{2028}y"
        );
        // The zero-width joiner is no control: emoji sequences stay as they are.
        assert_eq!(escape_line("\u{1f468}\u{200d}\u{1f469}"), "\u{1f468}\u{200d}\u{1f469}");
    }
}
