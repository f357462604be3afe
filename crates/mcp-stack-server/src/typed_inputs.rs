//! Typed client input: [`Context::elicit`], [`Context::sample`], [`Context::roots`].
//!
//! Each call returns the client's answer when this round of the request carries it, and
//! otherwise ends the round with `?`: the client gets an `input_required` result, answers, and
//! retries, and **the handler runs again from the top** with the answer available. So anything
//! a handler does before its last question is done once per round; put side effects after the
//! questions.
//!
//! ```
//! # use mcp_server::{Context, Elicitation, HandlerError};
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Confirm { sure: bool }
//!
//! async fn delete(ctx: Context) -> Result<String, HandlerError> {
//!     match ctx.elicit::<Confirm>("Really delete?")? {
//!         Elicitation::Accept(Confirm { sure: true }) => Ok("deleted".into()),
//!         _ => Ok("kept".into()),
//!     }
//! }
//! ```

use crate::context::Context;
use crate::error::HandlerError;
use mcp_protocol::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestUrlParams, ListRootsResult, Root,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::atomic::Ordering;

/// The user's answer to a typed form elicitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user submitted the form.
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The submitted value, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accept(t) => Some(t),
            _ => None,
        }
    }
}

/// The params of a form elicitation. The form's schema comes from `schemars`, which may say
/// more than the restricted schema type describes, so it is kept as derived.
fn form_params(message: &str, requested_schema: Value) -> Value {
    let mut p = serde_json::Map::new();
    p.insert("mode".into(), "form".into());
    p.insert("message".into(), message.into());
    p.insert("requestedSchema".into(), requested_schema);
    Value::Object(p)
}

fn invalid_answer(what: &str, e: impl std::fmt::Display) -> HandlerError {
    HandlerError::invalid_params(format!("invalid inputResponses: {what}: {e}"))
}

impl Context {
    /// Asks the client (under the next automatic key) and returns its raw answer, or ends the
    /// round with the request.
    fn ask(&self, method: &str, params: Value) -> Result<Value, HandlerError> {
        let n = self.inner.asked.fetch_add(1, Ordering::Relaxed);
        let key = format!("input-{n}");
        let mut inputs = self.inputs();
        if let Some(answer) = inputs.request(&key, method, params)? {
            return Ok(answer);
        }
        inputs.set_state(self.round_state().clone());
        Err(inputs.finish().expect_err("a request is pending").into())
    }

    /// Form-mode elicitation: asks the user to fill in a `T` (the requested schema is derived
    /// from `T`, which must be a flat object of strings, numbers, booleans and enums).
    ///
    /// Ends this round with `?` until the client answers (see the module docs); an answer that is
    /// not a valid `ElicitResult` for `T` is refused with `-32602`, never a panic.
    pub fn elicit<T: DeserializeOwned + JsonSchema>(&self, message: &str) -> Result<Elicitation<T>, HandlerError> {
        let schema = crate::handler::schema_of::<T>();
        let answer = self.ask("elicitation/create", form_params(message, schema))?;
        match answer.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = answer.get("content").cloned().unwrap_or_else(|| Value::Object(Default::default()));
                serde_json::from_value(content).map(Elicitation::Accept).map_err(|e| invalid_answer("elicitation", e))
            }
            Some("decline") => Ok(Elicitation::Decline),
            Some("cancel") => Ok(Elicitation::Cancel),
            _ => Err(invalid_answer("elicitation", "expected an ElicitResult with an action")),
        }
    }

    /// URL-mode elicitation: asks the user to visit `url`; returns whether they accepted.
    pub fn elicit_url(&self, message: &str, url: &str, elicitation_id: &str) -> Result<Elicitation<()>, HandlerError> {
        let mut url = ElicitRequestUrlParams::new(message, url);
        url.extra.insert("elicitationId".into(), elicitation_id.into());
        let params = serde_json::to_value(url).expect("params serialize");
        let answer = self.ask("elicitation/create", params)?;
        match answer.get("action").and_then(Value::as_str) {
            Some("accept") => Ok(Elicitation::Accept(())),
            Some("decline") => Ok(Elicitation::Decline),
            Some("cancel") => Ok(Elicitation::Cancel),
            _ => Err(invalid_answer("elicitation", "expected an ElicitResult with an action")),
        }
    }

    /// Sampling: asks the client's model for a message.
    pub fn sample(&self, request: CreateMessageRequestParams) -> Result<CreateMessageResult, HandlerError> {
        let params = serde_json::to_value(request).map_err(|e| invalid_answer("sampling request", e))?;
        let answer = self.ask("sampling/createMessage", params)?;
        serde_json::from_value(answer).map_err(|e| invalid_answer("sampling", e))
    }

    /// Roots: asks for the client's root list.
    pub fn roots(&self) -> Result<Vec<Root>, HandlerError> {
        let answer = self.ask("roots/list", Value::Object(Default::default()))?;
        serde_json::from_value::<ListRootsResult>(answer).map(|r| r.roots).map_err(|e| invalid_answer("roots", e))
    }
}
