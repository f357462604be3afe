//! The response body: a complete buffer, or an SSE stream fed by a channel.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// Response body of the MCP endpoint.
#[derive(Debug)]
pub enum McpBody {
    /// A whole body (JSON or empty).
    Full(Option<Bytes>),
    /// An SSE stream; dropping it tells the producer the client went away.
    Stream(mpsc::Receiver<Bytes>),
}

impl McpBody {
    /// An empty body.
    pub fn empty() -> Self {
        Self::Full(None)
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            McpBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            McpBody::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, McpBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            McpBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            McpBody::Full(None) => SizeHint::with_exact(0),
            McpBody::Stream(_) => SizeHint::default(),
        }
    }
}

/// Frames an already serialized JSON message as an SSE `message` event.
pub(crate) fn sse_event_bytes(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// Frames one JSON message as an SSE `message` event.
pub(crate) fn sse_event(msg: &serde_json::Value) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"event: message\ndata: ");
    serde_json::to_writer(&mut out, msg).expect("JSON serializes");
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}
