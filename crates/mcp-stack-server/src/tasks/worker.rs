//! Creating a task for a `tools/call` and running its handler detached from the request:
//! rounds, parking on input, cancellation, the terminal record.

use super::binding::TaskSlot;
use super::status::TaskBinding;
use super::{TaskRecord, TaskRuntime, TaskStart, TaskStoreError, Terminal};
use crate::catalog::{BoxFuture, ToolEntry};
use crate::change_feed::ChangeEvent;
use crate::context::{Context, ContextInner, RequestEnv};
use crate::error::HandlerError;
use crate::server::Server;
use crate::tasks::{Applied, TaskChange, TaskStatus};
use mcp_protocol::types::CallToolResult;
use mcp_protocol::{Cancellation, InputFailure, ProtocolError};
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

type Round = BoxFuture<Result<CallToolResult, HandlerError>>;

/// How [`TaskRuntime::call_tool`] served a call: synchronously (no task was made), or by
/// creating a task (its `CreateTaskResult`).
#[allow(clippy::large_enum_variant)] // short-lived, moved once: boxing would only cost an allocation
pub(crate) enum ToolRun {
    /// The handler's own outcome.
    Done(Result<CallToolResult, HandlerError>),
    /// The `CreateTaskResult`.
    Task(Value),
}

/// How a parked round ended.
enum Parked {
    /// Every question was answered: these are the answers.
    Answered(Map<String, Value>),
    /// The task ended meanwhile (cancelled, expired, or the store lost it).
    Over,
    /// The round cannot park.
    Failed(ProtocolError),
}

impl Context {
    /// A context for one round of a task's work: the request's `_meta` and params with the
    /// answers so far as `inputResponses`, no notification sink (no progress or log in tasks),
    /// the task's cancellation token.
    pub(crate) fn for_task_round(
        &self,
        binding: Option<TaskBinding>,
        answers: &Map<String, Value>,
        state: Value,
        cancel: CancellationToken,
    ) -> Context {
        let mut params = self.inner.params.clone();
        params.remove("requestState");
        if !answers.is_empty() {
            params.insert("inputResponses".into(), Value::Object(answers.clone()));
        }
        let mut env = RequestEnv::new(cancel);
        env.principal = self.inner.env.principal.clone();
        env.scopes = self.inner.env.scopes.clone();
        env.http = self.inner.env.http.clone();
        self.derive(binding, params, env, state)
    }

    /// A copy of this context with other params, environment and round state.
    pub(crate) fn derive(
        &self,
        binding: Option<TaskBinding>,
        params: Map<String, Value>,
        env: RequestEnv,
        state: Value,
    ) -> Context {
        let i = &self.inner;
        let inner = ContextInner::new(
            self.serving().clone(),
            i.id.clone(),
            i.method.clone(),
            i.meta.clone(),
            params,
            env,
            state,
        );
        let inner = ContextInner { legacy: i.legacy, home: i.home.clone(), ..inner };
        if binding.is_some() {
            let _ = inner.task.set(TaskSlot::bound(binding));
        }
        Context { inner: Arc::new(inner) }
    }
}

impl TaskRuntime {
    /// The binding of a new task (every round of it gets a clone).
    fn binding(self: &Arc<Self>, id: &str) -> TaskBinding {
        TaskBinding { id: id.to_owned(), runtime: self.clone(), status: Arc::default() }
    }

    /// Stores a new task for this request. `Ok(None)`: no task, the call runs synchronously
    /// (an optional task past capacity); a required task past capacity, or a store failure, is
    /// the caller's error.
    async fn create(
        self: &Arc<Self>,
        server: &Server,
        ctx: &Context,
        required: bool,
    ) -> Result<Option<TaskRecord>, ProtocolError> {
        self.start_sweeper(server);
        let record = self.new_record(ctx.principal());
        match self.store.create(record.clone(), self.now_ms()).await {
            Ok(()) => Ok(Some(record)),
            Err(TaskStoreError::Capacity(_)) if !required => Ok(None),
            // A full store is no failure: the caller may try again once a task ends.
            Err(e @ TaskStoreError::Capacity(_)) => {
                Err(ProtocolError::unavailable("tasks", format!("cannot create the task: {e}")))
            }
            Err(e) => Err(crate::error::store_failed("cannot create the task", e)),
        }
    }

    /// Serves a `tools/call` that may run as a task: creates it (now, or when the handler asks)
    /// and returns the `CreateTaskResult`, or the synchronous outcome when no task was made.
    pub(crate) async fn call_tool(
        self: &Arc<Self>,
        server: &Server,
        ctx: &Context,
        tool: Arc<ToolEntry>,
        required: bool,
    ) -> Result<ToolRun, ProtocolError> {
        let answers = ctx.input_responses().cloned().unwrap_or_default();
        if tool.task_start == TaskStart::Handler {
            return self.call_deferred(server, ctx, tool, required).await;
        }
        let Some(record) = self.create(server, ctx, required).await? else {
            return Ok(ToolRun::Done((tool.handler)(ctx.clone()).await));
        };
        let token = CancellationToken::new();
        self.register(&record.task_id, token.clone());
        let binding = self.binding(&record.task_id);
        let round_ctx = ctx.for_task_round(Some(binding.clone()), &answers, ctx.round_state().clone(), token.clone());
        let first = (tool.handler)(round_ctx);
        self.spawn_work(server, ctx, tool, binding, token, first, answers);
        Ok(ToolRun::Task(record.create_result()))
    }

    /// [`TaskStart::Handler`]: the handler runs in the request until it calls `start_task`.
    async fn call_deferred(
        self: &Arc<Self>,
        server: &Server,
        ctx: &Context,
        tool: Arc<ToolEntry>,
        required: bool,
    ) -> Result<ToolRun, ProtocolError> {
        let token = CancellationToken::new();
        // Until the task exists the handler serves the request: its inputResponses, requestState
        // and notification sink; its own token, so that the task outlives the request.
        let env = ctx.inner.env.with_cancel(token.clone());
        let dctx = ctx.derive(None, ctx.params().clone(), env, ctx.round_state().clone());
        let (ask, mut asked) = tokio::sync::oneshot::channel();
        let slot = TaskSlot::bound(None);
        *slot.start.lock() = Some(ask);
        let _ = dctx.inner.task.set(slot.clone());
        let mut fut = (tool.handler)(dctx.clone());
        let request_cancel = ctx.cancellation().clone();
        let mut forwarded = false;
        loop {
            tokio::select! {
                biased;
                r = &mut fut => return Ok(ToolRun::Done(r)),
                _ = request_cancel.cancelled(), if !forwarded => { forwarded = true; token.cancel(); }
                reply = &mut asked => {
                    let Ok(reply) = reply else { return Ok(ToolRun::Done(fut.await)) };
                    let record = match self.create(server, ctx, required).await {
                        Ok(Some(r)) => r,
                        other => {
                            // No task: the handler goes on synchronously (or fails with the error).
                            let _ = reply.send(other.map(|_| false));
                            return Ok(ToolRun::Done(fut.await));
                        }
                    };
                    let binding = self.binding(&record.task_id);
                    let _ = slot.bound.set(binding.clone());
                    self.register(&record.task_id, token.clone());
                    let _ = reply.send(Ok(true));
                    self.spawn_work(server, ctx, tool, binding, token, fut, Map::new());
                    return Ok(ToolRun::Task(record.create_result()));
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn spawn_work(
        self: &Arc<Self>,
        server: &Server,
        ctx: &Context,
        tool: Arc<ToolEntry>,
        binding: TaskBinding,
        token: CancellationToken,
        first: Round,
        answers: Map<String, Value>,
    ) {
        let (rt, server, ctx, id) = (self.clone(), server.clone(), ctx.clone(), binding.id.clone());
        // The task's rounds are polled here, apart from the request: the panic hook still knows
        // which request (and tool) they serve.
        let info = crate::panic::Describe::Context(ctx.clone());
        // A root span of its own (the work outlives the call), linked to the call's span.
        let span = crate::telemetry::task_span(&tool.name, &id);
        let work = async move {
            rt.work(&server, &ctx, &tool, &binding, &token, first, answers).await;
            // However the work ended, no status message is written after it.
            binding.status.close();
            rt.unregister(&id);
        };
        self.running.spawn(crate::panic::scoped(info, tracing::Instrument::instrument(work, span)));
    }

    #[allow(clippy::too_many_arguments)]
    async fn work(
        self: &Arc<Self>,
        server: &Server,
        ctx: &Context,
        tool: &Arc<ToolEntry>,
        binding: &TaskBinding,
        token: &CancellationToken,
        mut round: Round,
        mut answers: Map<String, Value>,
    ) {
        use futures::FutureExt;
        let id = binding.id.as_str();
        // Not the server's shutdown: work goes on through the drain, until its bound.
        let shutdown = self.abort.clone();
        // Changes made elsewhere (a `tasks/cancel` served by another instance) wake the work.
        let mut revisions = self.store.watch(id);
        let mut rounds = 0;
        let end = loop {
            let r = tokio::select! {
                biased;
                _ = token.cancelled() => break Terminal::Cancelled,
                _ = shutdown.cancelled() => break failed(SHUT_DOWN),
                changed = changed(&mut revisions) => {
                    if !changed || self.cancel_seen(id).await {
                        break Terminal::Cancelled;
                    }
                    continue;
                }
                r = std::panic::AssertUnwindSafe(&mut round).catch_unwind() => r,
            };
            let outcome = match r {
                Err(panic) => break failed(server.caught_panic(&*panic, Some(id))),
                Ok(outcome) => outcome,
            };
            let ir = match outcome {
                Ok(v) => {
                    break match server.check_tool_output(tool, &v) {
                        Ok(()) => Terminal::Completed(serde_json::to_value(v).expect("results serialize")),
                        Err(e) => failed(e),
                    }
                }
                Err(e @ HandlerError::Tool { .. }) => {
                    let error = CallToolResult::error(server.error_text(&e));
                    break Terminal::Completed(serde_json::to_value(error).expect("results serialize"));
                }
                Err(HandlerError::Protocol(e)) => break failed(e),
                Err(HandlerError::InputRequired(ir)) => ir,
            };
            rounds += 1;
            if rounds > self.config.max_input_rounds {
                let max = self.config.max_input_rounds;
                break failed(ProtocolError::Input(InputFailure::TooManyRounds { max }));
            }
            match self.park(server, id, ir.requests, token, &shutdown).await {
                Parked::Answered(more) => answers.extend(more),
                Parked::Over => return,
                Parked::Failed(e) => break failed(e),
            }
            let next = ctx.for_task_round(Some(binding.clone()), &answers, ir.state, token.clone());
            round = (tool.handler)(next);
        };
        // Stop the handler before recording the end: a round cut short must not hold anything
        // the end waits for (a store that serialises updates per task would wait forever for a
        // future nobody polls). Status writes run apart from the round for the same reason.
        drop(round);
        crate::telemetry::task_end(&tracing::Span::current(), &end);
        self.finish(server, binding, end).await;
    }

    /// Parks the task on `requests` and waits until every one is answered.
    async fn park(
        &self,
        server: &Server,
        id: &str,
        requests: Map<String, Value>,
        token: &CancellationToken,
        shutdown: &CancellationToken,
    ) -> Parked {
        let Some(mut revisions) = self.store.watch(id) else { return Parked::Over };
        match self.apply(server, id, TaskChange::Park(requests)).await {
            None => return Parked::Over,
            Some(Applied::KeyReused(k)) => {
                let message = format!("input key {k:?} was already used by this task");
                return Parked::Failed(ProtocolError::InvalidResult { message });
            }
            Some(_) => {}
        }
        loop {
            match self.store.get(id, self.now_ms()).await {
                Ok(Some(r)) if r.status == TaskStatus::Working => break,
                Ok(Some(r)) if !r.status.is_terminal() => {}
                Ok(_) => return Parked::Over,
                Err(e) => return Parked::Failed(crate::error::store_failed("task store failure", e)),
            }
            tokio::select! {
                _ = token.cancelled() => {
                    self.apply(server, id, TaskChange::Finish(Terminal::Cancelled)).await;
                    return Parked::Over;
                }
                _ = shutdown.cancelled() => return Parked::Failed(SHUT_DOWN),
                changed = revisions.changed() => if changed.is_err() { return Parked::Over },
            }
        }
        match self.store.update(id, TaskChange::TakeAnswers, self.now_ms()).await {
            Ok(Some(u)) => match u.applied {
                Applied::Answers(a) => Parked::Answered(a),
                _ => Parked::Over,
            },
            Ok(None) => Parked::Over,
            Err(e) => Parked::Failed(crate::error::store_failed("task store failure", e)),
        }
    }

    /// Applies a change and announces it; `None` when the task is gone.
    pub(crate) async fn apply(&self, server: &Server, id: &str, change: TaskChange) -> Option<Applied> {
        match self.store.update(id, change, self.now_ms()).await {
            Ok(Some(u)) => {
                if u.applied == Applied::Changed {
                    server.notify(ChangeEvent::TaskStatus(id.to_owned()));
                }
                Some(u.applied)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(task = id, error = %e, "task store update failed");
                None
            }
        }
    }
}

impl TaskRuntime {
    /// Whether the task was cancelled (or ended) elsewhere: its work should stop.
    async fn cancel_seen(&self, id: &str) -> bool {
        match self.store.get(id, self.now_ms()).await {
            Ok(Some(r)) => r.cancel_requested || r.status.is_terminal(),
            Ok(None) => true,
            Err(_) => false, // the store is unreachable: keep working, the lease tells the rest
        }
    }
}

/// The next revision change: true when it changed, false when the task is gone; pending
/// forever without a receiver.
async fn changed(revisions: &mut Option<tokio::sync::watch::Receiver<u64>>) -> bool {
    match revisions {
        Some(rx) => rx.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// A task cut short by the server's shutdown.
const SHUT_DOWN: ProtocolError = ProtocolError::Cancelled { reason: Cancellation::Shutdown };

fn failed(e: ProtocolError) -> Terminal {
    Terminal::Failed(e.to_error_object())
}

impl TaskRuntime {
    /// Starts purging expired tasks and, for a store with leases, renewing this process's
    /// leases and failing orphaned tasks (once; stops with the server or when the runtime is
    /// dropped).
    pub(crate) fn start_sweeper(self: &Arc<Self>, server: &crate::server::Server) {
        if self.sweeper.set(()).is_err() {
            return;
        }
        let shutdown = self.abort.clone();
        if let Some(lease) = self.store.lease() {
            self.start_leases(server, lease);
        }
        let weak = Arc::downgrade(self);
        let every = self.config.sweep_interval;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tick.tick() => {}
                }
                let Some(rt) = weak.upgrade() else { return };
                let Ok(expired) = rt.store.purge_expired(rt.now_ms()).await else { continue };
                let mut live = rt.live.lock();
                for id in expired {
                    if let Some(token) = live.remove(&id) {
                        token.cancel();
                    }
                }
            }
        });
    }

    /// Every third of the lease: renews the leases of the work running here, then fails the
    /// tasks whose lease lapsed (their process died), so none stays `working` forever.
    fn start_leases(self: &Arc<Self>, server: &crate::server::Server, lease: std::time::Duration) {
        let weak = Arc::downgrade(self);
        let weak_server = Arc::downgrade(&server.inner);
        let shutdown = self.abort.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval((lease / 3).max(std::time::Duration::from_millis(10)));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tick.tick() => {}
                }
                let (Some(rt), Some(inner)) = (weak.upgrade(), weak_server.upgrade()) else { return };
                let server = crate::server::Server { inner };
                let ids: Vec<String> = rt.live.lock().keys().cloned().collect();
                if let Err(e) = rt.store.heartbeat(&ids, rt.now_ms()).await {
                    tracing::warn!(error = %e, "task lease renewal failed");
                }
                let Ok(orphans) = rt.store.orphans(rt.now_ms()).await else { continue };
                for id in orphans {
                    // The instance that ran it stopped: its lease ran out.
                    let reason = mcp_protocol::Cancellation::InstanceStopped;
                    let error = mcp_protocol::ProtocolError::Cancelled { reason };
                    let end = TaskChange::Finish(Terminal::Failed(error.to_error_object()));
                    rt.apply(&server, &id, end).await;
                }
            }
        });
    }
}
