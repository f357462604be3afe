//! The session core, driven by hand: plain tests with no runtime, no transport and no handlers
//! (each test plays the transport, and answers for the handler), time made up.

use crate::*;
use mcp_protocol::types::LoggingLevel;
use mcp_protocol::version::Era;
use mcp_protocol::ProtocolError;
use mcp_server::{ChangeEvent, Server};
use serde_json::json;
use serde_json::{Map, Value};
use std::time::{Duration, Instant};

fn session(config: SessionConfig) -> LegacySession {
    let server = Server::builder("core", "1").build().unwrap();
    LegacySession::new(server, config.seed(7))
}

fn bytes(v: Value) -> Vec<u8> {
    serde_json::to_vec(&v).unwrap()
}

fn request(id: i64, method: &str, params: Value) -> Vec<u8> {
    bytes(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

fn modern(id: i64, method: &str) -> Vec<u8> {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    request(id, method, json!({"_meta": meta}))
}

fn cancelled(id: i64) -> Vec<u8> {
    bytes(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}))
}

fn initialize(s: &mut LegacySession, t: Instant) {
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}, "roots": {}}});
    s.handle_bytes(&request(0, "initialize", params), t);
    let sent = sent(s);
    assert_eq!(sent[0]["result"]["protocolVersion"], "2025-11-25");
    assert!(s.legacy().is_some());
}

fn events(s: &mut LegacySession) -> Vec<Event> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

fn messages(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Transmit(t) => Some(serde_json::from_slice(&t.message).unwrap()),
            _ => None,
        })
        .collect()
}

/// The messages the session queued, parsed (other events are dropped).
fn sent(s: &mut LegacySession) -> Vec<Value> {
    messages(&events(s))
}

/// The one dispatch queued (and nothing else).
fn dispatched(s: &mut LegacySession) -> Call {
    let out = events(s);
    let [Event::Call(_)] = &out[..] else { panic!("expected one dispatch: {out:?}") };
    let Some(Event::Call(d)) = out.into_iter().next() else { unreachable!() };
    d
}

/// What the `ask` handler answers on a first round: a question for the client.
fn asks_for_a_name() -> Value {
    json!({"resultType": "input_required", "inputRequests": {
        "name": {"method": "elicitation/create", "params": {"message": "Who?", "requestedSchema": {"type": "object"}}}
    }})
}

fn answer(id: &Value, result: Value) -> Map<String, Value> {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).as_object().cloned().unwrap()
}

#[test]
fn requests_are_routed_by_era_and_encoded_for_it() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default());
    s.handle_bytes(&modern(1, "tools/list"), t);
    let d = dispatched(&mut s);
    assert_eq!((d.era(), d.request().unwrap().method.as_str()), (Era::Modern, "tools/list"));
    s.handle_outcome(d.id(), Ok(json!({"tools": []}).into()), t);
    assert_eq!(sent(&mut s)[0]["result"]["resultType"], "complete", "modern before any handshake");

    initialize(&mut s, t);
    s.handle_bytes(&request(2, "initialize", json!({"protocolVersion": "2025-11-25"})), t);
    assert_eq!(sent(&mut s)[0]["error"]["code"], -32600, "one handshake per session");

    s.handle_bytes(&request(3, "tools/list", json!({})), t);
    let d = dispatched(&mut s);
    assert_eq!(d.era(), Era::Legacy);
    s.handle_outcome(
        d.id(),
        Ok(json!({"tools": [], "resultType": "complete", "ttlMs": 5, "cacheScope": "public"}).into()),
        t,
    );
    let out = sent(&mut s);
    assert_eq!(out[0]["result"], json!({"tools": []}), "legacy results carry no modern fields");

    s.handle_bytes(&modern(4, "tools/list"), t);
    let d = dispatched(&mut s);
    assert_eq!(d.era(), Era::Modern, "modern stays modern");
    s.handle_outcome(d.id(), Ok(json!({"tools": []}).into()), t);
    assert_eq!(sent(&mut s)[0]["result"]["resultType"], "complete");

    s.handle_bytes(&request(5, "server/discover", json!({})), t);
    assert_eq!(sent(&mut s)[0]["error"]["code"], -32601, "modern-only methods do not exist in a legacy session");
    s.handle_bytes(&request(6, "ping", json!({})), t);
    assert_eq!(sent(&mut s)[0]["result"], json!({}), "the session answers its own methods");
    assert_eq!(s.calls_in_flight(), 0);
}

#[test]
fn a_legacy_call_asks_the_client_and_runs_again_with_the_answer() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default().answer_timeout(Duration::from_secs(30)));
    initialize(&mut s, t);
    s.handle_bytes(&request(7, "tools/call", json!({"name": "ask"})), t);
    let d = dispatched(&mut s);
    assert_eq!(s.calls_in_flight(), 1, "a legacy call is tracked from the start");
    s.handle_outcome(d.id(), Ok(asks_for_a_name().into()), t);
    let out = events(&mut s);
    let [Event::Transmit(asked)] = &out[..] else { panic!("{out:?}") };
    assert_eq!(asked.call, Some(json!(7)), "sent on behalf of the call");
    let asked: Value = serde_json::from_slice(&asked.message).unwrap();
    assert_eq!(
        (asked["method"].as_str(), asked["params"]["message"].as_str()),
        (Some("elicitation/create"), Some("Who?"))
    );
    assert_eq!(s.poll_timeout(), Some(t + Duration::from_secs(30)));

    let later = t + Duration::from_secs(3);
    let accepted = json!({"action": "accept", "content": {"name": "Ada"}});
    assert!(s.handle_response(&answer(&asked["id"], accepted.clone()), later));
    let again = dispatched(&mut s);
    assert_eq!(again.request().unwrap().params["inputResponses"]["name"], accepted, "the retry carries the answer");
    assert_eq!(s.poll_timeout(), None, "nothing waits on the client while the handler runs");
    s.handle_outcome(again.id(), Ok(json!({"content": [{"type": "text", "text": "hello Ada"}]}).into()), later);
    let out = events(&mut s);
    let sent = messages(&out);
    assert_eq!(
        (sent[0]["id"].clone(), sent[0]["result"]["content"][0]["text"].clone()),
        (json!(7), json!("hello Ada"))
    );
    assert!(matches!(out.last(), Some(Event::Finished(id)) if *id == json!(7)));
    assert_eq!((s.calls_in_flight(), s.poll_timeout()), (0, None));

    // A second answer to the same question, or one to a question never asked, changes nothing.
    assert!(s.handle_response(&answer(&asked["id"], json!({"action": "decline"})), later));
    assert!(s.handle_response(&answer(&json!("s99"), json!({})), later));
    assert!(events(&mut s).is_empty());
    // A request is not a response.
    assert!(!s.handle_response(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).as_object().unwrap(), later));
}

#[test]
fn an_unanswered_question_fails_the_call_at_its_deadline() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default().answer_timeout(Duration::from_secs(5)));
    initialize(&mut s, t);
    s.handle_bytes(&request(1, "tools/call", json!({"name": "ask"})), t);
    let d = dispatched(&mut s);
    s.handle_outcome(d.id(), Ok(asks_for_a_name().into()), t);
    events(&mut s);
    s.handle_timeout(t + Duration::from_secs(4));
    assert!(events(&mut s).is_empty(), "not yet");
    s.handle_timeout(t + Duration::from_secs(5));
    let out = sent(&mut s);
    assert_eq!(out[0]["id"], 1);
    assert!(out[0]["error"]["message"].as_str().unwrap().contains("did not answer within 5 s"), "{out:?}");
    assert_eq!((s.calls_in_flight(), s.poll_timeout()), (0, None));
}

#[test]
fn cancelling_stops_the_handler_and_nothing_is_sent_for_the_call() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default());
    // A modern call its transport could not finish at once: cancelling stops it.
    s.handle_bytes(&modern(1, "tools/list"), t);
    let d = dispatched(&mut s);
    s.handle_pending(&d, t);
    s.handle_bytes(&cancelled(1), t);
    let out = events(&mut s);
    assert!(matches!(&out[..], [Event::Finished(id)] if *id == json!(1)), "{out:?}");
    assert!(d.cancellation().is_cancelled(), "the handler is stopped");
    assert_eq!(s.calls_in_flight(), 0);
    // An untracked call (finished on its first poll) cannot be cancelled: its answer goes out.
    s.handle_bytes(&modern(9, "tools/list"), t);
    let d = dispatched(&mut s);
    s.handle_bytes(&cancelled(9), t);
    assert!(events(&mut s).is_empty());
    assert!(!d.cancellation().is_cancelled());
    s.handle_outcome(d.id(), Ok(json!({"tools": []}).into()), t);
    assert_eq!(sent(&mut s)[0]["id"], 9);

    // A legacy call waiting for an answer: the question is forgotten, a late answer dropped.
    initialize(&mut s, t);
    s.handle_bytes(&request(2, "tools/call", json!({"name": "ask"})), t);
    let d = dispatched(&mut s);
    s.handle_outcome(d.id(), Ok(asks_for_a_name().into()), t);
    let asked = sent(&mut s);
    s.handle_bytes(&cancelled(2), t);
    assert!(matches!(&events(&mut s)[..], [Event::Finished(id)] if *id == json!(2)));
    assert!(d.cancellation().is_cancelled());
    assert_eq!((s.calls_in_flight(), s.poll_timeout()), (0, None));
    assert!(s.handle_response(&answer(&asked[0]["id"], json!({"action": "decline"})), t));
    assert!(events(&mut s).is_empty());
    // A legacy call whose handler is still running: its handler is stopped (the transport
    // reports nothing for a cancelled call) and its id is free again.
    s.handle_bytes(&request(3, "tools/call", json!({"name": "slow"})), t);
    let d = dispatched(&mut s);
    s.handle_bytes(&cancelled(3), t);
    assert!(matches!(&events(&mut s)[..], [Event::Finished(id)] if *id == json!(3)));
    assert!(d.cancellation().is_cancelled());
    assert!(!s.is_in_flight(d.key()));
}

#[test]
fn a_refused_question_a_gone_client_and_endless_questions_end_the_call() {
    let t = Instant::now();
    let mut s = session(SessionConfig { max_input_rounds: 3, ..SessionConfig::default() });
    initialize(&mut s, t);
    s.handle_bytes(&request(1, "tools/call", json!({"name": "ask"})), t);
    let d = dispatched(&mut s);
    s.handle_outcome(d.id(), Ok(asks_for_a_name().into()), t);
    let asked = sent(&mut s);
    let refusal = json!({"jsonrpc": "2.0", "id": asked[0]["id"], "error": {"code": -1, "message": "user said no"}});
    assert!(s.handle_response(refusal.as_object().unwrap(), t));
    let out = sent(&mut s);
    assert!(out[0]["error"]["message"].as_str().unwrap().contains("user said no"), "{out:?}");

    let roots = json!({"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}});
    s.handle_bytes(&request(2, "tools/call", json!({"name": "forever"})), t);
    let mut d = dispatched(&mut s);
    for _ in 0..3 {
        s.handle_outcome(d.id(), Ok(roots.clone().into()), t);
        let asked = sent(&mut s);
        assert_eq!(asked[0]["method"], "roots/list");
        assert!(s.handle_response(&answer(&asked[0]["id"], json!({"roots": []})), t));
        d = dispatched(&mut s);
    }
    s.handle_outcome(d.id(), Ok(roots.into()), t);
    let out = sent(&mut s);
    assert!(out[0]["error"]["message"].as_str().unwrap().contains("more than 3 times"), "{out:?}");

    // A round whose state does not open fails the call (it never left the server: tampering).
    s.handle_bytes(&request(4, "tools/call", json!({"name": "ask"})), t);
    let d = dispatched(&mut s);
    let mut forged = asks_for_a_name();
    forged["requestState"] = json!("not-sealed-by-us");
    s.handle_outcome(d.id(), Ok(forged.into()), t);
    assert!(sent(&mut s)[0]["error"]["message"].as_str().unwrap().contains("requestState"));

    s.handle_bytes(&request(3, "tools/call", json!({"name": "ask"})), t);
    let d = dispatched(&mut s);
    s.handle_outcome(d.id(), Ok(asks_for_a_name().into()), t);
    sent(&mut s);
    s.handle_peer_gone(t);
    assert!(sent(&mut s)[0]["error"]["message"].as_str().unwrap().contains("gone"));
    assert_eq!(s.calls_in_flight(), 0);
}

#[test]
fn ids_in_flight_are_unique_across_eras_and_malformed_input_is_answered() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default());
    s.handle_bytes(&modern(1, "tools/list"), t);
    let d = dispatched(&mut s);
    s.handle_pending(&d, t);
    s.handle_bytes(&modern(1, "tools/list"), t);
    let out = events(&mut s);
    let Event::Transmit(dup) = &out[0] else { panic!("{out:?}") };
    assert_eq!(dup.error.as_ref().map(ProtocolError::code), Some(-32600));
    // A legacy call may not take an id a modern call holds, nor the other way round.
    initialize(&mut s, t);
    s.handle_bytes(&request(1, "tools/call", json!({"name": "x"})), t);
    assert_eq!(sent(&mut s)[0]["error"]["code"], -32600);
    s.handle_bytes(&request(2, "tools/call", json!({"name": "x"})), t);
    dispatched(&mut s);
    s.handle_bytes(&modern(2, "tools/list"), t);
    assert_eq!(sent(&mut s)[0]["error"]["code"], -32600);

    s.handle_bytes(b"{not json", t);
    let out = events(&mut s);
    let [Event::Transmit(tr)] = &out[..] else { panic!("{out:?}") };
    assert_eq!((tr.call.as_ref(), tr.error.as_ref().map(ProtocolError::code)), (None, Some(-32700)));
}

#[test]
fn listen_streams_are_tracked_until_they_end_and_close_cancels_everything() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default());
    s.handle_bytes(&modern(1, "subscriptions/listen"), t);
    let out = events(&mut s);
    let [Event::Listen(d)] = &out[..] else { panic!("{out:?}") };
    assert_eq!(s.calls_in_flight(), 1);
    s.handle_stream_end(d.key(), t);
    assert_eq!(s.calls_in_flight(), 0);

    s.handle_bytes(&modern(2, "subscriptions/listen"), t);
    let out = events(&mut s);
    let [Event::Listen(stream)] = &out[..] else { panic!("{out:?}") };
    initialize(&mut s, t);
    s.handle_bytes(&request(3, "tools/call", json!({"name": "ask"})), t);
    let call = dispatched(&mut s);
    s.close(t);
    let out = events(&mut s);
    let finished = out.iter().filter(|e| matches!(e, Event::Finished(_))).count();
    assert_eq!((finished, s.calls_in_flight()), (2, 0), "{out:?}");
    assert!(stream.cancellation().is_cancelled() && call.cancellation().is_cancelled(), "both are stopped");
}

#[test]
fn legacy_session_state_filters_change_notifications() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default());
    initialize(&mut s, t);
    let note = bytes(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.handle_bytes(&note, t);
    s.handle_bytes(&request(1, "resources/subscribe", json!({"uri": "a://x"})), t);
    s.handle_bytes(&request(2, "logging/setLevel", json!({"level": "loud"})), t);
    let out = sent(&mut s);
    assert_eq!((out[0]["result"].clone(), out[1]["error"]["code"].clone()), (json!({}), json!(-32602)));
    let legacy = s.legacy().unwrap();
    assert!(legacy.is_initialized());
    assert!(legacy.notification_for(&ChangeEvent::ResourceUpdated("a://x".into())).is_some());
    assert!(legacy.notification_for(&ChangeEvent::ResourceUpdated("a://y".into())).is_none());
    assert_eq!(
        legacy.notification_for(&ChangeEvent::ToolsListChanged).unwrap()["method"],
        "notifications/tools/list_changed"
    );
    s.handle_bytes(&request(3, "resources/unsubscribe", json!({"uri": "a://x"})), t);
    assert!(s.legacy().unwrap().subscribed_uris().is_empty());

    let mut refusing = session(SessionConfig::default().accept_legacy(false));
    refusing.handle_bytes(&request(0, "initialize", json!({"protocolVersion": "2025-11-25"})), t);
    assert_eq!(sent(&mut refusing)[0]["error"]["code"], -32601);
    assert!(refusing.legacy().is_none());
}

#[test]
fn initialize_params_and_subscriptions_are_bounded() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default());
    let big = "x".repeat(1 << 20);
    s.handle_bytes(
        &request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"experimental": {"pad": big}}}),
        ),
        t,
    );
    let out = sent(&mut s);
    assert_eq!(out[0]["error"]["code"], -32602, "{}", out[0]);
    assert!(out[0]["error"]["message"].as_str().unwrap().contains("at most 65536"));
    assert!(s.legacy().is_none(), "nothing is kept of a refused initialize");
    let mut small = session(SessionConfig::default().max_client_params_bytes(16));
    small.handle_bytes(
        &request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "clientInfo": {"name": "a-long-client-name", "version": "1"}}),
        ),
        t,
    );
    assert_eq!(sent(&mut small)[0]["error"]["code"], -32602);

    initialize(&mut s, t);
    for i in 0..1024 {
        s.handle_bytes(&request(i + 1, "resources/subscribe", json!({"uri": format!("a://{i}")})), t);
    }
    assert!(sent(&mut s).iter().all(|m| m["result"] == json!({})));
    s.handle_bytes(&request(5000, "resources/subscribe", json!({"uri": "a://one-too-many"})), t);
    s.handle_bytes(&request(5001, "resources/subscribe", json!({"uri": "a://0"})), t);
    s.handle_bytes(&request(5002, "resources/subscribe", json!({"uri": format!("a://{}", "y".repeat(4096))})), t);
    let out = sent(&mut s);
    assert_eq!(out[0]["error"]["code"], -32602);
    assert_eq!(out[1]["result"], json!({}), "subscribing again to a URI already held is fine");
    assert_eq!(out[2]["error"]["code"], -32602);
    assert_eq!(s.legacy().unwrap().subscribed_uris().len(), 1024);
}

#[test]
fn a_response_carries_the_id_exactly_as_the_client_sent_it() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default());
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    // Ids whose keys look alike: a string that reads like a number, and a number past i64.
    for id in [json!("#5"), json!("5"), json!(u64::MAX)] {
        let line = bytes(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": meta}}));
        s.handle_bytes(&line, t);
        let d = dispatched(&mut s);
        s.handle_outcome(d.id(), Ok(json!({"tools": []}).into()), t);
        assert_eq!(sent(&mut s)[0]["id"], id);
    }
}

/// The log level a legacy call is served with (a rank), from its dispatch.
fn dispatched_log_level(s: &mut LegacySession, id: i64) -> Option<u8> {
    s.handle_bytes(&request(id, "tools/call", json!({"name": "x", "arguments": {}})), Instant::now());
    dispatched(s).preset().expect("a legacy call is preset").meta.log_level
}

#[test]
fn a_legacy_session_gets_log_messages_before_it_sets_a_level() {
    let t = Instant::now();
    // By default every level, as the TypeScript SDK and FastMCP send: clients that never send
    // `logging/setLevel` see the server's log messages.
    let mut s = session(SessionConfig::default());
    initialize(&mut s, t);
    assert_eq!(dispatched_log_level(&mut s, 1), Some(LoggingLevel::Debug as u8));
    // `logging/setLevel` replaces the default.
    s.handle_bytes(&request(2, "logging/setLevel", json!({"level": "error"})), t);
    assert_eq!(sent(&mut s)[0]["result"], json!({}));
    assert_eq!(dispatched_log_level(&mut s, 3), Some(LoggingLevel::Error as u8));
    // The default is the server's to choose: none until the client asks.
    let quiet = Server::builder("core", "1").legacy_log_level(None).build().unwrap();
    let mut s = LegacySession::new(quiet, SessionConfig::default().seed(7));
    initialize(&mut s, t);
    assert_eq!(dispatched_log_level(&mut s, 1), None);
    let warn = Server::builder("core", "1").legacy_log_level(Some(LoggingLevel::Warning)).build().unwrap();
    let mut s = LegacySession::new(warn, SessionConfig::default().seed(7));
    initialize(&mut s, t);
    assert_eq!(dispatched_log_level(&mut s, 1), Some(LoggingLevel::Warning as u8));
}
