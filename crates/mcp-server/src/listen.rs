//! `subscriptions/listen`: a request whose response is a stream of change notifications.

use crate::context::RequestEnv;
use crate::server::{ChangeEvent, Server};
use futures::Stream;
use mcp_protocol::jsonrpc::{notification, result_response};
use mcp_protocol::meta::SUBSCRIPTION_ID;
use mcp_protocol::{Method, Params, ProtocolError, Request};
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// Caps on one `subscriptions/listen` filter (see [`crate::ServerBuilder::listen_limits`]). A
/// listen request over any of them is refused with `-32602` (invalid params) naming the cap;
/// nothing of it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListenLimits {
    /// Most `resourceSubscriptions` URIs per stream (default 1,024).
    pub max_resource_subscriptions: usize,
    /// Most `taskIds` per stream (default 1,024).
    pub max_task_ids: usize,
    /// Longest URI or task id, in bytes (default 2 KiB).
    pub max_entry_bytes: usize,
    /// Most bytes of URIs and task ids together per stream (default 256 KiB).
    pub max_filter_bytes: usize,
    /// Most bytes of URIs and task ids held by every open stream of the server together
    /// (default 64 MiB). A listen request that would go past it is refused with `-32603`
    /// (HTTP 503: try again later) and logged at `warn`.
    pub max_total_filter_bytes: usize,
}

impl Default for ListenLimits {
    fn default() -> Self {
        Self {
            max_resource_subscriptions: 1024,
            max_task_ids: 1024,
            max_entry_bytes: 2048,
            max_filter_bytes: 256 << 10,
            max_total_filter_bytes: 64 << 20,
        }
    }
}

impl ListenLimits {
    /// Sets the most `resourceSubscriptions` per stream.
    pub fn max_resource_subscriptions(mut self, n: usize) -> Self {
        self.max_resource_subscriptions = n;
        self
    }

    /// Sets the most `taskIds` per stream.
    pub fn max_task_ids(mut self, n: usize) -> Self {
        self.max_task_ids = n;
        self
    }

    /// Sets the longest URI or task id, in bytes.
    pub fn max_entry_bytes(mut self, n: usize) -> Self {
        self.max_entry_bytes = n;
        self
    }

    /// Sets the most bytes of URIs and task ids together per stream.
    pub fn max_filter_bytes(mut self, n: usize) -> Self {
        self.max_filter_bytes = n;
        self
    }

    /// Sets the most bytes of URIs and task ids held by all open streams together.
    pub fn max_total_filter_bytes(mut self, n: usize) -> Self {
        self.max_total_filter_bytes = n;
        self
    }
}

/// The filter a client asked for, reduced to what this server honours. The URIs and task ids
/// are sets: each event is matched in constant time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubscriptionFilter {
    /// `toolsListChanged`.
    pub tools: bool,
    /// `promptsListChanged`.
    pub prompts: bool,
    /// `resourcesListChanged`.
    pub resources: bool,
    /// `resourceSubscriptions`.
    pub resource_uris: HashSet<String>,
    /// `taskIds` (the tasks extension): tasks whose changes to announce.
    pub task_ids: HashSet<String>,
}

impl SubscriptionFilter {
    /// Parses the filter within `limits`; also returns the URIs and task ids in the order the
    /// client gave them (for the acknowledgement).
    fn parse(
        params: &Map<String, Value>,
        limits: &ListenLimits,
    ) -> Result<(Self, Vec<String>, Vec<String>), ProtocolError> {
        let Params::Listen { notifications: n } = Method::SubscriptionsListen.params(params)? else {
            unreachable!("listen params are Params::Listen")
        };
        let flag = |k: &str| -> Result<bool, ProtocolError> {
            match n.get(k) {
                None => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(ProtocolError::invalid_params(format!("`{k}` must be a boolean"))),
            }
        };
        let mut bytes = 0usize;
        let mut strings = |k: &str, max: usize| -> Result<(HashSet<String>, Vec<String>), ProtocolError> {
            let a = match n.get(k) {
                None => return Ok(Default::default()),
                Some(Value::Array(a)) => a,
                Some(_) => return Err(ProtocolError::invalid_params(format!("`{k}` must be an array"))),
            };
            if a.len() > max {
                return Err(ProtocolError::invalid_params(format!(
                    "`{k}` has {} entries; this server accepts at most {max} per stream",
                    a.len()
                )));
            }
            let (mut set, mut order) = (HashSet::with_capacity(a.len()), Vec::with_capacity(a.len()));
            for u in a {
                let u = u.as_str().ok_or_else(|| ProtocolError::invalid_params(format!("`{k}` must be strings")))?;
                if u.len() > limits.max_entry_bytes {
                    return Err(ProtocolError::invalid_params(format!(
                        "an entry of `{k}` is {} bytes long; this server accepts at most {}",
                        u.len(),
                        limits.max_entry_bytes
                    )));
                }
                bytes += u.len();
                if bytes > limits.max_filter_bytes {
                    return Err(ProtocolError::invalid_params(format!(
                        "the subscription filter is over {} bytes of URIs and task ids",
                        limits.max_filter_bytes
                    )));
                }
                if set.insert(u.to_owned()) {
                    order.push(u.to_owned());
                }
            }
            Ok((set, order))
        };
        let (resource_uris, uri_order) = strings("resourceSubscriptions", limits.max_resource_subscriptions)?;
        let (task_ids, task_order) = strings("taskIds", limits.max_task_ids)?;
        let filter = Self {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            resource_uris,
            task_ids,
        };
        Ok((filter, uri_order, task_order))
    }

    /// The acknowledged filter, URIs and task ids in the order the client gave them.
    fn to_json(&self, uris: &[String], tasks: &[String]) -> Value {
        let mut m = Map::new();
        if self.tools {
            m.insert("toolsListChanged".into(), json!(true));
        }
        if self.prompts {
            m.insert("promptsListChanged".into(), json!(true));
        }
        if self.resources {
            m.insert("resourcesListChanged".into(), json!(true));
        }
        if !self.resource_uris.is_empty() {
            m.insert("resourceSubscriptions".into(), json!(uris));
        }
        if !self.task_ids.is_empty() {
            m.insert("taskIds".into(), json!(tasks));
        }
        Value::Object(m)
    }

    /// The bytes of URIs and task ids the filter holds.
    fn held_bytes(&self) -> usize {
        self.resource_uris.iter().chain(&self.task_ids).map(String::len).sum()
    }

    /// Whether the stream announces `e` (constant time).
    pub fn wants(&self, e: &ChangeEvent) -> bool {
        match e {
            ChangeEvent::ToolsListChanged => self.tools,
            ChangeEvent::PromptsListChanged => self.prompts,
            ChangeEvent::ResourcesListChanged => self.resources,
            ChangeEvent::ResourceUpdated(uri) => self.resource_uris.contains(uri),
            ChangeEvent::TaskStatus(id) => self.task_ids.contains(id),
            ChangeEvent::Resync => false,
        }
    }
}

fn tagged(method: &str, mut params: Value, id: &Value) -> Value {
    params["_meta"] = json!({ SUBSCRIPTION_ID: id });
    notification(method, params)
}

impl Server {
    /// Opens a `subscriptions/listen` stream.
    ///
    /// The stream yields the acknowledgement first, then every matching change notification
    /// (each tagged with the subscription id), and ends with the graceful-closure response when
    /// the server shuts down or `env.cancel` fires (the latter without a response: the client left).
    pub fn listen(
        &self,
        req: Request,
        env: RequestEnv,
    ) -> Result<impl Stream<Item = Value> + Send + 'static, ProtocolError> {
        let ctx = self.prepare(req, env, None)?;
        let (mut filter, uri_order, mut task_order) =
            SubscriptionFilter::parse(ctx.params(), &self.inner.config.listen_limits)?;
        // Task ids need the extension on this very request; a server without tasks drops them.
        let tasks = match self.tasks() {
            Some(rt) if !filter.task_ids.is_empty() => {
                if !ctx.declares_tasks() {
                    return Err(crate::tasks::extension_required());
                }
                Some(rt.clone())
            }
            _ => {
                filter.task_ids.clear();
                task_order.clear();
                None
            }
        };
        // The server-wide budget of filter bytes, given back when the stream ends.
        let held =
            FilterBytes::take(&self.inner.listen_filter_bytes, filter.held_bytes(), &self.inner.config.listen_limits)?;
        let principal = ctx.principal().map(str::to_owned);
        let mut task_feed = tasks.as_ref().map(|_| self.inner.task_events.subscribe());
        let id = ctx.request_id().clone();
        let mut feed = self.change_feed();
        let shutdown = self.shutdown_token();
        let cancel = ctx.cancellation().clone();
        let server = self.clone();
        let mut ack = json!({ "notifications": filter.to_json(&uri_order, &task_order) });
        drop((uri_order, task_order));
        Ok(async_stream(move |tx| async move {
            let _held = held;
            ack["_meta"] = json!({ SUBSCRIPTION_ID: id });
            if tx.send(notification("notifications/subscriptions/acknowledged", ack)).await.is_err() {
                return;
            }
            // Where each watched task is now, so that nothing before the stream opened is missed.
            let task_update = |id: String| {
                let (tasks, principal) = (tasks.clone(), principal.clone());
                async move {
                    let rt = tasks?;
                    rt.notification_params(&id, principal.as_deref()).await
                }
            };
            for t in &filter.task_ids {
                if let Some(p) = task_update(t.clone()).await {
                    if tx.send(tagged("notifications/tasks", Value::Object(p), &id)).await.is_err() {
                        return;
                    }
                }
            }
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = shutdown.cancelled() => {
                        let done = server.finish_result(json!({ "resultType": "complete", "_meta": { SUBSCRIPTION_ID: id } }));
                        let _ = tx.send(result_response(&id, done)).await;
                        return;
                    }
                    _ = tx.closed() => return,
                    changes = feed.next(|| filter.resource_uris.iter().cloned().collect()) => {
                        let Some(changes) = changes else { return };
                        for e in changes.iter().filter(|e| filter.wants(e)) {
                            let Some((m, p)) = e.notification() else { continue };
                            if tx.send(tagged(m, p, &id)).await.is_err() { return; }
                        }
                    }
                    changed = next_task(&mut task_feed, &filter.task_ids) => {
                        for t in changed {
                            if let Some(p) = task_update(t).await {
                                if tx.send(tagged("notifications/tasks", Value::Object(p), &id)).await.is_err() { return; }
                            }
                        }
                    }
                }
            }
        }))
    }
}

/// The watched tasks that changed next (all of them after lag); pending forever without a feed.
async fn next_task(
    feed: &mut Option<tokio::sync::broadcast::Receiver<Option<String>>>,
    watched: &HashSet<String>,
) -> Vec<String> {
    use tokio::sync::broadcast::error::RecvError;
    let Some(rx) = feed.as_mut() else { return std::future::pending().await };
    loop {
        match rx.recv().await {
            Ok(Some(id)) if watched.contains(&id) => return vec![id],
            Ok(Some(_)) => {}
            Ok(None) | Err(RecvError::Lagged(_)) => return watched.iter().cloned().collect(),
            Err(RecvError::Closed) => {
                *feed = None;
                return std::future::pending().await;
            }
        }
    }
}

/// A stream fed by a spawned producer; dropping the stream closes the channel, which ends it.
fn async_stream<F, Fut>(producer: F) -> impl Stream<Item = Value> + Send + 'static
where
    F: FnOnce(tokio::sync::mpsc::Sender<Value>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    // Bounded: a consumer that does not read makes the producer wait (its change feeds lag
    // and resynchronise), it does not queue without end.
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let task = tokio::spawn(producer(tx));
    let guard = AbortOnDrop(task);
    futures::stream::unfold((rx, guard), |(mut rx, guard)| async move { rx.recv().await.map(|v| (v, (rx, guard))) })
}

/// Filter bytes taken from the server-wide budget, given back on drop.
struct FilterBytes {
    total: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    n: usize,
}

impl FilterBytes {
    fn take(
        total: &std::sync::Arc<std::sync::atomic::AtomicUsize>,
        n: usize,
        limits: &ListenLimits,
    ) -> Result<Self, ProtocolError> {
        use std::sync::atomic::Ordering;
        let before = total.fetch_add(n, Ordering::AcqRel);
        if n > 0 && before + n > limits.max_total_filter_bytes {
            total.fetch_sub(n, Ordering::AcqRel);
            tracing::warn!(
                held = before,
                limit = limits.max_total_filter_bytes,
                "a listen request was refused: the open streams' filters hold the most bytes allowed"
            );
            return Err(ProtocolError::Unavailable("the server holds too many subscriptions; try again later".into()));
        }
        Ok(Self { total: total.clone(), n })
    }
}

impl Drop for FilterBytes {
    fn drop(&mut self) {
        self.total.fetch_sub(self.n, std::sync::atomic::Ordering::AcqRel);
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
