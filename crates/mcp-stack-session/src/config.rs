//! [`SessionConfig`]: the limits of one session.

use mcp_protocol::strict::DEFAULT_MAX_DEPTH;
use std::time::Duration;

/// Limits of one session.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionConfig {
    /// Whether a legacy client's `initialize` opens a session (default true); when false it gets
    /// `-32601` naming the supported versions.
    pub(crate) accept_legacy: bool,
    /// Deepest accepted JSON nesting in [`Session::handle_bytes`](crate::Session::handle_bytes) (default 64).
    pub(crate) max_depth: usize,
    /// How many rounds of client input one legacy request may take (default 16).
    pub max_input_rounds: usize,
    /// How long the client has to answer a server-to-client request (default: the server's
    /// request timeout).
    pub answer_timeout: Option<Duration>,
    /// What the ids of server-to-client requests start with (default `s`): a transport whose
    /// sessions span several processes names the process here, so that an answer reaching
    /// another process can be routed to the one that asked.
    pub(crate) outbound_prefix: String,
    /// Most bytes of `capabilities` and `clientInfo` (serialized) a legacy `initialize` may
    /// carry (default 64 KiB): the session keeps them for its whole life. Over it the
    /// `initialize` is refused with `-32602`.
    pub(crate) max_client_params_bytes: usize,
    /// The seed of the session's hash tables (the ids in them come from the client). The
    /// default draws one from the operating system; a test passes its own for a repeatable run.
    pub(crate) seed: u64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            accept_legacy: true,
            max_depth: DEFAULT_MAX_DEPTH,
            max_input_rounds: 16,
            answer_timeout: None,
            outbound_prefix: "s".into(),
            max_client_params_bytes: 64 << 10,
            seed: rand::random(),
        }
    }
}

impl SessionConfig {
    /// Whether `initialize` may open a legacy session.
    pub fn accept_legacy(mut self, yes: bool) -> Self {
        self.accept_legacy = yes;
        self
    }

    /// The deepest accepted JSON nesting.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// How long the client has to answer a server-to-client request.
    #[cfg(all(test, feature = "legacy"))]
    pub(crate) fn answer_timeout(mut self, limit: Duration) -> Self {
        self.answer_timeout = Some(limit);
        self
    }

    /// Most bytes of `capabilities` and `clientInfo` a legacy `initialize` may carry.
    pub fn max_client_params_bytes(mut self, bytes: usize) -> Self {
        self.max_client_params_bytes = bytes;
        self
    }

    /// What the ids of server-to-client requests start with.
    pub fn outbound_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.outbound_prefix = prefix.into();
        self
    }

    /// The seed of the session's hash tables.
    #[cfg(all(test, feature = "legacy"))]
    pub(crate) fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}
