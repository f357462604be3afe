//! The HTTP transport's parsers of what a server sends, without a network, for
//! [`crate::__fuzz`].

use super::stream::{dispatch, Flow};
use super::{adopt, error_answer, is_response_to, parse_messages};
use crate::error::TransportError;
use mcp_protocol::sse::SseParser;
use serde_json::Value;

/// A JSON answer to request `id`: its messages, as the exchange gets them.
pub(crate) fn json_body(body: &[u8], id: &Value) -> Result<Vec<Value>, TransportError> {
    Ok(parse_messages(body)?.into_iter().map(|m| adopt(m, id)).collect())
}

/// An SSE answer to request `id` arriving in `chunks`: the messages delivered, up to the
/// response to `id` (where the transport stops reading).
pub(crate) fn sse_body(chunks: &[&[u8]], id: &Value, max_event_bytes: usize) -> Result<Vec<Value>, TransportError> {
    let mut parser = SseParser::new(max_event_bytes.max(1));
    let mut out = Vec::new();
    for chunk in chunks {
        let events = parser.feed(chunk).map_err(|e| TransportError::Malformed(e.to_string()))?;
        for ev in &events {
            let mut deliver = |m: Value| {
                let done = is_response_to(&m, id);
                out.push(m);
                if done {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            };
            if let Flow::Stop = dispatch(ev, &mut deliver)? {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// A 4xx/5xx answer to request `id`: the JSON-RPC error it carries, or the transport error.
pub(crate) fn error_body(
    status: u16,
    www_authenticate: Option<&str>,
    body: &[u8],
    in_session: bool,
    id: &Value,
) -> Result<Value, TransportError> {
    error_answer(status, www_authenticate.map(str::to_owned), body, in_session, Some(id))
}
