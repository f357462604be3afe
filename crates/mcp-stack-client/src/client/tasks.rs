//! The tasks extension on the client: a `tools/call` the server turned into a task is followed
//! to its end (polling `tasks/get` at the server's `pollIntervalMs`, answering in-task input
//! with the same handlers through `tasks/update`), and cancelled with `tasks/cancel` when the
//! caller gives up. [`TaskHandle`] is the lower level: status, wait, cancel, detach and resume.

use super::{CallOptions, Client};
use crate::error::ClientError;
use crate::result::ToolResult;
use mcp_protocol::meta::TASKS_EXTENSION;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::time::Duration;

/// The shortest and longest pause between two polls, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(20);
const MAX_POLL: Duration = Duration::from_secs(30);

/// A task on the server, by id: what `tasks/get` says about it, and what can be done with it.
/// Dropping a handle does nothing to the task (it is detached); [`TaskHandle::cancel`] stops it.
#[derive(Debug, Clone)]
pub struct TaskHandle {
    client: Client,
    id: String,
    poll: Duration,
}

/// A `tools/call` that may have become a task.
#[derive(Debug)]
pub enum Started {
    /// The server answered at once.
    Done(ToolResult),
    /// The server created a task.
    Task(TaskHandle),
}

fn poll_interval(task: &Value) -> Duration {
    let ms = task.get("pollIntervalMs").and_then(Value::as_u64).unwrap_or(1000);
    Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL)
}

fn status(task: &Value) -> &str {
    task.get("status").and_then(Value::as_str).unwrap_or("")
}

/// Sends `tasks/cancel` when dropped while armed: a caller that drops (or times out) a call
/// that is following a task stops the task too.
struct CancelOnDrop<'a> {
    handle: &'a TaskHandle,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let handle = self.handle.clone();
            rt.spawn(async move {
                if let Err(e) = handle.cancel().await {
                    tracing::debug!(task = %handle.id, error = %e, "tasks/cancel after the caller left failed");
                }
            });
        }
    }
}

impl TaskHandle {
    pub(crate) fn new(client: Client, created: &Value) -> Result<Self, ClientError> {
        let id = created
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| ClientError::invalid_response("a task result without a taskId"))?;
        Ok(Self { client, id: id.to_owned(), poll: poll_interval(created) })
    }

    /// The task's id (to resume it later with [`Client::task`]).
    pub fn id(&self) -> &str {
        &self.id
    }

    async fn send(&self, method: &str, mut params: Map<String, Value>) -> Result<Value, ClientError> {
        params.insert("taskId".into(), Value::from(self.id.as_str()));
        self.client.request(method, params, &CallOptions::default()).await
    }

    /// `tasks/get`: the task now (`status`, `statusMessage`, and `result`, `error` or
    /// `inputRequests` by status).
    pub async fn get(&self) -> Result<Value, ClientError> {
        self.send("tasks/get", Map::new()).await
    }

    /// `tasks/cancel` (acknowledged even when the task already ended).
    pub async fn cancel(&self) -> Result<(), ClientError> {
        self.send("tasks/cancel", Map::new()).await.map(drop)
    }

    /// `tasks/update`: answers some of the task's `inputRequests`.
    pub async fn update(&self, responses: Map<String, Value>) -> Result<(), ClientError> {
        let mut params = Map::new();
        params.insert("inputResponses".into(), Value::Object(responses));
        self.send("tasks/update", params).await.map(drop)
    }

    /// Follows the task to its end: `completed` gives the tool result, `failed` the task's
    /// JSON-RPC error, `cancelled` [`ClientError::TaskCancelled`]. In-task questions are
    /// answered with the client's handlers. `on_status` sees every new status or message.
    pub async fn wait_with(&self, mut on_status: impl FnMut(&Value) + Send) -> Result<ToolResult, ClientError> {
        let mut answered: BTreeSet<String> = BTreeSet::new();
        let mut last = (String::new(), None::<String>);
        let mut poll = self.poll;
        loop {
            let task = self.get().await?;
            let now = (status(&task).to_owned(), task.get("statusMessage").and_then(Value::as_str).map(str::to_owned));
            if now != last {
                on_status(&task);
                last = now;
            }
            poll = task.get("pollIntervalMs").map_or(poll, |_| poll_interval(&task));
            match status(&task) {
                "completed" => {
                    let result = task.get("result").cloned().unwrap_or_else(|| Value::Object(Map::new()));
                    return Ok(ToolResult::new(result));
                }
                "failed" => {
                    return Err(match task.get("error") {
                        Some(e) => ClientError::from_error_object(e),
                        None => ClientError::Server { code: -32603, message: "the task failed".into(), data: None },
                    });
                }
                "cancelled" => return Err(ClientError::TaskCancelled { task_id: self.id.clone() }),
                "input_required" => {
                    let requests = task.get("inputRequests").and_then(Value::as_object).cloned().unwrap_or_default();
                    let mut responses = Map::new();
                    for (key, r) in requests {
                        if answered.contains(&key) {
                            continue;
                        }
                        let method = r.get("method").and_then(Value::as_str).unwrap_or_default();
                        let params = r.get("params").cloned().unwrap_or_else(|| Value::Object(Map::new()));
                        responses.insert(key.clone(), self.client.inner.config.handlers.answer(method, params).await?);
                        answered.insert(key);
                    }
                    if !responses.is_empty() {
                        self.update(responses).await?;
                        continue;
                    }
                }
                "working" => {}
                other => return Err(ClientError::invalid_response(format!("unknown task status {other:?}"))),
            }
            tokio::time::sleep(poll).await;
        }
    }

    /// The task's states as they change (polled at its `pollIntervalMs`), ending after the
    /// first terminal one. Unlike [`TaskHandle::wait_with`] it answers no questions: an
    /// `input_required` state is reported and polling goes on (answer with
    /// [`TaskHandle::update`]).
    pub fn updates(&self) -> impl futures::Stream<Item = Result<Value, ClientError>> + Send + '_ {
        struct St {
            last: Option<(String, Option<String>, usize)>,
            poll: Duration,
            done: bool,
        }
        let start = St { last: None, poll: self.poll, done: false };
        futures::stream::unfold(start, move |mut st| async move {
            loop {
                if st.done {
                    return None;
                }
                let task = match self.get().await {
                    Ok(t) => t,
                    Err(e) => {
                        st.done = true;
                        return Some((Err(e), st));
                    }
                };
                let asked = task.get("inputRequests").and_then(Value::as_object).map_or(0, Map::len);
                let msg = task.get("statusMessage").and_then(Value::as_str).map(str::to_owned);
                let now = (status(&task).to_owned(), msg, asked);
                st.poll = task.get("pollIntervalMs").map_or(st.poll, |_| poll_interval(&task));
                st.done = matches!(now.0.as_str(), "completed" | "failed" | "cancelled");
                if st.last.as_ref() != Some(&now) {
                    st.last = Some(now);
                    return Some((Ok(task), st));
                }
                tokio::time::sleep(st.poll).await;
            }
        })
    }

    /// [`TaskHandle::wait_with`] without a status callback.
    pub async fn wait(&self) -> Result<ToolResult, ClientError> {
        self.wait_with(|_| {}).await
    }

    /// Waits like [`TaskHandle::wait_with`], and cancels the task if this future is dropped
    /// before the task ends (what a plain `call_tool` does).
    pub async fn wait_or_cancel(&self, on_status: impl FnMut(&Value) + Send) -> Result<ToolResult, ClientError> {
        let mut guard = CancelOnDrop { handle: self, armed: true };
        let r = self.wait_with(on_status).await;
        guard.armed = false;
        r
    }
}

impl Client {
    /// A handle on task `id` (created earlier, perhaps by another process: detach/resume).
    pub fn task(&self, id: &str) -> TaskHandle {
        TaskHandle { client: self.clone(), id: id.to_owned(), poll: Duration::from_secs(1) }
    }

    /// Whether requests declare the tasks extension (the application enabled it, and the
    /// server is modern: 2025-era sessions have no tasks).
    pub fn declares_tasks(&self) -> bool {
        self.inner.config.tasks && self.is_modern()
    }

    /// Whether the server offers the tasks extension.
    pub fn server_supports_tasks(&self) -> bool {
        self.server_capabilities().extensions.is_some_and(|e| e.contains_key(TASKS_EXTENSION))
    }

    /// Interprets a `tools/call` result: a task (only ever for a request that declared the
    /// extension) or the tool's result.
    pub(crate) fn started(&self, result: Value) -> Result<Started, ClientError> {
        if result.get("resultType").and_then(Value::as_str) != Some("task") {
            return Ok(Started::Done(ToolResult::new(result)));
        }
        if !self.declares_tasks() {
            return Err(ClientError::invalid_response(
                "the server created a task for a request that did not declare the tasks extension",
            ));
        }
        TaskHandle::new(self.clone(), &result).map(Started::Task)
    }
}
