//! `subscriptions/listen` on the client: a stream of change notifications.

use crate::client::Client;
use crate::error::{ClientError, TransportError};
use crate::transport::{Exchange, OutgoingRequest, Parts};
use futures::future::BoxFuture;
use futures::{ready, Stream};
use mcp_protocol::meta::SUBSCRIPTION_ID;
use mcp_protocol::types::SubscriptionFilter;
use serde::Deserialize as _;
use serde_json::{Map, Value};
use std::pin::Pin;
use std::task::{Context, Poll};

/// What a subscription yields.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenEvent {
    /// A change notification (`notifications/...` message, with its params).
    Notification {
        /// The notification method, e.g. `notifications/tools/list_changed`.
        method: String,
        /// Its params.
        params: Value,
    },
    /// The stream dropped unexpectedly and was re-opened.
    Reconnected,
}

/// An open `subscriptions/listen` stream: a [`Stream`] of [`ListenEvent`]s (or call
/// [`Subscription::next`]). Dropping it cancels the subscription.
pub struct Subscription {
    /// The filter the server agreed to honour when the subscription opened.
    pub acknowledged: SubscriptionFilter,
    listener: Option<Listener>,
    pending: Option<BoxFuture<'static, (Listener, Option<Event>)>>,
    legacy: Option<LegacyFeed>,
}

/// A subscription on a legacy server: its unasked notifications, filtered.
struct LegacyFeed {
    client: Client,
    filter: Value,
    uris: Vec<String>,
    rx: tokio::sync::mpsc::Receiver<Value>,
}

impl LegacyFeed {
    /// Whether the filter asked for this notification.
    fn wants(&self, method: &str, params: &Value) -> bool {
        let on = |k: &str| self.filter.get(k).and_then(Value::as_bool) == Some(true);
        match method {
            "notifications/tools/list_changed" => on("toolsListChanged"),
            "notifications/prompts/list_changed" => on("promptsListChanged"),
            "notifications/resources/list_changed" => on("resourcesListChanged"),
            "notifications/resources/updated" => {
                params.get("uri").and_then(Value::as_str).is_some_and(|u| self.uris.iter().any(|x| x == u))
            }
            _ => false,
        }
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        loop {
            let Some(m) = ready!(self.rx.poll_recv(cx)) else { return Poll::Ready(None) };
            let Some(method) = m.get("method").and_then(Value::as_str) else { continue };
            let params = m.get("params").cloned().unwrap_or(Value::Null);
            if !self.wants(method, &params) {
                continue;
            }
            self.client.invalidate_for(method);
            return Poll::Ready(Some(Ok(ListenEvent::Notification { method: method.to_owned(), params })));
        }
    }
}

impl Drop for LegacyFeed {
    fn drop(&mut self) {
        // Best effort: the server stops sending updates of these resources to the session.
        if self.uris.is_empty() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        let (client, uris) = (self.client.clone(), std::mem::take(&mut self.uris));
        rt.spawn(async move {
            for uri in uris {
                let mut params = Map::new();
                params.insert("uri".into(), Value::from(uri));
                let _ = client.request("resources/unsubscribe", params, &crate::CallOptions::default()).await;
            }
        });
    }
}

type Event = Result<ListenEvent, ClientError>;

/// The state of an open subscription, moved into the future that waits for its next event.
struct Listener {
    client: Client,
    filter: Value,
    exchange: Option<Exchange>,
    id: Value,
    acknowledged: SubscriptionFilter,
    reconnects: usize,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription").field("acknowledged", &self.acknowledged).finish_non_exhaustive()
    }
}

impl Stream for Subscription {
    type Item = Result<ListenEvent, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(feed) = self.legacy.as_mut() {
            return feed.poll(cx);
        }
        if self.pending.is_none() {
            let Some(mut listener) = self.listener.take() else { return Poll::Ready(None) };
            self.pending = Some(Box::pin(async move {
                let item = listener.next().await;
                (listener, item)
            }));
        }
        let fut = self.pending.as_mut().expect("just set");
        let (listener, item) = ready!(fut.as_mut().poll(cx));
        self.pending = None;
        self.acknowledged = listener.acknowledged.clone();
        if item.is_some() {
            self.listener = Some(listener);
        }
        Poll::Ready(item)
    }
}

impl Subscription {
    /// The next event; `None` after the server closed the subscription gracefully.
    pub async fn next(&mut self) -> Option<Result<ListenEvent, ClientError>> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// A subscription fed by a legacy session's notifications.
    pub(crate) fn legacy(
        client: Client,
        acknowledged: SubscriptionFilter,
        filter: Value,
        uris: Vec<String>,
        rx: tokio::sync::mpsc::Receiver<Value>,
    ) -> Self {
        Self { acknowledged, listener: None, pending: None, legacy: Some(LegacyFeed { client, filter, uris, rx }) }
    }
}

impl Client {
    /// Opens a subscription with `filter` (e.g. `tools_list_changed: Some(true)`); waits for the
    /// acknowledgement.
    ///
    /// On a legacy (initialize-based) server there is no `subscriptions/listen`: the
    /// subscription yields the list-change notifications the session receives anyway (the GET
    /// stream over HTTP, stdout over stdio) that the filter asks for, and `resourceSubscriptions`
    /// become `resources/subscribe` requests (`resources/unsubscribe` when the subscription is
    /// dropped). Its `acknowledged` filter is what the server's capabilities declare; it never
    /// yields [`ListenEvent::Reconnected`].
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        let filter = serde_json::to_value(filter).expect("a filter serializes");
        if !self.is_modern() {
            return self.listen_legacy(filter).await;
        }
        let mut listener = Listener {
            client: self.clone(),
            filter,
            exchange: None,
            id: Value::Null,
            acknowledged: SubscriptionFilter::default(),
            reconnects: 0,
        };
        listener.open().await?;
        Ok(Subscription {
            acknowledged: listener.acknowledged.clone(),
            listener: Some(listener),
            pending: None,
            legacy: None,
        })
    }
}

impl Client {
    /// Drops the cached results a change notification makes stale.
    fn invalidate_for(&self, method: &str) {
        match method {
            "notifications/tools/list_changed" => self.invalidate_cache("tools/list"),
            "notifications/prompts/list_changed" => self.invalidate_cache("prompts/list"),
            "notifications/resources/list_changed" => self.invalidate_cache("resources/list"),
            "notifications/resources/updated" => self.invalidate_cache("resources/read"),
            _ => {}
        }
    }
}

impl Listener {
    async fn open(&mut self) -> Result<(), ClientError> {
        let c = &self.client;
        let id = c.next_id();
        let version = c.protocol_version();
        let mut params = Map::new();
        params.insert("notifications".into(), self.filter.clone());
        let method = "subscriptions/listen";
        let headers = c.modern_headers(&version, method, &params);
        let parts = Parts { id, method, params: &params, meta: c.modern_meta(&version) };
        let mut ex = tokio::time::timeout(
            c.inner.config.timeout,
            c.inner.transport.request(OutgoingRequest::from_parts(parts, headers)),
        )
        .await
        .map_err(|_| ClientError::Timeout(c.inner.config.timeout))??;
        let first = tokio::time::timeout(c.inner.config.timeout, ex.next())
            .await
            .map_err(|_| ClientError::Timeout(c.inner.config.timeout))?
            .ok_or_else(|| {
                ClientError::Transport(TransportError::Closed("listen stream closed before acknowledgement".into()))
            })??;
        if let Some(err) = first.get("error") {
            return Err(ClientError::from_error_object(err));
        }
        if first.get("method").and_then(Value::as_str) != Some("notifications/subscriptions/acknowledged") {
            return Err(ClientError::invalid_response(format!("expected an acknowledgement first, got {first}")));
        }
        let acknowledged = first["params"].get("notifications").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        self.acknowledged = SubscriptionFilter::deserialize(&acknowledged).map_err(|e| {
            ClientError::invalid_response(format!("subscriptions/listen: acknowledgement: {e}")).caused_by(e)
        })?;
        if let Some(missing) = self.filter.as_object().and_then(|f| f.keys().find(|k| acknowledged.get(*k).is_none())) {
            tracing::warn!(filter = %missing, "server did not acknowledge part of the subscription filter");
        }
        self.id = Value::from(id);
        self.exchange = Some(ex);
        Ok(())
    }

    async fn next(&mut self) -> Option<Result<ListenEvent, ClientError>> {
        loop {
            let ex = self.exchange.as_mut()?;
            match ex.next().await {
                Some(Ok(m)) => {
                    if m.get("id") == Some(&self.id) && (m.get("result").is_some() || m.get("error").is_some()) {
                        // Graceful closure: the server answered the listen request.
                        if let Some(mut ex) = self.exchange.take() {
                            ex.complete();
                        }
                        return None;
                    }
                    let Some(method) = m.get("method").and_then(Value::as_str) else { continue };
                    let tagged = m.pointer(&format!("/params/_meta/{}", SUBSCRIPTION_ID.replace('/', "~1")));
                    if tagged.is_some_and(|t| *t != self.id) {
                        continue;
                    }
                    self.client.invalidate_for(method);
                    return Some(Ok(ListenEvent::Notification {
                        method: method.to_owned(),
                        params: m["params"].clone(),
                    }));
                }
                Some(Err(_)) | None => {
                    // Unexpected drop: reconnect (bounded), since no closing response came.
                    self.exchange = None;
                    if self.reconnects >= 5 {
                        return Some(Err(ClientError::Transport(TransportError::Closed(
                            "listen stream dropped repeatedly".into(),
                        ))));
                    }
                    self.reconnects += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(200 * self.reconnects as u64)).await;
                    return Some(match self.open().await {
                        Ok(()) => Ok(ListenEvent::Reconnected),
                        Err(e) => Err(e),
                    });
                }
            }
        }
    }
}
