//! [`TestContext`]: a [`Context`] for unit tests, so that a handler taking `ctx: Context` can be
//! tested by calling the function directly, with the client's answers to its questions
//! scripted.
//!
//! ```
//! use mcp_server::{Context, Elicitation, HandlerError};
//! use mcp_server::mcp_protocol::types::{ElicitAction, ElicitResult, ElicitValue};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Confirm { sure: bool }
//!
//! async fn delete(ctx: Context) -> Result<String, HandlerError> {
//!     match ctx.elicit::<Confirm>("Really delete?")? {
//!         Elicitation::Accept(Confirm { sure: true }) => Ok("deleted".into()),
//!         _ => Ok("kept".into()),
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! // First round: the handler asks.
//! let asked = delete(Context::for_test().build()).await.unwrap_err();
//! assert!(matches!(asked, HandlerError::InputRequired(ir) if ir.requests.contains_key("input-0")));
//! // The retry, with the user's answer.
//! let mut yes = ElicitResult::new(ElicitAction::Accept);
//! yes.content = Some([("sure".to_owned(), ElicitValue::Boolean(true))].into());
//! assert_eq!(delete(Context::for_test().answer(yes).build()).await.unwrap(), "deleted");
//! # });
//! ```

use crate::context::{Context, ContextInner, NotificationSink, RequestEnv};
use crate::server::Server;
use mcp_protocol::meta::RequestMeta;
use mcp_protocol::types::LoggingLevel;
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Builds a [`Context`] for a test (see [`Context::for_test`]). By default: a `tools/call`
/// request of protocol version 2026-07-28 from a client that declares elicitation (form and
/// URL), sampling (with tools) and roots, with no answers yet, on an empty server.
#[derive(Debug, Clone)]
pub struct TestContext {
    server: Option<Server>,
    method: String,
    params: Map<String, Value>,
    capabilities: Map<String, Value>,
    answers: Map<String, Value>,
    round_state: Value,
    principal: Option<String>,
    log_level: Option<LoggingLevel>,
    sink: Option<NotificationSink>,
}

impl Default for TestContext {
    fn default() -> Self {
        let capabilities = serde_json::json!({
            "elicitation": { "form": {}, "url": {} },
            "sampling": { "tools": {}, "context": {} },
            "roots": {},
        });
        let Value::Object(capabilities) = capabilities else { unreachable!("an object") };
        Self {
            server: None,
            method: "tools/call".into(),
            params: Map::new(),
            capabilities,
            answers: Map::new(),
            round_state: Value::Null,
            principal: None,
            log_level: None,
            sink: None,
        }
    }
}

fn to_json(value: impl Serialize) -> Value {
    serde_json::to_value(value).expect("a test value serializes")
}

impl TestContext {
    /// The server the context belongs to (default: an empty one); [`crate::State`] and
    /// [`Context::server`] read it.
    pub fn server(mut self, server: &Server) -> Self {
        self.server = Some(server.clone());
        self
    }

    /// The request's method (default `tools/call`).
    pub fn method(mut self, method: &str) -> Self {
        self.method = method.to_owned();
        self
    }

    /// The request's params (without `_meta`), e.g. `{"name": .., "arguments": {..}}`.
    pub fn params(mut self, params: Value) -> Self {
        if let Value::Object(p) = params {
            self.params = p;
        }
        self
    }

    /// The client capabilities the request declares (replacing the default set).
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        if let Value::Object(c) = capabilities {
            self.capabilities = c;
        }
        self
    }

    /// The client's answer to the handler's next question ([`Context::elicit`],
    /// [`Context::sample`], [`Context::roots`], in the order it asks them): an `ElicitResult`,
    /// `CreateMessageResult` or `ListRootsResult`.
    pub fn answer(mut self, answer: impl Serialize) -> Self {
        let key = format!("input-{}", self.answers.len());
        self.answers.insert(key, to_json(answer));
        self
    }

    /// The client's answer under `key`, for handlers that ask through [`Context::inputs`].
    pub fn answer_for(mut self, key: &str, answer: impl Serialize) -> Self {
        self.answers.insert(key.to_owned(), to_json(answer));
        self
    }

    /// The state the previous round set ([`Context::round_state`]).
    pub fn round_state(mut self, state: Value) -> Self {
        self.round_state = state;
        self
    }

    /// Who the request comes from ([`Context::principal`]).
    pub fn principal(mut self, principal: &str) -> Self {
        self.principal = Some(principal.to_owned());
        self
    }

    /// The log level the request asks for ([`Context::log_level`]; log messages go to the sink).
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Where the handler's notifications (progress, log messages) go.
    pub fn notifications(mut self, sink: impl Fn(Value) + Send + Sync + 'static) -> Self {
        self.sink = Some(NotificationSink::new(sink));
        self
    }

    /// The context.
    pub fn build(self) -> Context {
        let server =
            self.server.unwrap_or_else(|| Server::builder("test", "0").build().expect("an empty server builds"));
        let mut params = self.params;
        if !self.answers.is_empty() {
            params.insert("inputResponses".into(), Value::Object(self.answers));
        }
        let meta = RequestMeta {
            protocol_version: mcp_protocol::version::MODERN[0].into(),
            client_capabilities: self.capabilities,
            client_info: None,
            log_level: self.log_level.map(|l| l as u8),
            progress_token: None,
        };
        let env = RequestEnv { principal: self.principal, sink: self.sink, ..RequestEnv::default() };
        let inner = ContextInner::new(server, Value::from(1), self.method, meta, params, env, self.round_state);
        Context { inner: Arc::new(inner) }
    }
}

impl Context {
    /// A context for unit tests: call a handler that takes `ctx: Context` directly, with the
    /// client's answers scripted ([`TestContext::answer`]).
    pub fn for_test() -> TestContext {
        TestContext::default()
    }
}
