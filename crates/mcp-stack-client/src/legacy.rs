//! Legacy (initialize-based) servers: the handshake and server-initiated messages.

use crate::client::{CallOptions, Client, ServerEra};
use crate::error::ClientError;
use crate::transport::OutgoingRequest;
use mcp_protocol::version;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

impl Client {
    /// Runs the `initialize` handshake (the HTTP transport falls further back to HTTP+SSE by
    /// itself when the Streamable HTTP endpoint refuses it). `opts` sets the exchange's timeout.
    pub(crate) async fn initialize(&self, opts: &CallOptions) -> Result<(), ClientError> {
        let result = self.try_initialize(opts).await?;
        let negotiated = result.get("protocolVersion").and_then(Value::as_str).unwrap_or_default().to_owned();
        if !version::LEGACY.contains(&negotiated.as_str()) {
            return Err(ClientError::NoCommonVersion { server: vec![negotiated] });
        }
        *self.inner.era.write() = Some(ServerEra::Legacy { version: negotiated, initialize: result });
        self.inner
            .transport
            .send(mcp_protocol::jsonrpc::notification("notifications/initialized", Value::Null), self.legacy_headers())
            .await?;
        self.spawn_unsolicited_handler();
        self.send_log_level(opts).await;
        Ok(())
    }

    async fn try_initialize(&self, opts: &CallOptions) -> Result<Value, ClientError> {
        let id = self.next_id();
        let mut caps = self.inner.config.handlers.capabilities();
        // Legacy revisions spell an elicitation capability of form mode alone as `{}`.
        if let Some(e) = caps.elicitation.as_mut().filter(|e| e.url.is_none() && e.extra.is_empty()) {
            e.form = None;
        }
        let mut params = Map::new();
        params.insert("protocolVersion".into(), self.inner.config.legacy_version.clone().into());
        params.insert("capabilities".into(), serde_json::to_value(&caps).expect("schema types serialize"));
        let info = serde_json::to_value(&self.inner.config.info).expect("schema types serialize");
        params.insert("clientInfo".into(), info);
        let msg = mcp_protocol::jsonrpc::request(&Value::from(id), "initialize", Value::Object(params));
        let response = self.exchange(OutgoingRequest::new(msg, Vec::new())?, opts).await?;
        if let Some(err) = response.get("error") {
            return Err(ClientError::from_error_object(err));
        }
        response.get("result").cloned().ok_or_else(|| ClientError::invalid_response("initialize: no result"))
    }

    /// Answers server requests that arrive outside any exchange (stdio, HTTP GET stream).
    fn spawn_unsolicited_handler(&self) {
        let (tx, mut rx) = mpsc::channel(crate::transport::UNSOLICITED_CAP);
        self.inner.transport.route_unsolicited(Some(tx));
        let weak = std::sync::Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                let Some(inner) = weak.upgrade() else { return };
                let client = Client { inner };
                if let (Some(method), Some(id)) = (m.get("method").and_then(Value::as_str), m.get("id")) {
                    let reply = client.answer_server_request(id, method, m.get("params").cloned()).await;
                    if let Err(e) = client.inner.transport.send(reply, client.legacy_headers()).await {
                        tracing::warn!(error = %e, "could not answer a server request");
                    }
                } else if m.get("method").and_then(Value::as_str) == Some("notifications/message") {
                    // Only when the client has no log handler (else they have their own route).
                    client.log_unclaimed(&m["params"]);
                } else if m.get("method").is_some() {
                    client.inner.listeners.lock().retain(|tx| match tx.try_send(m.clone()) {
                        Ok(()) => true,
                        Err(mpsc::error::TrySendError::Full(_)) => {
                            crate::transport::note_dropped();
                            true
                        }
                        Err(mpsc::error::TrySendError::Closed(_)) => false,
                    });
                }
            }
            // The server's messages ended: so do the subscriptions.
            if let Some(inner) = weak.upgrade() {
                inner.listeners.lock().clear();
            }
        });
    }

    /// [`Client::listen`] on a legacy server: the notifications come unasked (on the session's
    /// GET stream over HTTP, on stdout over stdio); `resourceSubscriptions` are sent as
    /// `resources/subscribe` requests first. The acknowledgement is made up from what the
    /// server's capabilities declare (`listChanged`, `resources.subscribe`).
    pub(crate) async fn listen_legacy(&self, filter: Value) -> Result<crate::listen::Subscription, ClientError> {
        let caps = self.server_capabilities();
        let wants = |k: &str| filter.get(k).and_then(Value::as_bool) == Some(true);
        let mut ack = Map::new();
        for (key, offered) in [
            ("toolsListChanged", caps.tools.as_ref().and_then(|c| c.list_changed)),
            ("promptsListChanged", caps.prompts.as_ref().and_then(|c| c.list_changed)),
            ("resourcesListChanged", caps.resources.as_ref().and_then(|c| c.list_changed)),
        ] {
            if wants(key) && offered == Some(true) {
                ack.insert(key.into(), Value::Bool(true));
            }
        }
        // Listen first: an update right after the subscription is not lost.
        let (tx, rx) = mpsc::channel(crate::transport::UNSOLICITED_CAP);
        self.inner.listeners.lock().push(tx);
        let uris: Vec<String> = filter
            .get("resourceSubscriptions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let can_subscribe = caps.resources.as_ref().and_then(|r| r.subscribe) == Some(true);
        if !uris.is_empty() && can_subscribe {
            for uri in &uris {
                let mut params = Map::new();
                params.insert("uri".into(), Value::from(uri.as_str()));
                self.request("resources/subscribe", params, &CallOptions::default()).await?;
            }
            ack.insert("resourceSubscriptions".into(), Value::from(uris.clone()));
        }
        let ack = serde_json::from_value(Value::Object(ack)).expect("flags and URIs make a SubscriptionFilter");
        Ok(crate::listen::Subscription::legacy(self.clone(), ack, filter, uris, rx))
    }
}
