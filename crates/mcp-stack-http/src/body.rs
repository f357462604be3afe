//! The response body: a complete buffer, or an SSE stream fed by a channel; either may own the
//! finished call it answers, which goes when the body does.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use mcp_session::Call;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// Response body of the MCP endpoint.
///
/// A body that answers a call owns the finished call (its handler future and what that holds:
/// the request, its context, the environment with the HTTP head). hyper drops a body once its
/// last frame is written, so the call is freed after its answer is on its way, under
/// [`crate::serve`] and under any other server (axum) alike.
#[derive(Debug)]
pub struct McpBody {
    kind: Kind,
    /// The call this body answers, kept only to be dropped with the body (a mutex so that the
    /// body stays `Sync`; it is never locked).
    _call: Option<Mutex<Call>>,
}

#[derive(Debug)]
enum Kind {
    /// A whole body (JSON or empty), until it is taken.
    Full(Option<Bytes>),
    /// An SSE stream; dropping it tells the producer the client went away.
    Stream(mpsc::Receiver<Bytes>),
}

impl McpBody {
    /// An empty body.
    pub fn empty() -> Self {
        Self { kind: Kind::Full(None), _call: None }
    }

    /// A whole body.
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        Self { kind: Kind::Full(Some(bytes.into())), _call: None }
    }

    /// An SSE stream fed by `rx`.
    pub(crate) fn stream(rx: mpsc::Receiver<Bytes>) -> Self {
        Self { kind: Kind::Stream(rx), _call: None }
    }

    /// This body, owning the finished `call` it answers.
    pub(crate) fn owning(mut self, call: Call) -> Self {
        self._call = Some(Mutex::new(call));
        self
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Stream(_) => SizeHint::default(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// Sets its flag when dropped.
    #[derive(Clone)]
    struct Dropped(std::sync::Arc<std::sync::atomic::AtomicBool>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn a_body_owns_the_call_it_answers_and_frees_it_when_it_goes() {
        use mcp_server::{Args, Tool};
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let held = flag.clone();
        let tool = Tool::new("hold").handler(move |Args(_): Args<serde_json::Value>| {
            let guard = Dropped(held.clone());
            async move {
                let _guard = guard;
                std::future::pending::<String>().await
            }
        });
        let server = mcp_server::Server::builder("t", "1").tool(tool).build().unwrap();
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","arguments":{},
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let Ok(mcp_protocol::jsonrpc::Incoming::Request(request)) = mcp_protocol::jsonrpc::parse_incoming(line, 64)
        else {
            panic!("a request")
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let mcp_session::Event::Call(mut call) = mcp_session::Session::route(request, cancel) else { panic!("a call") };
        call.start(&server, mcp_server::RequestEnv::default());
        assert!(futures::poll!(&mut call).is_pending(), "the handler holds its guard and waits");
        let body = McpBody::full(&b"{}"[..]).owning(call);
        assert!(!flag.load(std::sync::atomic::Ordering::SeqCst), "the call lives in the body");
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], b"{}");
        assert!(flag.load(std::sync::atomic::Ordering::SeqCst), "and goes with it, once its last frame is out");
    }
}
