//! What ties a handler's [`Context`] to its task: the binding every round of a task gets, and
//! the slot the engine sees as a [`TaskScope`].

use super::status::TaskBinding;
use crate::context::Context;
use crate::context::{ScopeFuture, TaskScope};
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};

/// A request for the framework to create the task now ([`TaskStart::Handler`]); the reply says
/// whether the handler now runs in a task (`Ok(true)`), synchronously (`Ok(false)`), or fails.
pub(crate) type StartRequest = tokio::sync::oneshot::Sender<Result<bool, mcp_protocol::ProtocolError>>;

/// The task side of a [`crate::Context`]: the task the call runs in, or the way to start one
/// ([`TaskStart::Handler`]).
#[derive(Default)]
pub(crate) struct TaskSlot {
    pub(crate) bound: OnceLock<TaskBinding>,
    pub(crate) start: Mutex<Option<tokio::sync::oneshot::Sender<StartRequest>>>,
}

impl TaskSlot {
    /// A slot bound to `binding`'s task (`None`: not bound yet).
    pub(crate) fn bound(binding: Option<TaskBinding>) -> Arc<Self> {
        let slot = Self::default();
        if let Some(b) = binding {
            let _ = slot.bound.set(b);
        }
        Arc::new(slot)
    }
}

impl TaskScope for TaskSlot {
    fn task_id(&self) -> Option<&str> {
        self.bound.get().map(|b| b.id.as_str())
    }

    fn start_task(&self) -> ScopeFuture<'_, Result<(), crate::error::HandlerError>> {
        Box::pin(async move {
            if self.bound.get().is_some() {
                return Ok(());
            }
            let Some(ask) = self.start.lock().take() else {
                return Ok(());
            };
            let (reply, answer) = tokio::sync::oneshot::channel();
            if ask.send(reply).is_err() {
                return Ok(());
            }
            match answer.await {
                Ok(Err(e)) => Err(e.into()),
                Ok(Ok(_)) | Err(_) => Ok(()),
            }
        })
    }

    fn set_status<'a>(&'a self, ctx: &'a Context, message: String) -> ScopeFuture<'a, ()> {
        Box::pin(async move {
            if let Some(b) = self.bound.get() {
                b.set_status(ctx.serving(), message).await;
            }
        })
    }
}
