//! Typed results on the client: [`ToolResult`] and the [`CallTool`] request builder.

use crate::client::{CallOptions, Client, NotificationCallback};
use crate::error::ClientError;
use mcp_protocol::types::{CallToolResult, ContentBlock, LoggingLevel};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// The result of a `tools/call`, as the server sent it, with typed views.
///
/// It keeps the JSON it came as (so content types of a newer or older revision are never lost)
/// and parses on demand.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult(Value);

impl ToolResult {
    pub(crate) fn new(v: Value) -> Self {
        Self(v)
    }

    /// The text of every text block, joined by newlines.
    pub fn text(&self) -> String {
        let blocks = self.0.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let texts: Vec<&str> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        texts.join("\n")
    }

    /// Whether the tool reported an execution error (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.0.get("isError").and_then(Value::as_bool) == Some(true)
    }

    /// `structuredContent` deserialized into `T` (an error if absent or of another shape).
    pub fn structured<T: DeserializeOwned>(&self) -> Result<T, ClientError> {
        let sc = self
            .0
            .get("structuredContent")
            .ok_or_else(|| ClientError::invalid_response("the result has no structuredContent"))?;
        T::deserialize(sc).map_err(|e| ClientError::invalid_response(format!("structuredContent: {e}")).caused_by(e))
    }

    /// The content blocks, typed.
    pub fn content(&self) -> Result<Vec<ContentBlock>, ClientError> {
        let c = self.0.get("content").cloned().unwrap_or(Value::Array(Vec::new()));
        serde_json::from_value(c).map_err(|e| ClientError::invalid_response(format!("content: {e}")).caused_by(e))
    }

    /// The whole result as the schema's `CallToolResult`.
    pub fn typed(&self) -> Result<CallToolResult, ClientError> {
        CallToolResult::deserialize_from(&self.0)
    }

    /// The result as JSON.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The result as JSON, owned.
    pub fn into_value(self) -> Value {
        self.0
    }
}

/// The result as compact JSON.
impl std::fmt::Display for ToolResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

trait DeserializeFrom: Sized {
    fn deserialize_from(v: &Value) -> Result<Self, ClientError>;
}

impl DeserializeFrom for CallToolResult {
    fn deserialize_from(v: &Value) -> Result<Self, ClientError> {
        serde::Deserialize::deserialize(v)
            .map_err(|e| ClientError::invalid_response(format!("CallToolResult: {e}")).caused_by(e))
    }
}

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
    pub async fn start(self) -> Result<crate::Started, ClientError> {
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
                crate::Started::Done(r) => Ok(r),
                crate::Started::Task(task) => {
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

#[cfg(test)]
mod tests;
