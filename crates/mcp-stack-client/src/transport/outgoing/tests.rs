//! Tests of `outgoing`.

use super::*;
use serde_json::json;

fn raw(v: Value) -> Box<RawValue> {
    RawValue::from_string(v.to_string()).unwrap()
}

fn written(req: &OutgoingRequest<'_>) -> Value {
    let text = req.to_json().unwrap();
    assert!(!text.contains(&b'\n'), "one line");
    serde_json::from_slice(&text).unwrap()
}

#[test]
fn a_modern_request_merges_the_callers_meta_with_the_clients() {
    let (caps, info) = (raw(json!({"roots": {}})), raw(json!({"name": "c", "version": "1"})));
    let params = json!({"name": "echo", "arguments": {"text": "hi"},
        "_meta": {"mine": 1, PROGRESS_TOKEN: "theirs", PROTOCOL_VERSION: "1999-01-01"}});
    let params = params.as_object().unwrap();
    let extra = json!({"traceparent": "00-1-2-01"});
    let meta = ClientMeta {
        modern: Some(("2026-07-28", &caps, &info)),
        progress: Some(7),
        log_level: Some(LoggingLevel::Debug),
        extra: extra.as_object(),
    };
    let req = OutgoingRequest::from_parts(Parts { id: 3, method: "tools/call", params, meta }, Vec::new());
    assert_eq!((req.id(), req.streams(), req.is_initialize()), (&json!(3), true, false));
    assert_eq!(
        written(&req),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": "hi"},
            "_meta": {"mine": 1, PROGRESS_TOKEN: 7, PROTOCOL_VERSION: "2026-07-28",
                CLIENT_CAPABILITIES: {"roots": {}}, CLIENT_INFO: {"name": "c", "version": "1"},
                LOG_LEVEL: "debug", "traceparent": "00-1-2-01"}}})
    );
}

#[test]
fn without_client_meta_the_params_go_as_they_are() {
    for params in [json!({}), json!({"cursor": "c"}), json!({"_meta": 5}), json!({"_meta": {"k": [1]}, "x": null})] {
        let p = params.as_object().unwrap();
        let parts = Parts { id: -1, method: "m", params: p, meta: ClientMeta::default() };
        let req = OutgoingRequest::from_parts(parts, Vec::new());
        assert!(!req.streams(), "{params}");
        assert_eq!(written(&req), json!({"jsonrpc": "2.0", "id": -1, "method": "m", "params": params}));
    }
}

#[test]
fn a_callers_meta_that_is_no_object_gives_way_to_the_clients() {
    let params = json!({"_meta": "odd"});
    let meta = ClientMeta { progress: Some(1), ..ClientMeta::default() };
    let parts = Parts { id: 1, method: "m", params: params.as_object().unwrap(), meta };
    assert_eq!(
        written(&OutgoingRequest::from_parts(parts, Vec::new()))["params"],
        json!({"_meta": {PROGRESS_TOKEN: 1}})
    );
    // A caller's own progress token asks for a stream too.
    let params = json!({"_meta": {PROGRESS_TOKEN: "mine"}});
    let parts = Parts { id: 1, method: "m", params: params.as_object().unwrap(), meta: ClientMeta::default() };
    assert!(OutgoingRequest::from_parts(parts, Vec::new()).streams());
}

#[test]
fn a_whole_message_is_checked_and_classified() {
    let listen =
        OutgoingRequest::new(json!({"jsonrpc": "2.0", "id": "a", "method": "subscriptions/listen"}), Vec::new());
    assert!(listen.unwrap().streams());
    let init =
        OutgoingRequest::new(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}), Vec::new());
    let init = init.unwrap();
    assert!(init.is_initialize() && !init.streams());
    let progress = json!({"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"_meta": {PROGRESS_TOKEN: 2}}});
    let r = OutgoingRequest::new(progress.clone(), Vec::new()).unwrap();
    assert!(r.streams());
    assert_eq!(written(&r), progress);
    for bad in [json!({"method": "x"}), json!({"id": null}), json!({"id": 1.5}), json!({"id": [1]})] {
        assert!(matches!(OutgoingRequest::new(bad, Vec::new()), Err(TransportError::Malformed(_))));
    }
}
