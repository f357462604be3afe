//! The MRTR-to-legacy bridge: a legacy client cannot retry a request with `inputResponses`, so
//! when a handler answers `input_required` the session asks the client itself, one
//! server-to-client request per input request, and runs the handler again with the answers,
//! exactly as a modern client's retry would. The round's state never leaves the server: it is
//! kept here between rounds, however long the user takes to answer (each question has the
//! answer timeout as its deadline). This file holds a call's bridge state; `LegacySession`
//! runs it.

use mcp_protocol::types::RequestId;
use mcp_protocol::Request;
use mcp_server::internal::RoundState;
use serde_json::{Map, Value};

/// One question asked on behalf of a call: the call's key and the input request's key.
#[derive(Debug)]
pub(crate) struct Asked {
    pub(crate) call: RequestId,
    pub(crate) input: String,
}

/// The bridge state of one legacy call.
#[derive(Debug)]
pub(crate) struct Bridge {
    /// The request as the client sent it; each round adds that round's `inputResponses`.
    pub(crate) request: Request,
    pub(crate) principal: Option<String>,
    pub(crate) rounds: usize,
    /// The state the last round carried to the next (with the keys it asked).
    pub(crate) state: Option<RoundState>,
    /// Questions of this round still unanswered (outbound ids).
    pub(crate) asked: Vec<RequestId>,
    pub(crate) responses: Map<String, Value>,
}

impl Bridge {
    pub(crate) fn new(request: Request, principal: Option<String>) -> Self {
        Self { request, principal, rounds: 0, state: None, asked: Vec::new(), responses: Map::new() }
    }
}

/// Drops what only modern results carry: `resultType` and the caching hints.
pub(crate) fn strip_modern_fields(result: &mut Value) {
    if let Value::Object(o) = result {
        o.remove("resultType");
        o.remove("ttlMs");
        o.remove("cacheScope");
    }
}
