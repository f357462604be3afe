//! What the application provides so the client can answer servers' input requests.

use crate::error::ClientError;
use futures::future::BoxFuture;
use mcp_protocol::types::{ClientCapabilities, ElicitationCapability, JsonObject, SamplingCapability};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

/// An input handler in its raw form: request `params` in, result object out, as JSON (what
/// the `*_raw` registrations of [`crate::ClientBuilder`] take; the typed ones are wrapped into
/// it).
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
    /// Extensions declared in `capabilities.extensions` (MCP Apps, or any other by name).
    pub(crate) extensions: std::collections::BTreeMap<String, JsonObject>,
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

/// A typed handler (`P` in, `R` out) as an [`InputHandler`]: params that are not a `P` are
/// refused with [`ClientError::InvalidResponse`] naming `method`, before `f` runs.
pub(crate) fn typed<P, R, F, Fut>(method: &'static str, f: F) -> InputHandler
where
    P: DeserializeOwned,
    R: Serialize,
    F: Fn(P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ClientError>> + Send + 'static,
{
    Arc::new(move |v| match P::deserialize(&v) {
        Ok(p) => {
            let answer = f(p);
            Box::pin(async move {
                let r = answer.await?;
                serde_json::to_value(&r).map_err(|e| ClientError::handler(format!("{method} result: {e}")).caused_by(e))
            })
        }
        Err(e) => {
            let e = ClientError::invalid_response(format!("{method}: params: {e}")).caused_by(e);
            Box::pin(async move { Err(e) })
        }
    })
}

impl Handlers {
    /// The `ClientCapabilities` these handlers support.
    pub fn capabilities(&self) -> ClientCapabilities {
        let on = |yes: bool| yes.then(JsonObject::new);
        ClientCapabilities {
            elicitation: self.elicitation.as_ref().map(|_| ElicitationCapability {
                form: on(self.elicitation_form),
                url: on(self.elicitation_url),
                ..ElicitationCapability::default()
            }),
            sampling: self
                .sampling
                .as_ref()
                .map(|_| SamplingCapability { tools: on(self.sampling_tools), ..SamplingCapability::default() }),
            roots: self.roots.as_ref().map(|_| Default::default()),
            extensions: (!self.extensions.is_empty()).then(|| self.extensions.clone()),
            ..ClientCapabilities::default()
        }
    }

    /// Answers one input request (`{method, params}`), applying elicitation defaults and checks.
    pub(crate) async fn answer(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        match method {
            "elicitation/create" => {
                let h = self.elicitation.as_ref().ok_or_else(|| ClientError::unsupported("elicitation"))?;
                let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
                let allowed = if mode == "url" { self.elicitation_url } else { self.elicitation_form };
                if !allowed {
                    return Err(ClientError::unsupported(format!("{mode} elicitation")));
                }
                let result = h(params.clone()).await?;
                if mode == "form" {
                    crate::elicit::finish_form(&params, result)
                } else {
                    Ok(result)
                }
            }
            "sampling/createMessage" => {
                let h = self.sampling.as_ref().ok_or_else(|| ClientError::unsupported("sampling"))?;
                if params.get("tools").is_some() && !self.sampling_tools {
                    return Err(ClientError::unsupported("sampling with tools"));
                }
                h(params).await
            }
            "roots/list" => {
                let h = self.roots.as_ref().ok_or_else(|| ClientError::unsupported("roots"))?;
                h(params).await
            }
            "ping" => Ok(Value::Object(JsonObject::new())),
            other => Err(ClientError::unsupported(other.to_owned())),
        }
    }
}
