//! The client's protocol decisions as deterministic machines, with no IO: era negotiation
//! ([`Negotiation`]) and the MRTR round driver ([`Rounds`]). [`crate::Client`] only moves their
//! messages; both are tested by feeding them answers by hand.
//!
//! ```
//! use mcp_client::protocol::{Negotiation, Probed, Step};
//! use serde_json::json;
//!
//! let mut n = Negotiation::new(true);
//! assert_eq!(n.version(), "2026-07-28");
//! // A legacy server answers `server/discover` with "method not found".
//! let answer = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}});
//! assert!(matches!(n.handle(Probed::Response(&answer)).unwrap(), Step::Legacy(_)));
//! ```

use crate::error::ClientError;
use crate::typed::{discover_result, Typed};
use mcp_protocol::types::DiscoverResult;
use mcp_protocol::version;
use serde_json::{Map, Value};

/// What came back from one `server/discover` probe.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Probed<'a> {
    /// The JSON-RPC response.
    Response(&'a Value),
    /// An HTTP error status instead of a response (HTTP transports only).
    HttpStatus(u16),
    /// No answer within the probe timeout.
    Silence,
}

/// What to do after a probe.
#[derive(Debug)]
#[non_exhaustive]
pub enum Step {
    /// Probe again with [`Negotiation::version`] (the server named a version we both speak).
    Probe,
    /// A modern server: use `version`; `discover` is its `DiscoverResult`.
    Modern {
        /// The negotiated version.
        version: String,
        /// The `server/discover` result.
        discover: Box<Typed<DiscoverResult>>,
    },
    /// Not a modern server (the reason says why): run the legacy `initialize` handshake.
    Legacy(String),
}

/// Era negotiation: probe with `server/discover`, retry with a version the server names, fall
/// back to the legacy handshake when the server is not modern.
#[derive(Debug, Clone)]
pub struct Negotiation {
    version: String,
    probes: u8,
    allow_legacy: bool,
}

/// Most probes before negotiation gives up (the first plus two retries).
const MAX_PROBES: u8 = 3;

fn is_modern_error(err: &Value) -> bool {
    let code = err.get("code").and_then(Value::as_i64).unwrap_or(0);
    use mcp_protocol::error::code::*;
    match code {
        UNSUPPORTED_PROTOCOL_VERSION => err.pointer("/data/supported").is_some_and(Value::is_array),
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY => true,
        _ => false,
    }
}

impl Negotiation {
    /// Starts at our newest version; `allow_legacy` permits the `initialize` fallback.
    pub fn new(allow_legacy: bool) -> Self {
        Self { version: version::LATEST.to_owned(), probes: 0, allow_legacy }
    }

    /// The version to send the next probe with.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Takes the outcome of the probe sent with [`Negotiation::version`].
    pub fn handle(&mut self, probed: Probed<'_>) -> Result<Step, ClientError> {
        self.probes += 1;
        let step = self.classify(probed)?;
        match &step {
            Step::Probe if self.probes >= MAX_PROBES => {
                Err(ClientError::invalid_response("version negotiation did not converge"))
            }
            Step::Legacy(why) if !self.allow_legacy => {
                Err(ClientError::invalid_response(format!("server is not a modern MCP server ({why})")))
            }
            _ => Ok(step),
        }
    }

    fn classify(&mut self, probed: Probed<'_>) -> Result<Step, ClientError> {
        let response = match probed {
            Probed::Silence => return Ok(Step::Legacy("no answer to server/discover".into())),
            Probed::HttpStatus(status) => return Ok(Step::Legacy(format!("HTTP {status}"))),
            Probed::Response(r) => r,
        };
        if let Some(err) = response.get("error") {
            if !is_modern_error(err) {
                return Ok(Step::Legacy(format!("server/discover failed: {err}")));
            }
            if let Some(supported) = err.pointer("/data/supported").and_then(Value::as_array) {
                let theirs: Vec<String> = supported.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect();
                // Retry with the best common modern version (even the one just sent: a server
                // may refuse a first attempt and name it as supported; probes are bounded).
                if let Some(v) = version::MODERN.iter().find(|v| theirs.iter().any(|t| t == *v)) {
                    self.version = (*v).to_owned();
                    return Ok(Step::Probe);
                }
                if theirs.iter().any(|t| version::LEGACY.contains(&t.as_str())) {
                    return Ok(Step::Legacy(format!("server supports only {theirs:?}")));
                }
                return Err(ClientError::NoCommonVersion { server: theirs });
            }
            return Err(ClientError::from_error_object(err));
        }
        let result = response
            .get("result")
            .ok_or_else(|| ClientError::invalid_response("response has neither result nor error"))?;
        // A legacy server may answer unknown methods with an empty result: only a real
        // DiscoverResult (supportedVersions + capabilities) identifies a modern server.
        if !result.get("supportedVersions").is_some_and(Value::is_array)
            || !result.get("capabilities").is_some_and(Value::is_object)
        {
            return Ok(Step::Legacy(format!("server/discover answered without a DiscoverResult: {result}")));
        }
        result_type(result)?;
        let discover = discover_result(result.clone(), "server/discover")?;
        Ok(Step::Modern { version: self.version.clone(), discover: Box::new(discover) })
    }
}

/// A result's `resultType` (`complete` when absent); anything else this client does not know
/// is an error.
pub fn result_type(result: &Value) -> Result<&str, ClientError> {
    match result.get("resultType") {
        None => Ok("complete"),
        Some(Value::String(s)) if matches!(s.as_str(), "complete" | "input_required" | "task") => Ok(s.as_str()),
        Some(other) => Err(ClientError::invalid_response(format!("unknown resultType {other}"))),
    }
}

/// One input request of an `input_required` result.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The server's key for it (answers go under the same key).
    pub key: String,
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// The request's params.
    pub params: Value,
}

/// What a round's result means.
#[derive(Debug)]
#[non_exhaustive]
pub enum RoundStep {
    /// The call is done: its final result.
    Done(Value),
    /// The server needs these answers: hand them to [`Rounds::handle_answers`], then send
    /// [`Rounds::params`] again.
    Ask(Vec<Question>),
}

/// The MRTR driver of one call: which params each round sends, what each result means, and
/// the bound on rounds. `requestState` is echoed exactly as received, never invented.
#[derive(Debug, Clone)]
pub struct Rounds {
    params: Map<String, Value>,
    round: usize,
    max_rounds: usize,
    state: Option<Value>,
}

impl Rounds {
    /// A call sending `params`, allowed `max_rounds` rounds.
    pub fn new(params: Map<String, Value>, max_rounds: usize) -> Self {
        Self { params, round: 0, max_rounds, state: None }
    }

    /// The params of the next round.
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// Takes the `result` of the round just sent.
    pub fn handle_result(&mut self, result: Value) -> Result<RoundStep, ClientError> {
        self.round += 1;
        if result_type(&result)? != "input_required" {
            return Ok(RoundStep::Done(result));
        }
        if self.round >= self.max_rounds {
            return Err(ClientError::TooManyRounds(self.max_rounds));
        }
        self.state = result.get("requestState").cloned();
        let questions = result
            .get("inputRequests")
            .and_then(Value::as_object)
            .map(|requests| {
                requests
                    .iter()
                    .map(|(key, r)| Question {
                        key: key.clone(),
                        method: r.get("method").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        params: r.get("params").cloned().unwrap_or_else(|| Value::Object(Map::new())),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(RoundStep::Ask(questions))
    }

    /// Takes the answers to the last round's questions (keyed like them) and prepares the next
    /// round's params.
    pub fn handle_answers(&mut self, responses: Map<String, Value>) {
        self.params.remove("inputResponses");
        self.params.remove("requestState");
        if !responses.is_empty() {
            self.params.insert("inputResponses".into(), Value::Object(responses));
        }
        if let Some(state) = self.state.take() {
            self.params.insert("requestState".into(), state);
        }
    }
}

#[cfg(test)]
mod tests;
