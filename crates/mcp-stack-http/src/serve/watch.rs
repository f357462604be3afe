//! Watching a connection for the reasons to close it (shutdown, eviction, the idle and header
//! timeouts) without polling those conditions on every request.
//!
//! A `select!` over the connection and its conditions polls every branch each time the task
//! wakes, so each request paid for three needless polls (a cancellation token, a `Notify` and a
//! timer). [`first`] polls the watcher only when one of its own wakers fired.

use super::{Conn, Table};
use futures::future::Either;
use futures::task::AtomicWaker;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Why a connection stops being served.
pub(super) enum Stop {
    /// At once: the connection is dropped (a request head that did not complete in time).
    Now,
    /// Gracefully (the request in flight finishes), within this bound: evicted, or idle too
    /// long.
    Graceful(Duration),
    /// The server drains: the connection is served on until the drain ends.
    Drain,
}

/// The connection's limits.
pub(super) struct Timeouts {
    pub(super) header: Duration,
    pub(super) idle: Duration,
}

/// Resolves when the connection should stop: the server shuts down, the table evicts it, its
/// request head is not complete within `t.header`, or it sat idle for `t.idle`.
pub(super) async fn watch(
    conn: &Conn,
    table: &Table,
    shutdown: &CancellationToken,
    t: Timeouts,
    peer: SocketAddr,
) -> Stop {
    // A head may start at any moment without waking this watcher, so it looks at least this
    // often; once it has seen one start, it wakes at that head's deadline (the timeout is exact).
    let period = t.idle.min(t.header);
    let check = tokio::time::sleep(period);
    let mut check = std::pin::pin!(check);
    loop {
        tokio::select! {
            // Shutdown: served on through the drain (bounded by the drain time).
            _ = shutdown.cancelled() => return Stop::Drain,
            _ = conn.evict.notified() => return Stop::Graceful(Duration::from_secs(1)),
            _ = check.as_mut() => {
                let (since, now) = (conn.idle_since.load(Ordering::Relaxed), table.now_ns());
                let head = conn.head_since.load(Ordering::Acquire);
                let head_for = Duration::from_nanos(now.saturating_sub(head.saturating_sub(1)));
                if head != 0 && head_for >= t.header {
                    tracing::debug!(%peer, "request head not complete within the header timeout: connection closed");
                    return Stop::Now;
                }
                let idle = conn.is_idle(now);
                let idle_for = Duration::from_nanos(now.saturating_sub(since));
                if idle && idle_for >= t.idle {
                    return Stop::Graceful(Duration::from_secs(1));
                }
                let wait = match (head != 0, idle) {
                    (true, _) => t.header - head_for,
                    (false, true) => (t.idle - idle_for).min(period),
                    (false, false) => period,
                };
                check.as_mut().reset(Instant::now() + wait);
            }
        }
    }
}

/// Whether the side future's wakers fired, and the task to wake when they do.
struct SideWake {
    woken: AtomicBool,
    task: AtomicWaker,
}

impl Wake for SideWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

/// The future of [`first`].
pub(super) struct First<'a, M, S> {
    main: Pin<&'a mut M>,
    side: Pin<&'a mut S>,
    wake: Arc<SideWake>,
}

/// Whichever of `main` and `side` finishes first. `main` is polled whenever the task wakes,
/// `side` only when a waker it registered fired (and on the first poll).
pub(super) fn first<'a, M: Future, S: Future>(main: Pin<&'a mut M>, side: Pin<&'a mut S>) -> First<'a, M, S> {
    let wake = Arc::new(SideWake { woken: AtomicBool::new(true), task: AtomicWaker::new() });
    First { main, side, wake }
}

impl<M: Future, S: Future> Future for First<'_, M, S> {
    type Output = Either<M::Output, S::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        this.wake.task.register(cx.waker());
        if this.wake.woken.swap(false, Ordering::AcqRel) {
            let waker = Waker::from(this.wake.clone());
            if let Poll::Ready(v) = this.side.as_mut().poll(&mut Context::from_waker(&waker)) {
                return Poll::Ready(Either::Right(v));
            }
        }
        this.main.as_mut().poll(cx).map(Either::Left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts its polls; ready after `ready_after` of them.
    struct Counted<'a> {
        polls: &'a AtomicUsize,
        ready_after: usize,
    }

    impl Future for Counted<'_> {
        type Output = usize;
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            let n = self.polls.fetch_add(1, Ordering::Relaxed) + 1;
            if n >= self.ready_after {
                return Poll::Ready(n);
            }
            // Wakes itself: the task is polled again at once.
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    /// Pending for ever without registering a waker; counts its polls.
    struct Idle<'a>(&'a AtomicUsize);

    impl Future for Idle<'_> {
        type Output = ();
        fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn the_side_is_polled_only_when_its_own_waker_fired() {
        let (main_polls, side_polls) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let main = Counted { polls: &main_polls, ready_after: 50 };
        let side = Idle(&side_polls);
        let (mut main, mut side) = (std::pin::pin!(main), std::pin::pin!(side));
        assert!(matches!(first(main.as_mut(), side.as_mut()).await, Either::Left(50)));
        assert_eq!(main_polls.load(Ordering::Relaxed), 50);
        assert_eq!(side_polls.load(Ordering::Relaxed), 1, "polled once, to register, then never woken");
    }

    #[tokio::test]
    async fn a_side_that_wakes_itself_wins_over_a_main_that_waits() {
        let side_polls = AtomicUsize::new(0);
        let main = std::future::pending::<()>();
        let side = Counted { polls: &side_polls, ready_after: 3 };
        let (mut main, mut side) = (std::pin::pin!(main), std::pin::pin!(side));
        assert!(matches!(first(main.as_mut(), side.as_mut()).await, Either::Right(3)));
    }

    #[tokio::test]
    async fn a_side_woken_by_another_task_is_polled_and_finishes_the_race() {
        let notify = Arc::new(tokio::sync::Notify::new());
        let main = std::future::pending::<()>();
        let side = notify.notified();
        let (mut main, mut side) = (std::pin::pin!(main), std::pin::pin!(side));
        let n = notify.clone();
        tokio::spawn(async move { n.notify_one() });
        assert!(matches!(first(main.as_mut(), side.as_mut()).await, Either::Right(())));
    }
}
