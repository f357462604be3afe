//! Opening attacker-controlled `requestState` never panics and never succeeds by accident.
use mcp_protocol::state::{Expectation, KeyRing};

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let ring = KeyRing::from_secrets([3; 32], &[]);
    let Ok(s) = std::str::from_utf8(data) else { return };
    let expect = Expectation { audience: "svc", principal: None, method: "tools/call", digest: "d" };
    assert!(ring.open(s, &expect, 0).is_err());
}
