//! What one instance reads from Redis that another (or an attacker with access to Redis) wrote
//! never panics, and what is accepted is usable: change cues, session messages, task and
//! session records, and key-ring configuration text.
use mcp_protocol::state::{request_digest, Expectation, KeyRing, StateClaims};
use mcp_redis::__fuzz;
use mcp_server::tasks::TaskChange;
use std::collections::HashMap;

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let _ = __fuzz::bus_cue(data);
    let _ = __fuzz::session_message(data);
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(mut record) = __fuzz::task_record("t", text) {
            assert_eq!(record.task_id, "t");
            let _ = record.detailed();
            let _ = record.apply(TaskChange::Cancel, record.updated_at_ms);
            let _ = record.apply(TaskChange::TakeAnswers, record.updated_at_ms);
        }
        let fields = HashMap::from([("rec".to_owned(), text.to_owned()), ("level".to_owned(), "3".to_owned())]);
        if let Some(r) = __fuzz::session_record(fields, vec!["a://x".into()]) {
            assert!(r.state.check().is_ok());
        }
        if let Ok(ring) = KeyRing::from_base64_lines(text) {
            let params = serde_json::Map::new();
            let digest = request_digest("tools/call", &params);
            let claims = StateClaims {
                sub: None,
                aud: "svc".into(),
                exp: 10,
                method: "tools/call".into(),
                digest: digest.clone(),
                app: serde_json::Value::Null,
                keys: Vec::new(),
            };
            let sealed = ring.seal(&claims);
            let expect = Expectation { audience: "svc", principal: None, method: "tools/call", digest: &digest };
            assert!(ring.open(&sealed, &expect, 1).is_ok());
        }
    }
}
