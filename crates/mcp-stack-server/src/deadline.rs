//! The request time limit, as a future that costs nothing for a request that finishes on its
//! first poll (most do): no clock read and no timer.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

pin_project_lite::pin_project! {
    /// `fut`, or [`Elapsed`] when it has waited `limit` since it first had to wait.
    #[derive(Debug)]
    pub(crate) struct Limited<F> {
        #[pin]
        fut: F,
        limit: Duration,
        // Boxed: only requests that wait have one, and the request future stays small.
        sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    }
}

/// The request ran out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Elapsed;

impl<F> Limited<F> {
    /// `fut` within `limit`, counted from its first `Pending` (so a request that never waits
    /// reads no clock; constructing it needs no runtime).
    pub(crate) fn new(fut: F, limit: Duration) -> Self {
        Self { fut, limit, sleep: None }
    }
}

impl<F: Future> Future for Limited<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(v) = this.fut.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        let limit = *this.limit;
        let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed)),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ready_future_needs_no_runtime() {
        let done = Limited::new(std::future::ready(7), Duration::from_secs(1));
        assert_eq!(futures::executor::block_on(done), Ok(7));
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_future_is_cut_off_at_the_limit_from_its_first_wait() {
        let start = tokio::time::Instant::now();
        let never = Limited::new(std::future::pending::<()>(), Duration::from_secs(5));
        assert_eq!(never.await, Err(Elapsed));
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        let slow = Limited::new(tokio::time::sleep(Duration::from_secs(2)), Duration::from_secs(5));
        assert_eq!(slow.await, Ok(()));
    }
}
