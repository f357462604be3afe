//! Response bodies: JSON, SSE streams with `Last-Event-ID` resumption, and the standalone GET
//! stream of legacy sessions.

use super::wire::Resp;
use super::{is_response_to, mime, parse_messages, Inner, Route};
use crate::error::TransportError;
use futures::{Stream, StreamExt};
use http::header::HeaderMap;
use http::{Method, StatusCode};
use mcp_protocol::sse::{SseEvent, SseParser};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Reconnection attempts in a row without receiving anything.
pub(super) const MAX_RESUME_ATTEMPTS: u32 = 5;
/// The wait before reconnecting when the server gave no `retry:`.
const DEFAULT_RETRY_MS: u64 = 1000;
/// Longest `retry:` honoured.
const MAX_RETRY_MS: u64 = 3_600_000;

/// What the consumer of a stream wants after a message.
pub(super) enum Flow {
    Continue,
    Stop,
}

/// How a stream pump ended.
pub(super) enum End {
    /// The consumer stopped (response received, or nobody listens any more).
    Stopped,
    /// The server ended the body.
    Ended,
    /// The connection broke.
    Broken(TransportError),
    /// The stream is unusable (oversized event, invalid JSON).
    Fatal(TransportError),
}

/// Feeds one SSE event's messages to `deliver`. Comments never reach here; events with empty
/// data (priming events) and events of other types are skipped.
pub(super) fn dispatch<F: FnMut(Value) -> Flow>(ev: &SseEvent, deliver: &mut F) -> Result<Flow, TransportError> {
    if ev.data.trim().is_empty() {
        return Ok(Flow::Continue);
    }
    if !(ev.event.is_empty() || ev.event == "message") {
        tracing::debug!(event = %ev.event, "ignoring an SSE event of another type");
        return Ok(Flow::Continue);
    }
    for m in parse_messages(ev.data.as_bytes())? {
        if let Flow::Stop = deliver(m) {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// Reads an SSE body until it ends, breaks, `deliver` says stop, or `stop` resolves.
pub(super) async fn pump<S, B, F>(
    body: S,
    parser: &mut SseParser,
    mut deliver: F,
    stop: impl Future<Output = ()>,
) -> End
where
    S: Stream<Item = Result<B, TransportError>>,
    B: AsRef<[u8]>,
    F: FnMut(Value) -> Flow,
{
    let body = std::pin::pin!(body);
    let mut body = body;
    let mut stop = std::pin::pin!(stop);
    loop {
        let chunk = tokio::select! {
            biased;
            () = &mut stop => return End::Stopped,
            c = body.next() => c,
        };
        let bytes = match chunk {
            None => return End::Ended,
            Some(Err(e)) => return End::Broken(e),
            Some(Ok(b)) => b,
        };
        let events = match parser.feed(bytes.as_ref()) {
            Ok(evs) => evs,
            Err(e) => return End::Fatal(TransportError::Malformed(e.to_string())),
        };
        for ev in &events {
            match dispatch(ev, &mut deliver) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Stop) => return End::Stopped,
                Err(e) => return End::Fatal(e),
            }
        }
    }
}

/// Tracks `id:` and `retry:` across the successive connections of one logical stream.
#[derive(Default)]
struct Resume {
    last_id: Option<String>,
    retry_ms: Option<u64>,
}

impl Resume {
    fn update(&mut self, parser: &SseParser) {
        if let Some(id) = parser.last_event_id() {
            // An empty `id:` resets the last event id.
            self.last_id = (!id.is_empty()).then(|| id.to_owned());
        }
        if let Some(ms) = parser.retry_ms() {
            self.retry_ms = Some(ms);
        }
    }

    fn wait(&self) -> Duration {
        Duration::from_millis(self.retry_ms.unwrap_or(DEFAULT_RETRY_MS).min(MAX_RETRY_MS))
    }
}

/// Delivers an SSE answer to a request into its exchange, resuming the stream when it breaks.
pub(super) async fn deliver(inner: Arc<Inner>, resp: Resp, id: Value, get_headers: Vec<(String, String)>, tx: Route) {
    let mut resume = Resume::default();
    let mut attempts = 0;
    let mut resp = resp;
    loop {
        let mut parser = SseParser::new(inner.max_event_bytes);
        let mut progressed = false;
        let mut response = None;
        let end = pump(
            resp.bytes_stream(),
            &mut parser,
            |m| {
                if is_response_to(&m, &id) {
                    response = Some(m);
                    return Flow::Stop;
                }
                // A caller that lets its queue fill loses notifications, never the response.
                match tx.try_send(Ok(m)) {
                    Ok(()) => {}
                    Err(mpsc::error::TrySendError::Full(Ok(m))) => {
                        crate::transport::note_dropped();
                        // A server request (legacy sessions) is answered, not left waiting.
                        let why = "the client is busy: too many messages are queued for this request";
                        if let Some(reply) = crate::transport::refusal(&m, why) {
                            inner.refuse(reply);
                        }
                    }
                    Err(mpsc::error::TrySendError::Full(Err(_))) => crate::transport::note_dropped(),
                    Err(mpsc::error::TrySendError::Closed(_)) => return Flow::Stop,
                }
                progressed = true;
                Flow::Continue
            },
            tx.closed(),
        )
        .await;
        if let Some(m) = response {
            let _ = tx.send(Ok(m)).await;
            return;
        }
        resume.update(&parser);
        if progressed {
            attempts = 0;
        }
        let broken = match end {
            End::Stopped => return,
            End::Fatal(e) => {
                let _ = tx.send(Err(e)).await;
                return;
            }
            End::Ended => None,
            End::Broken(e) => Some(e),
        };
        let Some(last_id) = resume.last_id.clone() else {
            // Not resumable: a break is an error; a clean end leaves the exchange empty-handed.
            if let Some(e) = broken {
                let _ = tx.send(Err(e)).await;
            }
            return;
        };
        tracing::debug!(last_event_id = %last_id, "the response stream ended early; resuming it");
        match reconnect(&inner, &resume, &last_id, &get_headers, &tx, &mut attempts).await {
            Some(r) => resp = r,
            None => return,
        }
    }
}

/// Waits the server's `retry:` delay and re-opens the stream with GET + `Last-Event-ID`, within
/// [`MAX_RESUME_ATTEMPTS`]. `None` when the exchange is over (an error was delivered, or nobody
/// listens any more).
async fn reconnect(
    inner: &Inner,
    resume: &Resume,
    last_id: &str,
    headers: &[(String, String)],
    tx: &Route,
    attempts: &mut u32,
) -> Option<Resp> {
    loop {
        if *attempts >= MAX_RESUME_ATTEMPTS {
            let why = format!("the response stream broke and {MAX_RESUME_ATTEMPTS} attempts to resume it failed");
            let _ = tx.send(Err(TransportError::Closed(why))).await;
            return None;
        }
        *attempts += 1;
        let attempt = async {
            tokio::time::sleep(resume.wait()).await;
            inner.open_event_stream(Some(last_id), headers).await
        };
        let result = tokio::select! {
            () = tx.closed() => return None,
            r = attempt => r,
        };
        match result {
            Ok(resp) => return Some(resp),
            Err(GetError::Retry(e)) => {
                tracing::debug!(error = %e, "resuming the response stream failed")
            }
            Err(GetError::Fatal(e)) => {
                let _ = tx.send(Err(e)).await;
                return None;
            }
        }
    }
}

/// Why a GET for an event stream failed.
pub(super) enum GetError {
    /// Worth trying again (connection trouble, 429, 5xx).
    Retry(TransportError),
    /// Not worth trying again.
    Fatal(TransportError),
}

impl Inner {
    /// GET on the MCP endpoint for an event stream (`Last-Event-ID` when resuming), with the
    /// session id and `headers` (the protocol version).
    pub(super) async fn open_event_stream(
        &self,
        last_id: Option<&str>,
        headers: &[(String, String)],
    ) -> Result<Resp, GetError> {
        let mut extra = headers.to_vec();
        extra.push(("accept".into(), "text/event-stream".into()));
        if let Some(id) = last_id {
            extra.push(("last-event-id".into(), id.to_owned()));
        }
        let extra = self.with_auth(&Method::GET, &self.url, &extra).await.map_err(GetError::Fatal)?;
        let get = || self.builder(Method::GET, self.url.clone(), &extra, true);
        let resp = self.execute(get, true).await.map_err(|e| match e {
            // A request that cannot be built (bad header): not worth a retry.
            e @ TransportError::Malformed(_) => GetError::Fatal(e),
            e => GetError::Retry(e),
        })?;
        let status = resp.status();
        if status.is_success() {
            return match mime(resp.headers()).as_str() {
                "text/event-stream" => Ok(resp),
                other => Err(GetError::Fatal(TransportError::Malformed(format!(
                    "the server answered GET with Content-Type {other:?}"
                )))),
            };
        }
        let retry = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
        let e = self.failure(resp, None).await.err().unwrap_or(TransportError::Http {
            status: status.as_u16(),
            body: String::new(),
            www_authenticate: None,
        });
        Err(if retry { GetError::Retry(e) } else { GetError::Fatal(e) })
    }
}

/// The standalone GET stream of a legacy session: server requests and notifications go to the
/// unsolicited channel. Re-opened (resuming if it had event ids) when the server ends it;
/// abandoned on 405 (no such stream), any other refusal, or repeated empty connections.
pub(super) async fn standalone(
    inner: Arc<Inner>,
    headers: Vec<(String, String)>,
    ready: tokio::sync::oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    let mut resume = Resume::default();
    let mut failures = 0;
    loop {
        let opened = inner.open_event_stream(resume.last_id.as_deref(), &headers).await;
        if let Some(r) = ready.take() {
            let _ = r.send(());
        }
        let resp = match opened {
            Ok(r) => Some(r),
            Err(GetError::Fatal(TransportError::Http { status: 405, .. })) => {
                tracing::debug!("the server offers no standalone event stream");
                return;
            }
            Err(GetError::Fatal(e)) => {
                tracing::debug!(error = %e, "could not open the standalone event stream");
                return;
            }
            Err(GetError::Retry(e)) => {
                tracing::debug!(error = %e, "opening the standalone event stream failed");
                None
            }
        };
        let mut progressed = false;
        if let Some(resp) = resp {
            let mut parser = SseParser::new(inner.max_event_bytes);
            let end = pump(
                resp.bytes_stream(),
                &mut parser,
                |m| {
                    progressed = true;
                    inner.route(m);
                    Flow::Continue
                },
                std::future::pending(),
            )
            .await;
            resume.update(&parser);
            if let End::Fatal(e) = end {
                tracing::warn!(error = %e, "abandoning the standalone event stream");
                return;
            }
        }
        failures = if progressed { 0 } else { failures + 1 };
        if failures >= MAX_RESUME_ATTEMPTS || inner.check_open().is_err() {
            return;
        }
        tokio::time::sleep(resume.wait()).await;
    }
}

/// Whether a response's head says it is an event stream.
pub(super) fn is_event_stream(headers: &HeaderMap) -> bool {
    mime(headers) == "text/event-stream"
}
