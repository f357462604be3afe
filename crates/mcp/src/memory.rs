//! A client connected to a server in the same process: no sockets, no child process. For
//! tests of servers (and of clients) that want the whole protocol without a transport.
//!
//! ```
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp::prelude::*;
//!
//! /// Echoes the text.
//! #[tool]
//! async fn echo(text: String) -> String { text }
//!
//! let server = Server::builder("t", "1").tool(echo::tool()).build()?;
//! let client = mcp::memory::connect(server, mcp::client::ClientBuilder::new("test", "1")).await?;
//! assert_eq!(client.call_tool("echo", json!({"text": "hi"})).await?.text(), "hi");
//! # Ok(()) }
//! ```

use futures::future::BoxFuture;
use futures::StreamExt;
use mcp_client::transport::{note_dropped, Exchange, OutgoingRequest, Transport, TransportKind, EXCHANGE_CAP};
use mcp_client::{Client, ClientBuilder, ClientError, TransportError};
use mcp_protocol::jsonrpc::{parse_incoming, Incoming};
use mcp_protocol::strict::DEFAULT_MAX_DEPTH;
use mcp_server::{NotificationSink, RequestEnv, Server};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Connects a client built by `builder` to `server`, in memory.
pub async fn connect(server: Server, builder: ClientBuilder) -> Result<Client, ClientError> {
    builder.connect(MemoryTransport::new(server)).await
}

/// A client transport that hands each request straight to a [`Server`] in this process.
#[derive(Debug, Clone)]
pub struct MemoryTransport {
    server: Server,
}

impl MemoryTransport {
    /// A transport serving requests with `server`.
    pub fn new(server: Server) -> Self {
        Self { server }
    }
}

/// An exchange's queue ([`EXCHANGE_CAP`] messages): a handler's notifications past it are
/// dropped (counted and logged by [`note_dropped`]); the response and a subscription's
/// messages wait for room instead.
type Messages = mpsc::Sender<Result<Value, TransportError>>;

fn closed(why: impl std::fmt::Display) -> TransportError {
    TransportError::Closed(why.to_string())
}

impl MemoryTransport {
    fn start(&self, bytes: &[u8], tx: Messages, cancel: CancellationToken) -> Result<(), TransportError> {
        let req = match parse_incoming(bytes, DEFAULT_MAX_DEPTH) {
            Ok(Incoming::Request(r)) => r,
            Ok(Incoming::Notification(_)) => return Err(closed("not a request")),
            Err(rej) => {
                let _ = tx.try_send(Ok(rej.error.to_response(rej.id.as_ref())));
                return Ok(());
            }
        };
        let notes = tx.clone();
        let sink = NotificationSink::new(move |n| {
            if let Err(mpsc::error::TrySendError::Full(_)) = notes.try_send(Ok(n)) {
                note_dropped();
            }
        });
        let env = RequestEnv { sink: Some(sink), cancel: cancel.clone(), ..RequestEnv::default() };
        let server = self.server.clone();
        if req.method == "subscriptions/listen" {
            let id = req.id.clone();
            match server.listen(req, env) {
                Ok(stream) => {
                    tokio::spawn(async move {
                        let mut stream = std::pin::pin!(stream);
                        while let Some(m) = stream.next().await {
                            if tx.send(Ok(m)).await.is_err() {
                                break;
                            }
                        }
                    });
                }
                Err(e) => {
                    let _ = tx.try_send(Ok(e.to_response(Some(&id))));
                }
            }
            return Ok(());
        }
        tokio::spawn(async move {
            let id = req.id.clone();
            let outcome = tokio::select! {
                o = server.process_reply(req, env) => o,
                _ = cancel.cancelled() => return,
            };
            let bytes = server.encode_response(&id, &outcome);
            let _ = tx.send(serde_json::from_slice(&bytes).map_err(closed)).await;
        });
        Ok(())
    }
}

impl Transport for MemoryTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn request<'a>(&'a self, req: OutgoingRequest<'a>) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        Box::pin(async move {
            let (tx, rx) = mpsc::channel(EXCHANGE_CAP);
            let cancel = CancellationToken::new();
            self.start(&req.to_json()?, tx, cancel.clone())?;
            Ok(Exchange::stream(rx).on_cancel(move || cancel.cancel()))
        })
    }

    fn send(&self, _message: Value, _headers: Vec<(String, String)>) -> BoxFuture<'_, Result<(), TransportError>> {
        // Cancellation travels as the exchange's drop; no other client message means anything
        // to a stateless server.
        Box::pin(async { Ok(()) })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_server::{Context, Tool};
    use serde_json::json;
    use std::sync::Arc;

    #[tokio::test]
    async fn an_unread_exchange_holds_a_bounded_number_of_notifications() {
        let done = Arc::new(tokio::sync::Notify::new());
        let d = done.clone();
        let flood = Tool::new("flood").handler(move |ctx: Context| {
            let d = d.clone();
            async move {
                for i in 0..200_000u32 {
                    ctx.progress(f64::from(i), None, None);
                }
                d.notify_one();
                "flooded"
            }
        });
        let t = MemoryTransport::new(Server::builder("m", "1").tool(flood).build().unwrap());
        let finished = done.notified();
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}, "progressToken": 1});
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "flood", "arguments": {}, "_meta": meta}});
        let mut ex = t.request(OutgoingRequest::new(req, Vec::new()).unwrap()).await.unwrap();
        // Nothing is read until the handler is done.
        tokio::time::timeout(std::time::Duration::from_secs(60), finished).await.unwrap();
        let mut notes = 0;
        let response = loop {
            let m = ex.next().await.unwrap().unwrap();
            if m.get("id").is_some() {
                break m;
            }
            notes += 1;
        };
        assert!(notes <= EXCHANGE_CAP, "{notes} notifications were held");
        assert_eq!(response["result"]["content"][0]["text"], "flooded");
    }
}
