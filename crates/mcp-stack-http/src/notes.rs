//! The per-call notification queue: what a handler notifies (progress, log messages) waits
//! here until the call's response stream takes it. Handlers notify synchronously, so the queue
//! cannot make them wait; it is bounded instead:
//!
//! - up to [`EndpointConfig::max_queued_notifications`] messages are held;
//! - when full, a progress notification replaces the queued one of the same `progressToken`
//!   (only the latest progress matters), anything else is dropped and counted;
//! - past [`EndpointConfig::max_dropped_notifications`] drops, or when the queue has stayed full
//!   (nothing taken) for [`EndpointConfig::notification_stall`], the call is cancelled: the
//!   handler's cancellation token fires and the response ends with an error.
//!
//! Drops are logged at `warn` on the 1st, 2nd, 4th, 8th... drop of a call (rate-limited).

use crate::config::EndpointConfig;
use parking_lot::{Mutex, MutexGuard};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The bounds of one call's queue (from [`EndpointConfig`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoteLimits {
    cap: usize,
    max_dropped: u64,
    stall: Duration,
}

impl NoteLimits {
    pub(crate) fn of(config: &EndpointConfig) -> Self {
        Self {
            cap: config.max_queued_notifications.max(1),
            max_dropped: config.max_dropped_notifications,
            stall: config.notification_stall,
        }
    }
}

#[derive(Default)]
struct State {
    queue: VecDeque<Value>,
    dropped: u64,
    coalesced: u64,
    /// When a notification first found the queue full since the consumer last took one.
    full_since: Option<Instant>,
    /// The lag budget was exceeded: the call is cancelled, nothing more is queued.
    overflowed: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the consumer: something was queued, or the call overflowed.
    ready: Notify,
    limits: NoteLimits,
    /// The call's cancellation token, fired on overflow.
    cancel: CancellationToken,
}

/// The consuming end of a call's notification queue (the sending end is the handler's
/// [`mcp_server::NotificationSink`]).
pub(crate) struct NoteQueue(Arc<Shared>);

/// The progress token of a progress notification.
fn progress_token(m: &Value) -> Option<&Value> {
    if m.get("method").and_then(Value::as_str) != Some("notifications/progress") {
        return None;
    }
    m.get("params")?.get("progressToken")
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    fn push(&self, m: Value) {
        let mut st = self.lock();
        if st.overflowed {
            return;
        }
        if st.queue.len() < self.limits.cap {
            st.queue.push_back(m);
            drop(st);
            self.ready.notify_one();
            return;
        }
        if let Some(token) = progress_token(&m) {
            if let Some(slot) = st.queue.iter_mut().rev().find(|q| progress_token(q) == Some(token)) {
                *slot = m;
                st.coalesced += 1;
                return;
            }
        }
        st.dropped += 1;
        let now = Instant::now();
        let since = *st.full_since.get_or_insert(now);
        let dropped = st.dropped;
        if dropped > self.limits.max_dropped || now.duration_since(since) >= self.limits.stall {
            st.overflowed = true;
            st.queue = VecDeque::new();
            drop(st);
            tracing::warn!(
                dropped,
                "cancelling a call: its client reads notifications too slowly (lag budget exceeded)"
            );
            self.cancel.cancel();
            self.ready.notify_one();
            return;
        }
        drop(st);
        if dropped.is_power_of_two() {
            tracing::warn!(
                dropped,
                queued = self.limits.cap,
                "dropping a call's notifications: its client reads them too slowly"
            );
        }
    }
}

impl NoteQueue {
    /// A queue for a call cancelled by `cancel`, and the sink its handler notifies into.
    pub(crate) fn new(limits: NoteLimits, cancel: CancellationToken) -> (Self, mcp_server::NotificationSink) {
        let shared = Arc::new(Shared { state: Mutex::default(), ready: Notify::new(), limits, cancel });
        let queue = shared.clone();
        let sink = mcp_server::NotificationSink::new(move |message| queue.push(message));
        (Self(shared), sink)
    }

    /// A copy of the call's cancellation token (fired on overflow).
    pub(crate) fn cancellation(&self) -> CancellationToken {
        self.0.cancel.clone()
    }

    /// The next queued notification, if any.
    pub(crate) fn try_recv(&self) -> Option<Value> {
        let mut st = self.0.lock();
        let m = st.queue.pop_front()?;
        st.full_since = None;
        Some(m)
    }

    /// Whether the call overflowed its lag budget (and was cancelled).
    pub(crate) fn is_overflowed(&self) -> bool {
        self.0.lock().overflowed
    }

    /// The one JSON-or-SSE rule, both eras: a call whose answer is ready goes out as one JSON
    /// body when that answer is all it has to send (nothing queued before it, no overflow);
    /// otherwise as an SSE stream, what is queued first. A modern call's answer is ready when
    /// its handler finished; a legacy call's when the session core has delivered its response
    /// and said the call is over (no server-to-client request before it).
    pub(crate) fn answer_alone(&self) -> bool {
        let st = self.0.lock();
        st.queue.is_empty() && !st.overflowed
    }

    /// The next notification; `None` once the call overflowed its lag budget (it is cancelled:
    /// end its response with [`NoteQueue::overflow_error`]).
    pub(crate) async fn recv(&self) -> Option<Value> {
        loop {
            let ready = self.0.ready.notified();
            let mut ready = std::pin::pin!(ready);
            ready.as_mut().enable();
            {
                let mut st = self.0.lock();
                if st.overflowed {
                    return None;
                }
                if let Some(m) = st.queue.pop_front() {
                    st.full_since = None;
                    return Some(m);
                }
            }
            ready.await;
        }
    }

    /// Resolves once the call overflowed its lag budget (never otherwise).
    pub(crate) async fn overflowed(&self) {
        loop {
            let ready = self.0.ready.notified();
            let mut ready = std::pin::pin!(ready);
            ready.as_mut().enable();
            if self.0.lock().overflowed {
                return;
            }
            ready.await;
        }
    }

    /// The error response ending an overflowed call `id` (`-32603`).
    pub(crate) fn overflow_error(&self, id: &Value) -> Value {
        let dropped = self.0.lock().dropped;
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32603,
                "message": format!(
                    "request cancelled: the client read its notifications too slowly ({dropped} dropped)"
                ),
            },
        })
    }

    /// Notifications dropped so far, and progress notifications replaced by later ones.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (u64, u64, usize) {
        let st = self.0.lock();
        (st.dropped, st.coalesced, st.queue.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(cap: usize, max_dropped: u64) -> NoteLimits {
        NoteLimits { cap, max_dropped, stall: Duration::from_secs(30) }
    }

    fn log(i: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": i}})
    }

    fn progress(token: &str, p: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": p}})
    }

    #[tokio::test]
    async fn a_full_queue_drops_logs_and_keeps_the_latest_progress() {
        let cancel = CancellationToken::new();
        let (q, sink) = NoteQueue::new(limits(4, 1_000_000), cancel.clone());
        sink.send(progress("a", 0));
        for i in 0..200_000 {
            sink.send(log(i));
        }
        sink.send(progress("a", 9));
        let (dropped, coalesced, queued) = q.counts();
        assert_eq!((dropped, coalesced, queued), (200_000 - 3, 1, 4));
        assert_eq!(q.recv().await.unwrap()["params"]["progress"], 9, "the latest progress replaced the first");
        assert_eq!(q.recv().await.unwrap()["params"]["data"], 0);
        assert!(!cancel.is_cancelled());
    }

    #[tokio::test]
    async fn too_many_drops_cancel_the_call() {
        let cancel = CancellationToken::new();
        let (q, sink) = NoteQueue::new(limits(8, 100), cancel.clone());
        for i in 0..200_000 {
            sink.send(log(i));
        }
        assert!(cancel.is_cancelled());
        assert_eq!(q.counts().2, 0, "the queue is emptied once the call is cancelled");
        assert!(q.recv().await.is_none());
        q.overflowed().await;
        assert_eq!(q.overflow_error(&json!(3))["error"]["code"], -32603);
    }

    #[tokio::test(start_paused = true)]
    async fn a_queue_full_for_the_stall_time_cancels_the_call() {
        let cancel = CancellationToken::new();
        let (q, sink) = NoteQueue::new(limits(2, u64::MAX), cancel.clone());
        for i in 0..3 {
            sink.send(log(i));
        }
        tokio::time::advance(Duration::from_secs(20)).await;
        sink.send(log(3));
        assert!(!cancel.is_cancelled(), "full for 20 s of 30");
        // Taking one resets the clock; it starts again when a notification finds it full.
        q.try_recv().unwrap();
        sink.send(log(4));
        sink.send(log(5));
        tokio::time::advance(Duration::from_secs(29)).await;
        sink.send(log(6));
        assert!(!cancel.is_cancelled());
        tokio::time::advance(Duration::from_secs(1)).await;
        sink.send(log(7));
        assert!(cancel.is_cancelled());
    }
}
