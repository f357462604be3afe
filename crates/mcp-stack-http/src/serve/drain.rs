//! The drain at shutdown (see the [module docs](super)): what ends it, and the mark on the
//! responses written during it.

use super::{Response, Table};
use crate::body::McpBody;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

/// How busy the connections are, for the end of a drain.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Activity {
    /// No connection is open.
    None,
    /// A request is in flight, or its head is arriving (within the header timeout), on some
    /// connection.
    Busy,
    /// Every connection is idle, the last one since this instant (nanoseconds since the epoch).
    IdleSince(u64),
}

impl Table {
    /// How busy the open connections are at `now` (nanoseconds since the epoch); a head that
    /// started more than `header` ago no longer counts (its connection is closed as idle).
    pub(super) fn activity(&self, now: u64, header: Duration) -> Activity {
        let g = self.lock();
        let mut last = None;
        for c in g.conns.values() {
            let head = c.head_since.load(Ordering::Acquire);
            let arriving = head != 0 && Duration::from_nanos(now.saturating_sub(head - 1)) < header;
            if c.in_flight.load(Ordering::Acquire) != 0 || arriving {
                return Activity::Busy;
            }
            last = last.max(Some(c.idle_since.load(Ordering::Relaxed)));
        }
        last.map_or(Activity::None, Activity::IdleSince)
    }

    /// Waits for the quiet end of a drain that started at `start` (nanoseconds since the
    /// epoch): no connection left, or none busy for `grace` (counted from `start` at the
    /// earliest); or until `deadline`.
    pub(super) async fn quiet(&self, start: u64, (grace, header): (Duration, Duration), deadline: Instant) {
        /// How often a busy table is looked at again.
        const BUSY_POLL: Duration = Duration::from_millis(20);
        loop {
            let wait = match self.activity(self.now_ns(), header) {
                Activity::None => return,
                Activity::Busy => BUSY_POLL,
                Activity::IdleSince(since) => {
                    let quiet = Duration::from_nanos(self.now_ns().saturating_sub(since.max(start)));
                    match grace.checked_sub(quiet) {
                        Some(left) if !left.is_zero() => left,
                        _ => return,
                    }
                }
            };
            let at = (Instant::now() + wait).min(deadline);
            tokio::time::sleep_until(at).await;
            if at >= deadline {
                return;
            }
        }
    }
}

/// What ends a connection at shutdown.
pub(super) struct Shutdown {
    /// The server shuts down: the drain starts.
    pub(super) started: tokio_util::sync::CancellationToken,
    /// The drain's quiet end: the idle connections close.
    pub(super) quiet: tokio_util::sync::CancellationToken,
    /// The drain's bound: the connections still open are dropped.
    pub(super) abort: tokio_util::sync::CancellationToken,
}

/// Marks `resp` as the last on its connection (`Connection: close`: hyper closes the connection
/// once it is written) when the server drains.
pub(super) fn close_if(draining: &tokio_util::sync::CancellationToken, resp: &mut Response<McpBody>) {
    if draining.is_cancelled() {
        resp.headers_mut().insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
    }
}
