//! A sans-IO Server-Sent Events parser (the `text/event-stream` format of the WHATWG spec).
//!
//! Feed it bytes as they arrive; it yields complete events. Comment lines (`:` keep-alives)
//! are ignored, `retry:` and `id:` are tracked, and CR, LF and CRLF line ends are accepted.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// `event:` field (empty means `message`).
    pub event: String,
    /// Concatenated `data:` lines, joined with `\n`.
    pub data: String,
    /// The last event id seen so far on the stream (`id:` field), if any.
    pub id: Option<String>,
}

/// Incremental SSE parser.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    last_id: Option<String>,
    retry_ms: Option<u64>,
    max_event_bytes: usize,
    skip_lf: bool,
}

/// The event was larger than the parser's limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SSE event exceeds {0} bytes")]
pub struct SseTooLarge(pub usize);

impl SseParser {
    /// A parser that refuses events larger than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        Self { max_event_bytes, ..Self::default() }
    }

    /// The last `retry:` value, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// The last event id (for `Last-Event-ID` on reconnection).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, SseTooLarge> {
        let mut out = Vec::new();
        if self.skip_lf {
            if let [b'\n', rest @ ..] = bytes {
                bytes = rest;
            }
            self.skip_lf = false;
        }
        while let Some(pos) = bytes.iter().position(|b| *b == b'\n' || *b == b'\r') {
            let cr = bytes[pos] == b'\r';
            self.buf.extend_from_slice(&bytes[..pos]);
            bytes = &bytes[pos + 1..];
            if cr {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    None => self.skip_lf = true,
                    _ => {}
                }
            }
            let line = std::mem::take(&mut self.buf);
            if let Some(ev) = self.line(&line) {
                out.push(ev);
            }
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() + self.data.len() > self.max_event_bytes.max(1) && self.max_event_bytes > 0 {
            return Err(SseTooLarge(self.max_event_bytes));
        }
        Ok(out)
    }

    fn line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            if !self.has_data {
                self.event.clear();
                return None;
            }
            self.has_data = false;
            let mut data = std::mem::take(&mut self.data);
            if data.ends_with('\n') {
                data.pop();
            }
            return Some(SseEvent { event: std::mem::take(&mut self.event), data, id: self.last_id.clone() });
        }
        if line[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f.to_owned(), v.strip_prefix(' ').unwrap_or(v).to_owned()),
            None => (text.into_owned(), String::new()),
        };
        match field.as_str() {
            "data" => {
                self.data.push_str(&value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = value,
            "id" if !value.contains('\0') => self.last_id = Some(value),
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.retry_ms = Some(ms);
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_split_anywhere() {
        let stream = b": keep-alive\n\nevent: message\nid: 7\nretry: 1500\ndata: {\"a\":\ndata: 1}\n\ndata: x\r\n\r\n";
        for split in 0..stream.len() {
            let mut p = SseParser::new(1 << 20);
            let mut evs = p.feed(&stream[..split]).unwrap();
            evs.extend(p.feed(&stream[split..]).unwrap());
            assert_eq!(evs.len(), 2, "split at {split}");
            assert_eq!(evs[0], SseEvent { event: "message".into(), data: "{\"a\":\n1}".into(), id: Some("7".into()) });
            assert_eq!(evs[1].data, "x");
            assert_eq!(p.retry_ms(), Some(1500));
            assert_eq!(p.last_event_id(), Some("7"));
        }
    }

    #[test]
    fn bounds_event_size() {
        let mut p = SseParser::new(16);
        assert!(p.feed(&[b'x'; 64]).is_err());
    }
}
