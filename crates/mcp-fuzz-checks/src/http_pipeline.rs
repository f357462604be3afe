//! The Streamable HTTP endpoint fed an arbitrary request (method, path, headers, body) never
//! panics, answers with a status the transport documents, and every JSON body it sends parses.
//!
//! Input layout: byte 0 picks the method, byte 1 the path; then header lines `name: value\n`
//! up to an empty line; the rest is the body.
use mcp_http::{EndpointConfig, McpService};
use mcp_server::{Server, Tool};
use std::sync::OnceLock;

fn service() -> &'static McpService {
    static SERVICE: OnceLock<McpService> = OnceLock::new();
    SERVICE.get_or_init(|| {
        let echo = Tool::new("echo").description("echo").handler(|| async { "ok" });
        let server = Server::builder("fuzz", "1").tools([echo]).build().unwrap();
        McpService::new(server, EndpointConfig { max_body_bytes: 4096, ..EndpointConfig::default() })
    })
}

const METHODS: [&str; 6] = ["POST", "GET", "DELETE", "OPTIONS", "PUT", "HEAD"];
const PATHS: [&str; 4] = ["/mcp", "/", "/.well-known/oauth-protected-resource", "http://localhost/mcp"];

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let [m, p, rest @ ..] = data else { return };
    let mut req = http::Request::builder()
        .method(METHODS[usize::from(*m) % METHODS.len()])
        .uri(PATHS[usize::from(*p) % PATHS.len()]);
    let mut at = 0;
    for line in rest.split(|b| *b == b'\n') {
        at += line.len() + 1;
        if line.is_empty() {
            break;
        }
        let Some(colon) = line.iter().position(|b| *b == b':') else { continue };
        let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(&line[..colon]),
            http::HeaderValue::from_bytes(line[colon + 1..].trim_ascii()),
        ) else {
            continue;
        };
        req = req.header(name, value);
    }
    let body = rest.get(at.min(rest.len())..).unwrap_or_default().to_vec();
    let Ok(req) = req.body(http_body_util::Full::new(bytes::Bytes::from(body))) else { return };
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let resp = rt.block_on(service().handle(req));
    let status = resp.status().as_u16();
    assert!(
        matches!(status, 200 | 202 | 204 | 400 | 401 | 403 | 404 | 405 | 406 | 408 | 413 | 415 | 500 | 503),
        "undocumented status {status}"
    );
    if resp.headers().get(http::header::CONTENT_TYPE).is_some_and(|v| v == "application/json") {
        let body = rt.block_on(http_body_util::BodyExt::collect(resp.into_body())).unwrap().to_bytes();
        serde_json::from_slice::<serde_json::Value>(&body).expect("a JSON body parses");
    }
}
