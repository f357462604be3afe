//! Names and values shared by the client's and the server's OpenTelemetry instrumentation,
//! following the OpenTelemetry semantic conventions for MCP (spans `{mcp.method.name}
//! {target}`, attributes `mcp.*`, `gen_ai.*`, `jsonrpc.request.id`, `error.type`).
//!
//! The spans themselves are made by `mcp-server` and `mcp-client`; how an operation ends
//! (status, `error.type`, the duration histogram) is recorded here, the same for both.

use serde_json::{Map, Value};
use std::time::Instant;

/// `_meta` key of the W3C Trace Context parent (reserved by `basic/index.mdx`).
pub const TRACEPARENT: &str = "traceparent";
/// `_meta` key of the W3C Trace Context vendor state.
pub const TRACESTATE: &str = "tracestate";
/// `_meta` key of W3C Baggage.
pub const BAGGAGE: &str = "baggage";
/// `error.type` of a `tools/call` whose result has `isError: true`.
pub const TOOL_ERROR: &str = "tool_error";

/// What a request is about: the low-cardinality target of its span name and the attributes
/// that name it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Target<'a> {
    /// `gen_ai.tool.name` (`tools/call`).
    pub tool: Option<&'a str>,
    /// `gen_ai.prompt.name` (`prompts/get`).
    pub prompt: Option<&'a str>,
    /// `mcp.resource.uri` (`resources/read`, `resources/subscribe`, `resources/unsubscribe`).
    pub resource_uri: Option<&'a str>,
}

impl<'a> Target<'a> {
    /// The target of request `method` with `params`.
    pub fn of(method: &str, params: &'a Map<String, Value>) -> Self {
        let field = |k: &str| params.get(k).and_then(Value::as_str);
        match method {
            "tools/call" => Self { tool: field("name"), ..Self::default() },
            "prompts/get" => Self { prompt: field("name"), ..Self::default() },
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                Self { resource_uri: field("uri"), ..Self::default() }
            }
            _ => Self::default(),
        }
    }

    /// The span name: `{method} {tool or prompt}`, or the method alone (a resource URI is too
    /// many names to be one).
    pub fn span_name(&self, method: &str) -> String {
        match self.tool.or(self.prompt) {
            Some(name) => format!("{method} {name}"),
            None => method.to_owned(),
        }
    }

    /// The attributes naming the target, as `(key, value)` pairs.
    pub fn attributes(&self) -> impl Iterator<Item = (&'static str, &'a str)> {
        let tool = self.tool.map(|t| ("gen_ai.tool.name", t));
        let op = self.tool.map(|_| ("gen_ai.operation.name", "execute_tool"));
        let prompt = self.prompt.map(|p| ("gen_ai.prompt.name", p));
        let uri = self.resource_uri.map(|u| ("mcp.resource.uri", u));
        tool.into_iter().chain(op).chain(prompt).chain(uri)
    }
}

/// `jsonrpc.request.id`: a string id as it is, a number in decimal; `None` for `null`.
pub fn request_id(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Whether a result is a tool execution error (`isError: true`).
pub fn is_tool_error(result: &Value) -> bool {
    result.get("isError").and_then(Value::as_bool) == Some(true)
}

/// Which end of a call an [`Operation`] is: names its duration histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `mcp.client.operation.duration`.
    Client,
    /// `mcp.server.operation.duration`.
    Server,
}

/// How a traced operation failed.
#[derive(Debug, Clone)]
pub struct Failure<'a> {
    /// The JSON-RPC error code, if the failure is one (`error.type` and
    /// `rpc.response.status_code`).
    pub code: Option<i64>,
    /// `error.type` of a failure without a code (`timeout`, `transport`, ...).
    pub kind: &'a str,
    /// `otel.status_description`.
    pub description: String,
}

/// A traced operation: the attributes its duration is recorded with, and when it started.
#[derive(Debug)]
pub struct Operation {
    method: String,
    tool: Option<String>,
    prompt: Option<String>,
    version: Option<String>,
    transport: &'static str,
    start: Instant,
}

impl Operation {
    /// An operation of `method` on `target` that starts now.
    pub fn start(method: &str, target: &Target<'_>, version: Option<String>, transport: &'static str) -> Self {
        Self {
            method: method.to_owned(),
            tool: target.tool.map(str::to_owned),
            prompt: target.prompt.map(str::to_owned),
            version,
            transport,
            start: Instant::now(),
        }
    }

    /// Records on `span` how the operation ended (a `tools/call` result with `isError: true`
    /// is an error of type [`TOOL_ERROR`]), then emits its duration in seconds as a
    /// `histogram.mcp.{side}.operation.duration` event outside every span: a measurement, not
    /// an event of this (or the caller's) span.
    pub fn end(&self, side: Side, span: &tracing::Span, outcome: Result<&Value, Failure<'_>>) {
        let error = match outcome {
            Ok(v) if self.tool.is_some() && is_tool_error(v) => {
                span.record("otel.status_description", "the tool returned isError: true");
                Some(TOOL_ERROR.to_owned())
            }
            Ok(_) => None,
            Err(f) => {
                span.record("otel.status_description", f.description);
                Some(match f.code {
                    Some(code) => {
                        let code = code.to_string();
                        span.record("rpc.response.status_code", code.as_str());
                        code
                    }
                    None => f.kind.to_owned(),
                })
            }
        };
        if let Some(kind) = &error {
            span.record("error.type", kind.as_str());
            span.record("otel.status_code", "ERROR");
        }
        let seconds = self.start.elapsed().as_secs_f64();
        let (method, tool, prompt) = (self.method.as_str(), self.tool.as_deref(), self.prompt.as_deref());
        let (version, transport, error) = (self.version.as_deref(), self.transport, error.as_deref());
        // One event per side: an event's target and field names are fixed where it is written.
        macro_rules! duration {
            ($target:literal, $($histogram:ident).+) => {
                tracing::event!(
                    target: $target,
                    parent: None,
                    tracing::Level::INFO,
                    $($histogram).+ = seconds,
                    mcp.method.name = method,
                    gen_ai.tool.name = tool,
                    gen_ai.prompt.name = prompt,
                    mcp.protocol.version = version,
                    network.transport = transport,
                    error.type = error,
                )
            };
        }
        match side {
            Side::Client => duration!("mcp_client::telemetry", histogram.mcp.client.operation.duration),
            Side::Server => duration!("mcp_server::telemetry", histogram.mcp.server.operation.duration),
        }
    }
}

/// The `tracing` crate, for [`operation_span!`](crate::operation_span); not an API.
#[doc(hidden)]
pub use tracing as __tracing;

/// Opens the span of one MCP operation, `$name` (`"mcp.client"`, `"mcp.server"`) of
/// `otel.kind` `$kind`, at `INFO`, with every attribute of the conventions declared empty, to
/// be recorded as it becomes known (`otel.name`, `mcp.method.name`, `mcp.protocol.version`,
/// `mcp.session.id`, `jsonrpc.request.id`, `gen_ai.*`, `mcp.resource.uri`,
/// `network.transport`, `error.type`, `rpc.response.status_code`, `otel.status_*`).
///
/// A macro, not a function: the span's target is the module that opens it
/// (`mcp_client::telemetry`, `mcp_server::telemetry`), which is what subscribers filter on.
#[macro_export]
macro_rules! operation_span {
    ($name:literal, $kind:literal) => {{
        use $crate::telemetry::__tracing::field::Empty;
        $crate::telemetry::__tracing::info_span!(
            $name,
            // One line per family of the conventions.
            otel.name = Empty, otel.kind = $kind, otel.status_code = Empty, otel.status_description = Empty,
            mcp.method.name = Empty, mcp.protocol.version = Empty, mcp.session.id = Empty, mcp.resource.uri = Empty,
            jsonrpc.request.id = Empty, rpc.response.status_code = Empty,
            gen_ai.operation.name = Empty, gen_ai.tool.name = Empty, gen_ai.prompt.name = Empty,
            network.transport = Empty, error.type = Empty,
        )
    }};
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn names_follow_the_conventions() {
        let p = params(json!({ "name": "echo" }));
        let t = Target::of("tools/call", &p);
        assert_eq!(t.span_name("tools/call"), "tools/call echo");
        let attrs: Vec<_> = t.attributes().collect();
        assert_eq!(attrs, [("gen_ai.tool.name", "echo"), ("gen_ai.operation.name", "execute_tool")]);
        let p = params(json!({ "name": "greet" }));
        assert_eq!(Target::of("prompts/get", &p).span_name("prompts/get"), "prompts/get greet");
        let p = params(json!({ "uri": "file:///a" }));
        let t = Target::of("resources/read", &p);
        assert_eq!(t.span_name("resources/read"), "resources/read");
        assert_eq!(t.attributes().collect::<Vec<_>>(), [("mcp.resource.uri", "file:///a")]);
        assert_eq!(Target::of("tools/list", &Map::new()).span_name("tools/list"), "tools/list");
    }

    #[test]
    fn request_ids_and_tool_errors() {
        assert_eq!(request_id(&json!(7)).as_deref(), Some("7"));
        assert_eq!(request_id(&json!("r-1")).as_deref(), Some("r-1"));
        assert_eq!(request_id(&Value::Null), None);
        assert!(is_tool_error(&json!({ "isError": true })));
        assert!(!is_tool_error(&json!({ "isError": false })));
    }
}
