//! Log messages from the server (`notifications/message`) in both eras: the level the client
//! asks for, and where the messages that reach no call go.
//!
//! A modern request asks with `io.modelcontextprotocol/logLevel` in its `_meta` and gets its
//! messages on its own response stream. A legacy session asks once, with `logging/setLevel`
//! after `initialize`, and its messages name no request: over stdio one belongs to the request
//! in flight when exactly one is (the transport delivers it there), otherwise, and between
//! requests, it goes to the client's log handler.

use crate::client::{CallOptions, Client, ClientBuilder, NotificationCallback};
use mcp_protocol::types::LoggingLevel;
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Most log messages held for the client's log handler ([`ClientBuilder::on_log`]) while it
/// runs; past it they are dropped (counted with the transport's unsolicited messages).
pub const LOG_QUEUE_CAP: usize = crate::transport::UNSOLICITED_CAP;

impl ClientBuilder {
    /// Calls `f` with the params of each `notifications/message` that no call takes: a
    /// legacy server's messages between calls, or while several calls are in flight (over
    /// stdio they name no request), and those of a call made without
    /// [`CallOptions::on_log`]. Keep it quick: it runs on a task of its own, fed by a queue of
    /// [`LOG_QUEUE_CAP`] (a handler that falls behind loses messages, counted, never memory),
    /// or, for a call's own messages, on that call's task. Without it such messages are traced
    /// at `debug` (target `mcp_client::server_log`).
    pub fn on_log(mut self, f: impl Fn(&Value) + Send + Sync + 'static) -> Self {
        self.log_handler = Some(Arc::new(f) as NotificationCallback);
        self
    }

    /// The least severe log messages to ask the server for (default: none asked). A legacy
    /// server that declares the `logging` capability is sent `logging/setLevel` with it right
    /// after `initialize`; a modern server gets it as the `io.modelcontextprotocol/logLevel`
    /// of every request whose [`CallOptions::log_level`] is unset.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Whether a log message that names no request (a stdio server's, in either era) goes to
    /// the call in flight when exactly one is (default: on). Turn it off when calls of
    /// different callers share the client: a message sent late for a call that has ended would
    /// reach whichever other call is in flight then. Off, such messages go to the client's log
    /// handler ([`ClientBuilder::on_log`]); messages that name their request are unaffected.
    pub fn log_attribution(mut self, on: bool) -> Self {
        self.log_attribution = on;
        self
    }
}

impl Client {
    /// Hands log messages that reach no call to the client's log handler, if it has one: a
    /// task reads them from a bounded queue the transport fills.
    pub(crate) fn route_logs(&self) {
        let Some(handler) = self.inner.config.log_handler.clone() else { return };
        let (tx, mut rx) = mpsc::channel::<Value>(LOG_QUEUE_CAP);
        self.inner.transport.route_logs(Some(tx));
        // Ends when the transport closes (it drops the sender).
        tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                handler(m.get("params").unwrap_or(&Value::Null));
            }
        });
    }

    /// A log message's `params` that came with a call whose caller does not read them, or
    /// (legacy) on no call: to the client's log handler, else traced.
    pub(crate) fn log_unclaimed(&self, params: &Value) {
        match &self.inner.config.log_handler {
            Some(h) => h(params),
            None => tracing::debug!(target: "mcp_client::server_log", %params, "log message from the server"),
        }
    }

    /// Legacy sessions: tells the server the level of [`ClientBuilder::log_level`], when both
    /// are set (the server declares `logging`). A refusal is logged, not fatal: the session
    /// works without it.
    pub(crate) async fn send_log_level(&self, opts: &CallOptions) {
        let Some(level) = self.inner.config.log_level else { return };
        if self.server_capabilities().logging.is_none() {
            tracing::debug!(%level, "the server declares no logging: no logging/setLevel sent");
            return;
        }
        let mut params = Map::new();
        params.insert("level".into(), Value::from(level.as_str()));
        let opts = CallOptions { timeout: opts.timeout, ..CallOptions::default() };
        if let Err(e) = self.request("logging/setLevel", params, &opts).await {
            tracing::warn!(error = %e, %level, "the server refused logging/setLevel");
        }
    }
}
