//! Helpers shared by the integration tests of the mcp-stack crates (not published): request
//! builders, wire-schema checks against the JSON schemas in `test-data/schema/`, an in-process
//! HTTP server on 127.0.0.1:0, a small HTTP/1.1 client on hyper (plus raw sockets for
//! byte-exact requests) and an SSE reader. Every wait is bounded ([`WAIT`]).
#![allow(missing_debug_implementations)] // test helpers: no caller prints them

pub mod child;
pub mod harness;
pub mod tls;

use base64::Engine as _;
use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use mcp::http::EndpointConfig;
use mcp::server::{Args, Context as McpContext, HandlerError, Server, Tool};
use mcp::types::CallToolResult;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The protocol revision under test.
pub const PV: &str = "2026-07-28";
/// `_meta` key: the protocol version.
pub const K_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client capabilities.
pub const K_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client info.
pub const K_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the log level.
pub const K_LOG: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key: the subscription id.
pub const K_SUB: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key: the server info.
pub const K_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Generous bound on every wait, so a broken server fails a test instead of hanging it.
pub const WAIT: Duration = Duration::from_secs(10);

/// Awaits `f`, panicking with `what` after [`WAIT`].
pub async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(WAIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {WAIT:?} waiting for {what}"),
    }
}

/// Polls `cond` every 10 ms until it holds (bounded by [`WAIT`]).
pub async fn eventually(what: &str, cond: impl Fn() -> bool) {
    let poll = async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    within(what, poll).await
}

/// Waits (bounded by [`WAIT`]) until connecting to `addr` is refused: the server stopped
/// accepting.
pub async fn refused_soon(addr: SocketAddr) {
    within("new connections to be refused", async {
        loop {
            match TcpStream::connect(addr).await {
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => return,
                _ => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    })
    .await
}

// ------------------------------------------------------------------------------------------
// Messages
// ------------------------------------------------------------------------------------------

/// The default per-request `_meta` (no client capabilities).
pub fn meta() -> Value {
    let info = json!({"name": "integration-tests", "version": "1.0.0"});
    json!({K_VERSION: PV, K_INFO: info, K_CAPS: {}})
}

/// `params` with the default `_meta` merged in (keys already in `params._meta` win).
pub fn with_meta(params: Value) -> Value {
    let Value::Object(mut p) = params else { panic!("params must be an object, got {params}") };
    let mut m = meta().as_object().cloned().unwrap_or_default();
    if let Some(Value::Object(extra)) = p.remove("_meta") {
        m.extend(extra);
    }
    p.insert("_meta".into(), Value::Object(m));
    Value::Object(p)
}

/// `params` with the default `_meta` plus the given `_meta` entries.
pub fn with_meta_kv(params: Value, kv: &[(&str, Value)]) -> Value {
    let mut p = with_meta(params);
    for (k, v) in kv {
        p["_meta"][*k] = v.clone();
    }
    p
}

/// `params` declaring the client capabilities `c`.
pub fn caps(params: Value, c: Value) -> Value {
    with_meta_kv(params, &[(K_CAPS, c)])
}

/// The members of object `b` added to object `a`.
pub fn merged(mut a: Value, b: Value) -> Value {
    let (Some(a_obj), Value::Object(b)) = (a.as_object_mut(), b) else { panic!("merged() takes two objects") };
    a_obj.extend(b);
    a
}

/// A JSON-RPC request with the default `_meta`.
pub fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    let params = with_meta(params);
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A JSON-RPC request with `params` exactly as given (no `_meta` added).
pub fn req_raw(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// `tools/call` params.
pub fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

/// A `tools/call` request with the default `_meta`.
pub fn tcall(id: impl Into<Value>, name: &str, args: Value) -> Value {
    req(id, "tools/call", call(name, args))
}

/// A `resources/read` request with the default `_meta`.
pub fn read(id: impl Into<Value>, uri: &str) -> Value {
    req(id, "resources/read", json!({"uri": uri}))
}

/// A `subscriptions/listen` request for `filter`.
pub fn listen(id: impl Into<Value>, filter: Value) -> Value {
    req(id, "subscriptions/listen", json!({"notifications": filter}))
}

/// A `notifications/cancelled` for request `id`.
pub fn cancelled(id: impl Into<Value>) -> Value {
    let params = json!({"requestId": id.into()});
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
}

/// Asserts `v` is a JSON-RPC error response with `code` and the given `id` (`None`: no id).
#[track_caller]
pub fn assert_error(v: &Value, code: i64, id: Option<&Value>) {
    assert_eq!(v["jsonrpc"], "2.0", "not a JSON-RPC message: {v}");
    assert_eq!(v["error"]["code"], json!(code), "unexpected error in {v}");
    assert!(v["error"]["message"].is_string(), "no message: {v}");
    assert!(v.get("result").is_none(), "error with a result: {v}");
    match id {
        Some(id) => assert_eq!(v.get("id"), Some(id), "must echo the id: {v}"),
        None => assert!(v.get("id").is_none_or(Value::is_null), "no id: {v}"),
    }
}

/// Asserts the HTTP status and JSON-RPC error of `r` (`what` labels failures); returns the body.
#[track_caller]
pub fn expect_err(what: impl std::fmt::Debug, r: &Resp, status: u16, code: i64, id: Option<&Value>) -> Value {
    assert_eq!(r.status, status, "{what:?}: {}", r.text());
    let v = r.json();
    assert_error(&v, code, id);
    v
}

/// Asserts `v` is a successful response to `id` and returns its `result`.
#[track_caller]
pub fn result_of(v: &Value, id: &Value) -> Value {
    assert_eq!(v["jsonrpc"], "2.0", "not a JSON-RPC message: {v}");
    assert_eq!(v.get("id"), Some(id), "wrong id: {v}");
    assert!(v.get("error").is_none(), "expected a result, got {v}");
    v["result"].clone()
}

/// The text of the first content block of a `CallToolResult`.
pub fn first_text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

// ------------------------------------------------------------------------------------------
// Wire-schema checks against the 2026-07-28 JSON schema
// ------------------------------------------------------------------------------------------

fn schema_doc(version: &str) -> Value {
    static DOCS: OnceLock<Mutex<HashMap<String, Value>>> = OnceLock::new();
    let mut docs = DOCS.get_or_init(Default::default).lock().expect("docs");
    docs.entry(version.to_owned())
        .or_insert_with(|| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../../test-data/schema/{version}/schema.json"));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            serde_json::from_str(&text).expect("schema.json is JSON")
        })
        .clone()
}

type Validators = Mutex<HashMap<String, Arc<jsonschema::Validator>>>;

/// Asserts `v` is valid against the 2026-07-28 schema definition `def` (e.g. `ListToolsResult`).
#[track_caller]
pub fn assert_schema(def: &str, v: &Value) {
    assert_schema_of("2026-07-28", def, v);
}

/// Asserts `v` is valid against the definition `def` of the schema of protocol `version`.
#[track_caller]
pub fn assert_schema_of(version: &str, def: &str, v: &Value) {
    static CACHE: OnceLock<Validators> = OnceLock::new();
    let validator = {
        let mut cache = CACHE.get_or_init(Default::default).lock().expect("cache");
        let compile = || {
            let mut doc = schema_doc(version);
            doc["$ref"] = json!(format!("#/$defs/{def}"));
            let v = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(&doc)
                .unwrap_or_else(|e| panic!("compiling {def}: {e}"));
            Arc::new(v)
        };
        cache.entry(format!("{version}#{def}")).or_insert_with(compile).clone()
    };
    let errors: Vec<String> = validator.iter_errors(v).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "not a valid {def}: {errors:?}\n{v}");
}

/// Checks any message a server sends against the schema's envelope (and typed errors).
#[track_caller]
pub fn assert_wire(v: &Value) {
    if v.get("method").is_some() {
        assert!(v.get("id").is_none(), "the server sent a request: {v}");
        assert_schema("ServerNotification", v);
    } else if v.get("error").is_some() {
        assert_schema("JSONRPCErrorResponse", v);
        let typed = match v["error"]["code"].as_i64() {
            Some(-32020) => Some("HeaderMismatchError"),
            Some(-32021) => Some("MissingRequiredClientCapabilityError"),
            Some(-32022) => Some("UnsupportedProtocolVersionError"),
            _ => None,
        };
        if let Some(def) = typed {
            assert_schema(def, v);
        }
    } else {
        assert_schema("JSONRPCResultResponse", v);
        if v["result"]["resultType"] == "input_required" {
            assert_schema("InputRequiredResult", &v["result"]);
        }
    }
}

/// The legacy revision the dual-era tests speak.
pub const LEGACY_PV: &str = "2025-11-25";

/// Headers of a legacy Streamable HTTP POST: no modern headers; with a session, its id and the
/// negotiated version.
pub fn legacy_headers(session: Option<&str>) -> Headers {
    let mut h = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
    ];
    if let Some(s) = session {
        h.push(("mcp-session-id".to_owned(), s.to_owned()));
        h.push(("mcp-protocol-version".to_owned(), LEGACY_PV.to_owned()));
    }
    h
}

/// Checks any message a server sends to a legacy (2025-11-25) client against that schema.
#[track_caller]
pub fn assert_legacy_wire(v: &Value) {
    let def = match (v.get("method"), v.get("id"), v.get("error")) {
        (Some(_), Some(_), _) => "ServerRequest",
        (Some(_), None, _) => "ServerNotification",
        (None, _, Some(_)) => "JSONRPCErrorResponse",
        (None, _, None) => "JSONRPCResultResponse",
    };
    assert_schema_of(LEGACY_PV, def, v);
}

/// Checks a `result` against the result type of `method`.
#[track_caller]
pub fn assert_result_schema(method: &str, result: &Value) {
    let def = match method {
        _ if result["resultType"] == "input_required" => "InputRequiredResult",
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/read" => "ReadResourceResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        other => panic!("no result type known for {other}"),
    };
    assert_schema(def, result);
}

// ------------------------------------------------------------------------------------------
// In-process HTTP server
// ------------------------------------------------------------------------------------------

/// Request headers as (name, value) pairs, sent verbatim.
pub type Headers = Vec<(String, String)>;

/// The standard Streamable HTTP headers for `body` (a request object).
pub fn std_headers(body: &Value) -> Headers {
    let method = body["method"].as_str().unwrap_or_default();
    let name = match method {
        "tools/call" | "prompts/get" => body["params"]["name"].as_str(),
        "resources/read" => body["params"]["uri"].as_str(),
        "tasks/get" | "tasks/update" | "tasks/cancel" => body["params"]["taskId"].as_str(),
        _ => None,
    };
    let h = [
        ("content-type", Some("application/json")),
        ("accept", Some("application/json, text/event-stream")),
        ("mcp-protocol-version", Some(PV)),
        ("mcp-method", Some(method)),
        ("mcp-name", name),
    ];
    h.iter().filter_map(|(k, v)| Some(((*k).to_owned(), (*v)?.to_owned()))).collect()
}

/// `headers` with `name` replaced by `value` (or removed when `value` is `None`).
pub fn set_header(mut headers: Headers, name: &str, value: Option<&str>) -> Headers {
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        headers.push((name.to_owned(), v.to_owned()));
    }
    headers
}

/// A server listening on 127.0.0.1 (random port), served by `mcp::http::serve`.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The server it serves.
    pub server: Server,
    /// The serving task.
    pub task: JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    /// Serves `server` with `config`.
    pub async fn start(server: Server, config: EndpointConfig) -> Self {
        Self::start_with(server, config, mcp::http::ServeConfig::default()).await
    }

    /// Serves `server` with `config` and the connection settings `serve`.
    #[allow(dead_code)]
    pub async fn start_with(server: Server, config: EndpointConfig, serve: mcp::http::ServeConfig) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(mcp::http::serve(server.clone(), listener, config).config(serve));
        Self { addr, server, task }
    }

    /// The `everything` server with the default config.
    pub async fn everything() -> Self {
        let config = EndpointConfig::default();
        Self::start(mcp_everything::server(), config).await
    }

    /// The standard headers for `body`, overridden by `extra`.
    fn headers(body: &Value, extra: &[(&str, &str)]) -> Headers {
        let mut h = std_headers(body);
        for (k, v) in extra {
            h = set_header(h, k, Some(v));
        }
        h
    }

    /// POSTs `body` with the standard headers plus/overridden by `extra`.
    pub async fn post(&self, body: &Value, extra: &[(&str, &str)]) -> Resp {
        post(self.addr, &Self::headers(body, extra), body.to_string()).await
    }

    /// Sends a well-formed request (default `_meta`, standard headers) and returns the response.
    pub async fn rpc(&self, id: impl Into<Value>, method: &str, params: Value) -> Resp {
        self.post(&req(id, method, params), &[]).await
    }

    /// Like [`TestServer::rpc`], but expects HTTP 200 and a valid result, and returns it.
    pub async fn ok(&self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        let r = self.rpc(id.clone(), method, params).await;
        assert_eq!(r.status, 200, "{method}: {}", r.text());
        let result = result_of(&r.message(), &id);
        assert_result_schema(method, &result);
        result
    }

    /// `tools/call` of `name` with `args` (default `_meta`, standard headers).
    pub async fn tool(&self, id: impl Into<Value>, name: &str, args: Value) -> Resp {
        self.rpc(id, "tools/call", call(name, args)).await
    }

    /// Like [`TestServer::tool`], but expects success and returns the `result`.
    pub async fn tool_ok(&self, id: impl Into<Value>, name: &str, args: Value) -> Value {
        self.ok(id, "tools/call", call(name, args)).await
    }

    /// Opens a `subscriptions/listen` stream for `filter`.
    pub async fn listen(&self, id: impl Into<Value>, filter: Value) -> Streaming {
        self.open(&listen(id, filter), &[]).await
    }

    /// Opens a streaming request with the standard headers plus `extra`.
    pub async fn open(&self, body: &Value, extra: &[(&str, &str)]) -> Streaming {
        let h = Self::headers(body, extra);
        open(self.addr, "POST", "/mcp", &h, full(body.to_string())).await
    }
}

// ------------------------------------------------------------------------------------------
// Test servers and tools
// ------------------------------------------------------------------------------------------

/// Standard base64 of `s`.
pub fn b64(s: &str) -> String {
    let enc = base64::engine::general_purpose::STANDARD.encode(s);
    format!("=?base64?{enc}?=")
}

/// A text-only `CallToolResult`.
pub fn text(t: impl std::fmt::Display) -> Value {
    json!({"content": [{"type": "text", "text": t.to_string()}]})
}

/// A tool `name` with input schema `schema` whose handler gets the raw arguments and returns a
/// `CallToolResult` as JSON (so tests can send any well-formed result).
pub fn raw_tool<F, Fut>(name: &str, schema: Value, f: F) -> Tool
where
    F: Fn(McpContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    let f = Arc::new(f);
    Tool::new(name).description("test tool").input_schema(schema).handler(
        move |ctx: McpContext, Args(a): Args<Map<String, Value>>| {
            let fut = (*f)(ctx, a);
            async move { Ok::<_, HandlerError>(serde_json::from_value::<CallToolResult>(fut.await?)?) }
        },
    )
}

/// A server with one raw tool `name` whose handler is `f`.
pub fn one_tool<F, Fut>(name: &str, schema: Value, f: F) -> Server
where
    F: Fn(McpContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    Server::builder("test", "1.0.0").tool(raw_tool(name, schema, f)).build().expect("server")
}

/// The default endpoint config changed by `f`.
pub fn config(f: impl FnOnce(&mut EndpointConfig)) -> EndpointConfig {
    let mut c = EndpointConfig::default();
    f(&mut c);
    c
}

/// Sets a flag when dropped (proves a handler future was dropped).
pub struct SetOnDrop(pub Arc<AtomicBool>);
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

/// Flags set by the `slow` tool: started, handler dropped, cancellation token fired.
pub type Flags = [Arc<AtomicBool>; 3];

/// A server whose `slow` tool runs forever, reporting progress unless `quiet` is set.
pub fn slow_server(request_timeout: Duration) -> (Server, Flags) {
    let flags: Flags = Default::default();
    let f = flags.clone();
    let handler = move |ctx: McpContext, args: Map<String, Value>| {
        let [started, dropped, cancelled] = f.clone();
        async move {
            let _guard = SetOnDrop(dropped);
            let token = ctx.cancellation().clone();
            tokio::spawn(async move {
                token.cancelled().await;
                cancelled.store(true, SeqCst);
            });
            started.store(true, SeqCst);
            for i in 0.. {
                if !args.contains_key("quiet") {
                    ctx.progress(f64::from(i), None, None);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok::<_, HandlerError>(text("never"))
        }
    };
    let b = Server::builder("slow", "1.0.0").request_timeout(request_timeout);
    let b = b.tool(raw_tool("slow", json!({"type": "object"}), handler));
    (b.build().expect("server"), flags)
}

mod http_client;
pub use http_client::*;
