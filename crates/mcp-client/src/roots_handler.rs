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
mod tests {
    use super::*;
    use mcp_protocol::types::Root;
    use serde_json::json;

    #[tokio::test]
    async fn declares_roots_and_answers_with_the_handler() {
        let b = ClientBuilder::new("t", "1")
            .on_roots(|| async { Ok(ListRootsResult { roots: vec![Root::new("file:///a")], ..Default::default() }) });
        assert!(b.handlers.capabilities().roots.is_some());
        let answer = b.handlers.answer("roots/list", json!({})).await.unwrap();
        assert_eq!(answer, json!({ "roots": [{ "uri": "file:///a" }] }));
    }
}
