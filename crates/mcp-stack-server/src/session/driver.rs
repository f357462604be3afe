//! The one part of the session layer that knows a runtime: a [`DualSession`] behind a lock,
//! with the timer it asks for, the cancellation tokens of its running handlers, and the
//! [`Job`]s that run handlers. Every transport drives its sessions through this.
//!
//! The core's [`Event`]s become [`Action`]s here: a dispatched request becomes a [`Job`] (a
//! handler to run, with its cancellation token), [`Event::Cancel`] fires that token, and
//! messages pass through.

use super::{key_of, Dispatch, DualSession, Event, Seeded, Transmit};
use crate::context::RequestEnv;
use crate::server::{Preset, Server};
use futures::Stream;
use mcp_protocol::types::RequestId;
use mcp_protocol::version::Era;
use mcp_protocol::{ProtocolError, Request};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Now, on tokio's clock (a paused test clock included).
pub fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// What a transport does for its session: the core's [`Event`]s, with handlers to run as
/// [`Job`]s.
#[derive(Debug)]
#[non_exhaustive]
pub enum Action {
    /// Run this handler ([`Job::run`]) and hand the outcome to [`SharedSession::finish`].
    Serve(Job),
    /// Open this `subscriptions/listen` stream ([`Job::listen`]); report its end with
    /// [`SharedSession::end_stream`].
    Listen(Job),
    /// Write this message to the client.
    Transmit(Transmit),
    /// The call with this JSON-RPC id is over: a transport with a stream per call closes it.
    Finished(Value),
    /// A legacy session was opened: the transport starts sending it change notifications.
    #[cfg(feature = "legacy")]
    LegacyOpened,
}

/// A request to serve: run it with [`Job::run`] (or [`Job::listen`]).
pub struct Job {
    key: RequestId,
    request: Request,
    era: Era,
    preset: Option<Box<Preset>>,
    cancel: CancellationToken,
    server: Server,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("id", &self.request.id).field("method", &self.request.method).finish()
    }
}

impl Job {
    fn new(d: Dispatch, cancel: CancellationToken, server: Server) -> Self {
        Self { key: d.key, request: d.request, era: d.era, preset: d.preset, cancel, server }
    }

    /// A request the core dispatched on its own ([`super::stateless`]), served by `server` and
    /// stopped by `cancel` (the transport's token: for HTTP, the connection going away).
    pub fn stateless(dispatch: Dispatch, server: &Server, cancel: CancellationToken) -> Self {
        Self::new(dispatch, cancel, server.clone())
    }

    /// The request's JSON-RPC id.
    pub fn id(&self) -> &Value {
        &self.request.id
    }

    /// The key the session tracks the call under.
    pub fn key(&self) -> &RequestId {
        &self.key
    }

    /// The request being served.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The era the request is served in.
    pub fn era(&self) -> Era {
        self.era
    }

    /// Cancelled when the client cancels the call or the session ends.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Runs the handler with what the transport knows about the request (`env`: principal,
    /// notification sink, HTTP parts; its `cancel` is replaced by the job's own token, which
    /// the session fires). A cancelled call stops at once: its handler future is dropped.
    ///
    /// A modern call is tracked (for `notifications/cancelled` and for duplicate ids) only
    /// once its transport says it is still running: a transport that cannot finish it at once
    /// hands it to [`SharedSession::track`] before reading more input.
    pub fn run(self, env: &RequestEnv) -> Running {
        let env = env.with_cancel(self.cancel.clone());
        self.start(env)
    }

    /// [`Job::run`] with an environment made for this request alone (a Streamable HTTP POST's),
    /// moved rather than copied; its `cancel` is replaced by the job's token all the same.
    pub fn run_owned(self, mut env: RequestEnv) -> Running {
        env.cancel = self.cancel.clone();
        self.start(env)
    }

    /// A request the core dispatched on its own ([`super::stateless`]) served by `server` at
    /// once, with `env` (its `cancel` is the call's token, as the transport made it): the
    /// handler's future alone, for a call no session tracks (a Streamable HTTP POST's). Its
    /// result comes as the handler gives it: stopping the call is the transport's, by dropping
    /// the future and firing the token. No job, key, id copy or cancellation wait, and the
    /// token is not copied: the path of most requests.
    pub fn call_stateless(dispatch: Dispatch, server: &Server, env: RequestEnv) -> Call {
        handling(server.clone(), dispatch.request, env, dispatch.preset)
    }

    fn start(self, env: RequestEnv) -> Running {
        let Job { key, request, era, preset, cancel, server } = self;
        let id = request.id.clone();
        let fut = handling(server, request, env, preset);
        // Legacy calls are tracked by their session from the start.
        let tracked = era == Era::Legacy;
        Running { fut, key: Some(key), id, cancel, tracked, cancelled: None }
    }

    /// Opens the listen stream with `env` (as for [`Job::run`]): the acknowledgement, then
    /// change notifications, then the closing response at shutdown.
    /// The server's operation layers see the request first.
    pub async fn listen(self, env: &RequestEnv) -> Result<impl Stream<Item = Value> + Send + 'static, ProtocolError> {
        self.server.listen_layered(self.request, env.with_cancel(self.cancel)).await
    }
}

/// The boxed handler future of a request, for [`Job::call_stateless`] and [`Running`] alike.
fn handling(server: Server, request: Request, env: RequestEnv, preset: Option<Box<Preset>>) -> Call {
    server.process_boxed(request, env, preset)
}

/// What a legacy session's client is to be told of changes (list changes, and updates of the
/// resources it subscribed to), as a stream for [`pump`]: the legacy era's counterpart of a
/// `subscriptions/listen` stream. The feed is taken now: changes from this moment on.
#[cfg(feature = "legacy")]
pub fn legacy_changes(session: Arc<SharedSession>) -> impl Stream<Item = Value> + Send + 'static {
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

/// How a listen stream ended ([`pump`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PumpEnd {
    /// The stream ended by itself (its closing response was the last item).
    Ended,
    /// The call was cancelled (or the client went away): what was left of the stream was
    /// dropped unsent.
    Cancelled,
    /// The transport took no more (the client is gone).
    Refused,
}

/// The one listen pump every transport uses: moves a listen stream's messages into `send`
/// until the stream ends, `stop` resolves (the call was cancelled, or the client went away), or
/// `send` returns false. Biased towards `stop`: once it resolved nothing more is sent, not even
/// a closing response that shutdown made ready at the same time. `send` may wait (that is the
/// transport's backpressure: an unread stream waits there); `stop` ends the wait. With
/// `keep_alive`, a quiet stream calls `send(None)` that often (HTTP writes an SSE comment);
/// messages go as `send(Some(message))`.
pub async fn pump<S, F, Fut>(
    stream: S,
    stop: impl std::future::Future<Output = ()>,
    keep_alive: Option<std::time::Duration>,
    mut send: F,
) -> PumpEnd
where
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
            () = &mut stop => return PumpEnd::Cancelled,
            item = stream.next() => match item {
                Some(v) => Some(v),
                None => return PumpEnd::Ended,
            },
            () = next_tick(&mut tick) => None,
        };
        tokio::select! {
            biased;
            () = &mut stop => return PumpEnd::Cancelled,
            sent = send(item) => if !sent { return PumpEnd::Refused },
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

/// A call's handler future ([`Job::call_stateless`]): its result, or the error it ended with.
pub type Call =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<crate::Reply, ProtocolError>> + Send + 'static>>;

/// A running job: the future of its [`Outcome`] (see [`Job::run`]).
pub struct Running {
    fut: Call,
    key: Option<RequestId>,
    id: Value,
    cancel: CancellationToken,
    /// Whether the session tracks it ([`SharedSession::track`]), so it can be cancelled.
    tracked: bool,
    /// Set up on the first poll that does not finish (most never need it).
    cancelled: Option<std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("key", &self.key).finish_non_exhaustive()
    }
}

#[cfg(test)]
impl Running {
    /// The size of the boxed request future.
    pub(crate) fn future_size(&self) -> usize {
        std::mem::size_of_val(&*self.fut)
    }
}

impl std::future::Future for Running {
    type Output = Outcome;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Outcome> {
        use std::task::Poll;
        let this = &mut *self;
        let (result, cancelled) = match this.fut.as_mut().poll(cx) {
            // Only a tracked job can have been cancelled (the check takes a lock).
            Poll::Ready(r) => (r, this.tracked && this.cancel.is_cancelled()),
            Poll::Pending => {
                let cancel = &this.cancel;
                let cancelled = this.cancelled.get_or_insert_with(|| Box::pin(cancel.clone().cancelled_owned()));
                if cancelled.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                (Err(ProtocolError::Internal("request cancelled by the client".into())), true)
            }
        };
        this.key.take().expect("polled after completion");
        Poll::Ready(Outcome { id: std::mem::take(&mut this.id), cancelled, result })
    }
}

/// A handler's outcome, to hand back to [`SharedSession::finish`].
#[derive(Debug)]
pub struct Outcome {
    id: Value,
    cancelled: bool,
    result: Result<crate::Reply, ProtocolError>,
}

impl Outcome {
    /// The JSON-RPC id of the call.
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// Whether the call was cancelled (nothing is sent for it).
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// The handler's result, for a transport that writes the response itself (encoded with
    /// [`Server::encode_response`], as [`super::Session::handle_outcome`] does).
    pub fn into_result(self) -> Result<crate::Reply, ProtocolError> {
        self.result
    }
}

type Dispatcher = Box<dyn Fn(&Arc<SharedSession>, Action) + Send + Sync>;

struct Inner {
    core: DualSession,
    /// The tokens of the handlers the core may cancel: listen streams and legacy calls from
    /// the start, other calls once tracked.
    tokens: HashMap<RequestId, CancellationToken, Seeded>,
}

/// A session behind a lock, with the transport's `dispatch` for actions that come up outside
/// the transport's own calls (answers timing out, a job finishing in a spawned task).
pub struct SharedSession {
    inner: Mutex<Inner>,
    server: Server,
    /// The deadline a timer task is armed for, if any.
    timer: Mutex<Option<Instant>>,
    dispatch: Dispatcher,
}

impl std::fmt::Debug for SharedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSession").finish_non_exhaustive()
    }
}

impl SharedSession {
    /// Shares `session`; `dispatch` carries out the actions [`SharedSession::run`] produces.
    pub fn new(
        session: DualSession,
        dispatch: impl Fn(&Arc<SharedSession>, Action) + Send + Sync + 'static,
    ) -> Arc<Self> {
        let server = session.server().clone();
        let tokens = HashMap::with_hasher(Seeded::with_seed(session.config().seed ^ 0x9e37_79b9_7f4a_7c15));
        Arc::new(Self {
            inner: Mutex::new(Inner { core: session, tokens }),
            server,
            timer: Mutex::new(None),
            dispatch: Box::new(dispatch),
        })
    }

    /// The server the session serves.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Runs `f` on the session with the time now and moves the actions it produced into `out`
    /// (for the caller to carry out, outside the lock). Fires the tokens of cancelled calls;
    /// arms the timer the session asks for.
    pub fn with<R>(self: &Arc<Self>, f: impl FnOnce(&mut DualSession, Instant) -> R, out: &mut VecDeque<Action>) -> R {
        let (r, wake) = {
            let mut inner = self.inner.lock();
            let r = f(&mut inner.core, now());
            while let Some(e) = inner.core.poll_event() {
                if let Some(a) = self.action(&mut inner.tokens, e) {
                    out.push_back(a);
                }
            }
            (r, inner.core.poll_timeout())
        };
        if let Some(at) = wake {
            self.arm(at);
        }
        r
    }

    /// [`SharedSession::with`], then every action goes to the transport's `dispatch`.
    pub fn run<R>(self: &Arc<Self>, f: impl FnOnce(&mut DualSession, Instant) -> R) -> R {
        let mut actions = VecDeque::new();
        let r = self.with(f, &mut actions);
        for a in actions {
            (self.dispatch)(self, a);
        }
        r
    }

    /// Hands one action to the transport's `dispatch`.
    pub fn dispatch(self: &Arc<Self>, action: Action) {
        (self.dispatch)(self, action)
    }

    /// Reads the session without changing it.
    pub fn inspect<R>(&self, f: impl FnOnce(&DualSession) -> R) -> R {
        f(&self.inner.lock().core)
    }

    /// A job that did not finish at once: from now on `notifications/cancelled` stops it and
    /// its id counts as in use (see [`Job::run`]).
    pub fn track(self: &Arc<Self>, running: &mut Running) {
        running.tracked = true;
        let Some(key) = &running.key else { return };
        let mut inner = self.inner.lock();
        inner.tokens.entry(key.clone()).or_insert_with(|| running.cancel.clone());
        inner.core.handle_pending(key, &running.id, now());
    }

    /// Takes a handler's outcome (nothing for a cancelled one), its actions into `out`.
    pub fn finish_into(self: &Arc<Self>, outcome: Outcome, out: &mut VecDeque<Action>) {
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

    /// [`SharedSession::finish_into`], then every action goes to the transport's `dispatch`.
    pub fn finish(self: &Arc<Self>, outcome: Outcome) {
        let mut actions = VecDeque::new();
        self.finish_into(outcome, &mut actions);
        for a in actions {
            (self.dispatch)(self, a);
        }
    }

    /// A listen stream opened from [`Action::Listen`] ended.
    pub fn end_stream(self: &Arc<Self>, key: &RequestId) {
        let mut inner = self.inner.lock();
        inner.tokens.remove(key);
        inner.core.handle_stream_end(key, now());
    }

    /// One core event as an action (or carried out here: a cancellation fires its token).
    fn action(&self, tokens: &mut HashMap<RequestId, CancellationToken, Seeded>, event: Event) -> Option<Action> {
        Some(match event {
            Event::Dispatch(d) => {
                let cancel = CancellationToken::new();
                if d.era == Era::Legacy {
                    tokens.insert(d.key.clone(), cancel.clone());
                }
                Action::Serve(Job::new(d, cancel, self.server.clone()))
            }
            Event::Listen(d) => {
                let cancel = CancellationToken::new();
                tokens.insert(d.key.clone(), cancel.clone());
                Action::Listen(Job::new(d, cancel, self.server.clone()))
            }
            Event::Cancel(key) => {
                if let Some(t) = tokens.remove(&key) {
                    t.cancel();
                }
                return None;
            }
            Event::Transmit(t) => Action::Transmit(t),
            Event::Finished(id) => {
                if !tokens.is_empty() {
                    tokens.remove(&key_of(&id));
                }
                Action::Finished(id)
            }
            #[cfg(feature = "legacy")]
            Event::LegacyOpened => Action::LegacyOpened,
        })
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
