//! Tests of `protocol`.

use super::*;
use serde_json::json;

fn error(code: i64, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m", "data": data}})
}

#[test]
fn negotiation_retries_named_versions_and_falls_back_for_legacy_servers() {
    let mut n = Negotiation::new(true);
    let retry = error(-32022, json!({"supported": ["2026-07-28"]}));
    assert!(matches!(n.handle(Probed::Response(&retry)).unwrap(), Step::Probe));
    let discover =
        json!({"jsonrpc": "2.0", "id": 2, "result": {"supportedVersions": ["2026-07-28"], "capabilities": {}}});
    let Step::Modern { version, .. } = n.handle(Probed::Response(&discover)).unwrap() else { panic!() };
    assert_eq!(version, "2026-07-28");

    // Legacy signs: silence, an HTTP 4xx, a non-modern error, a result that is not a DiscoverResult.
    for probed in [
        Probed::Silence,
        Probed::HttpStatus(405),
        Probed::Response(&error(-32601, Value::Null)),
        Probed::Response(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
        Probed::Response(&error(-32022, json!({"supported": ["2025-11-25"]}))),
    ] {
        assert!(matches!(Negotiation::new(true).handle(probed).unwrap(), Step::Legacy(_)), "{probed:?}");
        assert!(Negotiation::new(false).handle(probed).is_err(), "no fallback allowed: {probed:?}");
    }
    let none = error(-32022, json!({"supported": ["1999-01-01"]}));
    assert!(matches!(Negotiation::new(true).handle(Probed::Response(&none)), Err(ClientError::NoCommonVersion { .. })));
    // A server that keeps naming a version and refusing it does not loop forever.
    let mut stubborn = Negotiation::new(true);
    let refusal = error(-32022, json!({"supported": ["2026-07-28"]}));
    assert!(stubborn.handle(Probed::Response(&refusal)).is_ok());
    assert!(stubborn.handle(Probed::Response(&refusal)).is_ok());
    assert!(stubborn.handle(Probed::Response(&refusal)).is_err());
}

#[test]
fn rounds_echo_state_carry_answers_and_are_bounded() {
    let mut r = Rounds::new(json!({"name": "x"}).as_object().cloned().unwrap(), 3);
    let ask = json!({"resultType": "input_required", "requestState": "sealed-1",
        "inputRequests": {"k": {"method": "roots/list"}}});
    let RoundStep::Ask(q) = r.handle_result(ask.clone()).unwrap() else { panic!() };
    assert_eq!(q, [Question { key: "k".into(), method: "roots/list".into(), params: json!({}) }]);
    r.handle_answers(json!({"k": {"roots": []}}).as_object().cloned().unwrap());
    assert_eq!(
        Value::Object(r.params().clone()),
        json!({"name": "x", "inputResponses": {"k": {"roots": []}}, "requestState": "sealed-1"})
    );
    // A round without state sends none, and never the previous round's.
    let RoundStep::Ask(_) = r.handle_result(json!({"resultType": "input_required", "inputRequests": {}})).unwrap()
    else {
        panic!()
    };
    r.handle_answers(Map::new());
    assert_eq!(Value::Object(r.params().clone()), json!({"name": "x"}));
    assert!(matches!(r.handle_result(ask), Err(ClientError::TooManyRounds(3))));

    let mut done = Rounds::new(Map::new(), 3);
    assert!(matches!(done.handle_result(json!({"content": []})).unwrap(), RoundStep::Done(_)));
    // A task is a final answer of its own (followed by the caller); unknown types are errors.
    assert!(matches!(done.handle_result(json!({"resultType": "task"})).unwrap(), RoundStep::Done(_)));
    assert!(done.handle_result(json!({"resultType": "later"})).is_err());
}
