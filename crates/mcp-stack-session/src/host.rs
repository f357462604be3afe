//! What the session core needs of the server it serves, and nothing more: how to encode a
//! result, what a legacy `initialize` answers, two defaults, and how to open a round's sealed
//! state. The core holds a [`Host`]; the only implementation is [`Server`]'s, here (through
//! the server's public API and its `internal` accessors).

use mcp_protocol::{ProtocolError, Request};
use mcp_server::internal::RoundState;
use mcp_server::{Reply, RequestEnv, Server};
use serde_json::{Map, Value};
use std::time::Duration;

/// The server as the session core sees it (all but the encoder only for legacy sessions).
#[cfg_attr(not(feature = "legacy"), allow(dead_code))]
pub(crate) trait Host: Send + Sync + 'static {
    /// The JSON-RPC response for a modern call's result (`resultType`, `serverInfo`).
    fn encode_response(&self, id: &Value, result: &Result<Reply, ProtocolError>) -> Vec<u8>;
    /// What a legacy `initialize` answers besides the negotiated version: `capabilities`,
    /// `serverInfo` and `instructions`.
    fn initialize_fields(&self) -> Map<String, Value>;
    /// The log level (a rank) a legacy session gets before it sets one.
    fn legacy_log_level(&self) -> Option<u8>;
    /// How long a client has to answer a question, unless the session says otherwise.
    fn answer_timeout(&self) -> Duration;
    /// Opens the `requestState` of a legacy call's round (it never left the server, so its
    /// expiry does not apply), bound to `principal`.
    fn open_round_state(&self, request: &Request, principal: Option<String>) -> Result<RoundState, ProtocolError>;
}

impl Host for Server {
    fn encode_response(&self, id: &Value, result: &Result<Reply, ProtocolError>) -> Vec<u8> {
        Server::encode_response(self, id, result)
    }

    fn initialize_fields(&self) -> Map<String, Value> {
        let mut fields = Map::new();
        let capabilities = serde_json::to_value(self.capabilities()).expect("capabilities serialize");
        fields.insert("capabilities".into(), capabilities);
        fields.insert("serverInfo".into(), self.server_info().clone());
        if let Some(i) = self.discover_result().instructions {
            fields.insert("instructions".into(), Value::String(i));
        }
        fields
    }

    // The two settings below have no public accessor on `Server`: this adapter is the one
    // place the session layer reads them.
    fn legacy_log_level(&self) -> Option<u8> {
        mcp_server::internal::legacy_log_level(self)
    }

    fn answer_timeout(&self) -> Duration {
        mcp_server::internal::request_timeout(self)
    }

    fn open_round_state(&self, request: &Request, principal: Option<String>) -> Result<RoundState, ProtocolError> {
        let env = RequestEnv { principal, ..RequestEnv::default() };
        // 0: the state never left the server, so its expiry does not apply.
        mcp_server::internal::open_state_at(self, request, &env, Some(0))
    }
}
