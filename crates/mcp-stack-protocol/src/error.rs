//! Protocol errors and the one table that maps them to JSON-RPC codes and HTTP statuses.

use serde_json::{json, Value};

/// JSON-RPC and MCP error codes used by revision 2026-07-28.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (also: resource not found).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// HTTP headers do not match the body, or are missing/malformed.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a client capability the client did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The server does not support the requested protocol version.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// A rate limit of the server refused the request (`data.retryAfterMs` says when to retry).
    /// An implementation-defined code of this SDK (the protocol defines none).
    pub const RATE_LIMITED: i64 = -32029;
    /// Legacy (2025-11-25 and earlier) resource-not-found code; accepted from old servers, never sent.
    pub const LEGACY_RESOURCE_NOT_FOUND: i64 = -32002;
}

/// An error the protocol layer reports to a peer as a JSON-RPC error object.
///
/// [`ProtocolError::code`] and [`ProtocolError::http_status`] are the only place where
/// errors are mapped to wire codes and HTTP statuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The message is not well-formed JSON (syntax, duplicate keys, too deep).
    #[error("Parse error: {0}")]
    Parse(String),
    /// The JSON is not a valid JSON-RPC request (wrong `jsonrpc`, `id: null`, batch, response...).
    #[error("Invalid request: {0}")]
    InvalidRequest(String),
    /// The method is unknown to this server (or not served here: `detail` says why).
    #[error("Method not found: {}", detail.as_deref().unwrap_or(method))]
    MethodNotFound {
        /// The method asked for.
        method: String,
        /// Why it is not served, when there is more to say than its name.
        detail: Option<String>,
    },
    /// The parameters are invalid (missing `_meta` fields, unknown tool, unknown resource...).
    #[error("Invalid params: {message}")]
    InvalidParams {
        /// Human-readable reason.
        message: String,
        /// Optional structured detail, sent as `error.data`.
        data: Option<Value>,
    },
    /// The server failed while handling the request (including a handler panic).
    #[error("Internal error: {0}")]
    Internal(String),
    /// HTTP request metadata headers are missing, malformed or disagree with the body.
    #[error("Header mismatch: {message}")]
    HeaderMismatch {
        /// The header, as the spec names it (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
        /// `Mcp-Param-Region`...).
        header: String,
        /// What is wrong with it.
        message: String,
    },
    /// The request needs client capabilities that were not declared.
    #[error("Missing required client capability")]
    MissingRequiredClientCapability {
        /// The capabilities that are needed, shaped like `ClientCapabilities`.
        required: Value,
    },
    /// The requested protocol version is not supported.
    #[error("Unsupported protocol version")]
    UnsupportedProtocolVersion {
        /// The version the client asked for (absent if it sent none).
        requested: Option<String>,
        /// The versions this server supports.
        supported: Vec<String>,
    },
    /// The request body is larger than the configured limit (HTTP 413).
    #[error("Request body too large (limit {limit} bytes)")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The request is forbidden before any processing (bad `Origin`/`Host`), HTTP 403.
    #[error("Forbidden: {message}")]
    Forbidden {
        /// The header refused: `Origin` or `Host`.
        header: &'static str,
        /// Why.
        message: String,
    },
    /// The legacy session named by `Mcp-Session-Id` does not exist (or ended), HTTP 404.
    #[error("Invalid request: unknown or ended session")]
    SessionNotFound,
    /// The request body did not arrive in time (total body deadline or a stall between
    /// chunks), HTTP 408.
    #[error("Invalid request: {message}")]
    RequestTimeout {
        /// The limit that passed.
        limit: std::time::Duration,
        /// Which one, in words.
        message: String,
    },
    /// The server cannot take the request now (a table is full); try again later. HTTP 503.
    #[error("Internal error: {message}")]
    Unavailable {
        /// What is full or down: `sessions`, `request_bodies`, `subscriptions`,
        /// `session_store`, `waiting_calls`, `upstream`.
        resource: &'static str,
        /// The message for the client.
        message: String,
    },
    /// A rate limit refused the request: `-32029` with `data.retryAfterMs`; HTTP 429 with
    /// `Retry-After`.
    #[error("Rate limit exceeded: {limit}; retry in {:.1}s", retry_after.as_secs_f64())]
    RateLimited {
        /// How long until a request would be allowed.
        retry_after: std::time::Duration,
        /// The limit, in words (`5/10s (tool search per caller)`).
        limit: String,
    },
    /// The request ran past its time limit.
    #[error("Internal error: request timed out after {} ms", limit.as_millis())]
    Timeout {
        /// The limit that passed.
        limit: std::time::Duration,
    },
    /// The request ended before its answer: [`Cancellation`] says why.
    #[error("Internal error: {reason}")]
    Cancelled {
        /// Who or what ended it.
        reason: Cancellation,
    },
    /// A handler failed or panicked. The cause is in the server's log under `reference`;
    /// `message` is what the peer may read (the handler's own text only where the server
    /// exposes internal errors).
    #[error("Internal error: {message} (ref {reference})")]
    HandlerFailed {
        /// What the peer reads.
        message: String,
        /// The correlation id the server logged the cause under.
        reference: String,
    },
    /// A handler's result does not fit the method's result shape (not a JSON object, not
    /// valid under the tool's `outputSchema`, not a completion, ...).
    #[error("Internal error: {message}")]
    InvalidResult {
        /// What is wrong with it.
        message: String,
    },
    /// The server is set up wrongly for this request (a tool's schema does not compile, a
    /// handler's state was never given): a defect of the server, not of the request.
    #[error("Internal error: {message}")]
    Misconfigured {
        /// What is wrong.
        message: String,
    },
    /// A server-to-client exchange of a request failed (legacy sessions, where the server asks
    /// the client in the middle of a call).
    #[error("Internal error: {0}")]
    Input(InputFailure),
    /// A backing store (tasks, sessions, rate limits) failed. The cause is logged under
    /// `reference`; the peer reads only `operation` and the reference.
    #[error("Internal error: {operation} (ref {reference})")]
    Store {
        /// What the server was doing, in words (`task store failure`, `cannot create the task`).
        operation: &'static str,
        /// The correlation id the server logged the cause under.
        reference: String,
        /// The store's error.
        #[source]
        source: ErrorSource,
    },
    /// An application-defined error with its own code.
    #[error("{message}")]
    Custom {
        /// JSON-RPC error code.
        code: i64,
        /// Message.
        message: String,
        /// Optional data.
        data: Option<Value>,
    },
}

/// Why a request ended before its answer ([`ProtocolError::Cancelled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cancellation {
    /// The client cancelled it (`notifications/cancelled`, or it closed the stream it waited on).
    ByClient,
    /// The server shut down before it finished.
    Shutdown,
    /// Another instance of a scaled-out server ran it and stopped (its lease ran out).
    InstanceStopped,
    /// The peer the request depended on went away (the client of a legacy session, an upstream).
    PeerGone,
}

impl std::fmt::Display for Cancellation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::ByClient => "request cancelled by the client",
            Self::Shutdown => "the server shut down before the request finished",
            Self::InstanceStopped => "the server instance running this task stopped before it finished",
            Self::PeerGone => "the peer is gone",
        })
    }
}

/// How a server-to-client exchange failed ([`ProtocolError::Input`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputFailure {
    /// The handler asked for client input more rounds than allowed.
    #[error("the handler asked for client input more than {max} times")]
    TooManyRounds {
        /// The bound.
        max: usize,
    },
    /// The handler answered `input_required` with no input request in it.
    #[error("input_required without input requests")]
    NoRequests,
    /// An input request has no `method`.
    #[error("input request {key} has no method")]
    NoMethod {
        /// The input request's key.
        key: String,
    },
    /// The client did not answer in time.
    #[error("the client did not answer within {} s", limit.as_secs())]
    NoAnswer {
        /// The limit that passed.
        limit: std::time::Duration,
    },
    /// The client answered the request with a JSON-RPC error.
    #[error("the client refused the request: {message}")]
    Refused {
        /// The `message` of the client's error.
        message: String,
    },
    /// On the client's side: its input handler (elicitation, sampling, roots) failed or the
    /// user declined; `message` is the handler's text.
    #[error("{message}")]
    ClientHandler {
        /// What the handler said.
        message: String,
    },
    /// A proxy relayed its upstream's question to the client and got no usable answer (no
    /// answer, too many rounds, the call ended).
    #[error("upstream call: {message}")]
    Relayed {
        /// What went wrong, in words.
        message: String,
    },
}

/// A shared, cloneable error kept as the `source` of a [`ProtocolError`]. Two are equal when
/// they are the same error (one `Arc`), so `ProtocolError` stays `Clone + PartialEq`.
#[derive(Clone)]
pub struct ErrorSource(std::sync::Arc<dyn std::error::Error + Send + Sync>);

impl ErrorSource {
    /// Wraps an error.
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(e))
    }

    /// Wraps an already boxed error.
    pub fn boxed(e: Box<dyn std::error::Error + Send + Sync>) -> Self {
        Self(std::sync::Arc::from(e))
    }
}

impl PartialEq for ErrorSource {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for ErrorSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for ErrorSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for ErrorSource {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl ProtocolError {
    /// Shorthand for [`ProtocolError::InvalidParams`] without data.
    #[cold]
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::InvalidParams { message: message.into(), data: None }
    }

    /// [`ProtocolError::MethodNotFound`] for `method`.
    #[cold]
    pub fn method_not_found(method: impl Into<String>) -> Self {
        Self::MethodNotFound { method: method.into(), detail: None }
    }

    /// [`ProtocolError::HeaderMismatch`] about `header`.
    #[cold]
    pub fn header_mismatch(header: impl Into<String>, message: impl Into<String>) -> Self {
        Self::HeaderMismatch { header: header.into(), message: message.into() }
    }

    /// [`ProtocolError::Unavailable`]: `resource` is full or down.
    #[cold]
    pub fn unavailable(resource: &'static str, message: impl Into<String>) -> Self {
        Self::Unavailable { resource, message: message.into() }
    }

    /// [`ProtocolError::RateLimited`]: retry after `retry_after`.
    #[cold]
    pub fn rate_limited(retry_after: std::time::Duration, limit: impl Into<String>) -> Self {
        Self::RateLimited { retry_after, limit: limit.into() }
    }

    /// The resource-not-found error of 2026-07-28 (`-32602` with the URI in `data`).
    #[cold]
    pub fn resource_not_found(uri: &str) -> Self {
        Self::InvalidParams { message: format!("Resource not found: {uri}"), data: Some(json!({ "uri": uri })) }
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            Self::Parse(_) => code::PARSE_ERROR,
            Self::InvalidRequest(_) => code::INVALID_REQUEST,
            Self::MethodNotFound { .. } => code::METHOD_NOT_FOUND,
            Self::InvalidParams { .. } => code::INVALID_PARAMS,
            Self::Internal(_)
            | Self::Timeout { .. }
            | Self::Cancelled { .. }
            | Self::HandlerFailed { .. }
            | Self::InvalidResult { .. }
            | Self::Misconfigured { .. }
            | Self::Input(_)
            | Self::Store { .. } => code::INTERNAL_ERROR,
            Self::HeaderMismatch { .. } => code::HEADER_MISMATCH,
            Self::MissingRequiredClientCapability { .. } => code::MISSING_REQUIRED_CLIENT_CAPABILITY,
            Self::UnsupportedProtocolVersion { .. } => code::UNSUPPORTED_PROTOCOL_VERSION,
            Self::PayloadTooLarge { .. }
            | Self::Forbidden { .. }
            | Self::SessionNotFound
            | Self::RequestTimeout { .. } => code::INVALID_REQUEST,
            Self::Unavailable { .. } => code::INTERNAL_ERROR,
            Self::RateLimited { .. } => code::RATE_LIMITED,
            Self::Custom { code, .. } => *code,
        }
    }

    /// The HTTP status a Streamable HTTP server answers with for this error.
    pub fn http_status(&self) -> http::StatusCode {
        use http::StatusCode as S;
        match self {
            Self::MethodNotFound { .. } | Self::SessionNotFound => S::NOT_FOUND,
            Self::Unavailable { .. } => S::SERVICE_UNAVAILABLE,
            Self::PayloadTooLarge { .. } => S::PAYLOAD_TOO_LARGE,
            Self::RequestTimeout { .. } => S::REQUEST_TIMEOUT,
            Self::Forbidden { .. } => S::FORBIDDEN,
            Self::RateLimited { .. } => S::TOO_MANY_REQUESTS,
            Self::Custom { .. } => S::OK,
            // Every other kind the code table answers `-32603`: the server failed.
            _ if self.code() == code::INTERNAL_ERROR => S::INTERNAL_SERVER_ERROR,
            _ => S::BAD_REQUEST,
        }
    }

    /// The `error.data` member, if any.
    pub fn data(&self) -> Option<Value> {
        match self {
            Self::InvalidParams { data, .. } | Self::Custom { data, .. } => data.clone(),
            Self::MissingRequiredClientCapability { required } => Some(json!({ "requiredCapabilities": required })),
            Self::RateLimited { retry_after, .. } => {
                Some(json!({ "retryAfterMs": u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX).max(1) }))
            }
            Self::UnsupportedProtocolVersion { requested, supported } => {
                let mut d = json!({ "supported": supported });
                if let Some(r) = requested {
                    d["requested"] = Value::String(r.clone());
                }
                Some(d)
            }
            _ => None,
        }
    }

    /// The wire message.
    pub fn message(&self) -> String {
        match self {
            Self::Custom { message, .. } => message.clone(),
            Self::InvalidParams { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    /// The JSON-RPC `error` object: `{code, message, data?}`.
    pub fn to_error_object(&self) -> Value {
        let mut obj = json!({ "code": self.code(), "message": self.message() });
        if let Some(d) = self.data() {
            obj["data"] = d;
        }
        obj
    }

    /// A full JSON-RPC error response; `id` is omitted when unknown.
    pub fn to_response(&self, id: Option<&Value>) -> Value {
        let mut resp = json!({ "jsonrpc": "2.0", "error": self.to_error_object() });
        if let Some(id) = id {
            resp["id"] = id.clone();
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_codes_and_statuses() {
        let cases: Vec<(ProtocolError, i64, u16)> = vec![
            (ProtocolError::Parse("x".into()), -32700, 400),
            (ProtocolError::InvalidRequest("x".into()), -32600, 400),
            (ProtocolError::method_not_found("x"), -32601, 404),
            (ProtocolError::invalid_params("x"), -32602, 400),
            (ProtocolError::Internal("x".into()), -32603, 500),
            (ProtocolError::Timeout { limit: std::time::Duration::from_secs(1) }, -32603, 500),
            (ProtocolError::Cancelled { reason: Cancellation::ByClient }, -32603, 500),
            (ProtocolError::HandlerFailed { message: "x".into(), reference: "r".into() }, -32603, 500),
            (ProtocolError::InvalidResult { message: "x".into() }, -32603, 500),
            (ProtocolError::Misconfigured { message: "x".into() }, -32603, 500),
            (ProtocolError::Input(InputFailure::NoRequests), -32603, 500),
            (
                ProtocolError::Store {
                    operation: "x",
                    reference: "r".into(),
                    source: ErrorSource::new(std::io::Error::other("disk")),
                },
                -32603,
                500,
            ),
            (ProtocolError::header_mismatch("Mcp-Method", "x"), -32020, 400),
            (ProtocolError::MissingRequiredClientCapability { required: json!({}) }, -32021, 400),
            (ProtocolError::UnsupportedProtocolVersion { requested: None, supported: vec![] }, -32022, 400),
            (ProtocolError::PayloadTooLarge { limit: 1 }, -32600, 413),
            (ProtocolError::Forbidden { header: "Origin", message: "x".into() }, -32600, 403),
            (ProtocolError::SessionNotFound, -32600, 404),
            (ProtocolError::unavailable("sessions", "x"), -32603, 503),
            (ProtocolError::rate_limited(std::time::Duration::from_secs(1), "x"), -32029, 429),
            (
                ProtocolError::RequestTimeout { limit: std::time::Duration::from_secs(1), message: "x".into() },
                -32600,
                408,
            ),
        ];
        for (e, c, s) in cases {
            assert_eq!((e.code(), e.http_status().as_u16()), (c, s), "{e:?}");
        }
    }

    #[test]
    fn structured_variants_keep_their_wire_messages() {
        assert_eq!(ProtocolError::method_not_found("tools/nope").message(), "Method not found: tools/nope");
        let e = ProtocolError::MethodNotFound { method: "skills/list".into(), detail: Some("no skills here".into()) };
        assert_eq!(e.message(), "Method not found: no skills here");
        let e = ProtocolError::header_mismatch("Mcp-Method", "missing required Mcp-Method header");
        assert_eq!(e.message(), "Header mismatch: missing required Mcp-Method header");
        assert!(matches!(e, ProtocolError::HeaderMismatch { ref header, .. } if header == "Mcp-Method"));
        assert_eq!(ProtocolError::unavailable("sessions", "full").message(), "Internal error: full");
        let e = ProtocolError::rate_limited(std::time::Duration::from_millis(2500), "5/10s (per caller)");
        assert_eq!(e.message(), "Rate limit exceeded: 5/10s (per caller); retry in 2.5s");
        assert_eq!(e.data(), Some(json!({"retryAfterMs": 2500})));
        let soon = ProtocolError::rate_limited(std::time::Duration::from_micros(10), "x");
        assert_eq!(soon.data(), Some(json!({"retryAfterMs": 1})), "never 0: that reads as 'now'");
    }

    #[test]
    fn internal_kinds_read_as_internal_errors_and_keep_their_cause() {
        let e = ProtocolError::Timeout { limit: std::time::Duration::from_secs(5) };
        assert_eq!(e.message(), "Internal error: request timed out after 5000 ms");
        let e = ProtocolError::Cancelled { reason: Cancellation::ByClient };
        assert_eq!(e.message(), "Internal error: request cancelled by the client");
        let e = ProtocolError::Input(InputFailure::TooManyRounds { max: 3 });
        assert_eq!(e.message(), "Internal error: the handler asked for client input more than 3 times");
        let source = ErrorSource::new(std::io::Error::other("disk full"));
        let e =
            ProtocolError::Store { operation: "task store failure", reference: "abc".into(), source: source.clone() };
        assert_eq!(e.message(), "Internal error: task store failure (ref abc)", "the cause stays in the log");
        let cause = std::error::Error::source(&e).expect("the store's error is the source");
        assert_eq!(cause.to_string(), "disk full");
        let same = ProtocolError::Store { operation: "task store failure", reference: "abc".into(), source };
        assert_eq!(e, same);
    }

    #[test]
    fn unsupported_version_data() {
        let e = ProtocolError::UnsupportedProtocolVersion {
            requested: Some("1900-01-01".into()),
            supported: vec!["2026-07-28".into()],
        };
        assert_eq!(
            e.to_response(Some(&json!(1))),
            json!({"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version",
                "data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}})
        );
    }
}
