//! The session core, driven by hand: no transport, no sockets, time passed in.

use super::*;
use crate::{ChangeEvent, Context, Elicitation, HandlerError, Tool};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

fn server() -> Server {
    Server::builder("core", "1")
        .tool(Tool::new("ask").description("Asks for a name").handler(|ctx: Context| async move {
            match ctx.elicit::<Name>("Who?")? {
                Elicitation::Accept(n) => Ok::<_, HandlerError>(format!("hello {}", n.name)),
                _ => Ok("nobody".into()),
            }
        }))
        .tool(Tool::new("forever").description("Never has enough").handler(|ctx: Context| async move {
            let round = ctx.round_state().as_u64().unwrap_or(0);
            let mut inputs = ctx.inputs();
            inputs.request(&format!("q{round}"), "roots/list", json!({}))?;
            inputs.set_state(json!(round + 1));
            inputs.finish()?;
            Ok::<_, HandlerError>("done")
        }))
        .build()
        .unwrap()
}

fn session(config: SessionConfig) -> Session {
    Session::new(server(), config)
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

fn initialize(s: &mut Session) {
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}, "roots": {}}});
    s.handle_bytes(&request(0, "initialize", params));
    let sent = sent(s);
    assert_eq!(sent[0]["result"]["protocolVersion"], "2025-11-25");
    assert!(s.legacy().is_some());
}

fn events(s: &mut Session) -> Vec<Event> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

/// The messages the session queued, parsed (other events are dropped).
fn sent(s: &mut Session) -> Vec<Value> {
    events(s)
        .into_iter()
        .filter_map(|e| match e {
            Event::Transmit(t) => Some(serde_json::from_slice(&t.message).unwrap()),
            _ => None,
        })
        .collect()
}

/// Runs every queued job to its end and feeds the outcomes back; returns the other events.
async fn serve(s: &mut Session, t: Instant) -> Vec<Event> {
    let mut rest = Vec::new();
    while let Some(e) = s.poll_event() {
        match e {
            Event::Serve(job) => {
                let outcome = job.run(&RequestEnv::default()).await;
                s.handle_outcome(outcome, &t);
            }
            other => rest.push(other),
        }
    }
    rest
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

fn answer(id: &Value, result: Value) -> Map<String, Value> {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).as_object().cloned().unwrap()
}

#[tokio::test]
async fn requests_are_routed_by_era_and_encoded_for_it() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default());
    s.handle_bytes(&modern(1, "tools/list"));
    let out = messages(&serve(&mut s, t).await);
    assert_eq!(out[0]["result"]["resultType"], "complete", "modern before any handshake");

    initialize(&mut s);
    s.handle_bytes(&request(2, "initialize", json!({"protocolVersion": "2025-11-25"})));
    assert_eq!(sent(&mut s)[0]["error"]["code"], -32600, "one handshake per session");

    s.handle_bytes(&request(3, "tools/list", json!({})));
    let out = messages(&serve(&mut s, t).await);
    let result = &out[0]["result"];
    assert_eq!(result["tools"].as_array().unwrap().len(), 2);
    assert!(result.get("resultType").is_none() && result.get("ttlMs").is_none(), "{result}");

    s.handle_bytes(&modern(4, "tools/list"));
    assert_eq!(messages(&serve(&mut s, t).await)[0]["result"]["resultType"], "complete", "modern stays modern");

    s.handle_bytes(&request(5, "server/discover", json!({})));
    assert_eq!(sent(&mut s)[0]["error"]["code"], -32601, "modern-only methods do not exist in a legacy session");
    assert_eq!(s.calls_in_flight(), 0);
}

#[tokio::test]
async fn a_legacy_call_asks_the_client_and_runs_again_with_the_answer() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default().answer_timeout(Duration::from_secs(30)));
    initialize(&mut s);
    s.handle_bytes(&request(7, "tools/call", json!({"name": "ask"})));
    let out = serve(&mut s, t).await;
    let [Event::Transmit(asked)] = &out[..] else { panic!("{out:?}") };
    assert_eq!(asked.call, Some(json!(7)), "sent on behalf of the call");
    let asked: Value = serde_json::from_slice(&asked.message).unwrap();
    assert_eq!(
        (asked["method"].as_str(), asked["params"]["message"].as_str()),
        (Some("elicitation/create"), Some("Who?"))
    );
    assert_eq!(s.calls_in_flight(), 1);
    assert_eq!(s.poll_timeout(), Some(t + Duration::from_secs(30)));

    assert!(s.handle_response(&answer(&asked["id"], json!({"action": "accept", "content": {"name": "Ada"}}))));
    let out = serve(&mut s, t).await;
    let sent = messages(&out);
    assert_eq!(sent[0]["id"], 7);
    assert_eq!(sent[0]["result"]["content"][0]["text"], "hello Ada");
    assert!(matches!(out.last(), Some(Event::Finished(id)) if *id == json!(7)));
    assert_eq!((s.calls_in_flight(), s.poll_timeout()), (0, None));

    // A second answer to the same question, or one to a question never asked, changes nothing.
    assert!(s.handle_response(&answer(&asked["id"], json!({"action": "decline"}))));
    assert!(s.handle_response(&answer(&json!("s99"), json!({}))));
    assert!(events(&mut s).is_empty());
    // A request is not a response.
    assert!(!s.handle_response(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).as_object().unwrap()));
}

#[tokio::test]
async fn an_unanswered_question_fails_the_call_at_its_deadline() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default().answer_timeout(Duration::from_secs(5)));
    initialize(&mut s);
    s.handle_bytes(&request(1, "tools/call", json!({"name": "ask"})));
    serve(&mut s, t).await;
    s.handle_timeout(t + Duration::from_secs(4));
    assert!(events(&mut s).is_empty(), "not yet");
    s.handle_timeout(t + Duration::from_secs(5));
    let out = sent(&mut s);
    assert_eq!(out[0]["id"], 1);
    assert!(out[0]["error"]["message"].as_str().unwrap().contains("did not answer within 5 s"), "{out:?}");
    assert_eq!((s.calls_in_flight(), s.poll_timeout()), (0, None));
}

#[tokio::test]
async fn cancelling_stops_the_handler_and_nothing_is_sent_for_the_call() {
    let t = Instant::now();
    let mut s = session(SessionConfig::default());
    // A modern call: its job sees the cancellation; its outcome is dropped.
    s.handle_bytes(&modern(1, "tools/list"));
    let Some(Event::Serve(job)) = s.poll_event() else { panic!() };
    let token = job.cancellation().clone();
    let mut running = job.run(&RequestEnv::default());
    s.handle_pending(&mut running); // the transport could not finish it at once
    let cancelled = bytes(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}));
    s.handle_bytes(&cancelled);
    assert!(token.is_cancelled());
    assert!(matches!(&events(&mut s)[..], [Event::Finished(id)] if *id == json!(1)));
    s.handle_outcome(running.await, &t);
    assert!(events(&mut s).is_empty(), "nothing is sent for a cancelled call");
    // An untracked call (finished on its first poll) cannot be cancelled: its answer goes out.
    s.handle_bytes(&modern(9, "tools/list"));
    s.handle_bytes(&bytes(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})));
    assert_eq!(messages(&serve(&mut s, t).await)[0]["id"], 9);

    // A legacy call waiting for an answer: the question is forgotten, a late answer dropped.
    initialize(&mut s);
    s.handle_bytes(&request(2, "tools/call", json!({"name": "ask"})));
    let asked = messages(&serve(&mut s, t).await);
    let cancelled = bytes(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}));
    s.handle_bytes(&cancelled);
    assert!(matches!(&events(&mut s)[..], [Event::Finished(_)]));
    assert_eq!((s.calls_in_flight(), s.poll_timeout()), (0, None));
    assert!(s.handle_response(&answer(&asked[0]["id"], json!({"action": "decline"}))));
    assert!(events(&mut s).is_empty());
}

#[tokio::test]
async fn a_refused_question_a_gone_client_and_endless_questions_end_the_call() {
    let t = Instant::now();
    let mut s = session(SessionConfig { max_input_rounds: 3, ..SessionConfig::default() });
    initialize(&mut s);
    s.handle_bytes(&request(1, "tools/call", json!({"name": "ask"})));
    let asked = messages(&serve(&mut s, t).await);
    let refusal = json!({"jsonrpc": "2.0", "id": asked[0]["id"], "error": {"code": -1, "message": "user said no"}});
    assert!(s.handle_response(refusal.as_object().unwrap()));
    let out = sent(&mut s);
    assert!(out[0]["error"]["message"].as_str().unwrap().contains("user said no"), "{out:?}");

    s.handle_bytes(&request(2, "tools/call", json!({"name": "forever"})));
    let mut asked = messages(&serve(&mut s, t).await);
    for _ in 0..3 {
        assert_eq!(asked[0]["method"], "roots/list");
        assert!(s.handle_response(&answer(&asked[0]["id"], json!({"roots": []}))));
        asked = messages(&serve(&mut s, t).await);
    }
    assert!(asked[0]["error"]["message"].as_str().unwrap().contains("more than 3 times"), "{asked:?}");

    s.handle_bytes(&request(3, "tools/call", json!({"name": "ask"})));
    serve(&mut s, t).await;
    s.handle_peer_gone();
    assert!(sent(&mut s)[0]["error"]["message"].as_str().unwrap().contains("gone"));
    assert_eq!(s.calls_in_flight(), 0);
}

#[tokio::test]
async fn ids_in_flight_are_unique_and_malformed_input_is_answered() {
    let mut s = session(SessionConfig::default());
    s.handle_bytes(&modern(1, "tools/list"));
    let Some(Event::Serve(job)) = s.poll_event() else { panic!() };
    let mut running = job.run(&RequestEnv::default());
    s.handle_pending(&mut running);
    s.handle_bytes(&modern(1, "tools/list"));
    let out = events(&mut s);
    let Event::Transmit(dup) = &out[0] else { panic!("{out:?}") };
    assert_eq!(dup.error.as_ref().map(ProtocolError::code), Some(-32600));

    s.handle_bytes(b"{not json");
    let out = events(&mut s);
    let [Event::Transmit(t)] = &out[..] else { panic!("{out:?}") };
    assert_eq!((t.call.as_ref(), t.error.as_ref().map(ProtocolError::code)), (None, Some(-32700)));
}

#[tokio::test]
async fn legacy_session_state_filters_change_notifications() {
    let mut s = session(SessionConfig::default());
    initialize(&mut s);
    let note = bytes(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.handle_bytes(&note);
    s.handle_bytes(&request(1, "resources/subscribe", json!({"uri": "a://x"})));
    s.handle_bytes(&request(2, "logging/setLevel", json!({"level": "loud"})));
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
    s.handle_bytes(&request(3, "resources/unsubscribe", json!({"uri": "a://x"})));
    assert!(s.legacy().unwrap().subscribed_uris().is_empty());

    let mut refusing = session(SessionConfig::default().accept_legacy(false));
    refusing.handle_bytes(&request(0, "initialize", json!({"protocolVersion": "2025-11-25"})));
    assert_eq!(sent(&mut refusing)[0]["error"]["code"], -32601);
    assert!(refusing.legacy().is_none());
}

#[tokio::test]
async fn initialize_params_and_subscriptions_are_bounded() {
    let mut s = session(SessionConfig::default());
    let big = "x".repeat(1 << 20);
    s.handle_bytes(&request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"experimental": {"pad": big}}}),
    ));
    let out = sent(&mut s);
    assert_eq!(out[0]["error"]["code"], -32602, "{}", out[0]);
    assert!(out[0]["error"]["message"].as_str().unwrap().contains("at most 65536"));
    assert!(s.legacy().is_none(), "nothing is kept of a refused initialize");
    let mut small = session(SessionConfig::default().max_client_params_bytes(16));
    small.handle_bytes(&request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "clientInfo": {"name": "a-long-client-name", "version": "1"}}),
    ));
    assert_eq!(sent(&mut small)[0]["error"]["code"], -32602);

    initialize(&mut s);
    for i in 0..1024 {
        s.handle_bytes(&request(i + 1, "resources/subscribe", json!({"uri": format!("a://{i}")})));
    }
    assert!(sent(&mut s).iter().all(|m| m["result"] == json!({})));
    s.handle_bytes(&request(5000, "resources/subscribe", json!({"uri": "a://one-too-many"})));
    s.handle_bytes(&request(5001, "resources/subscribe", json!({"uri": "a://0"})));
    s.handle_bytes(&request(5002, "resources/subscribe", json!({"uri": format!("a://{}", "y".repeat(4096))})));
    let out = sent(&mut s);
    assert_eq!(out[0]["error"]["code"], -32602);
    assert_eq!(out[1]["result"], json!({}), "subscribing again to a URI already held is fine");
    assert_eq!(out[2]["error"]["code"], -32602);
    assert_eq!(s.legacy().unwrap().subscribed_uris().len(), 1024);
}
