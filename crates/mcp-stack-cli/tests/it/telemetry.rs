//! OpenTelemetry end to end: the spans and histograms the server and client libraries emit
//! through `tracing`, recorded with an in-memory exporter (span tree, attributes, parentage
//! from `_meta.traceparent`, `isError`, the task's root span and its link, the injected
//! context), and `mcp serve --otlp-endpoint` exporting to a loopback OTLP/HTTP receiver.

use crate::support::raw_http;

use mcp::server::mcp_protocol::jsonrpc::{parse_incoming, Incoming};
use mcp::server::tasks::TaskConfig;
use mcp::server::{Args, Context, Server, TaskSupport, Tool};
use mcp_client::ClientBuilder;
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{json, Value};
use std::time::Duration;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// echo, a tool that fails (`isError`), one that shows the `traceparent` it was called with,
/// and one that runs as a task.
fn server() -> Server {
    Server::builder("otel-test", "1.0.0")
        .tool(Tool::new("echo").handler(|Args(a): Args<Text>| async move { a.text }))
        .tool(Tool::new("fail").handler(|| async { Err::<String, _>("it broke") }))
        .tool(Tool::new("traceparent").handler(|ctx: Context| async move {
            ctx.params()
                .get("_meta")
                .and_then(|m| m.get("traceparent"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        }))
        .tool(Tool::new("slow").task_support(TaskSupport::Required).handler(|| async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            "done"
        }))
        .tasks(TaskConfig::new().poll_interval(Duration::from_millis(10)))
        .build()
        .unwrap()
}

/// Spans recorded on this thread (each test runs on its own current-thread runtime).
struct Recorder {
    spans: InMemorySpanExporter,
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    metrics: InMemoryMetricExporter,
    _default: tracing::subscriber::DefaultGuard,
}

fn record() -> Recorder {
    opentelemetry::global::set_text_map_propagator(opentelemetry_sdk::propagation::TraceContextPropagator::new());
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build();
    let metrics = InMemoryMetricExporter::default();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .with_view(mcp_cli::telemetry::duration_view)
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("test")))
        .with(tracing_opentelemetry::MetricsLayer::new(meter.clone()));
    Recorder { spans, tracer, meter, metrics, _default: tracing::subscriber::set_default(subscriber) }
}

impl Recorder {
    /// The finished spans, once `ready` holds for them (waiting at most 5 s).
    async fn spans_when(&self, ready: impl Fn(&[SpanData]) -> bool) -> Vec<SpanData> {
        for _ in 0..500 {
            let _ = self.tracer.force_flush();
            let spans = self.spans.get_finished_spans().unwrap();
            if ready(&spans) {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("spans never arrived: {:#?}", names(&self.spans.get_finished_spans().unwrap()));
    }
}

fn names(spans: &[SpanData]) -> Vec<(String, SpanKind)> {
    spans.iter().map(|s| (s.name.to_string(), s.span_kind.clone())).collect()
}

fn has(name: &str, kind: SpanKind) -> impl Fn(&[SpanData]) -> bool + '_ {
    move |spans| spans.iter().any(|s| s.name == name && s.span_kind == kind)
}

fn find<'a>(spans: &'a [SpanData], name: &str, kind: SpanKind) -> &'a SpanData {
    spans
        .iter()
        .find(|s| s.name == name && s.span_kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} span {name:?} in {:#?}", names(spans)))
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
}

fn request(method: &str, params: Value) -> mcp::server::mcp_protocol::Request {
    let msg = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
    match parse_incoming(&serde_json::to_vec(&msg).unwrap(), 64) {
        Ok(Incoming::Request(r)) => r,
        _ => panic!("not a request"),
    }
}

fn modern_meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    meta.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    meta
}

#[tokio::test]
async fn a_call_is_a_client_span_over_a_server_span_in_one_trace() {
    let rec = record();
    let client = mcp::memory::connect(server(), ClientBuilder::new("otel-client", "1.0.0")).await.unwrap();
    let app = tracing::info_span!("app");
    let r = async { client.call_tool("echo", json!({ "text": "hi" })).await }.instrument(app.clone()).await.unwrap();
    assert_eq!(r.text(), "hi");
    drop(app);
    let spans = rec.spans_when(has("tools/call echo", SpanKind::Server)).await;
    let spans = rec.spans_when(|s| s.iter().any(|s| s.name == "app") && spans.len() <= s.len()).await;
    let app = spans.iter().find(|s| s.name == "app").unwrap();
    let client_span = find(&spans, "tools/call echo", SpanKind::Client);
    let server_span = find(&spans, "tools/call echo", SpanKind::Server);
    // app -> client -> server, one trace; the server's parent came through `_meta` (the
    // memory transport serves each request in a task of its own, outside the client's span).
    assert_eq!(client_span.parent_span_id, app.span_context.span_id());
    assert_eq!(server_span.parent_span_id, client_span.span_context.span_id());
    assert!(server_span.parent_span_is_remote, "the server span's parent is the remote caller");
    assert_eq!(server_span.span_context.trace_id(), app.span_context.trace_id());
    for (span, kind) in [(client_span, "client"), (server_span, "server")] {
        assert_eq!(attr(span, "mcp.method.name").as_deref(), Some("tools/call"), "{kind}");
        assert_eq!(attr(span, "gen_ai.tool.name").as_deref(), Some("echo"), "{kind}");
        assert_eq!(attr(span, "gen_ai.operation.name").as_deref(), Some("execute_tool"), "{kind}");
        assert_eq!(attr(span, "mcp.protocol.version").as_deref(), Some("2026-07-28"), "{kind}");
        assert_eq!(attr(span, "network.transport").as_deref(), Some("pipe"), "{kind}");
        assert!(attr(span, "jsonrpc.request.id").is_some(), "{kind}");
        assert_eq!(attr(span, "error.type"), None, "{kind}");
        assert_eq!(span.status, Status::Unset, "{kind}");
        assert_eq!(span.events.len(), 0, "{kind}: the duration is a measurement, not a span event");
    }
    assert_eq!(attr(client_span, "jsonrpc.request.id"), attr(server_span, "jsonrpc.request.id"));
    // Other methods are named by the method alone.
    client.list_tools().await.unwrap();
    rec.spans_when(has("tools/list", SpanKind::Server)).await;
}

/// Over Streamable HTTP (in this process): the context crosses a real HTTP request, both sides
/// say `tcp`, and a legacy session's spans carry its `mcp.session.id`.
#[tokio::test]
async fn over_http_with_a_legacy_session_too() {
    use mcp_client::transport::http::HttpTransport;
    let rec = record();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let srv = server();
    tokio::spawn(mcp::http::serve(srv.clone(), listener, mcp::http::EndpointConfig::default()));
    let modern = ClientBuilder::new("otel-client", "1.0.0");
    let client = modern.connect(HttpTransport::builder(&url).build().unwrap()).await.unwrap();
    client.call_tool("echo", json!({ "text": "http" })).await.unwrap();
    let spans = rec.spans_when(has("tools/call echo", SpanKind::Server)).await;
    let spans = rec.spans_when(|s| s.len() >= spans.len() && has("tools/call echo", SpanKind::Client)(s)).await;
    let (c, s) = (find(&spans, "tools/call echo", SpanKind::Client), find(&spans, "tools/call echo", SpanKind::Server));
    assert_eq!(s.parent_span_id, c.span_context.span_id());
    assert_eq!(s.span_context.trace_id(), c.span_context.trace_id());
    for span in [c, s] {
        assert_eq!(attr(span, "network.transport").as_deref(), Some("tcp"));
        assert_eq!(attr(span, "mcp.session.id"), None, "a modern call has no session");
    }
    let legacy = ClientBuilder::new("otel-legacy", "1.0.0").force_legacy("2025-11-25");
    let client = legacy.connect(HttpTransport::builder(&url).build().unwrap()).await.unwrap();
    client.call_tool("traceparent", json!({})).await.unwrap();
    let spans = rec.spans_when(has("tools/call traceparent", SpanKind::Server)).await;
    let s = find(&spans, "tools/call traceparent", SpanKind::Server);
    assert_eq!(attr(s, "mcp.protocol.version").as_deref(), Some("2025-11-25"));
    assert!(attr(s, "mcp.session.id").is_some_and(|id| !id.is_empty()), "{:?}", s.attributes);
    let spans = rec.spans_when(has("tools/call traceparent", SpanKind::Client)).await;
    let c = find(&spans, "tools/call traceparent", SpanKind::Client);
    assert_eq!(s.parent_span_id, c.span_context.span_id(), "legacy requests carry the context too");
    srv.shutdown();
}

#[tokio::test]
async fn the_client_injects_its_span_context_into_meta() {
    let rec = record();
    let client = mcp::memory::connect(server(), ClientBuilder::new("otel-client", "1.0.0")).await.unwrap();
    let seen = client.call_tool("traceparent", json!({})).await.unwrap().text();
    let spans = rec.spans_when(has("tools/call traceparent", SpanKind::Client)).await;
    let c = find(&spans, "tools/call traceparent", SpanKind::Client).span_context.clone();
    assert_eq!(seen, format!("00-{}-{}-01", c.trace_id(), c.span_id()));
}

#[tokio::test]
async fn nothing_is_injected_when_no_one_records() {
    let client = mcp::memory::connect(server(), ClientBuilder::new("otel-client", "1.0.0")).await.unwrap();
    assert_eq!(client.call_tool("traceparent", json!({})).await.unwrap().text(), "");
}

#[tokio::test]
async fn the_server_continues_the_trace_in_meta() {
    let rec = record();
    let meta = modern_meta(json!({ "traceparent": format!("00-{TRACE}-{PARENT}-01"), "tracestate": "k=v" }));
    let req = request("tools/call", json!({ "name": "echo", "arguments": { "text": "x" }, "_meta": meta }));
    server().handle(req, Default::default()).await.unwrap();
    let spans = rec.spans_when(has("tools/call echo", SpanKind::Server)).await;
    let s = find(&spans, "tools/call echo", SpanKind::Server);
    assert_eq!(s.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    assert_eq!(s.parent_span_id, SpanId::from_hex(PARENT).unwrap());
    assert!(s.parent_span_is_remote);
    assert_eq!(s.span_context.trace_state().header(), "k=v");
    assert_eq!(attr(s, "jsonrpc.request.id").as_deref(), Some("7"));
    // Without a traceparent the server span is a root of its own.
    let req = request("tools/list", json!({ "_meta": modern_meta(json!({})) }));
    server().handle(req, Default::default()).await.unwrap();
    let spans = rec.spans_when(has("tools/list", SpanKind::Server)).await;
    assert_eq!(find(&spans, "tools/list", SpanKind::Server).parent_span_id, SpanId::INVALID);
}

#[tokio::test]
async fn errors_mark_the_spans() {
    let rec = record();
    let client = mcp::memory::connect(server(), ClientBuilder::new("otel-client", "1.0.0")).await.unwrap();
    let r = client.call_tool("fail", json!({})).await.unwrap();
    assert!(r.is_error());
    let spans = rec.spans_when(has("tools/call fail", SpanKind::Client)).await;
    for kind in [SpanKind::Client, SpanKind::Server] {
        let s = find(&spans, "tools/call fail", kind.clone());
        assert_eq!(attr(s, "error.type").as_deref(), Some("tool_error"), "{kind:?}");
        assert!(matches!(s.status, Status::Error { .. }), "{kind:?}: {:?}", s.status);
    }
    // A JSON-RPC error: error.type is its code.
    assert!(client.call_tool("nope", json!({})).await.is_err());
    let spans = rec.spans_when(has("tools/call nope", SpanKind::Client)).await;
    for kind in [SpanKind::Client, SpanKind::Server] {
        let s = find(&spans, "tools/call nope", kind.clone());
        assert_eq!(attr(s, "error.type").as_deref(), Some("-32602"), "{kind:?}");
        assert_eq!(attr(s, "rpc.response.status_code").as_deref(), Some("-32602"), "{kind:?}");
        assert!(matches!(s.status, Status::Error { .. }), "{kind:?}");
    }
}

#[tokio::test]
async fn a_task_runs_in_a_root_span_linked_to_its_call() {
    let rec = record();
    let client = mcp::memory::connect(server(), ClientBuilder::new("otel-client", "1.0.0").tasks(true)).await.unwrap();
    assert_eq!(client.call_tool("slow", json!({})).await.unwrap().text(), "done");
    let spans = rec.spans_when(has("execute_tool slow", SpanKind::Internal)).await;
    let call = find(&spans, "tools/call slow", SpanKind::Server);
    let task = find(&spans, "execute_tool slow", SpanKind::Internal);
    assert_eq!(task.parent_span_id, SpanId::INVALID, "the task's span is a root");
    assert_ne!(task.span_context.trace_id(), call.span_context.trace_id());
    let links: Vec<_> = task.links.iter().map(|l| l.span_context.clone()).collect();
    assert_eq!(links, std::slice::from_ref(&call.span_context), "linked to the call that created it");
    assert_eq!(attr(task, "gen_ai.tool.name").as_deref(), Some("slow"));
    assert!(attr(task, "mcp.task.id").is_some_and(|id| !id.is_empty()));
    assert_eq!(task.status, Status::Unset);
    // The client followed the task with tasks/get calls, each a span of its own.
    rec.spans_when(has("tasks/get", SpanKind::Client)).await;
}

#[tokio::test]
async fn durations_are_histograms_in_seconds() {
    let rec = record();
    let client = mcp::memory::connect(server(), ClientBuilder::new("otel-client", "1.0.0")).await.unwrap();
    client.call_tool("echo", json!({ "text": "hi" })).await.unwrap();
    rec.spans_when(has("tools/call echo", SpanKind::Client)).await;
    rec.meter.force_flush().unwrap();
    let exported = rec.metrics.get_finished_metrics().unwrap();
    for name in ["mcp.server.operation.duration", "mcp.client.operation.duration"] {
        let metric = exported
            .iter()
            .flat_map(|rm| rm.scope_metrics())
            .flat_map(|sm| sm.metrics())
            .find(|m| m.name() == name)
            .unwrap_or_else(|| panic!("no {name}"));
        assert_eq!(metric.unit(), "s", "{name}");
        let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
            panic!("{name} is not an f64 histogram");
        };
        let point = h
            .data_points()
            .find(|p| p.attributes().any(|kv| kv.key.as_str() == "gen_ai.tool.name" && kv.value.as_str() == "echo"))
            .unwrap_or_else(|| panic!("{name}: no tools/call echo point"));
        assert_eq!(point.count(), 1, "{name}");
        assert!(point.attributes().any(|kv| kv.key.as_str() == "mcp.method.name" && kv.value.as_str() == "tools/call"));
        assert_eq!(point.bounds().collect::<Vec<_>>()[..3], [0.01, 0.02, 0.05], "{name}");
    }
}

/// `mcp serve --otlp-endpoint URL` exports the span of a call (in the caller's trace) to an
/// OTLP/HTTP receiver on loopback, at the latest when it exits.
#[test]
fn mcp_serve_exports_over_otlp_http() {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let Some(req) = raw_http::read_request(&stream) else { continue };
            raw_http::respond(&mut stream, 200, &[("content-type", "application/x-protobuf")], b"");
            let content_type = req.header("content-type").map(str::to_owned);
            let _ = tx.send((req.method, req.path, content_type, req.body));
        }
    });
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "everything", "--stdio", "--otlp-endpoint", &endpoint])
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let meta = modern_meta(json!({ "traceparent": format!("00-{TRACE}-{PARENT}-01") }));
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "echo", "arguments": { "text": "otlp" }, "_meta": meta } });
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{call}").unwrap();
    let (line_tx, line_rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = line_tx.send(line);
    });
    let line = line_rx.recv_timeout(Duration::from_secs(30)).expect("an answer within 30 s");
    assert!(line.contains("otlp"), "{line}");
    drop(stdin); // end of input: the server exits and flushes its exporters
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut traces = None;
    let mut metrics = None;
    while traces.is_none() || metrics.is_none() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let Ok((method, path, content_type, body)) = rx.recv_timeout(left) else {
            let _ = child.kill();
            panic!("no export within 30 s (traces: {}, metrics: {})", traces.is_some(), metrics.is_some());
        };
        assert_eq!((method.as_str(), content_type.as_deref()), ("POST", Some("application/x-protobuf")));
        match path.as_str() {
            "/v1/traces" => traces = Some(body),
            "/v1/metrics" => metrics = Some(body),
            other => panic!("unexpected export path {other}"),
        }
    }
    let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    let traces = traces.unwrap();
    assert!(contains(&traces, b"tools/call echo"), "the span name is exported");
    assert!(contains(&traces, &TraceId::from_hex(TRACE).unwrap().to_bytes()), "in the caller's trace");
    assert!(contains(&traces, &SpanId::from_hex(PARENT).unwrap().to_bytes()), "under the caller's span");
    assert!(contains(&metrics.unwrap(), b"mcp.server.operation.duration"));
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// `mcp proxy --config`: each request the gateway routes is a duration in seconds, per upstream.
#[tokio::test]
async fn the_gateway_records_each_upstreams_durations() {
    use mcp_proxy::{Gateway, GatewayConfig, ProxyConfig, ServerSpec, Upstream};
    let rec = record();
    let everything = Upstream::new(ServerSpec::Stdio {
        command: env!("CARGO_BIN_EXE_mcp").into(),
        args: vec!["serve".into(), "everything".into(), "--stdio".into()],
        env: vec![],
        cwd: None,
    });
    let config = GatewayConfig::new(vec![("ev".into(), ProxyConfig::new(everything))]);
    let gateway = Gateway::connect_with(config, |b| b).await.unwrap();
    let client = mcp::memory::connect(gateway.server().clone(), ClientBuilder::new("c", "1")).await.unwrap();
    assert_eq!(client.call_tool("ev_echo", json!({ "text": "hi" })).await.unwrap().text(), "hi");
    assert_eq!(gateway.stats()[0].calls, 1);
    rec.meter.force_flush().unwrap();
    let exported = rec.metrics.get_finished_metrics().unwrap();
    let metric = exported
        .iter()
        .flat_map(|rm| rm.scope_metrics())
        .flat_map(|sm| sm.metrics())
        .find(|m| m.name() == "mcp.gateway.upstream.duration")
        .expect("the gateway's histogram");
    assert_eq!(metric.unit(), "s");
    let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else { panic!("not an f64 histogram") };
    let point = h
        .data_points()
        .find(|p| p.attributes().any(|kv| kv.key.as_str() == "mcp.gateway.upstream" && kv.value.as_str() == "ev"))
        .expect("a point for upstream ev");
    assert_eq!(point.count(), 1);
    assert!(point.attributes().any(|kv| kv.key.as_str() == "mcp.method.name" && kv.value.as_str() == "tools/call"));
}
