//! Dropping a finished call after its answer is written.
//!
//! What a call leaves behind (its context: the parameters, the environment with the HTTP head
//! and the notification sink, the panic description) takes about a tenth of a small request's
//! instructions to free. Freed before the answer is written, that time is added to every
//! answer; freed after, it is not. A transport that writes answers within one poll (the
//! Streamable HTTP server's connection task: hyper writes the response in the poll that
//! finished it) runs that poll in [`scope`], and within it [`drop_after_write`] keeps a
//! finished call until the poll is over. Outside a scope, or past [`MAX_DEFERRED`] calls in one
//! poll, a call is dropped at once, as before.
//!
//! ```
//! use mcp_server::session::after_write;
//! use mcp_server::session::Call;
//!
//! let call: Call = Box::pin(async { Ok(mcp_server::Reply::from(serde_json::json!({}))) });
//! let answered = after_write::scope(|| {
//!     // ... the call finished and its answer was written ...
//!     after_write::drop_after_write(call);
//!     assert_eq!(after_write::deferred(), 1);
//!     "written"
//! });
//! assert_eq!(answered, "written");
//! assert_eq!(after_write::deferred(), 0);
//! ```

use super::Call;
use std::cell::RefCell;

/// How many finished calls one scope keeps at most (one poll of a connection finishes one
/// request, or a few pipelined ones); more are dropped at once.
pub const MAX_DEFERRED: usize = 16;

/// The calls kept until the scope on this thread ends.
struct Later {
    /// Whether a scope is open on this thread.
    armed: bool,
    calls: Vec<Call>,
}

thread_local! {
    static LATER: RefCell<Later> = const { RefCell::new(Later { armed: false, calls: Vec::new() }) };
}

/// Runs `f` (a transport's poll that writes answers) with the calls finished in it dropped
/// only when it returns. Scopes nest: an inner one leaves the dropping to the outer one.
pub fn scope<T>(f: impl FnOnce() -> T) -> T {
    let outer = LATER.try_with(|l| std::mem::replace(&mut l.borrow_mut().armed, true)).unwrap_or(true);
    let _exit = Exit { outer };
    f()
}

/// Keeps `call` until the enclosing [`scope`] ends, or drops it now when there is none (or the
/// scope already keeps [`MAX_DEFERRED`]).
pub fn drop_after_write(call: Call) {
    let now = LATER
        .try_with(|l| {
            let mut l = l.borrow_mut();
            if l.armed && l.calls.len() < MAX_DEFERRED {
                l.calls.push(call);
                None
            } else {
                Some(call)
            }
        })
        .unwrap_or(None);
    drop(now);
}

/// How many finished calls the scope on this thread keeps right now.
pub fn deferred() -> usize {
    LATER.try_with(|l| l.borrow().calls.len()).unwrap_or(0)
}

/// Ends a scope: drops what it kept (an outer scope's end does that for an inner one).
struct Exit {
    outer: bool,
}

impl Drop for Exit {
    fn drop(&mut self) {
        if self.outer {
            return;
        }
        // Taken out of the cell first: a call's drop may itself reach `drop_after_write`. Most
        // polls keep nothing: then closing the scope is all there is to do.
        let Ok(Some(mut calls)) = LATER.try_with(|l| {
            let mut l = l.borrow_mut();
            l.armed = false;
            (!l.calls.is_empty()).then(|| std::mem::take(&mut l.calls))
        }) else {
            return;
        };
        // While unwinding, a panicking drop would abort: the calls wait for the next scope.
        if std::thread::panicking() {
            let _ = LATER.try_with(|l| l.borrow_mut().calls.append(&mut calls));
            return;
        }
        calls.clear();
        // The emptied vector goes back, so a thread's scopes allocate once.
        let _ = LATER.try_with(|l| {
            let mut l = l.borrow_mut();
            if l.calls.is_empty() {
                l.calls = calls;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A call whose drop counts itself.
    fn counted(drops: &Arc<AtomicUsize>) -> Call {
        struct OnDrop(Arc<AtomicUsize>);
        impl Drop for OnDrop {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let guard = OnDrop(drops.clone());
        Box::pin(async move {
            let _guard = guard;
            Ok(crate::Reply::from(serde_json::json!({})))
        })
    }

    #[test]
    fn outside_a_scope_a_call_is_dropped_at_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        drop_after_write(counted(&drops));
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_eq!(deferred(), 0);
    }

    #[test]
    fn in_a_scope_calls_are_dropped_when_it_ends() {
        let drops = Arc::new(AtomicUsize::new(0));
        scope(|| {
            drop_after_write(counted(&drops));
            drop_after_write(counted(&drops));
            assert_eq!(drops.load(Ordering::SeqCst), 0, "kept until the scope ends");
            assert_eq!(deferred(), 2);
        });
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        assert_eq!(deferred(), 0);
        // The next call outside any scope is not kept.
        drop_after_write(counted(&drops));
        assert_eq!(drops.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_scope_keeps_a_bounded_number() {
        let drops = Arc::new(AtomicUsize::new(0));
        scope(|| {
            for _ in 0..MAX_DEFERRED + 3 {
                drop_after_write(counted(&drops));
            }
            assert_eq!(deferred(), MAX_DEFERRED);
            assert_eq!(drops.load(Ordering::SeqCst), 3, "past the bound, dropped at once");
        });
        assert_eq!(drops.load(Ordering::SeqCst), MAX_DEFERRED + 3);
    }

    #[test]
    fn an_inner_scope_leaves_the_dropping_to_the_outer_one() {
        let drops = Arc::new(AtomicUsize::new(0));
        scope(|| {
            scope(|| drop_after_write(counted(&drops)));
            assert_eq!(drops.load(Ordering::SeqCst), 0);
        });
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_panicking_scope_keeps_its_calls_for_the_next_one() {
        let drops = Arc::new(AtomicUsize::new(0));
        let d = drops.clone();
        let r = std::panic::catch_unwind(move || {
            scope(|| {
                drop_after_write(counted(&d));
                panic!("the transport's poll panicked");
            })
        });
        assert!(r.is_err());
        assert_eq!(drops.load(Ordering::SeqCst), 0, "not dropped while unwinding");
        assert_eq!(deferred(), 1);
        scope(|| {});
        assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped when the next scope ends");
    }
}
