//! MRTR answers are bound to what the server asked: `inputResponses` are honoured only under
//! the keys recorded in a valid `requestState` of the previous round; without valid state no
//! answer at all reaches a handler (the spec: the server SHOULD ignore information it does not
//! recognize or need, and ask again for what is missing).

use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION, TASKS_EXTENSION};
use mcp_protocol::{ProtocolError, Request};
use mcp_server::{Context, Elicitation, HandlerError, RequestEnv, Server, TaskSupport, Tool};
use serde_json::{json, Value};
use std::time::Duration;

const CAPS: fn() -> Value = || json!({ "elicitation": {}, "roots": {} });

fn request(params: Value, caps: Value) -> Request {
    let mut params = params.as_object().cloned().unwrap();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: caps }));
    Request { id: json!(1), method: "tools/call".into(), params }
}

async fn call(s: &Server, params: Value) -> Result<Value, ProtocolError> {
    s.handle(request(params, CAPS()), RequestEnv::default()).await
}

/// What the handler saw: the keys of `ctx.input_responses()` and of the raw params' copy.
fn seen(ctx: &Context) -> String {
    let keys = |m: Option<&serde_json::Map<String, Value>>| {
        m.map(|m| m.keys().cloned().collect::<Vec<_>>().join(",")).unwrap_or_else(|| "-".into())
    };
    let raw = ctx.params().get("inputResponses").and_then(Value::as_object);
    format!("seen={} raw={}", keys(ctx.input_responses()), keys(raw))
}

fn server() -> Server {
    let spy = Tool::new("spy").handler(|ctx: Context| async move {
        let mut inputs = ctx.inputs();
        let a = inputs.elicit("a", "A?", json!({"type": "object"}))?;
        inputs.finish()?;
        Ok::<_, HandlerError>(format!("{} a={}", seen(&ctx), a.unwrap_or_default()))
    });
    let typed = Tool::new("typed").handler(|ctx: Context| async move {
        let answer: Elicitation<Value> = ctx.elicit::<Value>("Anything?")?;
        Ok::<_, HandlerError>(format!("{} {answer:?}", seen(&ctx)))
    });
    let two = Tool::new("two").handler(|ctx: Context| async move {
        let name = match ctx.round_state().get("name").and_then(Value::as_str) {
            Some(n) => n.to_owned(),
            None => {
                let mut inputs = ctx.inputs();
                let a = inputs.elicit("step1", "Name?", json!({"type": "object"}))?;
                inputs.finish()?;
                a.unwrap_or_default().pointer("/content/name").and_then(Value::as_str).unwrap_or("?").to_owned()
            }
        };
        let mut inputs = ctx.inputs();
        let colour = inputs.elicit("step2", "Colour?", json!({"type": "object"}))?;
        inputs.set_state(json!({ "name": name }));
        inputs.finish()?;
        let colour = colour.unwrap_or_default();
        let colour = colour.pointer("/content/colour").and_then(Value::as_str).unwrap_or("?");
        Ok::<_, HandlerError>(format!("{name} likes {colour}"))
    });
    let in_task = Tool::new("in_task").task_support(TaskSupport::Optional).handler(|ctx: Context| async move {
        let mut inputs = ctx.inputs();
        let a = inputs.elicit("t", "T?", json!({"type": "object"}))?;
        inputs.finish()?;
        Ok::<_, HandlerError>(format!("{} t={}", seen(&ctx), a.unwrap_or_default()))
    });
    Server::builder("t", "1").tools([spy, typed, two, in_task]).build().unwrap()
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {r}"))
}

#[tokio::test]
async fn unsolicited_answers_without_state_are_ignored() {
    let s = server();
    let accept = json!({"action": "accept", "content": {"x": 1}});
    // Raw Inputs API: the answer under the very key the handler asks is still not taken.
    let r = call(&s, json!({"name": "spy", "inputResponses": {"a": accept}})).await.unwrap();
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert!(r["inputRequests"]["a"].is_object());
    // Typed API (automatic keys): the same.
    let r = call(&s, json!({"name": "typed", "inputResponses": {"input-0": accept}})).await.unwrap();
    assert_eq!(r["resultType"], "input_required", "{r}");
    // An empty or null-free map changes nothing either.
    let r = call(&s, json!({"name": "spy", "inputResponses": {}})).await.unwrap();
    assert_eq!(r["resultType"], "input_required");
}

#[tokio::test]
async fn answers_to_unissued_keys_are_dropped() {
    let s = server();
    let r1 = call(&s, json!({"name": "spy"})).await.unwrap();
    let state = r1["requestState"].clone();
    let answers = json!({"a": {"action": "accept"}, "b": {"action": "accept"}, "input-0": 1, "": 2});
    let r2 = call(&s, json!({"name": "spy", "inputResponses": answers, "requestState": state})).await.unwrap();
    assert_eq!(text(&r2), r#"seen=a raw=a a={"action":"accept"}"#, "handlers see only the issued key");
    // The typed API: only its own issued key.
    let r1 = call(&s, json!({"name": "typed"})).await.unwrap();
    let key = r1["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let answers = json!({ key.clone(): {"action": "decline"}, "a": {"action": "accept"} });
    let retry = json!({"name": "typed", "inputResponses": answers, "requestState": r1["requestState"]});
    assert_eq!(text(&call(&s, retry).await.unwrap()), format!("seen={key} raw={key} Decline"));
    // A valid state of another tool does not open here at all (bound to the request).
    let other = json!({"name": "typed", "inputResponses": {"a": {}}, "requestState": state_of(&s, "spy").await});
    assert_eq!(call(&s, other).await.unwrap_err().code(), -32602);
}

async fn state_of(s: &Server, tool: &str) -> Value {
    call(s, json!({ "name": tool })).await.unwrap()["requestState"].clone()
}

#[tokio::test]
async fn each_round_honours_only_the_keys_it_issued() {
    let s = server();
    let both = json!({
        "step1": {"action": "accept", "content": {"name": "Ada"}},
        "step2": {"action": "accept", "content": {"colour": "early"}},
    });
    // Round 1 without state: nothing is taken, step1 is asked.
    let r = call(&s, json!({"name": "two", "inputResponses": both})).await.unwrap();
    assert_eq!(r["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["step1"]);
    // Both rounds answered at once: step2 was not asked yet, so it is asked now.
    let r = call(&s, json!({"name": "two", "inputResponses": both, "requestState": r["requestState"]})).await.unwrap();
    assert_eq!(r["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["step2"], "{r}");
    let st2 = r["requestState"].clone();
    // Round 3: step2 is honoured; step1 (not asked in round 2) no longer is.
    let late = json!({"step1": {"action": "accept", "content": {"name": "Eve"}}, "step2": {"action": "accept", "content": {"colour": "teal"}}});
    let r = call(&s, json!({"name": "two", "inputResponses": late, "requestState": st2})).await.unwrap();
    assert_eq!(text(&r), "Ada likes teal");
}

#[tokio::test]
async fn a_task_sees_no_unsolicited_answers_and_tasks_update_takes_only_outstanding_keys() {
    let s = server();
    let caps = json!({ "elicitation": {}, "extensions": { TASKS_EXTENSION: {} } });
    let on = |method: &str, params: Value| {
        let mut r = request(params, caps.clone());
        r.method = method.into();
        s.handle(r, RequestEnv::default())
    };
    let unsolicited = json!({"t": {"action": "accept", "content": {"v": "forged"}}});
    let created = on("tools/call", json!({"name": "in_task", "inputResponses": unsolicited})).await.unwrap();
    let id = created["taskId"].as_str().expect("a task").to_owned();
    let mut t = Value::Null;
    for _ in 0..100 {
        t = on("tasks/get", json!({ "taskId": id })).await.unwrap();
        if t["status"] != "working" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(t["status"], "input_required", "the forged answer was not taken: {t}");
    let key = t["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let answers = json!({ key.clone(): {"action": "accept", "content": {"v": "real"}}, "other": {"action": "accept"} });
    on("tasks/update", json!({ "taskId": id, "inputResponses": answers })).await.unwrap();
    for _ in 0..100 {
        t = on("tasks/get", json!({ "taskId": id })).await.unwrap();
        if t["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let text = t["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(text, format!(r#"seen={key} raw={key} t={{"action":"accept","content":{{"v":"real"}}}}"#), "{t}");
}
