//! The one part of the session layer that knows a runtime: [`Driver`], a session core behind a
//! lock with the timer it asks for, run for one transport. Every transport drives its sessions
//! through it: stdio one per process, Streamable HTTP one per legacy session (a modern POST is a
//! one-request session and needs no driver: it runs its [`Call`] itself).

use crate::call::{Call, Outcome};
use crate::event::{Event, SessionCore};
#[cfg(feature = "legacy")]
use crate::legacy::LegacySession;
use futures::Stream;
use mcp_protocol::types::RequestId;
use mcp_server::Server;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// Now, on tokio's clock (a paused test clock included).
pub fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// A transport's side of a [`Driver`]: which core it runs, and what it does with the events
/// that come up outside its own calls into the driver (answers timing out, a call finishing in
/// a spawned task).
pub trait Transport: Send + Sync + Sized + 'static {
    /// The session core the transport runs.
    type Core: SessionCore;
    /// Carries out one event of the core.
    fn handle(&self, driver: &Arc<Driver<Self>>, event: Event);
}

/// A session core behind a lock, with its transport ([`Transport`]) and the timer the core
/// asks for. Calls into the core run with the time now; the events they produce go to the
/// caller ([`Driver::with`]) or to the transport ([`Driver::run`]).
pub struct Driver<T: Transport> {
    core: Mutex<T::Core>,
    server: Server,
    /// The deadline a timer task is armed for, if any.
    timer: Mutex<Option<Instant>>,
    io: T,
}

impl<T: Transport> std::fmt::Debug for Driver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver").finish_non_exhaustive()
    }
}

impl<T: Transport> Driver<T> {
    /// Runs `core` for `io`, serving `server`'s handlers.
    pub fn new(server: Server, core: T::Core, io: T) -> Arc<Self> {
        Arc::new(Self { core: Mutex::new(core), server, timer: Mutex::new(None), io })
    }

    /// The server the session serves.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The transport.
    pub fn io(&self) -> &T {
        &self.io
    }

    /// Runs `f` on the core with the time now and moves the events it produced into `out`
    /// (for the caller to carry out, outside the lock); arms the timer the core asks for.
    pub fn with<R>(self: &Arc<Self>, f: impl FnOnce(&mut T::Core, Instant) -> R, out: &mut VecDeque<Event>) -> R {
        let (r, wake) = {
            let mut core = self.core.lock();
            let r = f(&mut core, now());
            while let Some(e) = core.poll_event() {
                out.push_back(e);
            }
            (r, core.poll_timeout())
        };
        if let Some(at) = wake {
            self.arm(at);
        }
        r
    }

    /// [`Driver::with`], then every event goes to the transport.
    pub fn run<R>(self: &Arc<Self>, f: impl FnOnce(&mut T::Core, Instant) -> R) -> R {
        let mut events = VecDeque::new();
        let r = self.with(f, &mut events);
        self.handle_all(events);
        r
    }

    /// Reads the core without changing it.
    pub fn inspect<R>(&self, f: impl FnOnce(&T::Core) -> R) -> R {
        f(&self.core.lock())
    }

    /// Starts `call` with `env` (see [`Call::start`]).
    pub fn start(&self, call: &mut Call, env: mcp_server::RequestEnv) {
        call.start(&self.server, env);
    }

    /// A call that did not finish at once: from now on `notifications/cancelled` stops it and
    /// its id counts as in use.
    pub fn track(&self, call: &mut Call) {
        call.tracked = true;
        self.core.lock().handle_pending(call, now());
    }

    /// Takes a call's outcome (nothing for a cancelled one), its events into `out`.
    pub fn finish_into(self: &Arc<Self>, outcome: Outcome, out: &mut VecDeque<Event>) {
        let Outcome { id, cancelled, result } = outcome;
        self.with(
            |s, now| {
                if !cancelled {
                    s.handle_outcome(&id, result, now);
                }
            },
            out,
        );
    }

    /// [`Driver::finish_into`], then every event goes to the transport.
    pub fn finish(self: &Arc<Self>, outcome: Outcome) {
        let mut events = VecDeque::new();
        self.finish_into(outcome, &mut events);
        self.handle_all(events);
    }

    /// A listen stream opened from [`Event::Listen`] ended.
    pub fn end_stream(&self, key: &RequestId) {
        self.core.lock().handle_stream_end(key, now());
    }

    fn handle_all(self: &Arc<Self>, events: VecDeque<Event>) {
        for e in events {
            self.io.handle(self, e);
        }
    }

    fn arm(self: &Arc<Self>, at: Instant) {
        {
            let mut armed = self.timer.lock();
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
                let mut armed = me.timer.lock();
                if *armed == Some(at) {
                    *armed = None;
                }
            }
            me.run(|s, now| s.handle_timeout(now));
        });
    }
}

/// What a legacy session's client is to be told of changes (list changes, and updates of the
/// resources it subscribed to), as a stream for [`pump`]: the legacy era's counterpart of a
/// `subscriptions/listen` stream. The feed is taken now: changes from this moment on.
#[cfg(feature = "legacy")]
pub fn legacy_changes<T>(session: Arc<Driver<T>>) -> impl Stream<Item = Value> + Send + 'static
where
    T: Transport<Core = LegacySession>,
{
    use futures::StreamExt;
    let feed = session.server().change_feed();
    futures::stream::unfold((feed, session), |(mut feed, session)| async move {
        let subscribed = || session.inspect(|s| s.legacy().map(|l| l.subscribed_uris()).unwrap_or_default());
        let changes = feed.next(subscribed).await?;
        let notes: Vec<Value> =
            session.inspect(|s| changes.iter().filter_map(|e| s.legacy()?.notification_for(e)).collect());
        Some((futures::stream::iter(notes), (feed, session)))
    })
    .flatten()
}

/// The one listen pump every transport uses: moves a listen stream's messages into `send`
/// until the stream ends, `stop` resolves (the call was cancelled, or the client went away), or
/// `send` returns false (the transport takes no more). Biased towards `stop`: once it resolved nothing more is sent, not even
/// a closing response that shutdown made ready at the same time. `send` may wait (that is the
/// transport's backpressure: an unread stream waits there); `stop` ends the wait. With
/// `keep_alive`, a quiet stream calls `send(None)` that often (HTTP writes an SSE comment);
/// messages go as `send(Some(message))`.
pub async fn pump<S, F, Fut>(
    stream: S,
    stop: impl std::future::Future<Output = ()>,
    keep_alive: Option<std::time::Duration>,
    mut send: F,
) where
    S: Stream<Item = Value>,
    F: FnMut(Option<Value>) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    use futures::StreamExt;
    let mut stream = std::pin::pin!(stream);
    let mut stop = std::pin::pin!(stop);
    // A timer only for a stream that sends keep-alives.
    let mut tick = keep_alive.map(|every| {
        let mut t = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    loop {
        let item = tokio::select! {
            biased;
            () = &mut stop => return,
            item = stream.next() => match item {
                Some(v) => Some(v),
                None => return,
            },
            () = next_tick(&mut tick) => None,
        };
        tokio::select! {
            biased;
            () = &mut stop => return,
            sent = send(item) => if !sent { return },
        }
    }
}

/// The next keep-alive tick; never without a timer.
async fn next_tick(tick: &mut Option<tokio::time::Interval>) {
    match tick {
        Some(t) => drop(t.tick().await),
        None => std::future::pending().await,
    }
}
