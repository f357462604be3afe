//! A `roots/list` handler computed per question ([`ClientBuilder::on_roots`]), for applications
//! whose roots are not a fixed list (a proxy asks its own client).

use crate::client::ClientBuilder;
use crate::error::ClientError;
use crate::handlers::{boxed, typed};
use mcp_protocol::types::ListRootsResult;
use serde_json::Value;
use std::future::Future;

impl ClientBuilder {
    /// Answers `roots/list` with what `f` returns at each question, and declares the `roots`
    /// capability. Replaces [`ClientBuilder::roots`].
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, ClientError>> + Send + 'static,
    {
        self.handlers.roots = Some(typed("roots/list", move |_: Value| f()));
        self
    }

    /// [`ClientBuilder::on_roots`] with the request params and the result as JSON, unchecked
    /// (for a proxy asking its own client).
    pub fn on_roots_raw<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ClientError>> + Send + 'static,
    {
        self.handlers.roots = Some(boxed(f));
        self
    }
}

#[cfg(test)]
mod tests;
