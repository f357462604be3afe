//! Tracing of requests, shaped for OpenTelemetry (the MCP semantic conventions).
//!
//! [`Client::request`] is the one place a request is traced: a client span
//! (`otel.kind = "client"`, named `{mcp.method.name} {target}` through `otel.name`) around the
//! whole call, MRTR rounds included, and at its end a
//! `histogram.mcp.client.operation.duration` event in seconds. With the `otel` feature each
//! round's `_meta` carries the span's context (`traceparent`, `tracestate`, `baggage`, written
//! by the global text-map propagator), so the server's span becomes its child.
//!
//! Nothing is built unless a subscriber wants the `mcp_client::telemetry` spans at `INFO`.

use crate::client::Client;
use crate::error::ClientError;
use crate::transport::TransportKind;
use mcp_protocol::telemetry::{Failure, Operation, Side, Target};
use serde_json::{Map, Value};
use std::future::Future;
use tracing::{Instrument, Span};

/// A request being traced: its span, when it started, and its duration's attributes.
pub(crate) struct ClientCall {
    span: Span,
    op: Operation,
}

impl ClientCall {
    /// The span for a call of `method` with `params`, or `None` when nobody records it.
    pub(crate) fn start(client: &Client, method: &str, params: &Map<String, Value>) -> Option<Box<Self>> {
        let span = mcp_protocol::operation_span!("mcp.client", "client");
        if span.is_disabled() {
            return None;
        }
        let target = Target::of(method, params);
        span.record("otel.name", target.span_name(method));
        span.record("mcp.method.name", method);
        for (key, value) in target.attributes() {
            span.record(key, value);
        }
        let version = client.negotiated().map(|(_, v)| v);
        if let Some(v) = &version {
            span.record("mcp.protocol.version", v.as_str());
        }
        let transport = match client.inner.transport.kind() {
            TransportKind::Http => "tcp",
            TransportKind::Stdio => "pipe",
        };
        span.record("network.transport", transport);
        let op = Operation::start(method, &target, version, transport);
        Some(Box::new(Self { span, op }))
    }

    /// Runs `fut` in the span, then records how it ended and how long it took.
    pub(crate) async fn observe(
        self: Box<Self>,
        fut: impl Future<Output = Result<Value, ClientError>>,
    ) -> Result<Value, ClientError> {
        let outcome = fut.instrument(self.span.clone()).await;
        let ended = match &outcome {
            Ok(v) => Ok(v),
            Err(e) => Err(Failure { code: e.code(), kind: error_kind(e), description: e.to_string() }),
        };
        self.op.end(Side::Client, &self.span, ended);
        outcome
    }
}

/// A low-cardinality `error.type` for a failure that is not a JSON-RPC error.
fn error_kind(e: &ClientError) -> &'static str {
    match e {
        ClientError::Timeout(_) => "timeout",
        ClientError::Transport(_) => "transport",
        ClientError::AuthRequired { .. } => "auth_required",
        ClientError::InvalidResponse { .. } => "invalid_response",
        ClientError::TooManyRounds(_) => "too_many_rounds",
        ClientError::TaskCancelled { .. } => "cancelled",
        _ => "client_error",
    }
}

/// Marks one round of a traced call: its JSON-RPC id on the span and, with the `otel`
/// feature, the span's context in the request's `_meta`. Called only for traced calls, inside
/// their span.
pub(crate) fn round(id: i64, meta: &mut Map<String, Value>) {
    let span = Span::current();
    span.record("jsonrpc.request.id", tracing::field::display(id));
    #[cfg(feature = "otel")]
    otel::inject(&span, meta);
    #[cfg(not(feature = "otel"))]
    let _ = meta;
}

#[cfg(feature = "otel")]
mod otel {
    use serde_json::{Map, Value};
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// `_meta` written as a carrier of the W3C fields.
    struct MetaCarrier<'a>(&'a mut Map<String, Value>);

    impl opentelemetry::propagation::Injector for MetaCarrier<'_> {
        fn set(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), Value::String(value));
        }
    }

    /// Writes `span`'s context into `meta` (the request's `_meta` fields).
    pub(super) fn inject(span: &tracing::Span, meta: &mut Map<String, Value>) {
        let cx = span.context();
        opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut MetaCarrier(meta)));
    }
}
