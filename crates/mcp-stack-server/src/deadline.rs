//! The request's guard: its handler future polled in its panic scope, with a panic caught and
//! the time limit kept, as one future. A request that finishes on its first poll (most do)
//! reads no clock and sets no timer.
//!
//! One future rather than a stack of adapters (a scope, `catch_unwind`, a timeout, a map):
//! each adapter is one more poll function on every request's path, and at one request in
//! flight the path's code is fetched cold, so its size is its cost.

use crate::panic::{Describe, Enter};
use crate::server::Server;
use mcp_protocol::ProtocolError;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

pin_project_lite::pin_project! {
    /// The future `start` makes (from `server`), in the panic scope of `info`: its output,
    /// `-32603` when it (or `start`) panics, or when it has waited `limit` since it first had to
    /// wait. It owns the server, so a transport boxes it as it is.
    pub(crate) struct Guarded<G, F> {
        #[pin]
        stage: Stage<G, F>,
        info: Option<Describe>,
        server: Server,
        limit: Duration,
        // Boxed: only requests that wait have one, and the request future stays small.
        sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    }
}

pin_project_lite::pin_project! {
    /// Before the first poll, what makes the future (made in the scope, so a panic while
    /// preparing the request is caught too); then the future. One enum: the two share storage.
    #[project = StageProj]
    enum Stage<G, F> {
        Start { start: Option<G> },
        Run { #[pin] fut: F },
    }
}

impl<G, F> std::fmt::Debug for Guarded<G, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guarded").field("info", &self.info).field("limit", &self.limit).finish_non_exhaustive()
    }
}

impl<G, F> Guarded<G, F> {
    /// The future `start` makes from `server` at the first poll, for the request `info`
    /// describes, within `limit` counted from its first `Pending` (constructing it needs no
    /// runtime).
    pub(crate) fn new(start: G, info: Describe, server: Server, limit: Duration) -> Self {
        Self { stage: Stage::Start { start: Some(start) }, info: Some(info), server, limit, sleep: None }
    }
}

impl<G, F> Future for Guarded<G, F>
where
    G: FnOnce(&Server) -> F,
    F: Future<Output = Result<crate::reply::Reply, ProtocolError>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let polled = {
            // The scope is left (and `info` put back) however the poll ends.
            let _enter = Enter::new(this.info);
            let (mut stage, waker, server) = (this.stage, &mut *cx, &*this.server);
            std::panic::catch_unwind(AssertUnwindSafe(move || {
                if let StageProj::Start { start } = stage.as_mut().project() {
                    if let Some(fut) = start.take().map(|start| start(server)) {
                        stage.set(Stage::Run { fut });
                    }
                }
                match stage.project() {
                    StageProj::Run { fut } => fut.poll(waker),
                    // Only after `start` panicked, and then this future is done.
                    StageProj::Start { .. } => Poll::Pending,
                }
            }))
        };
        match polled {
            Ok(Poll::Ready(r)) => return Poll::Ready(r),
            Ok(Poll::Pending) => {}
            Err(panic) => return Poll::Ready(Err(this.server.caught_panic(&*panic, None))),
        }
        let limit = *this.limit;
        let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(timed_out(limit))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The error for a request that ran out of time.
#[cold]
fn timed_out(limit: Duration) -> ProtocolError {
    ProtocolError::Timeout { limit }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info() -> Describe {
        Describe::info("tools/call", &json!(1), json!({"name": "t"}).as_object().expect("object"))
    }

    fn server() -> Server {
        Server::builder("t", "1").build().expect("server")
    }

    #[test]
    fn a_ready_future_needs_no_runtime() {
        let server = server();
        let done = Guarded::new(
            |_: &Server| std::future::ready(Ok(crate::reply::Reply::from(json!({})))),
            info(),
            server,
            Duration::from_secs(1),
        );
        assert!(futures::executor::block_on(done).is_ok());
    }

    #[test]
    fn a_panic_is_the_internal_error() {
        let server = server();
        let boom = async {
            if server.panic_count() == 0 {
                panic!("boom");
            }
            Ok(crate::reply::Reply::from(json!({})))
        };
        let r = futures::executor::block_on(Guarded::new(
            |_: &Server| boom,
            info(),
            server.clone(),
            Duration::from_secs(1),
        ));
        assert!(matches!(r, Err(ProtocolError::HandlerFailed { .. })), "{r:?}");
        assert_eq!(server.panic_count(), 1);
    }

    #[test]
    fn a_panic_while_making_the_future_is_the_internal_error() {
        let server = server();
        let start =
            |_: &Server| -> std::future::Ready<Result<crate::reply::Reply, ProtocolError>> { panic!("preparing") };
        let r = futures::executor::block_on(Guarded::new(start, info(), server.clone(), Duration::from_secs(1)));
        assert!(matches!(r, Err(ProtocolError::HandlerFailed { .. })), "{r:?}");
        assert_eq!(server.panic_count(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_future_is_cut_off_at_the_limit_from_its_first_wait() {
        let server = server();
        let start = tokio::time::Instant::now();
        let never = std::future::pending::<Result<crate::reply::Reply, ProtocolError>>();
        let r = Guarded::new(|_: &Server| never, info(), server.clone(), Duration::from_secs(5)).await;
        let Err(e) = r else { panic!("the request should time out") };
        assert_eq!(e, ProtocolError::Timeout { limit: Duration::from_secs(5) });
        assert!(e.to_string().contains("timed out after 5000 ms"), "{e}");
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        let slow = async {
            tokio::time::sleep(Duration::from_secs(2)).await;
            Ok(crate::reply::Reply::from(json!({})))
        };
        assert!(Guarded::new(|_: &Server| slow, info(), server.clone(), Duration::from_secs(5)).await.is_ok());
    }
}
