//! `tasks/get`, `tasks/update`, `tasks/cancel`: the capability gate, the principal binding,
//! and the shapes they answer with.

use super::{Applied, TaskChange, TaskRecord, TaskRuntime};
use crate::context::Context;
use crate::server::Server;
use mcp_protocol::{Params, ProtocolError};
use serde_json::{Map, Value};

/// The answer for a task that does not exist, expired, or belongs to another principal: the
/// same in all three cases, so existence never leaks.
fn not_found() -> ProtocolError {
    ProtocolError::invalid_params("Failed to retrieve task: Task not found")
}

impl TaskRuntime {
    /// The task `id` if `principal` owns it and it is live.
    pub(crate) async fn owned(&self, id: &str, principal: Option<&str>) -> Result<TaskRecord, ProtocolError> {
        match self.store.get(id, self.now_ms()).await {
            Ok(Some(r)) if r.is_owned_by(principal) => Ok(r),
            Ok(_) => Err(not_found()),
            Err(e) => Err(crate::error::store_failed("task store failure", e)),
        }
    }

    /// Serves one `tasks/*` request (the caller checked the gate).
    pub(crate) async fn serve(
        &self,
        server: &Server,
        ctx: &Context,
        params: Params<'_>,
    ) -> Result<Value, ProtocolError> {
        let principal = ctx.principal();
        match params {
            Params::TasksGet { task_id } => Ok(Value::Object(self.owned(task_id, principal).await?.detailed())),
            Params::TaskUpdate { task_id, input_responses } => {
                self.owned(task_id, principal).await?;
                // Only outstanding keys are taken; values under other keys are never looked at.
                self.apply(server, task_id, TaskChange::Answer(input_responses.clone())).await;
                Ok(Value::Object(Map::new()))
            }
            Params::TasksCancel { task_id } => {
                self.owned(task_id, principal).await?;
                if self.apply(server, task_id, TaskChange::Cancel).await == Some(Applied::Changed) {
                    self.cancel_local(task_id);
                }
                Ok(Value::Object(Map::new()))
            }
            _ => Err(ProtocolError::method_not_found(ctx.method())),
        }
    }

    /// The `notifications/tasks` params for `id` as `principal` may see them (`None`: not theirs).
    pub(crate) async fn notification_params(&self, id: &str, principal: Option<&str>) -> Option<Map<String, Value>> {
        self.owned(id, principal).await.ok().map(|r| r.detailed())
    }
}

/// Serves `tasks/get|update|cancel`: through a fallback that serves tasks (after the same
/// gate and params check as the server's own tasks), else with the server's own tasks.
pub(crate) async fn serve_method(
    server: &Server,
    ctx: &Context,
    method: mcp_protocol::Method,
) -> Result<crate::reply::Reply, ProtocolError> {
    if server.fallback_serves_tasks() && !ctx.inner.legacy {
        if !ctx.declares_tasks() {
            return Err(super::extension_required());
        }
        method.params(ctx.params())?;
        if let Some(served) = server.serve_fallback(ctx, method).await {
            return served;
        }
    }
    let rt = gate(server, ctx)?.clone();
    rt.serve(server, ctx, method.params(ctx.params())?).await.map(crate::reply::Reply::from)
}

/// The `tasks/*` gate: only a request that declares the extension may call them (checked
/// before anything else about the request, so a non-declaring caller learns nothing).
fn gate<'a>(server: &'a Server, ctx: &Context) -> Result<&'a std::sync::Arc<TaskRuntime>, ProtocolError> {
    let rt = match server.tasks() {
        Some(rt) if !ctx.inner.legacy => rt,
        _ => return Err(crate::server::method_not_found(ctx.method())),
    };
    if !ctx.declares_tasks() {
        return Err(super::extension_required());
    }
    // Every instance that serves tasks sweeps them (and, on a shared store, fails the
    // tasks of instances that died), not only those that created some.
    rt.start_sweeper(server);
    Ok(rt)
}
