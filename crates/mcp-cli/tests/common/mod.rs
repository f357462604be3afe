//! Helpers shared by the integration tests: request builders, wire-schema checks, a small
//! HTTP/1.1 client on hyper (plus raw sockets for byte-exact requests) and an SSE reader.
#![allow(dead_code)] // each test binary uses a different subset

use base64::Engine as _;
use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use mcp::http::HttpConfig;
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
pub(crate) const PV: &str = "2026-07-28";
// `_meta` keys.
pub(crate) const K_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const K_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const K_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const K_LOG: &str = "io.modelcontextprotocol/logLevel";
pub(crate) const K_SUB: &str = "io.modelcontextprotocol/subscriptionId";
pub(crate) const K_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Generous bound on every wait, so a broken server fails a test instead of hanging it.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// Awaits `f`, panicking with `what` after [`WAIT`].
pub(crate) async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(WAIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {WAIT:?} waiting for {what}"),
    }
}

/// Polls `cond` every 10 ms until it holds (bounded by [`WAIT`]).
pub(crate) async fn eventually(what: &str, cond: impl Fn() -> bool) {
    let poll = async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    within(what, poll).await
}

// ------------------------------------------------------------------------------------------
// Messages
// ------------------------------------------------------------------------------------------

/// The default per-request `_meta` (no client capabilities).
pub(crate) fn meta() -> Value {
    let info = json!({"name": "integration-tests", "version": "1.0.0"});
    json!({K_VERSION: PV, K_INFO: info, K_CAPS: {}})
}

/// `params` with the default `_meta` merged in (keys already in `params._meta` win).
pub(crate) fn with_meta(params: Value) -> Value {
    let Value::Object(mut p) = params else { panic!("params must be an object, got {params}") };
    let mut m = meta().as_object().cloned().unwrap_or_default();
    if let Some(Value::Object(extra)) = p.remove("_meta") {
        m.extend(extra);
    }
    p.insert("_meta".into(), Value::Object(m));
    Value::Object(p)
}

/// `params` with the default `_meta` plus the given `_meta` entries.
pub(crate) fn with_meta_kv(params: Value, kv: &[(&str, Value)]) -> Value {
    let mut p = with_meta(params);
    for (k, v) in kv {
        p["_meta"][*k] = v.clone();
    }
    p
}

/// `params` declaring the client capabilities `c`.
pub(crate) fn caps(params: Value, c: Value) -> Value {
    with_meta_kv(params, &[(K_CAPS, c)])
}

/// The members of object `b` added to object `a`.
pub(crate) fn merged(mut a: Value, b: Value) -> Value {
    let (Some(a_obj), Value::Object(b)) = (a.as_object_mut(), b) else { panic!("merged() takes two objects") };
    a_obj.extend(b);
    a
}

/// A JSON-RPC request with the default `_meta`.
pub(crate) fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    let params = with_meta(params);
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A JSON-RPC request with `params` exactly as given (no `_meta` added).
pub(crate) fn req_raw(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// `tools/call` params.
pub(crate) fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

/// A `tools/call` request with the default `_meta`.
pub(crate) fn tcall(id: impl Into<Value>, name: &str, args: Value) -> Value {
    req(id, "tools/call", call(name, args))
}

/// A `resources/read` request with the default `_meta`.
pub(crate) fn read(id: impl Into<Value>, uri: &str) -> Value {
    req(id, "resources/read", json!({"uri": uri}))
}

/// A `subscriptions/listen` request for `filter`.
pub(crate) fn listen(id: impl Into<Value>, filter: Value) -> Value {
    req(id, "subscriptions/listen", json!({"notifications": filter}))
}

/// A `notifications/cancelled` for request `id`.
pub(crate) fn cancelled(id: impl Into<Value>) -> Value {
    let params = json!({"requestId": id.into()});
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
}

/// Asserts `v` is a JSON-RPC error response with `code` and the given `id` (`None`: no id).
#[track_caller]
pub(crate) fn assert_error(v: &Value, code: i64, id: Option<&Value>) {
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
pub(crate) fn expect_err(what: impl std::fmt::Debug, r: &Resp, status: u16, code: i64, id: Option<&Value>) -> Value {
    assert_eq!(r.status, status, "{what:?}: {}", r.text());
    let v = r.json();
    assert_error(&v, code, id);
    v
}

/// Asserts `v` is a successful response to `id` and returns its `result`.
#[track_caller]
pub(crate) fn result_of(v: &Value, id: &Value) -> Value {
    assert_eq!(v["jsonrpc"], "2.0", "not a JSON-RPC message: {v}");
    assert_eq!(v.get("id"), Some(id), "wrong id: {v}");
    assert!(v.get("error").is_none(), "expected a result, got {v}");
    v["result"].clone()
}

/// The text of the first content block of a `CallToolResult`.
pub(crate) fn first_text(result: &Value) -> &str {
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
pub(crate) fn assert_schema(def: &str, v: &Value) {
    assert_schema_of("2026-07-28", def, v);
}

/// Asserts `v` is valid against the definition `def` of the schema of protocol `version`.
#[track_caller]
pub(crate) fn assert_schema_of(version: &str, def: &str, v: &Value) {
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
pub(crate) fn assert_wire(v: &Value) {
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
pub(crate) const LEGACY_PV: &str = "2025-11-25";

/// Headers of a legacy Streamable HTTP POST: no modern headers; with a session, its id and the
/// negotiated version.
pub(crate) fn legacy_headers(session: Option<&str>) -> Headers {
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

/// The real `mcp serve everything --stdio` child process (killed on drop), its stdin and its
/// stdout as lines.
pub(crate) fn spawn_stdio_everything() -> (
    tokio::process::Child,
    tokio::process::ChildStdin,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "everything", "--stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mcp");
    let stdin = child.stdin.take().expect("stdin");
    let out = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    (child, stdin, out)
}

/// Checks any message a server sends to a legacy (2025-11-25) client against that schema.
#[track_caller]
pub(crate) fn assert_legacy_wire(v: &Value) {
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
pub(crate) fn assert_result_schema(method: &str, result: &Value) {
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
pub(crate) type Headers = Vec<(String, String)>;

/// The standard Streamable HTTP headers for `body` (a request object).
pub(crate) fn std_headers(body: &Value) -> Headers {
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
pub(crate) fn set_header(mut headers: Headers, name: &str, value: Option<&str>) -> Headers {
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        headers.push((name.to_owned(), v.to_owned()));
    }
    headers
}

/// A server listening on 127.0.0.1 (random port), served by `mcp::http::serve`.
pub(crate) struct TestServer {
    pub addr: SocketAddr,
    pub server: Server,
    pub task: JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    /// Serves `server` with `config`.
    pub(crate) async fn start(server: Server, config: HttpConfig) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(mcp::http::serve(server.clone(), listener, config));
        Self { addr, server, task }
    }

    /// The `everything` server with the default config.
    pub(crate) async fn everything() -> Self {
        let config = HttpConfig::default();
        Self::start(mcp_cli::everything::server(), config).await
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
    pub(crate) async fn post(&self, body: &Value, extra: &[(&str, &str)]) -> Resp {
        post(self.addr, &Self::headers(body, extra), body.to_string()).await
    }

    /// Sends a well-formed request (default `_meta`, standard headers) and returns the response.
    pub(crate) async fn rpc(&self, id: impl Into<Value>, method: &str, params: Value) -> Resp {
        self.post(&req(id, method, params), &[]).await
    }

    /// Like [`TestServer::rpc`], but expects HTTP 200 and a valid result, and returns it.
    pub(crate) async fn ok(&self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        let r = self.rpc(id.clone(), method, params).await;
        assert_eq!(r.status, 200, "{method}: {}", r.text());
        let result = result_of(&r.message(), &id);
        assert_result_schema(method, &result);
        result
    }

    /// `tools/call` of `name` with `args` (default `_meta`, standard headers).
    pub(crate) async fn tool(&self, id: impl Into<Value>, name: &str, args: Value) -> Resp {
        self.rpc(id, "tools/call", call(name, args)).await
    }

    /// Like [`TestServer::tool`], but expects success and returns the `result`.
    pub(crate) async fn tool_ok(&self, id: impl Into<Value>, name: &str, args: Value) -> Value {
        self.ok(id, "tools/call", call(name, args)).await
    }

    /// Opens a `subscriptions/listen` stream for `filter`.
    pub(crate) async fn listen(&self, id: impl Into<Value>, filter: Value) -> Streaming {
        self.open(&listen(id, filter), &[]).await
    }

    /// Opens a streaming request with the standard headers plus `extra`.
    pub(crate) async fn open(&self, body: &Value, extra: &[(&str, &str)]) -> Streaming {
        let h = Self::headers(body, extra);
        open(self.addr, "POST", "/mcp", &h, full(body.to_string())).await
    }
}

// ------------------------------------------------------------------------------------------
// Test servers and tools
// ------------------------------------------------------------------------------------------

pub(crate) fn b64(s: &str) -> String {
    let enc = base64::engine::general_purpose::STANDARD.encode(s);
    format!("=?base64?{enc}?=")
}

pub(crate) fn text(t: impl std::fmt::Display) -> Value {
    json!({"content": [{"type": "text", "text": t.to_string()}]})
}

/// A tool `name` with input schema `schema` whose handler gets the raw arguments and returns a
/// `CallToolResult` as JSON (so tests can send any well-formed result).
pub(crate) fn raw_tool<F, Fut>(name: &str, schema: Value, f: F) -> Tool
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
pub(crate) fn one_tool<F, Fut>(name: &str, schema: Value, f: F) -> Server
where
    F: Fn(McpContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    Server::builder("test", "1.0.0").tool(raw_tool(name, schema, f)).build().expect("server")
}

pub(crate) fn config(f: impl FnOnce(&mut HttpConfig)) -> HttpConfig {
    let mut c = HttpConfig::default();
    f(&mut c);
    c
}

/// Sets a flag when dropped (proves a handler future was dropped).
pub(crate) struct SetOnDrop(pub Arc<AtomicBool>);
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

/// Flags set by the `slow` tool: started, handler dropped, cancellation token fired.
pub(crate) type Flags = [Arc<AtomicBool>; 3];

/// A server whose `slow` tool runs forever, reporting progress unless `quiet` is set.
pub(crate) fn slow_server(request_timeout: Duration) -> (Server, Flags) {
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

// ------------------------------------------------------------------------------------------
// HTTP client (hyper, one connection per request)
// ------------------------------------------------------------------------------------------

/// A complete HTTP response.
#[derive(Debug)]
pub(crate) struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> &'a str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

impl Resp {
    /// The body as text (for messages).
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A response header, or "".
    pub(crate) fn header(&self, name: &str) -> &str {
        header(&self.headers, name)
    }

    /// The `Content-Type` header, or "".
    pub(crate) fn content_type(&self) -> &str {
        self.header("content-type")
    }

    /// Parses and wire-checks a JSON body (asserting the content type).
    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        let ct = self.content_type();
        let (status, text) = (self.status, self.text());
        let is_json = ct.starts_with("application/json");
        assert!(is_json, "{ct:?} ({status}): {text}");
        let v = serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("invalid JSON body ({e}): {text}"));
        assert_wire(&v);
        v
    }

    /// Every SSE event of a complete `text/event-stream` body (each wire-checked).
    #[track_caller]
    pub(crate) fn events(&self) -> Vec<Value> {
        let ct = self.content_type();
        let is_sse = ct.starts_with("text/event-stream");
        assert!(is_sse, "{ct:?}: {}", self.text());
        let mut p = SseParser::default();
        p.push(&self.body);
        let out: Vec<Value> = std::iter::from_fn(|| p.next_event()).collect();
        assert!(p.is_drained(), "trailing partial event: {}", self.text());
        out
    }

    /// The final JSON-RPC message: the JSON body, or the last SSE event.
    #[track_caller]
    pub(crate) fn message(&self) -> Value {
        if self.content_type().starts_with("text/event-stream") {
            self.events().pop().expect("an SSE response with no events")
        } else {
            self.json()
        }
    }
}

type Sender = hyper::client::conn::http1::SendRequest<BoxBody<Bytes, Infallible>>;

async fn connect(addr: SocketAddr) -> (Sender, JoinHandle<()>) {
    let tcp = within("connect", TcpStream::connect(addr)).await;
    let io = TokioIo::new(tcp.expect("connect"));
    let (sender, conn) = hyper::client::conn::http1::handshake(io).await.expect("handshake");
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    (sender, task)
}

/// A body with `Content-Length`.
pub(crate) fn full(b: impl Into<Bytes>) -> BoxBody<Bytes, Infallible> {
    Full::new(b.into()).boxed()
}

/// A body sent with chunked transfer encoding (no `Content-Length`), in 16 KiB chunks.
pub(crate) fn chunked(data: Vec<u8>) -> BoxBody<Bytes, Infallible> {
    let chunks = data.chunks(16 * 1024).map(Bytes::copy_from_slice);
    Chunks(chunks.collect()).boxed()
}

struct Chunks(VecDeque<Bytes>);

impl hyper::body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|b| Ok(Frame::data(b))))
    }
}

/// Sends one request and returns as soon as the response head arrives.
pub(crate) async fn open(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: BoxBody<Bytes, Infallible>,
) -> Streaming {
    let (mut sender, conn) = connect(addr).await;
    let mut b = http::Request::builder().method(method).uri(path);
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        b = b.header("host", addr.to_string());
    }
    for (k, v) in headers {
        // `from_bytes` (unlike `&str`) lets tests send obs-text bytes.
        let v = http::HeaderValue::from_bytes(v.as_bytes()).expect("header value");
        b = b.header(k.as_str(), v);
    }
    let request = b.body(body).expect("request");
    let resp = within("response head", sender.send_request(request)).await;
    let (parts, body) = resp.expect("send request").into_parts();
    Streaming {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body: Some(body),
        parser: SseParser::default(),
        conn,
    }
}

/// Sends one request and reads the whole response.
pub(crate) async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: BoxBody<Bytes, Infallible>,
) -> Resp {
    let mut s = open(addr, method, path, headers, body).await;
    let body = s.body.take().expect("body");
    let body = within("response body", body.collect()).await;
    let headers = std::mem::take(&mut s.headers);
    Resp { status: s.status, headers, body: body.expect("read body").to_bytes() }
}

/// POSTs `body` to `/mcp` with exactly `headers` (plus `Host` if absent).
pub(crate) async fn post(addr: SocketAddr, headers: &[(String, String)], body: impl Into<Bytes>) -> Resp {
    send(addr, "POST", "/mcp", headers, full(body)).await
}

/// A response whose body is read incrementally as SSE.
pub(crate) struct Streaming {
    pub status: u16,
    pub headers: HeaderMap,
    body: Option<Incoming>,
    parser: SseParser,
    conn: JoinHandle<()>,
}

impl Drop for Streaming {
    fn drop(&mut self) {
        // Closing the connection is how an HTTP client cancels.
        self.conn.abort();
    }
}

impl Streaming {
    /// Checks events against the legacy (2025-11-25) schema instead.
    pub(crate) fn legacy(mut self) -> Self {
        self.parser.legacy = true;
        self
    }

    /// A response header, or "".
    pub(crate) fn header(&self, name: &str) -> &str {
        header(&self.headers, name)
    }

    /// The `Content-Type` header, or "".
    pub(crate) fn content_type(&self) -> &str {
        header(&self.headers, "content-type")
    }

    /// The next SSE event (wire-checked), or `None` when the stream ended (bounded by [`WAIT`]).
    pub(crate) async fn next(&mut self) -> Option<Value> {
        within("the next SSE event", self.next_unbounded()).await
    }

    async fn next_unbounded(&mut self) -> Option<Value> {
        loop {
            if let Some(e) = self.parser.next_event() {
                return Some(e);
            }
            let body = self.body.as_mut()?;
            let Some(frame) = body.frame().await else {
                self.body = None;
                let seen = String::from_utf8_lossy(&self.parser.buf);
                let drained = self.parser.is_drained();
                assert!(drained, "stream ended inside an event: {seen}");
                return None;
            };
            if let Some(d) = frame.expect("SSE body").data_ref() {
                self.parser.push(d);
            }
        }
    }
}

/// Splits an SSE byte stream into events and parses (and wire-checks) each event's `data`.
#[derive(Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    /// Check events against the legacy schema (see [`Streaming::legacy`]).
    legacy: bool,
}

impl SseParser {
    pub(crate) fn push(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Whether only whitespace is left (no partial event).
    pub(crate) fn is_drained(&self) -> bool {
        self.buf.iter().all(u8::is_ascii_whitespace)
    }

    /// The next complete event that has data (comments and data-less events are skipped).
    pub(crate) fn next_event(&mut self) -> Option<Value> {
        loop {
            let (end, sep) = (0..self.buf.len()).find_map(|i| {
                let rest = &self.buf[i..];
                let sep = [&b"\n\n"[..], b"\r\n\r\n"].into_iter().find(|s| rest.starts_with(s));
                sep.map(|s| (i, s.len()))
            })?;
            let raw: Vec<u8> = self.buf.drain(..end + sep).collect();
            let event = String::from_utf8(raw).expect("SSE is UTF-8");
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            match data[..] {
                // No data, or the empty data of a priming event (an id and a retry delay).
                [] => continue,
                [one] if one.trim().is_empty() => continue,
                [one] => {
                    let v =
                        serde_json::from_str(one).unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {event:?}"));
                    if self.legacy {
                        assert_legacy_wire(&v);
                    } else if v["method"] != "notifications/tasks" {
                        // (`notifications/tasks` belongs to the tasks extension, not the core schema.)
                        assert_wire(&v);
                    }
                    return Some(v);
                }
                _ => panic!("one JSON message per event, on one data line: {event:?}"),
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// Raw HTTP/1.1 over a socket (byte-exact header names, oversized bodies)
// ------------------------------------------------------------------------------------------

/// A response read off a raw socket.
#[derive(Debug)]
pub(crate) struct RawResp {
    pub status: u16,
    pub body: Vec<u8>,
}

impl RawResp {
    pub(crate) fn json(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body);
        let v = serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("bad JSON ({e}): {text}"));
        assert_wire(&v);
        v
    }
}

/// A request head with `Host` and `Connection: close` plus `headers` written verbatim.
pub(crate) fn raw_head(addr: SocketAddr, method: &str, headers: &[(&str, &str)]) -> String {
    let mut s = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        s.push_str(&format!("{k}: {v}\r\n"));
    }
    s + "\r\n"
}

/// A plain TCP connection to `addr`.
pub(crate) async fn tcp(addr: SocketAddr) -> TcpStream {
    within("connect", TcpStream::connect(addr)).await.expect("connect")
}

/// Writes `head` then `body` (from a separate task, ignoring write errors: the server may answer
/// and close before reading it all) and reads one response.
pub(crate) async fn raw(addr: SocketAddr, head: String, body: Vec<u8>) -> RawResp {
    let (mut rd, mut wr) = tcp(addr).await.into_split();
    let writer = tokio::spawn(async move {
        if wr.write_all(head.as_bytes()).await.is_ok() && !body.is_empty() {
            let _ = wr.write_all(&body).await;
        }
        // Keep the write half open until the test has read the response.
        tokio::time::sleep(WAIT).await;
    });
    let r = within("raw response", read_response(&mut rd)).await;
    writer.abort();
    r
}

/// Reads one response: head, then a `Content-Length` or chunked body (or up to EOF).
async fn read_response(rd: &mut tokio::net::tcp::OwnedReadHalf) -> RawResp {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut eof = false;
    let mut fill = async |buf: &mut Vec<u8>, eof: &mut bool| {
        let n = rd.read(&mut chunk).await.unwrap_or(0);
        *eof = n == 0;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        fill(&mut buf, &mut eof).await;
        assert!(!eof, "connection closed before the response head: {buf:?}");
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).expect("ASCII head");
    let mut rest = buf[head_end + 4..].to_vec();
    let status_line = head.lines().next().unwrap_or_default();
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok());
    let status = status.unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let lower = head.to_ascii_lowercase();
    let len =
        lower.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse::<usize>().ok());
    let is_chunked = lower.contains("transfer-encoding: chunked");
    loop {
        let body = match (len, is_chunked) {
            (Some(n), _) if rest.len() >= n => Some(rest[..n].to_vec()),
            (None, true) => decode_chunked(&rest),
            _ => None,
        };
        match body {
            Some(body) => return RawResp { status, body },
            None if eof => return RawResp { status, body: rest }, // close-delimited
            None => fill(&mut rest, &mut eof).await,
        }
    }
}

/// Decodes a complete chunked body, or `None` if the terminating chunk has not arrived.
fn decode_chunked(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n")?;
        let size_txt = std::str::from_utf8(&b[..eol]).ok()?;
        let size = usize::from_str_radix(size_txt.split(';').next()?.trim(), 16).ok()?;
        b = &b[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..)?;
    }
}
