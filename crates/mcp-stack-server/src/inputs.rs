//! Multi Round-Trip Requests on the server: asking the client for input and reading the answers.
//!
//! A handler asks through [`Inputs`] (from [`crate::Context::inputs`]): each `elicit`/`sample`/
//! `roots` call returns the client's answer when the retry carries it, and otherwise records the
//! request. [`Inputs::finish`] then returns `Err(InputRequired)` when anything is still missing,
//! which the framework turns into an `input_required` result with a sealed `requestState`.
//!
//! The sealed state records the keys of the round's input requests, and the retry's answers
//! are bound to them: a handler only ever sees answers under keys its previous round issued.
//! Answers sent without a valid `requestState`, or under other keys, are ignored (so the
//! question is simply asked again).

use mcp_protocol::ProtocolError;
use serde_json::{json, Map, Value};

/// An `input_required` outcome: the input requests to send and application state to carry.
#[derive(Debug, Clone, Default)]
pub struct InputRequired {
    /// Input requests keyed by server-chosen ids (`{method, params}` objects).
    pub requests: Map<String, Value>,
    /// Request-scoped state to carry (sealed) to the retry; read it with [`crate::Context::round_state`].
    pub state: Value,
}

impl std::fmt::Display for InputRequired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "input required ({} request(s))", self.requests.len())
    }
}

impl std::error::Error for InputRequired {}

/// Keeps in `params` only the `inputResponses` under `issued` keys (those the previous round's
/// `inputRequests` named, read from its verified state): answers sent without valid state, or
/// under keys the server never asked, are dropped before any handler runs. The MRTR pattern says
/// a server "SHOULD ignore any information it does not recognize or need"; a handler that still
/// needs an answer asks again with a new `input_required` result.
pub(crate) fn bind_answers(params: &mut Map<String, Value>, issued: &[String]) {
    // Most requests carry none: a look-up (the request path's shared one), not a removal.
    if params.get("inputResponses").is_none() {
        return;
    }
    let Some(Value::Object(sent)) = params.remove("inputResponses") else { return };
    let total = sent.len();
    let kept: Map<String, Value> = sent.into_iter().filter(|(k, _)| issued.contains(k)).collect();
    if kept.len() < total {
        tracing::debug!(ignored = total - kept.len(), "ignored inputResponses under keys this request was not asked");
    }
    if !kept.is_empty() {
        params.insert("inputResponses".into(), Value::Object(kept));
    }
}

/// The client capability an input request needs, as a `ClientCapabilities`-shaped object.
fn required_capability(method: &str, params: &Value) -> Value {
    match method {
        "elicitation/create" => {
            let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
            json!({ "elicitation": { mode: {} } })
        }
        "sampling/createMessage" => {
            if params.get("tools").is_some() {
                json!({ "sampling": { "tools": {} } })
            } else {
                json!({ "sampling": {} })
            }
        }
        "roots/list" => json!({ "roots": {} }),
        _ => json!({}),
    }
}

/// Whether `capabilities` (a request's `clientCapabilities`) declares everything in `needed`
/// (a `ClientCapabilities`-shaped object; nested objects are checked key by key).
pub fn declares(capabilities: &Map<String, Value>, needed: &Value) -> bool {
    let Some(needed) = needed.as_object() else {
        return true;
    };
    needed.iter().all(|(cap, sub)| {
        let Some(have) = capabilities.get(cap).filter(|v| !v.is_null()) else {
            return false;
        };
        match (sub.as_object(), have.as_object()) {
            (Some(subs), Some(have)) => subs.keys().all(|k| {
                // `elicitation: {}` means form mode only (backwards-compatible default).
                have.contains_key(k) || (cap == "elicitation" && k == "form" && have.is_empty())
            }),
            (Some(subs), None) => subs.is_empty(),
            _ => true,
        }
    })
}

/// Collects input requests for one handler invocation and hands out answers from the retry.
///
/// The handler runs again from the top on every round, so anything it does before all its
/// answers are in happens once per round: do side effects after [`Inputs::finish`].
#[derive(Debug)]
#[must_use = "call `finish()?` to send the input requests"]
pub struct Inputs<'a> {
    responses: Option<&'a Map<String, Value>>,
    capabilities: &'a Map<String, Value>,
    pending: Map<String, Value>,
    state: Value,
}

impl<'a> Inputs<'a> {
    pub(crate) fn new(responses: Option<&'a Map<String, Value>>, capabilities: &'a Map<String, Value>) -> Self {
        Self { responses, capabilities, pending: Map::new(), state: Value::Null }
    }

    /// Asks for input with `method`/`params` under `key`; returns the answer if the retry has it.
    ///
    /// Fails with `MissingRequiredClientCapability` when the client did not declare the
    /// capability the request needs (the request is then never sent).
    pub fn request(&mut self, key: &str, method: &str, params: Value) -> Result<Option<Value>, ProtocolError> {
        if let Some(answer) = self.responses.and_then(|r| r.get(key)) {
            return Ok(Some(answer.clone()));
        }
        let needed = required_capability(method, &params);
        if !self.declares(&needed) {
            return Err(ProtocolError::MissingRequiredClientCapability { required: needed });
        }
        self.pending.insert(key.to_owned(), json!({ "method": method, "params": params }));
        Ok(None)
    }

    fn declares(&self, needed: &Value) -> bool {
        declares(self.capabilities, needed)
    }

    /// Whether the client declared the capability an input request of this kind needs.
    pub fn client_supports(&self, method: &str, params: &Value) -> bool {
        self.declares(&required_capability(method, params))
    }

    /// Form-mode elicitation: asks the user to fill `requested_schema`.
    pub fn elicit(
        &mut self,
        key: &str,
        message: &str,
        requested_schema: Value,
    ) -> Result<Option<Value>, ProtocolError> {
        self.request(
            key,
            "elicitation/create",
            json!({ "mode": "form", "message": message, "requestedSchema": requested_schema }),
        )
    }

    /// URL-mode elicitation: asks the user to visit `url`.
    pub fn elicit_url(
        &mut self,
        key: &str,
        message: &str,
        url: &str,
        elicitation_id: &str,
    ) -> Result<Option<Value>, ProtocolError> {
        self.request(
            key,
            "elicitation/create",
            json!({ "mode": "url", "message": message, "url": url, "elicitationId": elicitation_id }),
        )
    }

    /// Sampling: asks the client's LLM; `params` is a `CreateMessageRequestParams` object.
    pub fn sample(&mut self, key: &str, params: Value) -> Result<Option<Value>, ProtocolError> {
        self.request(key, "sampling/createMessage", params)
    }

    /// Roots: asks for the client's root list.
    pub fn roots(&mut self, key: &str) -> Result<Option<Value>, ProtocolError> {
        self.request(key, "roots/list", json!({}))
    }

    /// Sets request-scoped state to carry to the retry (sealed; see [`crate::Context::round_state`]).
    pub fn set_state(&mut self, state: Value) {
        self.state = state;
    }

    /// Ok when every requested input has an answer; otherwise the `InputRequired` to return.
    pub fn finish(mut self) -> Result<(), InputRequired> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err(InputRequired { requests: std::mem::take(&mut self.pending), state: self.state.take() })
        }
    }
}

/// Dropped with requests recorded but never sent (no `finish()?`): the client would never be
/// asked, so this is said out loud, at `warn`, naming the keys.
impl Drop for Inputs<'_> {
    fn drop(&mut self) {
        if !self.pending.is_empty() && !std::thread::panicking() {
            let keys: Vec<&String> = self.pending.keys().collect();
            tracing::warn!(
                ?keys,
                "Inputs dropped without finish(): these input requests were never sent (end the round with `inputs.finish()?`)"
            );
        }
    }
}
