//! `subscriptions/listen`: a request whose response is a stream of change notifications.

use crate::access::{visible, Caller};
use crate::catalog::{Catalog, ListKind};
use crate::change_feed::ChangeEvent;
use crate::context::RequestEnv;
use crate::listen_limits::ListenLimits;
use crate::server::Server;
use futures::Stream;
use mcp_protocol::jsonrpc::{notification, result_response};
use mcp_protocol::meta::SUBSCRIPTION_ID;
use mcp_protocol::types::{self, SubscriptionFilter};
use mcp_protocol::{ProtocolError, Request};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// What one listen stream announces: the client's [`SubscriptionFilter`] reduced to what this
/// server honours, URIs and task ids as sets (each event is matched in constant time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Watch {
    tools: bool,
    prompts: bool,
    resources: bool,
    resource_uris: HashSet<String>,
    task_ids: HashSet<String>,
}

/// Checks one list of the filter against `limits`, in the client's order without repeats.
fn checked(
    key: &str,
    list: Option<Vec<String>>,
    max: usize,
    limits: &ListenLimits,
    bytes: &mut usize,
) -> Result<Vec<String>, ProtocolError> {
    let list = list.unwrap_or_default();
    if list.len() > max {
        return Err(ProtocolError::invalid_params(format!(
            "`{key}` has {} entries; this server accepts at most {max} per stream",
            list.len()
        )));
    }
    let mut seen = HashSet::with_capacity(list.len());
    let mut order = Vec::with_capacity(list.len());
    for u in list {
        if u.len() > limits.max_entry_bytes {
            return Err(ProtocolError::invalid_params(format!(
                "an entry of `{key}` is {} bytes long; this server accepts at most {}",
                u.len(),
                limits.max_entry_bytes
            )));
        }
        *bytes += u.len();
        if *bytes > limits.max_filter_bytes {
            return Err(ProtocolError::invalid_params(format!(
                "the subscription filter is over {} bytes of URIs and task ids",
                limits.max_filter_bytes
            )));
        }
        if seen.insert(u.clone()) {
            order.push(u);
        }
    }
    Ok(order)
}

impl Watch {
    /// Reads the request's filter within `limits`; also returns the filter to acknowledge
    /// (what is honoured, URIs and task ids in the client's order).
    fn parse(params: &Map<String, Value>, limits: &ListenLimits) -> Result<(Self, SubscriptionFilter), ProtocolError> {
        let notifications = match params.get("notifications") {
            Some(n @ Value::Object(_)) => n,
            None => return Err(ProtocolError::invalid_params("subscriptions/listen requires `notifications`")),
            Some(_) => return Err(ProtocolError::invalid_params("`notifications` must be an object")),
        };
        let asked = SubscriptionFilter::deserialize(notifications)
            .map_err(|e| ProtocolError::invalid_params(format!("invalid `notifications`: {e}")))?;
        let mut bytes = 0usize;
        let uris = checked(
            "resourceSubscriptions",
            asked.resource_subscriptions,
            limits.max_resource_subscriptions,
            limits,
            &mut bytes,
        )?;
        let tasks = checked("taskIds", asked.task_ids, limits.max_task_ids, limits, &mut bytes)?;
        let on = |b: Option<bool>| b.unwrap_or(false);
        let watch = Self {
            tools: on(asked.tools_list_changed),
            prompts: on(asked.prompts_list_changed),
            resources: on(asked.resources_list_changed),
            resource_uris: uris.iter().cloned().collect(),
            task_ids: tasks.iter().cloned().collect(),
        };
        let some = |b: bool| b.then_some(true);
        let ack = SubscriptionFilter {
            tools_list_changed: some(watch.tools),
            prompts_list_changed: some(watch.prompts),
            resources_list_changed: some(watch.resources),
            resource_subscriptions: (!uris.is_empty()).then_some(uris),
            task_ids: (!tasks.is_empty()).then_some(tasks),
            ..Default::default()
        };
        Ok((watch, ack))
    }

    /// The bytes of URIs and task ids the filter holds.
    fn held_bytes(&self) -> usize {
        self.resource_uris.iter().chain(&self.task_ids).map(String::len).sum()
    }

    /// Whether the stream announces `e` (constant time).
    pub(crate) fn wants(&self, e: &ChangeEvent) -> bool {
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

/// `params` with `_meta` naming the subscription (the listen request's id).
fn tag(params: &mut Value, id: &Value) {
    if let Value::Object(p) = params {
        let mut meta = Map::new();
        meta.insert(SUBSCRIPTION_ID.into(), id.clone());
        p.insert("_meta".into(), Value::Object(meta));
    }
}

fn tagged(method: &str, mut params: Value, id: &Value) -> Value {
    tag(&mut params, id);
    notification(method, params)
}

fn tagged_params<T: serde::Serialize>(params: &T, id: &Value) -> Value {
    let mut params = serde_json::to_value(params).expect("params serialize");
    tag(&mut params, id);
    params
}

/// Opens a `subscriptions/listen` stream ([`Server::listen`]).
pub(crate) fn open(
    this: &Server,
    req: Request,
    env: RequestEnv,
) -> Result<impl Stream<Item = Value> + Send + 'static, ProtocolError> {
    let ctx = this.prepare(req, env, None)?;
    let (mut filter, mut ack) = Watch::parse(ctx.params(), &this.inner.config.extensions.listen_limits)?;
    // Task ids need the extension on this very request; a server without tasks drops them.
    let tasks = match this.tasks() {
        Some(rt) if !filter.task_ids.is_empty() => {
            if !ctx.declares_tasks() {
                return Err(crate::tasks::extension_required());
            }
            Some(rt.clone())
        }
        _ => {
            filter.task_ids.clear();
            ack.task_ids = None;
            None
        }
    };
    // The server-wide budget of filter bytes, given back when the stream ends.
    let held = FilterBytes::take(
        &this.inner.listen_filter_bytes,
        filter.held_bytes(),
        &this.inner.config.extensions.listen_limits,
    )?;
    let principal = ctx.principal().map(str::to_owned);
    let scopes = ctx.inner.env.scopes.clone();
    let mut view = ListView::default();
    view.refresh(&this.catalog(), &ctx.caller());
    let mut task_feed = tasks.as_ref().map(|_| this.inner.task_events.subscribe());
    let id = ctx.request_id().clone();
    let mut feed = crate::change_feed::ChangeFeed::new(this.events());
    let shutdown = this.shutdown_token();
    let cancel = ctx.cancellation().clone();
    let server = this.clone();
    let ack = types::SubscriptionsAcknowledgedNotificationParams { meta: None, notifications: ack };
    Ok(async_stream(move |tx| async move {
        let _held = held;
        let ack = tagged_params(&ack, &id);
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
                    let done = server.finish_result(tagged_params(&types::BaseResult::default(), &id));
                    let _ = tx.send(result_response(&id, done)).await;
                    return;
                }
                _ = tx.closed() => return,
                changes = feed.next(|| filter.resource_uris.iter().cloned().collect()) => {
                    let Some(changes) = changes else { return };
                    let caller = Caller::new(principal.as_deref(), &scopes);
                    for e in changes.iter().filter(|e| filter.wants(e)) {
                        if !view.announces(e, &server.catalog(), &caller) { continue }
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

/// What one listener's caller sees of each list, so that a change to items hidden from it (by
/// [`crate::Access`] rules) is not announced to it: a fingerprint of the visible entries.
#[derive(Default)]
struct ListView {
    seen: [u64; 4],
    versions: [u64; 4],
}

impl ListView {
    fn fingerprint(c: &Catalog, kind: ListKind, caller: &Caller<'_>) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        // Entries are shared between catalog versions: a changed entry is a new allocation.
        macro_rules! each {
            ($items:expr) => {
                for e in $items.iter().filter(|e| visible(e.access.as_ref(), caller)) {
                    std::sync::Arc::as_ptr(e).hash(&mut h);
                }
            };
        }
        match kind {
            ListKind::Tools => each!(c.tools),
            ListKind::Resources => {
                each!(c.resources);
                each!(c.templates);
            }
            ListKind::Templates => each!(c.templates),
            ListKind::Prompts => each!(c.prompts),
        }
        h.finish()
    }

    fn refresh(&mut self, c: &Catalog, caller: &Caller<'_>) {
        for kind in [ListKind::Tools, ListKind::Resources, ListKind::Prompts] {
            self.seen[kind as usize] = Self::fingerprint(c, kind, caller);
        }
        self.versions = c.versions;
    }

    /// Whether `e` is news to this caller: a change of the catalog that altered what it sees
    /// (any change, when the list has no access rules), an announcement the application made
    /// itself (the catalog's list did not change), or an update of a resource it may read.
    fn announces(&mut self, e: &ChangeEvent, c: &Catalog, caller: &Caller<'_>) -> bool {
        let kind = match e {
            ChangeEvent::ToolsListChanged => ListKind::Tools,
            ChangeEvent::PromptsListChanged => ListKind::Prompts,
            ChangeEvent::ResourcesListChanged => ListKind::Resources,
            ChangeEvent::ResourceUpdated(uri) => return c.can_read(uri, caller),
            _ => return true,
        };
        let now = Self::fingerprint(c, kind, caller);
        let before = std::mem::replace(&mut self.seen[kind as usize], now);
        let version = c.versions[kind as usize];
        let changed = std::mem::replace(&mut self.versions[kind as usize], version) != version;
        let ruled =
            c.restricted[kind as usize] || (kind == ListKind::Resources && c.restricted[ListKind::Templates as usize]);
        !ruled || !changed || now != before
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
            return Err(ProtocolError::unavailable(
                "subscriptions",
                "the server holds too many subscriptions; try again later",
            ));
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
