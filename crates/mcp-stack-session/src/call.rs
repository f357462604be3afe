//! [`Call`]: one request being served, from the moment the core routes it until its handler's
//! [`Outcome`] goes back to the core. The one type that describes a running call.

use futures::Stream;
use mcp_protocol::types::RequestId;
use mcp_protocol::version::Era;
use mcp_protocol::{Cancellation, ProtocolError, Request};
use mcp_server::internal::Preset;
use mcp_server::{Reply, RequestEnv, Server};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// The handler future of a started call.
type Handling = Pin<Box<dyn Future<Output = Result<Reply, ProtocolError>> + Send + 'static>>;

/// One request to serve, and then its handler running: the core hands it out
/// ([`crate::Event::Call`], [`crate::Event::Listen`]), the transport starts it with its
/// environment ([`Call::start`]) and polls it to its [`Outcome`], which goes back to the core.
///
/// The call's cancellation token is the core's: it fires when the client cancels the call
/// (`notifications/cancelled`) or the session ends. A call the core tracks (a legacy call, a
/// modern call its transport reported as still running) then ends at once as cancelled, its
/// handler future dropped.
pub struct Call {
    pub(crate) key: RequestId,
    pub(crate) id: Value,
    pub(crate) era: Era,
    pub(crate) cancel: CancellationToken,
    stage: Stage,
    /// Whether the core tracks the call (so it can be cancelled).
    pub(crate) tracked: bool,
    /// Set up on the first poll of a tracked call that does not finish.
    cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
}

/// Where a [`Call`] is in its life.
enum Stage {
    /// Routed, not started.
    Routed { request: Request, preset: Option<Box<Preset>> },
    /// Its handler runs.
    Running(Handling),
    /// Its outcome was taken; the finished handler future is kept until the call is dropped,
    /// so that a transport can free it after writing the answer.
    Finished { _handler: Handling },
    /// Between two stages.
    Done,
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call").field("id", &self.id).field("era", &self.era).finish_non_exhaustive()
    }
}

impl Call {
    /// A routed call (the core's).
    pub(crate) fn new(
        key: RequestId,
        request: Request,
        era: Era,
        preset: Option<Box<Preset>>,
        cancel: CancellationToken,
    ) -> Self {
        let id = request.id.clone();
        // Legacy calls are tracked by their session from the start.
        let tracked = era == Era::Legacy;
        Self { key, id, era, cancel, stage: Stage::Routed { request, preset }, tracked, cancelled: None }
    }

    /// The request's JSON-RPC id.
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// The key the core tracks the call under.
    pub fn key(&self) -> &RequestId {
        &self.key
    }

    /// The era the call is served in.
    #[cfg(all(test, feature = "legacy"))]
    pub(crate) fn era(&self) -> Era {
        self.era
    }

    /// The request, until the call is started.
    #[cfg(all(test, feature = "legacy"))]
    pub(crate) fn request(&self) -> Option<&Request> {
        match &self.stage {
            Stage::Routed { request, .. } => Some(request),
            _ => None,
        }
    }

    /// Fired when the client cancels the call or the session ends.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// What a legacy session supplies in place of `_meta`.
    #[cfg(all(test, feature = "legacy"))]
    pub(crate) fn preset(&self) -> Option<&Preset> {
        match &self.stage {
            Stage::Routed { preset, .. } => preset.as_deref(),
            _ => None,
        }
    }

    /// Starts the handler on `server` with what the transport knows about the request (`env`:
    /// principal, notification sink, HTTP parts); `env.cancel` is replaced by the call's own
    /// token. Then poll the call to its [`Outcome`]. Starting twice does nothing.
    pub fn start(&mut self, server: &Server, mut env: RequestEnv) {
        self.stage = match std::mem::replace(&mut self.stage, Stage::Done) {
            Stage::Routed { request, preset } => {
                env.cancel = self.cancel.clone();
                Stage::Running(mcp_server::internal::serve(server.clone(), request, env, preset))
            }
            other => other,
        };
    }

    /// Opens the `subscriptions/listen` stream of this call with `env` (as for
    /// [`Call::start`]): the acknowledgement, then change notifications, then the closing
    /// response at shutdown. The server's operation layers see the request first.
    pub async fn listen(
        self,
        server: &Server,
        mut env: RequestEnv,
    ) -> Result<impl Stream<Item = Value> + Send + 'static, ProtocolError> {
        let Stage::Routed { request, .. } = self.stage else {
            return Err(ProtocolError::Cancelled { reason: Cancellation::ByClient });
        };
        env.cancel = self.cancel;
        server.listen_layered(request, env).await
    }
}

impl Future for Call {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let this = &mut *self;
        let Stage::Running(fut) = &mut this.stage else { panic!("a call polled before its start or after its end") };
        let (result, cancelled) = match fut.as_mut().poll(cx) {
            // Only a tracked call can have been cancelled (the check takes a lock).
            Poll::Ready(r) => (r, this.tracked && this.cancel.is_cancelled()),
            Poll::Pending if !this.tracked => return Poll::Pending,
            Poll::Pending => {
                let cancel = &this.cancel;
                let cancelled = this.cancelled.get_or_insert_with(|| Box::pin(cancel.clone().cancelled_owned()));
                if cancelled.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                (Err(ProtocolError::Cancelled { reason: Cancellation::ByClient }), true)
            }
        };
        // The handler future stays until the call is dropped: a transport that writes the
        // answer first frees what the call holds after it.
        if let Stage::Running(fut) = std::mem::replace(&mut this.stage, Stage::Done) {
            this.stage = Stage::Finished { _handler: fut };
        }
        Poll::Ready(Outcome { id: std::mem::take(&mut this.id), cancelled, result })
    }
}

/// A call's outcome: what goes back to the core (`handle_outcome`, or the driver's `finish`).
#[derive(Debug)]
pub struct Outcome {
    pub(crate) id: Value,
    pub(crate) cancelled: bool,
    pub(crate) result: Result<Reply, ProtocolError>,
}

impl Outcome {
    /// The handler's result, for a transport that writes the response itself (encoded with
    /// [`Server::encode_response`]).
    pub fn into_result(self) -> Result<Reply, ProtocolError> {
        self.result
    }
}
