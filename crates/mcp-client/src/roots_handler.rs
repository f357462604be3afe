//! A `roots/list` handler computed per question ([`ClientBuilder::on_roots`]), for applications
//! whose roots are not a fixed list (a proxy asks its own client).

use crate::client::ClientBuilder;
use crate::error::ClientError;
use crate::handlers::boxed;
use serde_json::Value;
use std::future::Future;

impl ClientBuilder {
    /// Answers `roots/list` with `f` (request `params` in, `ListRootsResult` out) and declares
    /// the `roots` capability. Replaces [`ClientBuilder::roots`].
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
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
    use serde_json::json;

    #[tokio::test]
    async fn declares_roots_and_answers_with_the_handler() {
        let b = ClientBuilder::new("t", "1").on_roots(|_| async { Ok(json!({ "roots": [{ "uri": "file:///a" }] })) });
        assert_eq!(b.handlers.capabilities()["roots"], json!({}));
        let answer = b.handlers.answer("roots/list", json!({})).await.unwrap();
        assert_eq!(answer["roots"][0]["uri"], "file:///a");
    }
}
