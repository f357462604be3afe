//! Streamable HTTP client transport (placeholder: being written).

use super::{Exchange, OutgoingRequest, Transport, TransportKind};
use crate::error::TransportError;
use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc;

/// Streamable HTTP transport.
#[derive(Debug)]
pub struct HttpTransport {
    url: String,
}

impl HttpTransport {
    /// A transport for the MCP endpoint at `url`.
    pub fn new(url: &str) -> Result<Self, TransportError> {
        Ok(Self { url: url.to_owned() })
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }
    fn request(&self, _req: OutgoingRequest) -> BoxFuture<'_, Result<Exchange, TransportError>> {
        Box::pin(async move { Err(TransportError::Connect(format!("{}: not implemented", self.url))) })
    }
    fn send(&self, _message: Value, _headers: Vec<(String, String)>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Err(TransportError::Connect("not implemented".into())) })
    }
    fn take_unsolicited(&self) -> Option<mpsc::UnboundedReceiver<Value>> {
        None
    }
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
