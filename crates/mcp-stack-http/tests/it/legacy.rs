//! Dual-era over Streamable HTTP: legacy (2025-11-25) clients with `Mcp-Session-Id` sessions on
//! the same endpoint as modern stateless requests. Every message the server sends to the legacy
//! client is checked against the 2025-11-25 schema.

use mcp::http::EndpointConfig;
use mcp::server::Context as McpContext;
use mcp_test_support::*;
use serde_json::{json, Value};

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// POSTs a legacy message and returns the response.
async fn post_legacy(srv: &TestServer, session: Option<&str>, body: &Value) -> Resp {
    post(srv.addr, &legacy_headers(session), body.to_string()).await
}

/// The final message of a legacy response (JSON body or last SSE event), schema-checked.
fn legacy_message(r: &Resp) -> Value {
    let v: Value = if r.content_type().starts_with("text/event-stream") {
        let text = r.text();
        let data = text.lines().filter_map(|l| l.strip_prefix("data: ")).next_back().expect("an SSE event");
        serde_json::from_str(data).expect("SSE data is JSON")
    } else {
        serde_json::from_slice(&r.body).expect("JSON body")
    };
    assert_legacy_wire(&v);
    v
}

/// Opens a session (initialize + initialized) with `capabilities`; returns its id.
async fn open_session(srv: &TestServer, capabilities: Value) -> String {
    let init = rpc(
        0,
        "initialize",
        json!({"protocolVersion": LEGACY_PV, "capabilities": capabilities,
                                          "clientInfo": {"name": "legacy-http-test", "version": "1"}}),
    );
    let r = post_legacy(srv, None, &init).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let result = legacy_message(&r)["result"].clone();
    assert_schema_of(LEGACY_PV, "InitializeResult", &result);
    assert_eq!(result["protocolVersion"], LEGACY_PV);
    let sid = r.header("mcp-session-id").to_owned();
    assert!(sid.len() >= 16 && sid.bytes().all(|b| b.is_ascii_graphic()), "session id {sid:?}");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post_legacy(srv, Some(&sid), &note).await.status, 202);
    sid
}

#[tokio::test]
async fn a_session_serves_legacy_requests_beside_modern_ones() {
    let srv = TestServer::everything().await;
    let sid = open_session(&srv, json!({})).await;
    let r = post_legacy(&srv, Some(&sid), &rpc(1, "tools/list", json!({}))).await;
    assert_eq!(r.status, 200);
    let list = legacy_message(&r)["result"].clone();
    assert_schema_of(LEGACY_PV, "ListToolsResult", &list);
    assert!(list.get("resultType").is_none() && list.get("ttlMs").is_none(), "{list}");
    let r = post_legacy(&srv, Some(&sid), &rpc(2, "ping", json!({}))).await;
    assert_eq!(legacy_message(&r)["result"], json!({}));
    // JSON-RPC errors of a session travel with HTTP 200.
    let r = post_legacy(&srv, Some(&sid), &rpc(3, "tools/call", json!({"name": "nope"}))).await;
    assert_eq!((r.status, legacy_message(&r)["error"]["code"].as_i64()), (200, Some(-32602)));
    // The same endpoint still serves modern requests statelessly.
    let echo = srv.tool_ok(4, "echo", json!({"text": "modern"})).await;
    assert_eq!(echo["resultType"], "complete");
}

#[tokio::test]
async fn elicitation_goes_out_on_the_stream_and_the_answer_is_posted_back() {
    let srv = TestServer::everything().await;
    let sid = open_session(&srv, json!({"elicitation": {}})).await;
    let call = rpc(7, "tools/call", json!({"name": "test_elicitation", "arguments": {"message": "Who are you?"}}));
    let mut stream = open(srv.addr, "POST", "/mcp", &legacy_headers(Some(&sid)), full(call.to_string())).await.legacy();
    assert_eq!(stream.status, 200);
    assert_eq!(stream.header("mcp-session-id"), sid);
    let ask = stream.next().await.expect("a server request");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "Who are you?");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"],
                        "result": {"action": "accept", "content": {"username": "ada", "email": "a@example.com"}}});
    assert_eq!(post_legacy(&srv, Some(&sid), &answer).await.status, 202);
    let done = stream.next().await.expect("the response");
    assert_eq!(done["id"], 7, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("accept") && text.contains("ada"), "{text}");
}

#[tokio::test]
async fn the_session_stream_carries_list_changes() {
    let srv = TestServer::everything().await;
    let sid = open_session(&srv, json!({})).await;
    let mut events = open(srv.addr, "GET", "/mcp", &legacy_headers(Some(&sid)), full(Vec::<u8>::new())).await.legacy();
    assert_eq!(events.status, 200);
    assert!(events.content_type().starts_with("text/event-stream"));
    let r = post_legacy(&srv, Some(&sid), &rpc(1, "tools/call", json!({"name": "toggle_extra_tool"}))).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let n = events.next().await.expect("a notification");
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
}

#[tokio::test]
async fn sessions_end_with_delete_and_unknown_ones_get_404() {
    let srv = TestServer::everything().await;
    let sid = open_session(&srv, json!({})).await;
    // A version header other than the negotiated one is refused.
    let mut h = legacy_headers(Some(&sid));
    h = set_header(h, "mcp-protocol-version", Some("2025-06-18"));
    assert_eq!(post(srv.addr, &h, rpc(1, "ping", json!({})).to_string()).await.status, 400);
    let r = send(srv.addr, "DELETE", "/mcp", &legacy_headers(Some(&sid)), full(Vec::<u8>::new())).await;
    assert_eq!(r.status, 200);
    assert_eq!(post_legacy(&srv, Some(&sid), &rpc(2, "ping", json!({}))).await.status, 404);
    assert_eq!(post_legacy(&srv, Some("no-such-session"), &rpc(3, "ping", json!({}))).await.status, 404);
}

#[tokio::test]
async fn legacy_clients_can_be_refused() {
    let srv = TestServer::start(mcp_everything::server(), config(|c| c.max_sessions = 0)).await;
    let init = rpc(0, "initialize", json!({"protocolVersion": LEGACY_PV, "capabilities": {}}));
    let r = post_legacy(&srv, None, &init).await;
    assert_eq!(r.status, 404, "{}", r.text());
    let e: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(e["error"]["code"], -32601);
    assert!(e["error"]["message"].as_str().unwrap().contains("2026-07-28"), "{e}");
}

#[tokio::test]
async fn cancelled_notifications_stop_the_request() {
    let srv = TestServer::everything().await;
    let sid = open_session(&srv, json!({})).await;
    let slow =
        rpc(5, "tools/call", json!({"name": "count_with_progress", "arguments": {"steps": 100, "delay_ms": 1000}}));
    let (addr, h) = (srv.addr, legacy_headers(Some(&sid)));
    let mut call = tokio::spawn(async move { post(addr, &h, slow.to_string()).await });
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}});
    // A cancellation that arrives before the request is registered is a no-op, so send it until
    // the call ends (well before the 100 s it would take).
    let r = within("the cancelled call to end", async {
        loop {
            assert_eq!(post_legacy(&srv, Some(&sid), &cancel).await.status, 202);
            if let Ok(done) = tokio::time::timeout(std::time::Duration::from_millis(100), &mut call).await {
                return done;
            }
        }
    })
    .await
    .expect("task");
    let v = legacy_message(&r);
    assert_eq!(v["error"]["code"], -32603, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("cancelled"), "{v}");
}

#[tokio::test]
async fn a_closed_stream_is_resumed_with_last_event_id() {
    let srv = TestServer::everything().await;
    let sid = open_session(&srv, json!({})).await;
    let call = rpc(1, "tools/call", json!({"name": "test_reconnection", "arguments": {}}));
    let r = post(srv.addr, &legacy_headers(Some(&sid)), call.to_string()).await;
    assert_eq!(r.status, 200);
    assert!(r.content_type().starts_with("text/event-stream"), "{}", r.content_type());
    // The server ended the stream after the priming event: an id, a retry delay, empty data.
    let text = r.text();
    let last_id = text.lines().find_map(|l| l.strip_prefix("id: ")).expect("an event id").to_owned();
    assert!(text.contains("retry: ") && !text.contains("\"result\""), "{text}");
    // Resuming after that id delivers the result, with the request's id.
    let mut h = legacy_headers(Some(&sid));
    h.push(("last-event-id".into(), last_id.clone()));
    let mut resumed = open(srv.addr, "GET", "/mcp", &h, full(Vec::<u8>::new())).await.legacy();
    assert_eq!(resumed.status, 200);
    let done = resumed.next().await.expect("the result");
    assert_eq!(done["id"], 1, "{done}");
    assert!(done["result"]["content"][0]["text"].as_str().unwrap().contains("resumed"), "{done}");
    assert!(resumed.next().await.is_none(), "the finished stream ends");
    // Replaying from the start works while the stream is kept; an unknown stream is 400 (not 404,
    // which would mean the session ended).
    let mut h = legacy_headers(Some(&sid));
    h.push(("last-event-id".into(), last_id));
    let again = send(srv.addr, "GET", "/mcp", &h, full(Vec::<u8>::new())).await;
    assert!(again.text().contains("\"id\":1"), "{}", again.text());
    let mut h = legacy_headers(Some(&sid));
    h.push(("last-event-id".into(), "999-0".into()));
    assert_eq!(send(srv.addr, "GET", "/mcp", &h, full(Vec::<u8>::new())).await.status, 400);
}

#[tokio::test]
async fn a_legacy_user_may_take_longer_than_the_sealed_state_lives() {
    // Sealed MRTR state expires at once here; a legacy session keeps it in memory instead.
    let server = mcp::server::Server::builder("ttl", "1")
        .state_ttl_secs(0)
        .tool(raw_tool("ask", json!({"type": "object"}), |ctx: McpContext, _args| async move {
            let mut inputs = ctx.inputs();
            let a = inputs.elicit("q", "Name?", json!({"type": "object", "properties": {"n": {"type": "string"}}}))?;
            inputs.finish()?;
            Ok(text(a.and_then(|a| a.pointer("/content/n").cloned()).unwrap_or_default()))
        }))
        .build()
        .unwrap();
    let srv = TestServer::start(server, EndpointConfig::default()).await;
    let sid = open_session(&srv, json!({"elicitation": {}})).await;
    let call = rpc(1, "tools/call", json!({"name": "ask"}));
    let mut stream = open(srv.addr, "POST", "/mcp", &legacy_headers(Some(&sid)), full(call.to_string())).await.legacy();
    let ask = stream.next().await.expect("a server request");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"n": "Ada"}}});
    assert_eq!(post_legacy(&srv, Some(&sid), &answer).await.status, 202);
    let done = stream.next().await.expect("the response");
    assert_eq!(done["result"]["content"][0]["text"], "\"Ada\"", "{done}");
}

#[tokio::test]
async fn modern_requests_ignore_a_session_id_and_session_streams_end_with_the_session() {
    let srv = TestServer::everything().await;
    let sid = open_session(&srv, json!({})).await;
    // A modern request that happens to carry a (stale or live) session id is served statelessly.
    let r = srv.post(&req(1, "tools/call", call("echo", json!({"text": "x"}))), &[("mcp-session-id", "stale")]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["resultType"], "complete");
    // A second GET replaces the first; DELETE ends the second.
    let h = legacy_headers(Some(&sid));
    let mut first = open(srv.addr, "GET", "/mcp", &h, full(Vec::<u8>::new())).await.legacy();
    let mut second = open(srv.addr, "GET", "/mcp", &h, full(Vec::<u8>::new())).await.legacy();
    assert!(first.next().await.is_none(), "the replaced stream ends");
    let r = send(srv.addr, "DELETE", "/mcp", &legacy_headers(Some(&sid)), full(Vec::<u8>::new())).await;
    assert_eq!(r.status, 200);
    assert!(second.next().await.is_none(), "the session's stream ends with the session");
}

/// The endpoint in-process (no socket), so a test can say which peer each request comes from.
struct Direct(mcp::http::McpService);

impl Direct {
    fn new(f: impl FnOnce(&mut EndpointConfig)) -> Self {
        Direct(mcp::http::McpService::new(mcp_everything::server(), config(f)))
    }

    /// POSTs `body` as a legacy client at `peer`; the status, session id header and JSON body.
    async fn post(&self, peer: &str, session: Option<&str>, body: &Value) -> (u16, Option<String>, Value) {
        use http_body_util::BodyExt;
        let mut req = http::Request::post("/mcp").header("host", "localhost");
        for (k, v) in legacy_headers(session) {
            req = req.header(k, v);
        }
        let mut req = req.body(http_body_util::Full::new(bytes::Bytes::from(body.to_string()))).unwrap();
        req.extensions_mut().insert(peer.parse::<std::net::SocketAddr>().unwrap());
        let r = self.0.handle(req).await;
        let status = r.status().as_u16();
        let sid = r.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
        let body = r.into_body().collect().await.unwrap().to_bytes();
        (status, sid, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    /// Opens a session from `peer` (`initialized` too when asked); its id.
    async fn open(&self, peer: &str, initialized: bool) -> String {
        let init = rpc(0, "initialize", json!({"protocolVersion": LEGACY_PV, "capabilities": {}}));
        let (status, sid, body) = self.post(peer, None, &init).await;
        assert_eq!(status, 200, "{body}");
        let sid = sid.expect("a session id");
        if initialized {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            assert_eq!(self.post(peer, Some(&sid), &note).await.0, 202);
        }
        sid
    }

    /// Opens the session's GET notification stream; its body.
    async fn get(&self, peer: &str, sid: &str) -> mcp::http::McpBody {
        let mut req = http::Request::get("/mcp").header("host", "localhost");
        for (k, v) in legacy_headers(Some(sid)) {
            req = req.header(k, v);
        }
        let mut req = req.body(http_body_util::Full::new(bytes::Bytes::new())).unwrap();
        req.extensions_mut().insert(peer.parse::<std::net::SocketAddr>().unwrap());
        let r = self.0.handle(req).await;
        assert_eq!(r.status(), 200);
        r.into_body()
    }

    async fn alive(&self, peer: &str, sid: &str) -> bool {
        let (status, _, body) = self.post(peer, Some(sid), &rpc(9, "ping", json!({}))).await;
        assert!(status == 200 || status == 404, "{status} {body}");
        status == 200
    }
}

#[tokio::test]
async fn one_peer_cannot_hold_every_session_and_the_least_recently_used_gives_way() {
    let d = Direct::new(|c| {
        c.max_sessions = 6;
        c.max_sessions_per_client = 3;
    });
    let (flood, other) = ("10.0.0.1:5000", "10.0.0.2:6000");
    let first = d.open(flood, true).await;
    let second = d.open(flood, true).await;
    let third = d.open(flood, true).await;
    assert!(d.alive(flood, &first).await, "used again: now the second is least recently used");
    let fourth = d.open(flood, true).await;
    assert!(!d.alive(flood, &second).await, "the peer's least recently used session was ended");
    for s in [&first, &third, &fourth] {
        assert!(d.alive(flood, s).await);
    }
    // An open GET stream does not keep a session past the cap: opened, then nothing more.
    let mut stream = d.get(flood, &third).await;
    assert!(d.alive(flood, &fourth).await && d.alive(flood, &first).await);
    // Many peers fill the global cap: new sessions still open, the least recently used go.
    let mut opened = Vec::new();
    for i in 0..20 {
        opened.push(d.open(&format!("10.0.1.{i}:7000"), true).await);
    }
    let newcomer = d.open(other, true).await;
    assert!(d.alive(other, &newcomer).await, "a legacy client from another peer still gets a session");
    assert!(!d.alive(flood, &first).await && !d.alive("10.0.1.0:7000", &opened[0]).await);
    assert!(d.alive("10.0.1.19:7000", &opened[19]).await);
    assert!(!d.alive(flood, &third).await, "evicted with its stream open");
    let end = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        use http_body_util::BodyExt;
        while let Some(frame) = stream.frame().await {
            frame.unwrap();
        }
    });
    end.await.expect("the evicted session's stream ends");
}

#[tokio::test]
async fn bounded_initialize_params_and_well_formed_session_ids() {
    let d = Direct::new(|_| {});
    let big = json!({"protocolVersion": LEGACY_PV, "capabilities": {"experimental": {"pad": "x".repeat(1 << 20)}}});
    let (status, sid, body) = d.post("10.0.0.1:1", None, &rpc(0, "initialize", big)).await;
    assert_eq!((body["error"]["code"].as_i64(), sid), (Some(-32602), None), "{status}");
    let small = Direct::new(|c| c.max_initialize_params_bytes = 8);
    let init = json!({"protocolVersion": LEGACY_PV, "capabilities": {"roots": {"listChanged": true}}});
    assert_eq!(small.post("10.0.0.1:1", None, &rpc(0, "initialize", init)).await.2["error"]["code"], -32602);
    for bad in ["../../x".to_owned(), "a".repeat(10_000), "0123456789ABCDEF0123456789ABCDEF".to_owned()] {
        let (status, _, _) = d.post("10.0.0.1:1", Some(&bad), &rpc(1, "ping", json!({}))).await;
        assert_eq!(status, 404, "{bad:.20}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_session_never_initialized_expires_quickly() {
    let d = Direct::new(|c| c.session_init_timeout = std::time::Duration::from_secs(60));
    let peer = "10.0.0.3:1";
    let pending = d.open(peer, false).await;
    let ready = d.open(peer, true).await;
    assert!(d.alive(peer, &pending).await, "alive within the minute");
    tokio::time::advance(std::time::Duration::from_secs(61)).await;
    assert!(!d.alive(peer, &pending).await, "not initialized in time: gone");
    assert!(d.alive(peer, &ready).await, "an initialized session lives the idle time");
}
