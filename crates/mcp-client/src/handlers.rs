//! What the application provides so the client can answer servers' input requests.

use crate::error::ClientError;
use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::future::Future;
use std::sync::Arc;

/// An input handler: request `params` in, result object out.
pub type InputHandler = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, ClientError>> + Send + Sync>;

/// The application's handlers for server-to-client input. Capabilities are declared from
/// the handlers present.
#[derive(Clone, Default)]
pub struct Handlers {
    pub(crate) elicitation: Option<InputHandler>,
    pub(crate) elicitation_form: bool,
    pub(crate) elicitation_url: bool,
    pub(crate) sampling: Option<InputHandler>,
    pub(crate) sampling_tools: bool,
    pub(crate) roots: Option<InputHandler>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("elicitation", &self.elicitation.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots.is_some())
            .finish()
    }
}

pub(crate) fn boxed<F, Fut>(f: F) -> InputHandler
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ClientError>> + Send + 'static,
{
    Arc::new(move |v| Box::pin(f(v)))
}

impl Handlers {
    /// The `ClientCapabilities` object these handlers support.
    pub fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        if self.elicitation.is_some() {
            let mut e = Map::new();
            if self.elicitation_form {
                e.insert("form".into(), json!({}));
            }
            if self.elicitation_url {
                e.insert("url".into(), json!({}));
            }
            caps.insert("elicitation".into(), Value::Object(e));
        }
        if self.sampling.is_some() {
            caps.insert("sampling".into(), if self.sampling_tools { json!({"tools": {}}) } else { json!({}) });
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), json!({}));
        }
        Value::Object(caps)
    }

    /// Answers one input request (`{method, params}`), applying elicitation defaults and checks.
    pub async fn answer(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        match method {
            "elicitation/create" => {
                let h = self.elicitation.as_ref().ok_or_else(|| ClientError::Unsupported("elicitation".into()))?;
                let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
                let allowed = if mode == "url" { self.elicitation_url } else { self.elicitation_form };
                if !allowed {
                    return Err(ClientError::Unsupported(format!("{mode} elicitation")));
                }
                let result = h(params.clone()).await?;
                if mode == "form" {
                    crate::elicit::finish_form(&params, result)
                } else {
                    Ok(result)
                }
            }
            "sampling/createMessage" => {
                let h = self.sampling.as_ref().ok_or_else(|| ClientError::Unsupported("sampling".into()))?;
                if params.get("tools").is_some() && !self.sampling_tools {
                    return Err(ClientError::Unsupported("sampling with tools".into()));
                }
                h(params).await
            }
            "roots/list" => {
                let h = self.roots.as_ref().ok_or_else(|| ClientError::Unsupported("roots".into()))?;
                h(params).await
            }
            "ping" => Ok(json!({})),
            other => Err(ClientError::Unsupported(other.to_owned())),
        }
    }
}
