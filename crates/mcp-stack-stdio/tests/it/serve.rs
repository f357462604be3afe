//! `mcp::stdio::serve` of the everything server over in-memory pipes, fed NDJSON as a client
//! process would write it; every message it writes is checked against the JSON schema.

use mcp_test_support::*;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

/// `serve` running on the everything server, and line-oriented access to its input and output.
struct Proc {
    served: Option<JoinHandle<std::io::Result<()>>>,
    stdin: Option<DuplexStream>,
    out: Lines<BufReader<DuplexStream>>,
    /// Messages read while waiting for something else.
    backlog: Vec<Value>,
}

fn is_response(v: &Value) -> bool {
    v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
}

impl Proc {
    fn spawn() -> Self {
        let (served, stdin, out) = super::serve_everything();
        Self { served: Some(served), stdin: Some(stdin), out, backlog: Vec::new() }
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        within("writing to stdin", stdin.write_all(bytes)).await.expect("write");
        within("flushing stdin", stdin.flush()).await.expect("flush");
    }

    async fn send(&mut self, v: &Value) {
        self.send_raw(format!("{v}\n").as_bytes()).await;
    }

    /// The next message on stdout (`None` at EOF). Every line must be one JSON message.
    async fn read(&mut self) -> Option<Value> {
        let line = within("a line on stdout", self.out.next_line()).await.expect("read stdout")?;
        let v = serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:.200}"));
        assert_wire(&v);
        Some(v)
    }

    /// The next message, preferring the backlog.
    async fn next(&mut self) -> Value {
        if !self.backlog.is_empty() {
            return self.backlog.remove(0);
        }
        self.read().await.expect("unexpected EOF on stdout")
    }

    /// Waits for the first message matching `pred`, keeping the others in the backlog.
    async fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(i);
        }
        loop {
            let v = self.read().await.unwrap_or_else(|| panic!("EOF while waiting for {what}"));
            if pred(&v) {
                return v;
            }
            self.backlog.push(v);
        }
    }

    /// Waits for the response to `id`.
    async fn response(&mut self, id: &Value) -> Value {
        self.wait_for(&format!("the response to {id}"), |v| is_response(v) && v.get("id") == Some(id)).await
    }

    /// Sends a request and returns its result (asserting success).
    async fn ok(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(&req(id.clone(), method, params)).await;
        let r = self.response(&id).await;
        let result = result_of(&r, &id);
        assert_result_schema(method, &result);
        result
    }

    /// Closes stdin and returns every remaining message (backlog included) up to EOF.
    async fn close_and_drain(&mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let mut all = std::mem::take(&mut self.backlog);
        while let Some(v) = self.read().await {
            all.push(v);
        }
        all
    }

    /// Closes the input, drains the output and asserts `serve` returned `Ok` (what makes
    /// `mcp serve --stdio` exit 0).
    async fn finish(mut self) -> Vec<Value> {
        let rest = self.close_and_drain().await;
        let served = self.served.take().expect("serving");
        within("serve() to return", served).await.expect("join").expect("serve returns Ok");
        rest
    }
}

#[tokio::test]
async fn discover_and_echo() {
    let mut p = Proc::spawn();
    let d = p.ok(json!(1), "server/discover", json!({})).await;
    assert!(d["supportedVersions"].as_array().unwrap().contains(&json!(PV)), "{d}");
    assert!(d["capabilities"]["tools"].is_object(), "{d}");
    assert_eq!(d["resultType"], "complete");
    assert!(d["_meta"][K_SERVER_INFO]["name"].is_string(), "{d}");
    let r = p.ok(json!("two"), "tools/call", call("echo", json!({"text": "hello"}))).await;
    assert_eq!(first_text(&r), "hello");
    let tools = p.ok(json!(3), "tools/list", json!({})).await;
    assert!(tools["ttlMs"].is_u64() && tools["cacheScope"].is_string(), "{tools}");
    assert!(p.finish().await.is_empty());
}

#[tokio::test]
async fn protocol_errors_carry_the_id() {
    let mut p = Proc::spawn();
    let mut old = meta();
    old[K_VERSION] = json!("1900-01-01");
    let cases = [
        (req(1, "initialize", json!({})), -32601),
        (req(2, "unknown/method", json!({})), -32601),
        (req_raw(3, "tools/list", json!({})), -32602),
        (req_raw(4, "server/discover", json!({"_meta": old})), -32022),
        (req(5, "tools/call", call("test_missing_capability", json!({}))), -32021),
        (req(6, "resources/read", json!({"uri": "test://nope"})), -32602),
    ];
    for (body, code) in cases {
        p.send(&body).await;
        let r = p.response(&body["id"]).await;
        assert_error(&r, code, Some(&body["id"]));
        if code == -32022 {
            assert_eq!(r["error"]["data"]["requested"], "1900-01-01");
            assert!(r["error"]["data"]["supported"].as_array().unwrap().contains(&json!(PV)));
        }
    }
    p.finish().await;
}

#[tokio::test]
async fn pipelined_requests_are_all_answered() {
    let mut p = Proc::spawn();
    let mut batch = String::new();
    let mut expected = HashMap::new();
    for i in 0..200 {
        let id = if i % 3 == 0 { json!(format!("s{i}")) } else { json!(i) };
        batch.push_str(&req(id.clone(), "tools/call", call("echo", json!({"text": format!("m{i}")}))).to_string());
        batch.push('\n');
        expected.insert(id.to_string(), format!("m{i}"));
    }
    p.send_raw(batch.as_bytes()).await;
    let mut seen = BTreeSet::new();
    for _ in 0..200 {
        let r = p.next().await;
        assert!(is_response(&r), "{r}");
        let key = r["id"].to_string();
        let want = expected.get(&key).unwrap_or_else(|| panic!("unexpected id in {r}"));
        assert_eq!(first_text(&result_of(&r, &r["id"])), want);
        assert!(seen.insert(key), "duplicate response {r}");
    }
    assert!(p.finish().await.is_empty(), "more than 200 responses");
}

#[tokio::test]
async fn a_slow_request_does_not_block_a_fast_one() {
    let mut p = Proc::spawn();
    p.send(&req("slow", "tools/call", call("count_with_progress", json!({"steps": 10, "delay_ms": 100})))).await;
    p.send(&req("fast", "tools/call", call("echo", json!({"text": "quick"})))).await;
    let first = p.next().await;
    assert_eq!(first["id"], "fast", "the fast request must be answered first: {first}");
    assert_eq!(first_text(&result_of(&first, &json!("fast"))), "quick");
    let slow = p.response(&json!("slow")).await;
    assert_eq!(first_text(&result_of(&slow, &json!("slow"))), "counted to 10");
    p.finish().await;
}

#[tokio::test]
async fn progress_notifications_precede_the_response() {
    let mut p = Proc::spawn();
    let params = with_meta_kv(call("test_tool_with_progress", json!({})), &[("progressToken", json!(77))]);
    p.send(&req_raw(1, "tools/call", params)).await;
    for expected in [0.0, 50.0, 100.0] {
        let n = p.next().await;
        assert_eq!(n["method"], "notifications/progress", "{n}");
        assert_eq!((&n["params"]["progressToken"], n["params"]["progress"].as_f64()), (&json!(77), Some(expected)));
    }
    assert_eq!(first_text(&result_of(&p.next().await, &json!(1))), "Progress complete");
    p.finish().await;
}

#[tokio::test]
async fn a_cancelled_request_gets_no_response() {
    let mut p = Proc::spawn();
    let params = call("count_with_progress", json!({"steps": 50, "delay_ms": 100}));
    let params = with_meta_kv(params, &[("progressToken", json!("p7"))]);
    p.send(&req_raw(7, "tools/call", params)).await;
    // A progress notification proves the request is in flight.
    p.wait_for("progress for request 7", |v| v["params"]["progressToken"] == "p7").await;
    p.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "test"}}),
    )
    .await;
    // Cancelling an unknown request is harmless.
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}})).await;
    let r = p.ok(json!(8), "tools/call", call("echo", json!({"text": "after"}))).await;
    assert_eq!(first_text(&r), "after");
    let rest = p.finish().await;
    assert!(!rest.iter().any(|v| is_response(v) && v["id"] == 7), "a cancelled request must not be answered: {rest:?}");
}

#[tokio::test]
async fn bad_lines_are_answered_and_serving_continues() {
    let mut p = Proc::spawn();
    let lines: Vec<(String, i64, Option<Value>)> = vec![
        ("{not json".into(), -32700, None),
        (r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#.into(), -32700, None),
        (format!("{}{}", "[".repeat(200), "]".repeat(200)), -32700, None),
        (r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#.into(), -32600, None),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#.into(), -32600, None),
        (r#"{"jsonrpc":"1.0","id":3,"method":"tools/list"}"#.into(), -32600, Some(json!(3))),
        (r#"{"jsonrpc":"2.0","id":4,"result":{}}"#.into(), -32600, Some(json!(4))),
    ];
    for (line, code, id) in lines {
        p.send_raw(format!("{line}\n").as_bytes()).await;
        let r = p.next().await;
        assert_error(&r, code, id.as_ref());
    }
    // Bytes that are not UTF-8 are a parse error too.
    p.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n").await;
    assert_error(&p.next().await, -32700, None);
    // Blank lines are skipped silently; CRLF line endings are accepted.
    p.send_raw(b"\n\r\n").await;
    let body = req(5, "tools/call", call("echo", json!({"text": "ok"})));
    p.send_raw(format!("{body}\r\n").as_bytes()).await;
    let r = p.next().await;
    assert_eq!(first_text(&result_of(&r, &json!(5))), "ok");
    p.finish().await;
}

#[tokio::test]
async fn an_oversized_line_is_rejected_and_serving_continues() {
    let mut p = Proc::spawn();
    let big = req(1, "tools/call", call("echo", json!({"text": "x".repeat(5 << 20)})));
    p.send(&big).await;
    let r = p.next().await;
    assert_error(&r, -32600, None);
    // Lines under the 4 MiB limit are still served.
    let text = "y".repeat((4 << 20) - 4096);
    let r = p.ok(json!(2), "tools/call", call("echo", json!({"text": text}))).await;
    assert_eq!(first_text(&r).len(), text.len());
    p.finish().await;
}

#[tokio::test]
async fn listen_acknowledges_and_tags_notifications() {
    let mut p = Proc::spawn();
    let listen = |id: &str, filter: Value| req(id, "subscriptions/listen", json!({"notifications": filter}));
    p.send(&listen("tools", json!({"toolsListChanged": true}))).await;
    let ack = p.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["_meta"][K_SUB], "tools");
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
    p.send(&listen("prompts", json!({"promptsListChanged": true}))).await;
    let ack = p.next().await;
    assert_eq!(ack["params"]["_meta"][K_SUB], "prompts", "{ack}");

    let tagged = |id: &'static str| move |v: &Value| v.get("id").is_none() && v["params"]["_meta"][K_SUB] == id;
    let r = p.ok(json!(1), "tools/call", call("test_trigger_tool_change", json!({}))).await;
    assert_eq!(first_text(&r), "Mutation triggered");
    let n = p.wait_for("tools/list_changed", tagged("tools")).await;
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    p.ok(json!(2), "tools/call", call("test_trigger_prompt_change", json!({}))).await;
    // The prompts-only stream skipped the tools change.
    let n = p.wait_for("prompts/list_changed", tagged("prompts")).await;
    assert_eq!(n["method"], "notifications/prompts/list_changed", "{n}");
    let rest = p.finish().await;
    assert!(!rest
        .iter()
        .any(|v| v["method"] == "notifications/prompts/list_changed" && v["params"]["_meta"][K_SUB] == "tools"));
}

#[tokio::test]
async fn eof_closes_listens_gracefully_finishes_work_and_returns_ok() {
    let mut p = Proc::spawn();
    for id in ["sub", "gone"] {
        p.send(&req(id, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}))).await;
        let ack = p.next().await;
        assert_eq!(ack["params"]["_meta"][K_SUB], id, "{ack}");
    }
    // Cancelling a listen ends it without a response.
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "gone"}})).await;
    p.send(&req("busy", "tools/call", call("count_with_progress", json!({"steps": 3, "delay_ms": 100})))).await;
    let rest = p.finish().await;
    let closing = rest.iter().find(|v| is_response(v) && v["id"] == "sub").unwrap_or_else(|| panic!("{rest:?}"));
    let result = result_of(closing, &json!("sub"));
    assert_eq!(result["resultType"], "complete", "{closing}");
    assert_eq!(result["_meta"][K_SUB], "sub", "{closing}");
    let busy = rest.iter().find(|v| is_response(v) && v["id"] == "busy").expect("in-flight work finishes");
    assert_eq!(first_text(&result_of(busy, &json!("busy"))), "counted to 3");
    assert!(!rest.iter().any(|v| v["id"] == "gone"), "a cancelled listen gets no response: {rest:?}");
}

#[tokio::test]
async fn a_last_line_without_newline_is_served_before_exit() {
    let mut p = Proc::spawn();
    let body = req(1, "tools/call", call("echo", json!({"text": "tail"})));
    p.send_raw(body.to_string().as_bytes()).await;
    let rest = p.finish().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(first_text(&result_of(&rest[0], &json!(1))), "tail");
}

#[tokio::test]
async fn eof_does_not_wait_forever_for_stuck_work() {
    let mut p = Proc::spawn();
    // 100 steps of 100 ms: longer than the 5 s shutdown grace period.
    p.send(&req("stuck", "tools/call", call("count_with_progress", json!({"steps": 100, "delay_ms": 100})))).await;
    p.ok(json!(1), "tools/list", json!({})).await; // the request is in flight
    let rest = p.finish().await;
    assert!(!rest.iter().any(|v| v["id"] == "stuck"), "{rest:?}");
}
