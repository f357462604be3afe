//! The [`CallTool`] request builder that [`Client::call_tool`] returns: options first, then
//! await it (following a task the server may create) or [`CallTool::start`] it.

use super::tasks::Started;
use super::{CallOptions, Client, NotificationCallback};
use crate::error::ClientError;
use crate::result::ToolResult;
use mcp_protocol::types::LoggingLevel;
use serde_json::Value;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A `tools/call` being set up: await it, or set options first
/// (`client.call_tool("echo", args).timeout(d).on_progress(f).await`).
#[must_use = "a tool call does nothing until awaited"]
pub struct CallTool<'a> {
    client: &'a Client,
    name: String,
    arguments: Value,
    options: CallOptions,
    on_task: Option<NotificationCallback>,
}

impl std::fmt::Debug for CallTool<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallTool").field("name", &self.name).field("options", &self.options).finish()
    }
}

impl<'a> CallTool<'a> {
    pub(crate) fn new(client: &'a Client, name: &str, arguments: Value) -> Self {
        Self { client, name: name.to_owned(), arguments, options: CallOptions::default(), on_task: None }
    }

    /// Replaces every option at once.
    pub fn options(mut self, options: CallOptions) -> Self {
        self.options = options;
        self
    }

    /// Called with each `notifications/progress` params object (sends a progress token).
    pub fn on_progress(mut self, f: impl Fn(&Value) + Send + Sync + 'static) -> Self {
        self.options.on_progress = Some(Arc::new(f) as NotificationCallback);
        self
    }

    /// Called with each `notifications/message` params object at or above `level`.
    pub fn on_log(mut self, level: LoggingLevel, f: impl Fn(&Value) + Send + Sync + 'static) -> Self {
        self.options.log_level = Some(level);
        self.options.on_log = Some(Arc::new(f) as NotificationCallback);
        self
    }

    /// Overrides the client's request timeout for this call (each request of it, when the
    /// call runs as a task).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.options.timeout = Some(t);
        self
    }

    /// Called with the task (as `tasks/get` shows it) each time its status or status message
    /// changes, when the server runs the call as a task.
    pub fn on_task_status(mut self, f: impl Fn(&Value) + Send + Sync + 'static) -> Self {
        self.on_task = Some(Arc::new(f) as NotificationCallback);
        self
    }

    /// Sends the call and returns what the server answered: the result, or the task it
    /// created (to follow, cancel or detach with the [`crate::TaskHandle`]).
    pub async fn start(self) -> Result<Started, ClientError> {
        let v = self.client.call_tool_with(&self.name, self.arguments, &self.options).await?;
        self.client.started(v)
    }
}

impl<'a> IntoFuture for CallTool<'a> {
    type Output = Result<ToolResult, ClientError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let on_task = self.on_task.clone();
            match self.start().await? {
                Started::Done(r) => Ok(r),
                Started::Task(task) => {
                    // Boxed: a task's polling loop stays out of a plain call's future.
                    Box::pin(task.wait_or_cancel(move |t| {
                        if let Some(f) = &on_task {
                            f(t)
                        }
                    }))
                    .await
                }
            }
        })
    }
}
