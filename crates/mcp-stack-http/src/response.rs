//! Every response the endpoint builds itself, and the error -> HTTP mapping (the status of
//! each error code is `ProtocolError::http_status`; the headers some errors carry are here).

use crate::body::McpBody;
use bytes::Bytes;
use http::{header, HeaderValue, Method, Response, StatusCode};
use mcp_auth::{AuthConfig, AuthError};
use mcp_protocol::ProtocolError;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

/// A response of the endpoint.
pub(crate) type Resp = Response<McpBody>;

/// `202 Accepted` with no body (notifications and responses POSTed by the client).
pub(crate) fn accepted() -> Response<McpBody> {
    status_only(StatusCode::ACCEPTED)
}

pub(crate) fn status_only(status: StatusCode) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = status;
    r
}

/// `405 Method Not Allowed` naming the methods the endpoint takes (`allow`).
pub(crate) fn method_not_allowed(allow: &'static str) -> Resp {
    let mut r = status_only(StatusCode::METHOD_NOT_ALLOWED);
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

pub(crate) fn bytes_response(status: StatusCode, body: Vec<u8>) -> Resp {
    let mut r = Response::new(McpBody::full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn json_response(status: StatusCode, v: &Value) -> Resp {
    let body = serde_json::to_vec(v).expect("JSON serializes");
    let mut r = Response::new(McpBody::full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// The HTTP response for a protocol error: its status, its JSON-RPC error body, and the
/// headers some errors carry.
pub(crate) fn error_response(e: &ProtocolError, id: Option<&Value>) -> Resp {
    let mut r = json_response(e.http_status(), &e.to_response(id));
    match e {
        ProtocolError::Unavailable { .. } => {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        // Whole seconds, rounded up (RFC 9110 §10.2.3).
        ProtocolError::RateLimited { retry_after, .. } => {
            let secs = retry_after.as_millis().div_ceil(1000).max(1);
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs as u64));
        }
        // The rest of the body is unread: the connection cannot carry another request.
        ProtocolError::PayloadTooLarge { .. } | ProtocolError::RequestTimeout { .. } => {
            r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        _ => {}
    }
    r
}

pub(crate) fn sse_response(rx: mpsc::Receiver<Bytes>) -> Resp {
    sse_response_headers(McpBody::stream(rx))
}

/// Marks a listen stream (a `subscriptions/listen` response or a legacy session's GET stream),
/// with who it belongs to (its authenticated principal, if any): a response extension that
/// [`serve`](crate::serve()) reads to count listen streams, per principal rather than per peer
/// address when there is one.
#[derive(Clone, Debug)]
pub(crate) struct StreamOwner(pub(crate) Option<Arc<str>>);

/// `r` marked as a listen stream of `owner`.
pub(crate) fn with_stream_owner(mut r: Resp, owner: Option<Arc<str>>) -> Resp {
    r.extensions_mut().insert(StreamOwner(owner));
    r
}

pub(crate) fn sse_response_headers(body: McpBody) -> Resp {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// The refusal of an authentication or authorization failure (401/403, `WWW-Authenticate`).
pub(crate) fn auth_refusal(auth: &AuthConfig, e: &AuthError) -> Resp {
    let refusal = auth.refusal(e);
    let mut r = Response::new(McpBody::full(refusal.body));
    *r.status_mut() = refusal.status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(v) = refusal.www_authenticate.and_then(|v| HeaderValue::try_from(v).ok()) {
        h.insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

/// The protected-resource metadata document (GET/HEAD, no authentication, any origin).
pub(crate) fn metadata_response(auth: &AuthConfig, method: &Method) -> Resp {
    let (status, body) = match *method {
        Method::GET | Method::HEAD => (StatusCode::OK, McpBody::full(auth.metadata_json().clone())),
        Method::OPTIONS => (StatusCode::NO_CONTENT, McpBody::empty()),
        _ => (StatusCode::METHOD_NOT_ALLOWED, McpBody::empty()),
    };
    let mut r = Response::new(body);
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    if status == StatusCode::OK {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
    } else {
        h.insert(header::ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
    }
    r
}
