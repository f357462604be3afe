//! Streamable HTTP: a real `mcp::http::serve` on 127.0.0.1, driven by a small
//! hyper client (and a raw socket where byte-exact requests matter). Every message the server
//! sends is checked against the 2026-07-28 JSON schema by the helpers in `common`.

use mcp::http::EndpointConfig;
use mcp::server::{Context, HandlerError};
use mcp_test_support::*;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn bad_origin_or_host_is_forbidden_before_any_handler_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let server = one_tool("count", json!({"type": "object"}), move |_ctx, _args| {
        let n = c.fetch_add(1, SeqCst) + 1;
        async move { Ok(text(n)) }
    });
    let s = TestServer::start(server, EndpointConfig::default()).await;
    let body = tcall(1, "count", json!({}));
    for extra in [
        vec![("origin", "http://evil.example")],
        vec![("origin", "http://localhost.evil.example")],
        vec![("origin", "null")],
        vec![("host", "evil.example")],
        vec![("host", "evil.example:80"), ("origin", "http://localhost")],
    ] {
        let r = s.post(&body, &extra).await;
        expect_err(&extra, &r, 403, -32600, None);
    }
    assert_eq!(calls.load(SeqCst), 0, "a handler ran");
    // Loopback origins and hosts are fine (any port).
    let own = format!("http://{}", s.addr);
    for extra in [
        vec![("origin", "http://localhost:5173")],
        vec![("origin", own.as_str())],
        vec![("host", "localhost:1")],
        vec![("host", "[::1]:8080"), ("origin", "https://[::1]")],
    ] {
        let r = s.post(&body, &extra).await;
        assert_eq!(r.status, 200, "{extra:?}: {}", r.text());
    }
    assert_eq!(calls.load(SeqCst), 4);
}

#[tokio::test]
async fn forbidden_trigger_never_reaches_listeners() {
    let s = TestServer::everything().await;
    let filter = json!({"toolsListChanged": true, "promptsListChanged": true});
    let mut stream = s.listen(7, filter).await;
    let ack = stream.next().await.expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let trigger = tcall(1, "test_trigger_tool_change", json!({}));
    let r = s.post(&trigger, &[("origin", "http://evil.example")]).await;
    assert_eq!(r.status, 403);
    s.tool_ok(2, "test_trigger_prompt_change", json!({})).await;
    // Events arrive in order: had the forbidden call run, its tools/list_changed came first.
    let next = stream.next().await.expect("notification");
    let method = &next["method"];
    assert_eq!(method, "notifications/prompts/list_changed", "{next}");
}

#[tokio::test]
async fn wrong_http_method_and_unknown_path() {
    let s = TestServer::everything().await;
    for method in ["GET", "DELETE", "PUT"] {
        let r = send(s.addr, method, "/mcp", &[], full(Vec::new())).await;
        assert_eq!((r.status, r.header("allow")), (405, "POST"), "{method}");
    }
    let body = req(1, "tools/list", json!({}));
    let h = std_headers(&body);
    let r = send(s.addr, "POST", "/other", &h, full(body.to_string())).await;
    assert_eq!(r.status, 404);
    assert!(r.body.is_empty(), "{}", r.text());
}

#[tokio::test]
async fn body_over_configured_limit_is_413() {
    let config = config(|c| c.max_body_bytes = 1024);
    let s = TestServer::start(mcp_everything::server(), config).await;
    let big = tcall(1, "echo", json!({"text": "x".repeat(2000)}));
    let (h, big) = (std_headers(&big), big.to_string());
    let r = post(s.addr, &h, big.clone()).await; // with Content-Length
    expect_err("content-length", &r, 413, -32600, None);
    let r = send(s.addr, "POST", "/mcp", &h, chunked(big.into_bytes())).await;
    expect_err("chunked", &r, 413, -32600, None);
    // Under the limit (also chunked) is served.
    let small = tcall(2, "echo", json!({"text": "y".repeat(300)}));
    assert!(small.to_string().len() < 1024);
    let (h, small) = (std_headers(&small), small.to_string());
    let r = send(s.addr, "POST", "/mcp", &h, chunked(small.into_bytes())).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let result = result_of(&r.json(), &json!(2));
    assert_eq!(first_text(&result), "y".repeat(300));
}

#[tokio::test]
async fn body_over_default_two_mib_is_413() {
    let s = TestServer::everything().await;
    let limit = 2 << 20;
    let headers = [
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", PV),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    // Content-Length over the limit: refused from the head alone (no body is sent).
    let len = (limit + 1).to_string();
    let h = [&headers[..], &[("Content-Length", len.as_str())]].concat();
    let r = raw(s.addr, raw_head(s.addr, "POST", &h), Vec::new()).await;
    assert_eq!(r.status, 413);
    assert_error(&r.json(), -32600, None);
    // A chunked body over the limit.
    let big = tcall(1, "echo", json!({"text": "x".repeat(limit)})).to_string();
    let mut body = Vec::new();
    for c in big.as_bytes().chunks(64 * 1024) {
        body.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        body.extend_from_slice(c);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let h = [&headers[..], &[("Transfer-Encoding", "chunked")]].concat();
    let r = raw(s.addr, raw_head(s.addr, "POST", &h), body).await;
    assert_eq!(r.status, 413);
    assert_error(&r.json(), -32600, None);
    // Just under the limit is fine.
    let text = "z".repeat(limit - 1024);
    let r = s.tool_ok(3, "echo", json!({"text": text})).await;
    assert_eq!(first_text(&r).len(), text.len());
}

/// `code id body` per line; `META` stands for a valid `_meta` object, `-` for "no id".
const MALFORMED: &str = r#"
-32700 - {not json
-32700 - {"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{"_meta":META}}
-32700 - {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":META,"_meta":META}}
-32700 - {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":META}} trailing
-32600 - {"jsonrpc":"2.0","id":null,"method":"tools/list","params":{"_meta":META}}
-32600 - {"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{"_meta":META}}
-32600 - [{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":META}}]
-32600 - 42
-32600 5 {"jsonrpc":"1.0","id":5,"method":"tools/list","params":{"_meta":META}}
-32600 6 {"jsonrpc":2,"id":6,"method":"tools/list","params":{"_meta":META}}
-32600 "x" {"id":"x","method":"tools/list","params":{"_meta":META}}
-32600 7 {"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}
-32600 9 {"jsonrpc":"2.0","id":9,"result":{}}
-32600 "e" {"jsonrpc":"2.0","id":"e","error":{"code":1,"message":"m"}}
"#;

#[tokio::test]
async fn malformed_json_rpc_is_rejected_with_the_right_code() {
    let s = TestServer::everything().await;
    let h = std_headers(&req(1, "tools/list", json!({})));
    let (open, close) = ("[".repeat(200), "]".repeat(200));
    let deep = format!(r#"-32700 - {{"jsonrpc":"2.0","id":1,"method":"x","p":{open}{close}}}"#);
    let m = meta().to_string();
    let lines = MALFORMED.trim().lines().map(|l| l.replace("META", &m));
    for line in lines.chain([deep, "-32700 - ".into()]) {
        let mut parts = line.splitn(3, ' ');
        let code: i64 = parts.next().unwrap().parse().unwrap();
        let id = parts.next().unwrap();
        let id = (id != "-").then(|| serde_json::from_str::<Value>(id).unwrap());
        let body = parts.next().unwrap_or_default().to_owned();
        let r = post(s.addr, &h, body.clone()).await;
        expect_err(&body[..body.len().min(70)], &r, 400, code, id.as_ref());
    }
}

#[tokio::test]
async fn notification_is_accepted_with_202_and_no_body() {
    let s = TestServer::everything().await;
    let n = cancelled(1);
    let r = post(s.addr, &std_headers(&n), n.to_string()).await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty(), "{}", r.text());
}

#[tokio::test]
async fn protocol_version_and_method_headers() {
    let s = TestServer::everything().await;
    let body = req(11, "tools/list", json!({}));
    let id = json!(11);
    for (name, value) in [
        ("mcp-protocol-version", None),
        ("mcp-protocol-version", Some("2025-11-25")),
        ("mcp-method", None),
        ("mcp-method", Some("prompts/list")),
        ("mcp-method", Some("TOOLS/LIST")),
        ("mcp-method", Some("tools/list/")),
    ] {
        let h = set_header(std_headers(&body), name, value);
        let r = post(s.addr, &h, body.to_string()).await;
        expect_err((name, value), &r, 400, -32020, Some(&id));
    }
    // A repeated header is not one value.
    let mut h = std_headers(&body);
    h.push(("mcp-method".into(), "tools/list".into()));
    let r = post(s.addr, &h, body.to_string()).await;
    expect_err("repeated Mcp-Method", &r, 400, -32020, Some(&id));
    // Whitespace around values is not part of them.
    let h = set_header(std_headers(&body), "mcp-method", Some(" \ttools/list\t "));
    let h = set_header(h, "mcp-protocol-version", Some(&format!("  {PV}\t")));
    let r = post(s.addr, &h, body.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn header_names_are_case_insensitive_on_the_wire() {
    let s = TestServer::everything().await;
    let body = req(3, "tools/list", json!({})).to_string();
    let len = body.len().to_string();
    for (pv, m) in [
        ("MCP-Protocol-Version", "Mcp-Method"),
        ("mcp-protocol-version", "mcp-method"),
        ("MCP-PROTOCOL-VERSION", "MCP-METHOD"),
        ("mCp-PrOtOcOl-VeRsIoN", "mCP-mEthOD"),
    ] {
        let ct = ("Content-Type", "application/json");
        let h = [ct, ("Content-Length", &len), (pv, PV), (m, "tools/list")];
        let head = raw_head(s.addr, "POST", &h);
        let r = raw(s.addr, head, body.clone().into_bytes()).await;
        let text = String::from_utf8_lossy(&r.body);
        assert_eq!(r.status, 200, "{pv}/{m}: {text}");
        assert!(result_of(&r.json(), &json!(3))["tools"].is_array());
    }
}

#[tokio::test]
async fn mcp_name_header_must_match_params() {
    let s = TestServer::everything().await;
    let id = json!(1);
    for body in [
        tcall(1, "test_simple_text", json!({})),
        req(1, "prompts/get", json!({"name": "test_simple_prompt"})),
        read(1, "test://static-text"),
        read(1, "test://template/123/data"),
        read(1, "test://template/caf\u{e9} 1/data"),
    ] {
        let p = &body["params"];
        let name = p.get("name").unwrap_or(&p["uri"]).as_str().unwrap();
        let h = |v: Option<&str>| set_header(std_headers(&body), "mcp-name", v);
        let upper = name.to_uppercase();
        // Raw "café" sends non-ASCII (obs-text) bytes: invalid header characters.
        let bad = [None, Some("wrong"), Some(&upper), Some("=?base64?!!!?="), Some("café")];
        for v in bad {
            let r = post(s.addr, &h(v), body.to_string()).await;
            expect_err((name, v), &r, 400, -32020, Some(&id));
        }
        let mut good = vec![b64(name), format!(" {} ", b64(name))];
        if name.is_ascii() && !name.contains(' ') {
            good.extend([name.to_owned(), format!("  {name}\t")]);
        }
        for v in good {
            let r = post(s.addr, &h(Some(&v)), body.to_string()).await;
            assert_eq!(r.status, 200, "{name} Mcp-Name={v:?}: {}", r.text());
            assert_eq!(r.message()["result"]["resultType"], "complete");
        }
    }
}

#[tokio::test]
async fn mcp_param_headers_are_validated_against_arguments() {
    let s = TestServer::everything().await;
    let (hello, b_hello) = ("Hello, 世界", b64("Hello, 世界"));
    let (sentinel, b_sentinel) = ("=?base64?literal?=", b64("=?base64?literal?="));
    // (body value, header value, accepted?)
    let cases = [
        ("us-west1", Some("us-west1"), true),
        ("Hello", Some("=?base64?SGVsbG8=?="), true),
        (hello, Some(b_hello.as_str()), true),
        (" padded ", Some("=?base64?IHBhZGRlZCA=?="), true),
        (sentinel, Some(b_sentinel.as_str()), true),
        ("SGVsbG8=", Some("SGVsbG8="), true),
        ("=?base64?SGVsbG8=", Some("=?base64?SGVsbG8="), true),
        ("us-west1", Some("\t us-west1 "), true),
        ("Hello", Some("=?base64?SGVsbG8?="), false),
        ("Hello", Some("=?base64?SGVs!!!bG8=?="), false),
        ("test-value", None, false),
        ("us-west1", Some("us-east1"), false),
        ("us-west1", Some("US-WEST1"), false),
        ("Hello", Some("=?base64?SHVsbG8=?="), false),
        ("=?base64?SGVsbG8=?=", Some("=?base64?SGVsbG8=?="), false),
        ("x", Some("=?base64?/w==?="), false),
        ("café", Some("café"), false),
    ];
    for (value, header, accepted) in cases {
        let body = tcall(5, "test_x_mcp_header", json!({"region": value}));
        let h = set_header(std_headers(&body), "Mcp-Param-Region", header);
        let r = post(s.addr, &h, body.to_string()).await;
        if accepted {
            assert_eq!(r.status, 200, "{value:?} / {header:?}: {}", r.text());
            let result = result_of(&r.json(), &json!(5));
            assert_eq!(first_text(&result), format!("region={value}"));
        } else {
            expect_err((value, header), &r, 400, -32020, Some(&json!(5)));
        }
    }
    // The header name is matched case-insensitively.
    let body = tcall(6, "test_x_mcp_header", json!({"region": "eu"}));
    let h = set_header(std_headers(&body), "MCP-PARAM-REGION", Some("eu"));
    assert_eq!(post(s.addr, &h, body.to_string()).await.status, 200);
}

#[tokio::test]
async fn integer_and_boolean_param_headers_compare_by_value() {
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "integer", "x-mcp-header": "N"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        "opt": {"type": "object", "properties": {"deep": {"type": "string", "x-mcp-header": "Deep"}}}}});
    let server = one_tool("typed", schema, |_ctx, _args| async move { Ok(text("ok")) });
    let s = TestServer::start(server, EndpointConfig::default()).await;
    type Case = (Value, &'static [(&'static str, &'static str)], bool);
    let cases: [Case; 13] = [
        (json!({"n": 42}), &[("Mcp-Param-N", "42")], true),
        (json!({"n": 42}), &[("Mcp-Param-N", "42.0")], true),
        (json!({"n": -7}), &[("Mcp-Param-N", "-7")], true),
        (json!({"n": 42}), &[("Mcp-Param-N", "43")], false),
        (json!({"n": 42}), &[("Mcp-Param-N", "forty-two")], false),
        (json!({"flag": true}), &[("Mcp-Param-Flag", "true")], true),
        (json!({"flag": false}), &[("Mcp-Param-Flag", "false")], true),
        (json!({"flag": true}), &[("Mcp-Param-Flag", "True")], false),
        (json!({"flag": true}), &[("Mcp-Param-Flag", "1")], false),
        (json!({"opt": {"deep": "x"}}), &[("Mcp-Param-Deep", "x")], true),
        (json!({"opt": {"deep": "x"}}), &[], false),
        (json!({"n": null}), &[], true),
        (json!({}), &[], true),
    ];
    for (args, headers, accepted) in cases {
        let r = s.post(&tcall(1, "typed", args.clone()), headers).await;
        if accepted {
            assert_eq!(r.status, 200, "{args} {headers:?}: {}", r.text());
        } else {
            expect_err((&args, headers), &r, 400, -32020, Some(&json!(1)));
        }
    }
}

#[tokio::test]
async fn request_meta_is_validated() {
    let s = TestServer::everything().await;
    let without = |key: &str| {
        let mut m = meta();
        m.as_object_mut().unwrap().remove(key);
        json!({"_meta": m})
    };
    for (id, params) in [
        (101, json!({})),
        (102, without(K_VERSION)),
        (104, without(K_CAPS)),
        (106, json!({"_meta": "2026-07-28"})),
        (107, json!({"_meta": {K_VERSION: PV, K_CAPS: []}})),
    ] {
        let body = req_raw(id, "server/discover", params.clone());
        let r = s.post(&body, &[]).await;
        expect_err(&params, &r, 400, -32602, Some(&json!(id)));
    }
    // clientInfo is optional.
    let body = req_raw(105, "server/discover", without(K_INFO));
    let r = s.post(&body, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    // Unsupported version (header and _meta agree).
    let old = merged(meta(), json!({K_VERSION: "1900-01-01"}));
    let body = req_raw(301, "server/discover", json!({"_meta": old}));
    let header = [("mcp-protocol-version", "1900-01-01")];
    let r = s.post(&body, &header).await;
    let v = expect_err("1900-01-01", &r, 400, -32022, Some(&json!(301)));
    assert_eq!(v["error"]["data"]["requested"], "1900-01-01");
    let supported = v["error"]["data"]["supported"].as_array();
    assert!(supported.expect("supported").contains(&json!(PV)), "{v}");
    // Header and _meta disagree: -32020 wins over -32022.
    let body = req_raw(302, "server/discover", json!({"_meta": old}));
    let r = s.post(&body, &[]).await;
    expect_err("mismatch", &r, 400, -32020, Some(&json!(302)));
}

#[tokio::test]
async fn unknown_and_removed_methods_are_404() {
    let s = TestServer::everything().await;
    let removed = "initialize ping logging/setLevel resources/subscribe resources/unsubscribe";
    for m in ["unknown/method", "tasks/list"].into_iter().chain(removed.split(' ')) {
        let r = s.rpc(500, m, json!({})).await;
        expect_err(m, &r, 404, -32601, Some(&json!(500)));
    }
}

#[tokio::test]
async fn missing_client_capability_is_400() {
    let s = TestServer::everything().await;
    let r = s.tool(401, "test_missing_capability", json!({})).await;
    let v = expect_err("no sampling", &r, 400, -32021, Some(&json!(401)));
    assert_eq!(v["error"]["data"]["requiredCapabilities"]["sampling"], json!({}));
    let p = caps(call("test_missing_capability", json!({})), json!({"sampling": {}}));
    assert_eq!(first_text(&s.ok(402, "tools/call", p).await), "Success");
    // An input request the client cannot answer is never sent.
    let r = s.tool(403, "test_input_required_result_elicitation", json!({})).await;
    let v = expect_err("no elicitation", &r, 400, -32021, Some(&json!(403)));
    assert!(v["error"]["data"]["requiredCapabilities"]["elicitation"].is_object());
}

#[tokio::test]
async fn invalid_params_are_400_with_32602() {
    let s = TestServer::everything().await;
    let elicit = call("test_input_required_result_elicitation", json!({}));
    let null_responses = json!({"inputResponses": null, "_meta": {K_CAPS: {"elicitation": {}}}});
    let cases = [
        ("tools/call", call("no_such_tool", json!({}))),
        ("tools/call", json!({"name": "echo", "arguments": [1]})),
        ("tools/call", merged(elicit, null_responses)),
        ("resources/read", json!({"uri": "test://nonexistent"})),
        ("tools/list", json!({"cursor": "not-a-cursor"})),
        ("tools/list", json!({"requestState": "abc"})),
        ("prompts/list", json!({"cursor": 7})),
        ("prompts/get", json!({"name": "test_prompt_with_arguments"})),
        ("tools/list", json!({"_meta": {K_LOG: "loud"}})),
        ("tools/list", json!({"_meta": {"progressToken": 1.5}})),
        ("subscriptions/listen", json!({})),
    ];
    for (method, params) in cases {
        let r = s.rpc("e", method, params.clone()).await;
        let v = expect_err((method, &params), &r, 400, -32602, Some(&json!("e")));
        if method == "resources/read" {
            assert_eq!(v["error"]["data"]["uri"], "test://nonexistent");
        }
    }
}

#[tokio::test]
async fn input_schema_violation_is_a_tool_error_result() {
    let s = TestServer::everything().await;
    let r = s.tool_ok(1, "add", json!({"a": "one", "b": 2})).await;
    assert_eq!((&r["isError"], &r["resultType"]), (&json!(true), &json!("complete")));
    let r = s.tool_ok(2, "add", json!({"a": 1, "b": 2})).await;
    assert_eq!(r["structuredContent"], json!({"sum": 3}));
    assert_ne!(r["isError"], true);
}

#[tokio::test]
async fn json_or_sse_depending_on_notifications() {
    let s = TestServer::everything().await;
    let r = s.tool(1, "echo", json!({"text": "hi"})).await;
    assert_eq!((r.status, r.content_type()), (200, "application/json"));
    assert_eq!(first_text(&result_of(&r.json(), &json!(1))), "hi");

    let token = [("progressToken", json!("tok-1"))];
    let p = with_meta_kv(call("test_tool_with_progress", json!({})), &token);
    let r = s.rpc(2, "tools/call", p).await;
    assert_eq!((r.status, r.header("x-accel-buffering")), (200, "no"));
    assert!(r.content_type().starts_with("text/event-stream"), "{r:?}");
    let events = r.events();
    assert_eq!(events.len(), 4, "{events:?}");
    for (e, p) in events[..3].iter().zip([0.0, 50.0, 100.0]) {
        assert_eq!(e["method"], "notifications/progress", "{e}");
        assert_eq!(e["params"]["progressToken"], "tok-1");
        assert_eq!(e["params"]["progress"].as_f64(), Some(p));
    }
    let last = result_of(&events[3], &json!(2));
    assert_eq!(first_text(&last), "Progress complete");

    let r = s.tool(3, "test_tool_with_progress", json!({})).await;
    assert_eq!((r.status, r.content_type()), (200, "application/json"));
    let result = result_of(&r.json(), &json!(3));
    assert_eq!(first_text(&result), "Progress complete");
}

#[tokio::test]
async fn log_notifications_follow_the_per_request_level() {
    let s = TestServer::everything().await;
    let count = || call("count_with_progress", json!({"steps": 2, "delay_ms": 1}));
    let p = with_meta_kv(count(), &[(K_LOG, json!("info"))]);
    let events = s.rpc(1, "tools/call", p).await.events();
    let is_log = |e: &&Value| e["method"] == "notifications/message";
    let logs: Vec<&Value> = events.iter().filter(is_log).collect();
    assert_eq!(logs.len(), 2, "{events:?}");
    assert!(logs.iter().all(|l| l["params"]["level"] == "info"), "{logs:?}");
    let progress = events.iter().filter(|e| e["method"] == "notifications/progress");
    assert_eq!(progress.count(), 0, "progress without a token: {events:?}");
    let last = result_of(events.last().unwrap(), &json!(1));
    assert_eq!(first_text(&last), "counted to 2");
    // No level, or a level above the messages: no notifications, plain JSON.
    for p in [count(), with_meta_kv(count(), &[(K_LOG, json!("warning"))])] {
        let r = s.rpc(2, "tools/call", p).await;
        assert_eq!(r.content_type(), "application/json", "{}", r.text());
        assert_eq!(first_text(&result_of(&r.json(), &json!(2))), "counted to 2");
    }
}

#[tokio::test]
async fn results_carry_result_type_server_info_and_cache_hints() {
    let s = TestServer::everything().await;
    let elicit = call("test_input_required_result_elicitation", json!({}));
    let template = json!({"uri": "test://template/7/data"});
    let completion = json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                            "argument": {"name": "arg1", "value": "pa"}});
    let cases = [
        ("server/discover", json!({}), true),
        ("tools/list", json!({}), true),
        ("prompts/list", json!({}), true),
        ("resources/list", json!({}), true),
        ("resources/templates/list", json!({}), true),
        ("resources/read", json!({"uri": "test://static-text"}), true),
        ("resources/read", template, true),
        ("tools/call", call("test_simple_text", json!({})), false),
        ("tools/call", call("test_error_handling", json!({})), false),
        ("tools/call", caps(elicit, json!({"elicitation": {}})), false),
        ("prompts/get", json!({"name": "test_simple_prompt"}), false),
        ("completion/complete", completion, false),
    ];
    for (method, params, cached) in cases {
        let r = s.ok("r", method, params).await; // also checks the result's schema
        let rt = r["resultType"].as_str();
        assert!(matches!(rt, Some("complete" | "input_required")), "{r}");
        let info = &r["_meta"][K_SERVER_INFO];
        let named = info["name"].is_string() && info["version"].is_string();
        assert!(named, "{method}: {r}");
        if cached {
            let scope = r["cacheScope"].as_str();
            assert!(r["ttlMs"].is_u64(), "{method}: {r}");
            assert!(matches!(scope, Some("public" | "private")), "{method}: {r}");
        }
    }
    let first = s.ok(1, "tools/list", json!({})).await["tools"].clone();
    assert_eq!(first[0]["name"], "test_simple_text");
    for i in 2..5 {
        assert_eq!(s.ok(i, "tools/list", json!({})).await["tools"], first);
    }
}

#[tokio::test]
async fn mrtr_multi_round_over_http_and_state_integrity() {
    let s = TestServer::everything().await;
    let elicit = json!({"elicitation": {}});
    let round = |name: &str, extra: Value| caps(merged(call(name, json!({})), extra), elicit.clone());
    let tool = |extra: Value| round("test_input_required_result_multi_round", extra);
    let state = |r: &Value| r["requestState"].as_str().expect("requestState").to_owned();

    let r1 = s.ok(1, "tools/call", tool(json!({}))).await;
    assert_eq!(r1["resultType"], "input_required", "{r1}");
    assert_eq!(r1["inputRequests"]["step1"]["method"], "elicitation/create");
    let s1 = state(&r1);
    let a1 = json!({"step1": {"action": "accept", "content": {"name": "Alice"}}});
    let r2 = tool(json!({"inputResponses": a1, "requestState": s1}));
    let r2 = s.ok(2, "tools/call", r2).await;
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    assert!(r2["inputRequests"]["step2"].is_object(), "{r2}");
    let s2 = state(&r2);
    assert_ne!(s1, s2);
    let a2 = json!({"step2": {"action": "accept", "content": {"color": "blue"}}});
    let r3 = tool(json!({"inputResponses": a2, "requestState": s2}));
    let r3 = s.ok(3, "tools/call", r3).await;
    assert_eq!(r3["resultType"], "complete");
    let done = "Multi-round complete for Alice who likes blue";
    assert_eq!(first_text(&r3), done);

    // Tampered state, garbage, state replayed on another tool or other arguments: -32602.
    let confirm = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    let other_tool = json!({"inputResponses": confirm, "requestState": s1});
    let other_args = json!({"inputResponses": a1, "requestState": s1, "arguments": {"x": 1}});
    let bad = [
        tool(json!({"inputResponses": a1, "requestState": format!("{s1}-TAMPERED")})),
        tool(json!({"inputResponses": a1, "requestState": "garbage"})),
        round("test_input_required_result_request_state", other_tool),
        tool(other_args),
    ];
    for (i, p) in bad.into_iter().enumerate() {
        let r = s.rpc(10 + i, "tools/call", p).await;
        expect_err(i, &r, 400, -32602, Some(&json!(10 + i)));
    }

    // Only inputs the client declared capabilities for are requested.
    let p = call("test_input_required_result_capabilities", json!({}));
    let p = caps(p, json!({"sampling": {}}));
    let r = s.ok(20, "tools/call", p).await;
    let requests = r["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["sample_input"], "{r}");
    assert_eq!(requests["sample_input"]["method"], "sampling/createMessage");

    // MRTR on prompts/get.
    let prompt = |extra: Value| {
        let p = json!({"name": "test_input_required_result_prompt"});
        caps(merged(p, extra), elicit.clone())
    };
    let r1 = s.ok(21, "prompts/get", prompt(json!({}))).await;
    assert_eq!(r1["resultType"], "input_required", "{r1}");
    let answer = json!({"user_context": {"action": "accept", "content": {"context": "tea"}}});
    let r2 = prompt(json!({"inputResponses": answer, "requestState": state(&r1)}));
    let r2 = s.ok(22, "prompts/get", r2).await;
    let text = &r2["messages"][0]["content"]["text"];
    assert_eq!(text, "Prompt with context: tea", "{r2}");
}

#[tokio::test]
async fn subscriptions_listen_ack_tagging_and_filter() {
    let s = TestServer::everything().await;
    let lid = json!(1_754_000_000_000_u64);
    let mut tools = s.listen(lid.clone(), json!({"toolsListChanged": true})).await;
    assert_eq!(tools.status, 200);
    assert!(tools.content_type().starts_with("text/event-stream"));
    let ack = tools.next().await.expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][K_SUB], lid);
    let filter = &ack["params"]["notifications"];
    assert_eq!(filter, &json!({"toolsListChanged": true}));

    let mut prompts = s.listen("p", json!({"promptsListChanged": true})).await;
    let ack = prompts.next().await.expect("ack");
    assert_eq!(ack["params"]["_meta"][K_SUB], "p");

    let r = s.tool_ok(1, "test_trigger_tool_change", json!({})).await;
    assert_eq!(first_text(&r), "Mutation triggered");
    let n = tools.next().await.expect("tools/list_changed");
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    assert_eq!(n["params"]["_meta"][K_SUB], lid);

    s.tool_ok(2, "test_trigger_prompt_change", json!({})).await;
    s.tool_ok(3, "test_trigger_tool_change", json!({})).await;
    // The prompts-only stream skipped the first tools change; the tools-only one skips prompts.
    let n = prompts.next().await.expect("prompts/list_changed");
    assert_eq!(n["method"], "notifications/prompts/list_changed", "{n}");
    assert_eq!(n["params"]["_meta"][K_SUB], "p");
    let n = tools.next().await.expect("second tools/list_changed");
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");

    // Resource subscriptions get notifications/resources/updated for their URIs only.
    let uris = json!(["test://watched-resource"]);
    let mut res = s.listen("r", json!({"resourceSubscriptions": uris})).await;
    let ack = res.next().await.expect("ack");
    let filter = &ack["params"]["notifications"];
    assert_eq!(filter["resourceSubscriptions"], uris);
    s.tool_ok(4, "test_trigger_tool_change", json!({})).await;
    s.tool_ok(5, "touch_watched_resource", json!({})).await;
    let n = res.next().await.expect("resources/updated");
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
    assert_eq!(n["params"]["uri"], "test://watched-resource");
    assert_eq!(n["params"]["_meta"][K_SUB], "r");
}

#[tokio::test]
async fn shutdown_ends_listen_streams_with_a_complete_result() {
    let s = TestServer::everything().await;
    let mut stream = s.listen(9, json!({"toolsListChanged": true})).await;
    stream.next().await.expect("ack");
    s.server.shutdown();
    let done = stream.next().await.expect("closing response");
    let result = result_of(&done, &json!(9));
    assert_result_schema("subscriptions/listen", &result);
    assert_eq!(result["resultType"], "complete", "{done}");
    assert_eq!(result["_meta"][K_SUB], 9, "{done}");
    let ended = stream.next().await.is_none();
    assert!(ended, "the stream must end after the response");
    let served = within("serve() to return", s.task).await;
    served.expect("join").expect("serve");
}

#[tokio::test]
async fn closing_the_sse_stream_cancels_the_handler() {
    let (server, [_, dropped, cancelled]) = slow_server(Duration::from_secs(300));
    let s = TestServer::start(server, EndpointConfig::default()).await;
    let p = with_meta_kv(call("slow", json!({})), &[("progressToken", json!(1))]);
    let mut stream = s.open(&req(1, "tools/call", p), &[]).await;
    assert!(stream.content_type().starts_with("text/event-stream"));
    let progress = stream.next().await.expect("progress");
    assert_eq!(progress["method"], "notifications/progress");
    assert!(!dropped.load(SeqCst));
    drop(stream);
    eventually("the handler to be dropped", || dropped.load(SeqCst)).await;
    eventually("the cancellation token to fire", || cancelled.load(SeqCst)).await;
}

/// Starts a quiet `slow` call (JSON path: no notification yet) and closes the connection.
async fn disconnect_during_json_request() -> Flags {
    let (server, flags) = slow_server(Duration::from_secs(300));
    let s = TestServer::start(server, EndpointConfig::default()).await;
    let body = tcall(1, "slow", json!({"quiet": true}));
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", s.addr);
    head += &format!("Content-Length: {}\r\n", body.to_string().len());
    for (k, v) in std_headers(&body) {
        head += &format!("{k}: {v}\r\n");
    }
    let mut tcp = tcp(s.addr).await;
    let request = format!("{head}\r\n{body}");
    tcp.write_all(request.as_bytes()).await.expect("write");
    eventually("the handler to start", || flags[0].load(SeqCst)).await;
    drop(tcp);
    flags
}

#[tokio::test]
async fn disconnect_during_a_json_request_drops_the_handler() {
    let [_, dropped, _] = disconnect_during_json_request().await;
    eventually("the handler to be dropped", || dropped.load(SeqCst)).await;
}

#[tokio::test]
async fn disconnect_during_a_json_request_fires_the_cancellation_token() {
    let [_, _, cancelled] = disconnect_during_json_request().await;
    eventually("the cancellation token to fire", || cancelled.load(SeqCst)).await;
}

#[tokio::test]
async fn closing_a_count_with_progress_stream_leaves_the_server_serving() {
    let s = TestServer::everything().await;
    let p = call("count_with_progress", json!({"steps": 50, "delay_ms": 100}));
    let p = with_meta_kv(p, &[("progressToken", json!("c"))]);
    let mut stream = s.open(&req(1, "tools/call", p), &[]).await;
    let progress = stream.next().await.expect("progress");
    assert_eq!(progress["params"]["progressToken"], "c");
    drop(stream);
    let r = s.tool_ok(2, "echo", json!({"text": "still here"})).await;
    assert_eq!(first_text(&r), "still here");
}

#[tokio::test]
async fn request_timeout_fails_the_request_and_drops_the_handler() {
    let (server, [_, dropped, _]) = slow_server(Duration::from_millis(100));
    let s = TestServer::start(server, EndpointConfig::default()).await;
    let r = s.tool(1, "slow", json!({"quiet": true})).await;
    expect_err("timeout", &r, 500, -32603, Some(&json!(1)));
    eventually("the handler to be dropped", || dropped.load(SeqCst)).await;
}

async fn maybe_panic(ctx: Context, args: Map<String, Value>) -> Result<Value, HandlerError> {
    if args.contains_key("boom") {
        ctx.progress(1.0, None, None);
        tokio::time::sleep(Duration::from_millis(5)).await;
        panic!("boom");
    }
    Ok(text("fine"))
}

#[tokio::test]
async fn a_panicking_handler_is_an_internal_error_and_the_server_survives() {
    let server = one_tool("maybe_panic", json!({"type": "object"}), maybe_panic);
    let s = TestServer::start(server, EndpointConfig::default()).await;
    let r = s.tool(1, "maybe_panic", json!({"boom": true})).await;
    expect_err("panic", &r, 500, -32603, Some(&json!(1)));
    let r = s.tool_ok(2, "maybe_panic", json!({})).await;
    assert_eq!(first_text(&r), "fine");
    // After a notification the response is an SSE stream: the panic is its final event.
    let token = [("progressToken", json!("t"))];
    let p = with_meta_kv(call("maybe_panic", json!({"boom": true})), &token);
    let events = s.rpc(3, "tools/call", p).await.events();
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_error(events.last().unwrap(), -32603, Some(&json!(3)));
    let r = s.tool_ok(4, "maybe_panic", json!({})).await;
    assert_eq!(first_text(&r), "fine");
}

#[tokio::test]
async fn slow_request_heads_are_cut_off() {
    let serve = mcp::http::ServeConfig { header_read_timeout: Duration::from_millis(100), ..Default::default() };
    let s = TestServer::start_with(mcp_everything::server(), EndpointConfig::default(), serve).await;
    let mut tcp = tcp(s.addr).await;
    let partial = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", s.addr);
    tcp.write_all(partial.as_bytes()).await.expect("write");
    // The server gives up on the incomplete head and closes the connection (maybe after a 408).
    let mut buf = Vec::new();
    let _ = within("the connection to close", tcp.read_to_end(&mut buf)).await;
    let text = String::from_utf8_lossy(&buf);
    assert!(text.is_empty() || text.starts_with("HTTP/1.1 408"), "{text}");
    // Other connections are unaffected.
    s.ok(1, "tools/list", json!({})).await;
}

/// The header timeout also covers the next request on a kept-alive connection: a head that
/// starts after a full exchange and stalls gets the connection closed (the idle timeout is an
/// hour here, so only the header timeout can close it).
#[tokio::test]
async fn a_slow_head_after_a_finished_request_is_cut_off_too() {
    let serve = mcp::http::ServeConfig {
        header_read_timeout: Duration::from_millis(200),
        idle_timeout: Duration::from_secs(3600),
        ..Default::default()
    };
    let s = TestServer::start_with(mcp_everything::server(), EndpointConfig::default(), serve).await;
    let body = req(1, "tools/list", json!({}));
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", s.addr);
    head += &format!("Content-Length: {}\r\n", body.to_string().len());
    for (k, v) in std_headers(&body) {
        head += &format!("{k}: {v}\r\n");
    }
    let mut tcp = tcp(s.addr).await;
    tcp.write_all(format!("{head}\r\n{body}").as_bytes()).await.expect("write");
    // The whole response (JSON ends the body; the connection stays open).
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("\"tools\"") || !seen.ends_with(b"}") {
        let mut buf = [0u8; 4096];
        let n = within("the response", tcp.read(&mut buf)).await.expect("read");
        assert!(n > 0, "the connection closed before the response: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    assert!(seen.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&seen));
    tcp.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n").await.expect("write");
    let mut rest = Vec::new();
    let _ = within("the connection to close", tcp.read_to_end(&mut rest)).await;
    let text = String::from_utf8_lossy(&rest);
    assert!(text.is_empty() || text.starts_with("HTTP/1.1 408"), "{text}");
}

/// Graceful shutdown in `serve` itself: a call in flight at the signal gets its whole answer,
/// a listen stream ends with its closing response, new connections are refused, then `serve`
/// returns.
#[tokio::test]
async fn the_shutdown_signal_drains_requests_in_flight() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, signal) = tokio::sync::oneshot::channel::<()>();
    let serving = mcp::http::serve(mcp_everything::server(), listener, EndpointConfig::default())
        .with_graceful_shutdown(async move { drop(signal.await) });
    let task = tokio::spawn(serving);
    let s = TestServer { addr, server: mcp_everything::server(), task };
    let mut listening = s.listen(9, json!({"toolsListChanged": true})).await;
    listening.next().await.expect("ack");
    let args = json!({"steps": 5, "delay_ms": 100});
    let p = with_meta_kv(call("count_with_progress", args), &[("progressToken", json!("t"))]);
    let mut counting = s.open(&req(1, "tools/call", p), &[]).await;
    assert_eq!(counting.next().await.expect("progress")["method"], "notifications/progress");
    stop.send(()).unwrap();
    let closing = listening.next().await.expect("the listen stream's closing response");
    assert_eq!(result_of(&closing, &json!(9))["resultType"], "complete", "{closing}");
    assert!(listening.next().await.is_none(), "the listen stream ends");
    refused_soon(addr).await;
    let last = counting.response().await;
    assert_eq!(first_text(&result_of(&last, &json!(1))), "counted to 5");
    within("serve() to return", s.task).await.expect("join").expect("serve");
}

/// At the drain bound the connections still busy are closed and `serve` returns.
#[tokio::test]
async fn past_the_drain_time_the_connections_left_are_closed() {
    let (server, [started, dropped, _]) = slow_server(Duration::from_secs(300));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, signal) = tokio::sync::oneshot::channel::<()>();
    let serve = mcp::http::ServeConfig::default().drain_timeout(Duration::from_millis(200));
    let serving = mcp::http::serve(server.clone(), listener, EndpointConfig::default())
        .config(serve)
        .with_graceful_shutdown(async move { drop(signal.await) });
    let s = TestServer { addr, server, task: tokio::spawn(serving) };
    let p = with_meta_kv(call("slow", json!({})), &[("progressToken", json!(1))]);
    let mut stream = s.open(&req(1, "tools/call", p), &[]).await;
    stream.next().await.expect("progress");
    assert!(started.load(SeqCst));
    stop.send(()).unwrap();
    within("serve() to return at the drain bound", s.task).await.expect("join").expect("serve");
    eventually("the handler to be dropped", || dropped.load(SeqCst)).await;
    // The connection was cut (the client's stream ends inside a chunk, without a response).
    drop(stream);
}

/// An operation layer sees every request that reaches the server over HTTP, and can answer in
/// its place with an error that maps to its HTTP status like any other.
#[tokio::test]
async fn operation_layers_wrap_requests_over_http() {
    use mcp::server::layers::from_fn;
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let server = mcp_everything::builder()
        .layer(from_fn(move |op, next| {
            count.fetch_add(1, SeqCst);
            async move {
                if op.target() == Some("add") {
                    return Err(mcp::protocol::ProtocolError::invalid_params("Unknown tool: add"));
                }
                next.run(op).await
            }
        }))
        .build()
        .unwrap();
    let s = TestServer::start(server, EndpointConfig::default()).await;
    let r = s.tool_ok(1, "echo", json!({"text": "through the layer"})).await;
    assert_eq!(first_text(&r), "through the layer");
    let r = s.post(&tcall(2, "add", json!({"a": 1, "b": 2})), &[]).await;
    expect_err("refused by the layer", &r, 400, -32602, Some(&json!(2)));
    assert_eq!(seen.load(SeqCst), 2);
}

/// `subscriptions/listen` passes through the layers before its stream opens: refused with a
/// status, or let through (and counted) with the HTTP request in view.
#[tokio::test]
async fn operation_layers_see_listen_requests_over_http() {
    use mcp::server::layers::from_fn;
    let hosts = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let seen = hosts.clone();
    let server = mcp_everything::builder()
        .layer(from_fn(move |op, next| {
            let host = op.http().and_then(|p| p.headers.get("host")).map(|h| h.to_str().unwrap_or("").to_owned());
            seen.lock().push((op.method().to_owned(), host, op.peer().is_some()));
            async move {
                if op.method() == "subscriptions/listen"
                    && op.params()["notifications"].get("promptsListChanged").is_some()
                {
                    return Err(mcp::protocol::ProtocolError::invalid_params("no prompt listeners here"));
                }
                next.run(op).await
            }
        }))
        .build()
        .unwrap();
    let s = TestServer::start(server, EndpointConfig::default()).await;
    let refused = req(1, "subscriptions/listen", json!({"notifications": {"promptsListChanged": true}}));
    expect_err("listen refused by the layer", &s.post(&refused, &[]).await, 400, -32602, Some(&json!(1)));
    let body = req(2, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = open(s.addr, "POST", "/mcp", &std_headers(&body), full(body.to_string())).await;
    assert_eq!(stream.status, 200);
    assert_eq!(stream.next().await.expect("ack")["method"], "notifications/subscriptions/acknowledged");
    let seen = hosts.lock().clone();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|(m, host, peer)| m == "subscriptions/listen" && host.is_some() && *peer), "{seen:?}");
}
