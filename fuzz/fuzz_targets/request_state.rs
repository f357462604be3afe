//! Opening attacker-controlled `requestState` never panics and never succeeds by accident.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mcp_protocol::state::{Expectation, KeyRing};

fuzz_target!(|data: &[u8]| {
    let ring = KeyRing::from_secrets([3; 32], &[]);
    let Ok(s) = std::str::from_utf8(data) else { return };
    let expect = Expectation { audience: "svc", principal: None, method: "tools/call", digest: "d" };
    assert!(ring.open(s, &expect, 0).is_err());
});
