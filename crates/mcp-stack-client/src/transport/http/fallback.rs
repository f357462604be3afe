//! The deprecated HTTP+SSE transport (2024-11-05): a GET stream whose first event, `endpoint`,
//! names the URL to POST messages to; every message from the server arrives on that stream.

use super::redirect::same_origin;
use super::stream::{dispatch, is_event_stream, pump, End, Flow};
use super::Inner;
use crate::error::TransportError;
use crate::transport::{Exchange, OutgoingRequest};
use bytes::Bytes;
use futures::{Stream, StreamExt};
use http::Method;
use mcp_protocol::sse::{SseEvent, SseParser};
use mcp_protocol::types::RequestId;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// How long to wait for the `endpoint` event when no request timeout is set.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(30);

/// Opens the GET stream, waits for the `endpoint` event and switches the transport to it.
pub(super) async fn open(inner: &Arc<Inner>) -> Result<(), TransportError> {
    inner.check_open()?;
    if inner.lock().endpoint.is_some() {
        return Ok(());
    }
    let extra = [("accept".to_owned(), "text/event-stream".to_owned())];
    let extra = inner.with_auth(&Method::GET, &inner.url, &extra).await?;
    let resp = inner.execute(|| inner.builder(Method::GET, inner.url.clone(), &extra, false), true).await?;
    if !resp.status().is_success() {
        return Err(inner
            .failure(resp, None)
            .await
            .err()
            .unwrap_or(TransportError::Closed("HTTP+SSE GET failed".into())));
    }
    if !is_event_stream(resp.headers()) {
        return Err(TransportError::Malformed("the HTTP+SSE endpoint did not answer GET with an event stream".into()));
    }
    let mut body = Box::pin(resp.bytes_stream());
    let mut parser = SseParser::new(inner.max_event_bytes);
    let first = async {
        loop {
            match body.next().await {
                None => return Err(TransportError::Closed("the SSE stream ended before its endpoint event".into())),
                Some(Err(e)) => return Err(e),
                Some(Ok(bytes)) => {
                    let events = parser.feed(&bytes).map_err(|e| TransportError::Malformed(e.to_string()))?;
                    if !events.is_empty() {
                        return Ok(events);
                    }
                }
            }
        }
    };
    let mut events = tokio::time::timeout(inner.request_timeout.unwrap_or(ENDPOINT_TIMEOUT), first)
        .await
        .map_err(|_| TransportError::Timeout)??
        .into_iter();
    let ev = events.next().expect("at least one event");
    if ev.event != "endpoint" {
        return Err(TransportError::Malformed(format!(
            "expected an `endpoint` event first on the SSE stream, got {:?}",
            ev.event
        )));
    }
    let endpoint = inner
        .url
        .join(ev.data.trim())
        .map_err(|e| TransportError::Malformed(format!("invalid endpoint URL in the SSE stream: {e}")))?;
    if !same_origin(&endpoint, &inner.url) {
        return Err(TransportError::Malformed("the SSE endpoint event names a URL on another origin".into()));
    }
    tracing::debug!(endpoint = %super::display_url(&endpoint), "using the deprecated HTTP+SSE transport");
    let rest: Vec<SseEvent> = events.collect();
    {
        let mut st = inner.lock();
        st.endpoint = Some(endpoint);
        st.session_id = None;
    }
    let task = tokio::spawn(read(inner.clone(), rest, body, parser));
    inner.track(task.abort_handle());
    Ok(())
}

/// Routes everything the GET stream carries; when it ends, so does the transport.
async fn read<S>(inner: Arc<Inner>, rest: Vec<SseEvent>, body: S, mut parser: SseParser)
where
    S: Stream<Item = Result<bytes::Bytes, TransportError>>,
{
    let mut deliver = |m: Value| {
        inner.route(m);
        Flow::Continue
    };
    for ev in &rest {
        if let Err(e) = dispatch(ev, &mut deliver) {
            tracing::warn!(error = %e, "abandoning the HTTP+SSE stream");
            inner.fail_all(&e.to_string());
            return;
        }
    }
    let why = match pump(body, &mut parser, deliver, std::future::pending()).await {
        End::Stopped | End::Ended => "the server closed the SSE stream".to_owned(),
        End::Broken(e) | End::Fatal(e) => format!("the SSE stream failed: {e}"),
    };
    inner.fail_all(&why);
}

/// Removes a pending entry unless disarmed (the request future may be dropped mid-POST).
struct PendingGuard<'a> {
    inner: &'a Inner,
    key: Option<RequestId>,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Some(k) = self.key.take() {
            self.inner.lock().pending.remove(&k);
        }
    }
}

/// POSTs a request to the endpoint; its messages arrive on the GET stream.
pub(super) async fn request(
    inner: &Arc<Inner>,
    endpoint: Url,
    req: OutgoingRequest<'_>,
) -> Result<Exchange, TransportError> {
    let (id, k, initialize) = (req.id().clone(), req.key(), req.is_initialize());
    let body = Bytes::from(req.to_json()?);
    let headers = req.headers;
    let (tx, exchange) = Exchange::split();
    inner.lock().pending.insert(k.clone(), tx);
    let mut guard = PendingGuard { inner, key: Some(k.clone()) };
    let resp = inner.post_authorized(endpoint, &headers, body).await?;
    if !resp.status().is_success() {
        let m = inner.failure(resp, Some(&id)).await?;
        return Ok(Exchange::ready([m]));
    }
    drop(resp);
    guard.key = None;
    let inner = inner.clone();
    Ok(exchange.on_cancel(move || {
        let was_pending = inner.lock().pending.remove(&k).is_some();
        if was_pending && !initialize {
            inner.notify_cancelled(id, headers);
        }
    }))
}
