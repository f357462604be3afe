//! Tracing of request dispatch, shaped for OpenTelemetry (the MCP semantic conventions).
//!
//! [`Server::process_with`](crate::Server) is the one place a request is traced: a server span
//! (`otel.kind = "server"`, named `{mcp.method.name} {target}` through `otel.name`, the
//! `tracing-opentelemetry` convention) around its dispatch, and at its end a
//! `histogram.mcp.server.operation.duration` event in seconds (the `MetricsLayer` convention).
//! A task's work runs in a root span that follows from (is linked to) the call that created it.
//!
//! Everything is built only when a subscriber wants the `mcp_server::telemetry` spans at
//! `INFO`: otherwise `info_span!` gives a disabled span, no field is formatted and no clock is
//! read. With the `otel` feature, `_meta.traceparent` (with `tracestate` and `baggage`, read by
//! the global text-map propagator) becomes the server span's remote parent.

use crate::context::RequestEnv;
use crate::round::Preset;
use mcp_protocol::telemetry::{request_id, Failure, Operation, Side, Target, TOOL_ERROR};
use mcp_protocol::{ProtocolError, Request};
use serde_json::Value;
use std::future::Future;
use tracing::field::Empty;
use tracing::{Instrument, Span};

/// A request being traced: its span, when it started, and the attributes its duration is
/// recorded with.
pub(crate) struct ServerCall {
    span: Span,
    op: Operation,
}

impl ServerCall {
    /// The span for `req`, or `None` when nobody records it (the untraced path). Boxed: the
    /// untraced request future carries a null pointer, not the attributes.
    pub(crate) fn start(req: &Request, env: &RequestEnv, preset: Option<&Preset>) -> Option<Box<Self>> {
        let span = mcp_protocol::operation_span!("mcp.server", "server");
        if span.is_disabled() {
            return None;
        }
        let meta = req.params.get("_meta").and_then(Value::as_object);
        let target = Target::of(&req.method, &req.params);
        span.record("otel.name", target.span_name(&req.method));
        span.record("mcp.method.name", req.method.as_str());
        for (key, value) in target.attributes() {
            span.record(key, value);
        }
        if let Some(id) = request_id(&req.id) {
            span.record("jsonrpc.request.id", id);
        }
        let version = match preset {
            Some(p) => Some(p.meta.protocol_version.to_string()),
            None => meta
                .and_then(|m| m.get(mcp_protocol::meta::PROTOCOL_VERSION))
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        if let Some(v) = &version {
            span.record("mcp.protocol.version", v.as_str());
        }
        // Streamable HTTP runs over TCP; the other transports here (stdio) over pipes.
        let transport = if env.http.is_some() { "tcp" } else { "pipe" };
        span.record("network.transport", transport);
        let session = env.http.as_ref().and_then(|h| h.headers.get("mcp-session-id")).and_then(|v| v.to_str().ok());
        if let (Some(id), Some(_)) = (session, preset) {
            span.record("mcp.session.id", id);
        }
        #[cfg(feature = "otel")]
        if let Some(meta) = meta {
            otel::continue_trace(&span, meta);
        }
        let op = Operation::start(&req.method, &target, version, transport);
        Some(Box::new(Self { span, op }))
    }

    /// Runs `fut` in the span, then records how it ended and how long it took.
    pub(crate) async fn observe(
        self: Box<Self>,
        fut: impl Future<Output = Result<crate::reply::Reply, ProtocolError>>,
    ) -> Result<crate::reply::Reply, ProtocolError> {
        let outcome = fut.instrument(self.span.clone()).await;
        // What `Operation::end` reads of a result: whether it is a tool error.
        let seen = match &outcome {
            Ok(r) if r.is_tool_error() => serde_json::json!({ "isError": true }),
            _ => Value::Null,
        };
        let ended = match &outcome {
            Ok(_) => Ok(&seen),
            Err(e) => Err(Failure { code: Some(e.code()), kind: "", description: e.to_string() }),
        };
        self.op.end(Side::Server, &self.span, ended);
        outcome
    }
}

/// The span a task's work runs in: a root (the work outlives the request), linked to the span
/// of the call that created it (the current span, when recorded).
pub(crate) fn task_span(tool: &str, task_id: &str) -> Span {
    let span = tracing::info_span!(
        parent: None,
        "mcp.task",
        otel.name = Empty,
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        mcp.task.id = task_id,
        error.type = Empty,
    );
    if !span.is_disabled() {
        span.record("otel.name", format!("execute_tool {tool}"));
        span.follows_from(Span::current().id());
    }
    span
}

/// Records how a task ended on its span (`error.type`: `tool_error`, `cancelled`, or the
/// JSON-RPC code of the failure).
pub(crate) fn task_end(span: &Span, end: &crate::tasks::Terminal) {
    use crate::tasks::Terminal;
    if span.is_disabled() {
        return;
    }
    let error = match end {
        Terminal::Completed(v) if mcp_protocol::telemetry::is_tool_error(v) => Some(TOOL_ERROR.to_owned()),
        Terminal::Completed(_) => None,
        Terminal::Cancelled => Some("cancelled".to_owned()),
        Terminal::Failed(e) => {
            if let Some(m) = e.get("message").and_then(Value::as_str) {
                span.record("otel.status_description", m);
            }
            Some(e.get("code").map_or_else(|| "failed".to_owned(), Value::to_string))
        }
    };
    if let Some(kind) = error {
        span.record("error.type", kind);
        span.record("otel.status_code", "ERROR");
    }
}

#[cfg(feature = "otel")]
mod otel {
    use mcp_protocol::telemetry::{BAGGAGE, TRACEPARENT};
    use serde_json::{Map, Value};
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// `_meta` read as a carrier of the W3C fields (string values only).
    struct MetaCarrier<'a>(&'a Map<String, Value>);

    impl opentelemetry::propagation::Extractor for MetaCarrier<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).and_then(Value::as_str)
        }

        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(String::as_str).collect()
        }
    }

    /// Makes the caller's context (from `_meta`) the remote parent of `span`.
    pub(super) fn continue_trace(span: &tracing::Span, meta: &Map<String, Value>) {
        if !meta.contains_key(TRACEPARENT) && !meta.contains_key(BAGGAGE) {
            return;
        }
        let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(&MetaCarrier(meta)));
        // Only fails when no OpenTelemetry layer records the span: nothing to parent then.
        let _ = span.set_parent(cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        let msg = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        match mcp_protocol::jsonrpc::parse_incoming(msg, 64) {
            Ok(mcp_protocol::jsonrpc::Incoming::Request(r)) => r,
            _ => unreachable!(),
        }
    }

    #[test]
    fn untraced_requests_build_nothing() {
        // No subscriber: no span, no attributes, no clock.
        assert!(ServerCall::start(&request(), &RequestEnv::default(), None).is_none());
        assert!(task_span("t", "1").is_disabled());
    }
}
