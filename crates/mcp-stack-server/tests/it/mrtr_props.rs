//! Property test of the everything server's MRTR handling, in process through `Server`
//! dispatch: every tool (and the MRTR prompt) is called once, then retried with arbitrary
//! `inputResponses` (real keys, fixture keys of other tools, arbitrary keys; arbitrary JSON,
//! well-formed answers, "poisoned" answers) and no, a real, a tampered or a garbage
//! `requestState`.
//!
//! Asserted for every retry: no panic and no internal error (`-32603`, the one tool that fails
//! that way by design aside); a tampered or garbage state is refused (`-32602`); and the outcome
//! is exactly the outcome of the same retry with only the answers to the keys the first round
//! issued (none at all without a real state) — so an answer to a key never issued is never
//! seen. The poisoned answers, sent only under keys never issued, carry a marker that must never
//! show up in any result.

use mcp::protocol::state::KeyRing;
use mcp::protocol::{ProtocolError, Request};
use mcp::server::{RequestEnv, Server};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Retries whose honoured answers completed the request (the real-state path is exercised).
static COMPLETED_WITH_ANSWERS: AtomicUsize = AtomicUsize::new(0);

const TASKS: &str = "io.modelcontextprotocol/tasks";
/// In every poisoned answer; must never appear in a result.
const MARK: &str = "NEVER-ISSUED";
/// The tool whose `-32603` is its documented behaviour.
const INTERNAL_BY_DESIGN: &str = "protocol_error_job";

/// Keys the fixtures issue (so that a retry often answers another tool's key).
const FIXTURE_KEYS: &[&str] = &[
    "user_name",
    "capital_question",
    "client_roots",
    "confirm",
    "greeting",
    "step1",
    "step2",
    "sample_input",
    "elicit_input",
    "roots_input",
    "user_context",
    "answer",
    "form",
    "multi-name",
    "multi-confirm",
    "input-0",
    "input-1",
];

fn server() -> Server {
    mcp_everything::builder().state_keys(KeyRing::from_secrets([42; 32], &[])).build().unwrap()
}

/// Arguments that pass each tool's `inputSchema` (others get `{}`).
fn arguments(tool: &str) -> Value {
    match tool {
        "json_schema_2020_12_tool" => json!({"name": "n", "contactMethod": "email", "email": "e@example.com"}),
        "test_x_mcp_header" => json!({"region": "eu"}),
        "greet" => json!({"name": "Ada"}),
        "add" => json!({"a": 1, "b": 2}),
        "echo" => json!({"text": "t"}),
        "count_with_progress" => json!({"steps": 2, "delay_ms": 1}),
        "ask_llm" => json!({"question": "q"}),
        "test_sampling" => json!({"prompt": "p"}),
        "test_elicitation" => json!({"message": "m"}),
        "confirm_delete" => json!({"filename": "f"}),
        "slow_compute" => json!({"seconds": 0.01}),
        "build_project" => json!({"steps": 1, "step_ms": 1}),
        _ => json!({}),
    }
}

/// One request target: `tools/call` of a tool or `prompts/get` of a prompt.
#[derive(Debug, Clone)]
struct Target {
    method: &'static str,
    name: String,
}

impl Target {
    fn params(&self) -> Map<String, Value> {
        let mut p = Map::new();
        p.insert("name".into(), json!(self.name));
        if self.method == "tools/call" {
            p.insert("arguments".into(), arguments(&self.name));
        }
        p
    }
}

/// How the retry carries `requestState`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum StateMode {
    Absent,
    Real,
    Tampered,
    Garbage,
}

/// Which key an answer goes under.
#[derive(Debug, Clone)]
enum KeySel {
    /// One of the keys the first round issued (by index, modulo their number).
    Issued(usize),
    /// A key some fixture issues.
    Fixture(usize),
    Arbitrary(String),
}

/// What is answered.
#[derive(Debug, Clone)]
enum Answer {
    /// A well-formed answer of some kind.
    Plausible(usize),
    /// A marked answer that every fixture would echo; only ever sent under unissued keys.
    Poisoned,
    Arbitrary(Value),
}

/// One retry of one target.
#[derive(Debug, Clone)]
struct Retry {
    caps: u8,
    mode: StateMode,
    garbage: String,
    answers: Vec<(KeySel, Answer)>,
}

fn plausible(i: usize) -> Value {
    let all = [
        json!({"action": "accept", "content": {"name": "Ada", "ok": true, "color": "blue", "context": "c", "confirm": true, "username": "u", "email": "e"}}),
        json!({"action": "accept", "content": {}}),
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
        json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m", "stopReason": "endTurn"}),
        json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]}),
        json!({"roots": []}),
    ];
    all[i % all.len()].clone()
}

fn poisoned() -> Value {
    json!({
        "action": "accept",
        "content": {"type": "text", "text": MARK, "name": MARK, "ok": MARK, "color": MARK, "context": MARK,
                    "confirm": true, "username": MARK, "email": MARK, "colour": MARK},
        "role": "assistant", "model": MARK,
        "roots": [{"uri": format!("file:///{MARK}")}, {"uri": "file:///2"}, {"uri": "file:///3"}, {"uri": "file:///4"},
                  {"uri": "file:///5"}, {"uri": "file:///6"}, {"uri": "file:///7"}, {"uri": "file:///8"},
                  {"uri": "file:///9"}, {"uri": "file:///10"}, {"uri": "file:///11"}, {"uri": "file:///12"},
                  {"uri": "file:///13"}],
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    let word = prop_oneof![
        Just("accept".to_owned()),
        Just("decline".to_owned()),
        Just("cancel".to_owned()),
        Just("text".to_owned()),
        "[a-z]{0,6}"
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        word.prop_map(Value::from),
    ];
    let key = prop_oneof![
        Just("action".to_owned()),
        Just("content".to_owned()),
        Just("name".to_owned()),
        Just("text".to_owned()),
        Just("roots".to_owned()),
        Just("ok".to_owned()),
        "[a-z]{1,5}"
    ];
    leaf.prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key.clone(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn retry() -> impl Strategy<Value = Retry> {
    let key = prop_oneof![
        3 => any::<usize>().prop_map(KeySel::Issued),
        2 => (0..FIXTURE_KEYS.len()).prop_map(KeySel::Fixture),
        1 => "[a-z0-9_-]{0,8}".prop_map(KeySel::Arbitrary),
    ];
    let answer = prop_oneof![
        3 => any::<usize>().prop_map(Answer::Plausible),
        2 => Just(Answer::Poisoned),
        2 => json_value().prop_map(Answer::Arbitrary),
    ];
    let mode = prop_oneof![
        Just(StateMode::Absent),
        Just(StateMode::Real),
        Just(StateMode::Real),
        Just(StateMode::Tampered),
        Just(StateMode::Garbage),
    ];
    (any::<u8>(), mode, "[A-Za-z0-9_-]{0,40}", proptest::collection::vec((key, answer), 0..6))
        .prop_map(|(caps, mode, garbage, answers)| Retry { caps, mode, garbage, answers })
}

fn caps(bits: u8) -> Value {
    let mut c = Map::new();
    if bits & 1 != 0 {
        c.insert("elicitation".into(), json!({"form": {}, "url": {}}));
    }
    if bits & 2 != 0 {
        c.insert("sampling".into(), json!({}));
    }
    if bits & 4 != 0 {
        c.insert("roots".into(), json!({}));
    }
    if bits & 8 != 0 {
        c.insert("extensions".into(), json!({ TASKS: {} }));
    }
    Value::Object(c)
}

async fn call(s: &Server, method: &str, mut params: Map<String, Value>, caps: &Value) -> Result<Value, ProtocolError> {
    params.insert(
        "_meta".into(),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps}),
    );
    s.handle(Request { id: json!(1), method: method.into(), params }, RequestEnv::default()).await
}

/// The outcome with what legitimately differs between two servers (nonces, ids, times) masked.
fn normalized(r: &Result<Value, ProtocolError>) -> Result<Value, (i64, String)> {
    fn mask(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, v) in m.iter_mut() {
                    if matches!(k.as_str(), "requestState" | "taskId" | "createdAt" | "lastUpdatedAt") {
                        *v = json!("<varies>");
                    } else {
                        mask(v);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(mask),
            _ => {}
        }
    }
    match r {
        Ok(v) => {
            let mut v = v.clone();
            mask(&mut v);
            Ok(v)
        }
        Err(e) => Err((e.code(), e.message())),
    }
}

fn no_internal_error(t: &Target, what: &str, r: &Result<Value, ProtocolError>) -> Result<(), TestCaseError> {
    if let Err(e) = r {
        let by_design = t.name == INTERNAL_BY_DESIGN && !e.message().contains("panicked");
        prop_assert!(e.code() != -32603 || by_design, "{} {what}: internal error {}", t.name, e.message());
    }
    Ok(())
}

/// Drives one target: a first round on `first`, the retry on `a`, the oracle retry on `b`.
async fn drive(t: &Target, r: &Retry, first: &Server, a: &Server, b: &Server) -> Result<(), TestCaseError> {
    let caps = caps(r.caps);
    let round1 = call(first, t.method, t.params(), &caps).await;
    no_internal_error(t, "first round", &round1)?;
    let (issued, state) = match &round1 {
        Ok(v) if v["resultType"] == "input_required" => (
            v["inputRequests"].as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default(),
            v["requestState"].as_str().map(str::to_owned),
        ),
        _ => (Vec::new(), None),
    };
    let honoured = r.mode == StateMode::Real && state.is_some();
    let mut sent = Map::new();
    for (key, answer) in &r.answers {
        let key = match key {
            KeySel::Issued(i) if !issued.is_empty() => issued[i % issued.len()].clone(),
            KeySel::Issued(i) | KeySel::Fixture(i) => FIXTURE_KEYS[i % FIXTURE_KEYS.len()].to_owned(),
            KeySel::Arbitrary(k) => k.clone(),
        };
        let value = match answer {
            Answer::Poisoned if issued.contains(&key) => plausible(0),
            Answer::Poisoned => poisoned(),
            Answer::Plausible(i) => plausible(*i),
            Answer::Arbitrary(v) => v.clone(),
        };
        sent.insert(key, value);
    }
    let mut params = t.params();
    let mut oracle = t.params();
    if !sent.is_empty() {
        params.insert("inputResponses".into(), Value::Object(sent.clone()));
    }
    let expected: Map<String, Value> =
        if honoured { sent.into_iter().filter(|(k, _)| issued.contains(k)).collect() } else { Map::new() };
    let answered = !expected.is_empty();
    if answered {
        oracle.insert("inputResponses".into(), Value::Object(expected));
    }
    let state_sent = match (r.mode, &state) {
        (StateMode::Absent, _) => None,
        (StateMode::Real, s) => s.clone(),
        (StateMode::Tampered, Some(s)) => {
            let mut s = s.clone().into_bytes();
            let i = s.len() / 2;
            s[i] = if s[i] == b'A' { b'B' } else { b'A' };
            Some(String::from_utf8(s).unwrap())
        }
        (StateMode::Tampered, None) => Some(format!("{}-TAMPERED", r.garbage)),
        (StateMode::Garbage, _) => Some(r.garbage.clone()),
    };
    if let Some(s) = &state_sent {
        params.insert("requestState".into(), json!(s));
        if honoured {
            oracle.insert("requestState".into(), json!(s));
        }
    }
    let got = call(a, t.method, params, &caps).await;
    no_internal_error(t, "retry", &got)?;
    if matches!(r.mode, StateMode::Tampered | StateMode::Garbage) {
        let code = got.as_ref().err().map(ProtocolError::code);
        prop_assert_eq!(code, Some(-32602), "{}: a state the server did not seal is refused", t.name);
        // Keep the two servers' histories alike: the oracle server serves the same call.
        let _ = call(b, t.method, oracle, &caps).await;
        return Ok(());
    }
    let want = call(b, t.method, oracle, &caps).await;
    if answered && want.as_ref().is_ok_and(|v| v["resultType"] == "complete") {
        COMPLETED_WITH_ANSWERS.fetch_add(1, Ordering::Relaxed);
    }
    let (got, want) = (normalized(&got), normalized(&want));
    let text = format!("{got:?}");
    prop_assert!(!text.contains(MARK), "{}: an answer to a key never issued was seen: {text}", t.name);
    prop_assert!(!text.contains("13 root(s)"), "{}: poisoned roots were counted: {text}", t.name);
    prop_assert_eq!(got, want, "{}: unissued answers changed the outcome", t.name);
    Ok(())
}

fn runtime() -> tokio::runtime::Runtime {
    // Paused clock: the fixtures' sleeps (progress, tasks) take no real time.
    tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap()
}

#[test]
fn arbitrary_input_responses_never_panic_and_unissued_answers_are_never_seen() {
    let targets: Vec<Target> = runtime().block_on(async {
        let s = server();
        let caps = json!({});
        let list = |m| call(&s, m, Map::new(), &caps);
        let (tools, prompts) = (list("tools/list").await.unwrap(), list("prompts/list").await.unwrap());
        assert!(tools.get("nextCursor").is_none(), "every tool on one page");
        let names = |v: &Value, k: &str| -> Vec<String> {
            v[k].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
        };
        let mut targets: Vec<Target> =
            names(&tools, "tools").into_iter().map(|name| Target { method: "tools/call", name }).collect();
        let mrtr_prompts = names(&prompts, "prompts").into_iter().filter(|n| n.contains("input_required"));
        targets.extend(mrtr_prompts.map(|name| Target { method: "prompts/get", name }));
        targets
    });
    assert!(targets.len() > 30, "{targets:?}");
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let n = targets.len();
    runner
        .run(&proptest::collection::vec(retry(), n), |retries| {
            runtime().block_on(async {
                // One server per role; `a` and `b` serve the same sequence of targets, so tools
                // with side effects (toggle_extra_tool) answer alike on both.
                let (first, a, b) = (server(), server(), server());
                for (t, r) in targets.iter().zip(&retries) {
                    drive(t, r, &first, &a, &b).await?;
                }
                Ok(())
            })
        })
        .unwrap();
    assert!(COMPLETED_WITH_ANSWERS.load(Ordering::Relaxed) > 0, "no retry completed with its answers");
}

#[test]
fn the_two_round_fixture_answered_all_at_once_asks_round_by_round() {
    runtime().block_on(async {
        let s = server();
        let caps = json!({"elicitation": {}});
        let tool = |extra: Value| {
            let mut p = json!({"name": "test_input_required_result_multi_round"}).as_object().unwrap().clone();
            p.extend(extra.as_object().unwrap().clone());
            p
        };
        let both = json!({"step1": {"action": "accept", "content": {"name": "Ada"}},
                          "step2": {"action": "accept", "content": {"color": "early"}}});
        let r = call(&s, "tools/call", tool(json!({"inputResponses": both})), &caps).await.unwrap();
        assert_eq!(r["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["step1"], "{r}");
        let r = call(&s, "tools/call", tool(json!({"inputResponses": both, "requestState": r["requestState"]})), &caps)
            .await
            .unwrap();
        assert_eq!(r["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["step2"], "{r}");
        let last = json!({"step2": {"action": "accept", "content": {"color": "teal"}}});
        let r = call(&s, "tools/call", tool(json!({"inputResponses": last, "requestState": r["requestState"]})), &caps)
            .await
            .unwrap();
        assert_eq!(r["content"][0]["text"], "Multi-round complete for Ada who likes teal");
        // No state: the request-state fixture does not claim a verified state.
        let confirm = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
        let p = json!({"name": "test_input_required_result_request_state", "inputResponses": confirm});
        let r = call(&s, "tools/call", p.as_object().unwrap().clone(), &caps).await.unwrap();
        assert_eq!(r["resultType"], "input_required", "{r}");
    });
}
