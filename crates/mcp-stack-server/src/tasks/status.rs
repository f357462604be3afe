//! [`crate::Context::status`] inside a task: status messages coalesced per task.
//!
//! A handler may report as often as it likes; the store sees at most one `statusMessage` write
//! of a task in flight, and writes of one task start at least [`super::TaskConfig::status_interval`]
//! apart. A message sent while a write is in flight or too recent replaces the one waiting (the
//! newest wins) and returns at once; one trailing write stores it when its turn comes. Every
//! write is made by a spawned writer, never by the handler's own future, so a round that is
//! dropped (cancelled) never holds a store operation of its own (a per-task turn in a shared
//! store) while the worker records the end.
//!
//! The gate lives as long as the task's bindings (the worker and the rounds' contexts): there is
//! no map to forget. When the work ends the gate closes: whatever is still waiting is handed to
//! the worker (which writes it just before a `completed` end, the one end that keeps the
//! message) and nothing sent afterwards is written.

use super::{Applied, TaskChange, TaskRuntime, Terminal};
use crate::change_feed::ChangeEvent;
use crate::server::Server;
use parking_lot::{Mutex, MutexGuard};
use std::sync::Arc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// One task's status messages on their way to the store, shared by every round of the task.
#[derive(Default)]
pub(crate) struct StatusGate {
    state: Mutex<GateState>,
    /// Held across each write, so that closing waits for the one in flight (never for a wait).
    writing: tokio::sync::Mutex<()>,
    /// Cancelled (under the state lock) when the gate closes: nothing more is written and a
    /// writer waiting for its turn stops at once.
    closed: CancellationToken,
}

#[derive(Default)]
struct GateState {
    /// A writer runs: writing, or waiting for the interval to pass.
    busy: bool,
    /// The newest message not written yet.
    pending: Option<String>,
    /// When the last write started.
    last: Option<Instant>,
}

/// What a [`TaskBinding::set_status`] call starts.
enum Start {
    /// A writer runs already and will write the message.
    Queued,
    /// No write for a while: write now (the caller waits for it).
    Now,
    /// The last write was too recent: a writer writes the message at this instant.
    At(Instant),
}

/// What ties a handler's context to its task (one per task, cloned into each round).
#[derive(Clone)]
pub(crate) struct TaskBinding {
    pub(crate) id: String,
    pub(crate) runtime: Arc<TaskRuntime>,
    /// The task's status messages on their way to the store.
    pub(crate) status: Arc<StatusGate>,
}

impl StatusGate {
    fn state(&self) -> MutexGuard<'_, GateState> {
        self.state.lock()
    }

    /// Closes the gate once the work ended any other way: drops what waits.
    pub(crate) fn close(&self) {
        let mut s = self.state();
        s.pending = None;
        self.closed.cancel();
    }

    /// Closes the gate before the end is recorded: waits for the write in flight (if any, so
    /// that none lands after what the caller writes next) and returns the message still waiting.
    async fn close_for_end(&self) -> Option<String> {
        let _turn = self.writing.lock().await;
        let mut s = self.state();
        self.closed.cancel();
        s.pending.take()
    }
}

impl TaskBinding {
    /// Sets the task's `statusMessage`, coalesced (see the module docs). Waits for the store only
    /// when the message is written at once; otherwise returns at once (a cooperative yield point,
    /// so that a handler reporting in a tight loop can still be stopped).
    pub(crate) async fn set_status(&self, server: &Server, message: String) {
        let gate = &self.status;
        let start = {
            let mut s = gate.state();
            if gate.closed.is_cancelled() {
                return;
            }
            s.pending = Some(message);
            if s.busy {
                Start::Queued
            } else {
                s.busy = true;
                let now = Instant::now();
                match s.last.map(|t| t + self.runtime.config.status_interval).filter(|due| *due > now) {
                    Some(due) => Start::At(due),
                    None => Start::Now,
                }
            }
        };
        let writer = |due, written| {
            let (rt, server, id, gate) = (self.runtime.clone(), server.clone(), self.id.clone(), gate.clone());
            let write = async move { rt.write_statuses(&server, &id, &gate, due, written).await };
            tokio::spawn(tracing::Instrument::in_current_span(write));
        };
        match start {
            Start::Queued => tokio::task::consume_budget().await,
            Start::At(due) => {
                writer(Some(due), None);
                tokio::task::consume_budget().await;
            }
            Start::Now => {
                let (written, done) = tokio::sync::oneshot::channel();
                writer(None, Some(written));
                let _ = done.await;
            }
        }
    }
}

impl TaskRuntime {
    /// The writer of one busy spell: writes the waiting message (at `due`, else now), then the
    /// next one an interval later, until nothing waits or the gate closes. `written` hears of
    /// the first write.
    async fn write_statuses(
        &self,
        server: &Server,
        id: &str,
        gate: &StatusGate,
        mut due: Option<Instant>,
        mut written: Option<tokio::sync::oneshot::Sender<()>>,
    ) {
        loop {
            if let Some(at) = due {
                tokio::select! {
                    _ = tokio::time::sleep_until(at) => {}
                    _ = gate.closed.cancelled() => return,
                }
            }
            let turn = gate.writing.lock().await;
            let message = {
                let mut s = gate.state();
                match s.pending.take().filter(|_| !gate.closed.is_cancelled()) {
                    Some(m) => {
                        s.last = Some(Instant::now());
                        m
                    }
                    None => {
                        s.busy = false;
                        return;
                    }
                }
            };
            let live = self.write_status(server, id, message).await;
            drop(turn);
            if let Some(w) = written.take() {
                let _ = w.send(());
            }
            if !live {
                gate.close();
            }
            let mut s = gate.state();
            if gate.closed.is_cancelled() || s.pending.is_none() {
                s.busy = false;
                return;
            }
            due = s.last.map(|t| t + self.config.status_interval);
        }
    }

    /// Writes one status message and announces it; false once the task is gone or over.
    async fn write_status(&self, server: &Server, id: &str, message: String) -> bool {
        match self.store.update(id, TaskChange::Message(message), self.now_ms()).await {
            Ok(Some(u)) => {
                if u.applied == Applied::Changed {
                    server.notify(ChangeEvent::TaskStatus(id.to_owned()));
                }
                !u.record.status.is_terminal()
            }
            Ok(None) => false,
            Err(e) => {
                tracing::warn!(task = id, error = %e, "task status update failed");
                true
            }
        }
    }

    /// Records the task's end: closes its status gate first (a message still waiting is written
    /// just before a `completed` end, the only end that keeps the message; later ones are
    /// dropped), then the terminal record. Never waits for an interval, only for a write in
    /// flight.
    pub(crate) async fn finish(&self, server: &Server, binding: &TaskBinding, end: Terminal) {
        let id = binding.id.as_str();
        if let Some(last) = binding.status.close_for_end().await {
            if matches!(end, Terminal::Completed(_)) {
                self.write_status(server, id, last).await;
            }
        }
        self.apply(server, id, TaskChange::Finish(end)).await;
    }
}
