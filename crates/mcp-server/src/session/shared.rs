//! A [`Session`] shared by the tasks of a tokio transport: one lock, one timer, one place that
//! hands events to the transport. The only part of the session layer that knows a runtime.

use super::{Event, Session};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

type Dispatch = Box<dyn Fn(&Arc<SharedSession>, Event) + Send + Sync>;

/// A session behind a lock, with the transport's `dispatch` for events that come up outside
/// the transport's own calls (answers timing out, a job finishing in a spawned task).
pub struct SharedSession {
    core: Mutex<Session>,
    /// The deadline a timer task is armed for, if any.
    timer: Mutex<Option<Instant>>,
    dispatch: Dispatch,
}

impl std::fmt::Debug for SharedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSession").field("core", &self.core).finish_non_exhaustive()
    }
}

/// Now, on tokio's clock (a paused test clock included).
pub fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

impl SharedSession {
    /// Shares `session`; `dispatch` carries out the events [`SharedSession::run`] produces.
    pub fn new(session: Session, dispatch: impl Fn(&Arc<SharedSession>, Event) + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self { core: Mutex::new(session), timer: Mutex::new(None), dispatch: Box::new(dispatch) })
    }

    /// Runs `f` on the session and moves the events it queued into `out` (for the caller to
    /// carry out, outside the lock). Arms the timer the session asks for. `f` gets the clock to
    /// pass on (it reads the time only if asked).
    /// A caller that keeps `out` between calls (drained each time) trades buffers with the
    /// session instead of moving events.
    pub fn with<R>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Session, &fn() -> Instant) -> R,
        out: &mut VecDeque<Event>,
    ) -> R {
        let (r, wake) = {
            let mut core = self.core.lock().expect("session lock");
            let r = f(&mut core, &(now as fn() -> Instant));
            if out.is_empty() && out.capacity() > 0 {
                std::mem::swap(&mut core.events, out);
            } else {
                out.extend(core.events.drain(..));
            }
            (r, core.poll_timeout())
        };
        if let Some(at) = wake {
            self.arm(at);
        }
        r
    }

    /// [`SharedSession::with`], then every event goes to the transport's `dispatch`.
    pub fn run<R>(self: &Arc<Self>, f: impl FnOnce(&mut Session, &fn() -> Instant) -> R) -> R {
        let mut events = VecDeque::new();
        let r = self.with(f, &mut events);
        for e in events {
            (self.dispatch)(self, e);
        }
        r
    }

    /// Hands one event to the transport's `dispatch`.
    pub fn dispatch(self: &Arc<Self>, event: Event) {
        (self.dispatch)(self, event)
    }

    /// Reads the session without changing it.
    pub fn inspect<R>(&self, f: impl FnOnce(&Session) -> R) -> R {
        f(&self.core.lock().expect("session lock"))
    }

    fn arm(self: &Arc<Self>, at: Instant) {
        {
            let mut armed = self.timer.lock().expect("timer lock");
            if armed.is_some_and(|t| t <= at) {
                return;
            }
            *armed = Some(at);
        }
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
            let Some(me) = weak.upgrade() else { return };
            {
                let mut armed = me.timer.lock().expect("timer lock");
                if *armed == Some(at) {
                    *armed = None;
                }
            }
            me.run(|s, clock| s.handle_timeout(clock()));
        });
    }
}
