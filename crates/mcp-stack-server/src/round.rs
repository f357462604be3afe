//! What one MRTR round hands the next, and what a legacy session supplies in place of a
//! request's `_meta` and `requestState`.

use mcp_protocol::meta::RequestMeta;
use serde_json::Value;

/// What a legacy session supplies in place of a request's `_meta` and `requestState`.
#[derive(Debug)]
pub struct Preset {
    /// The per-request fields, from the session.
    pub meta: RequestMeta,
    /// MRTR state kept in memory between rounds (`None`: read `requestState` as usual).
    pub state: Option<RoundState>,
}

/// What the previous MRTR round handed to this one (through a verified `requestState`, or
/// kept in memory by a legacy session): the handler's state and the input keys that round
/// issued. Without either, the request is a first round: no answers at all are honoured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoundState {
    /// What the handler put in [`crate::InputRequired::state`].
    pub(crate) app: Value,
    /// The `inputRequests` keys of the previous round.
    pub(crate) keys: Vec<String>,
}
