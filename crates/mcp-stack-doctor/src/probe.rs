//! Raw HTTP probes of `mcp doctor` (and of the client commands, to summarize an answer that is
//! not MCP): one request at a time, no redirects followed, bodies and waits bounded, and every
//! answer reduced to what it means (a JSON-RPC message, or a one-line summary of whatever else
//! came back).

use mcp_protocol::sse::SseParser;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use reqwest::{Method, Url};
use serde_json::Value;
use std::time::Duration;

/// Largest body read from a probe.
pub const MAX_BODY: usize = 1 << 20;

/// Why a probe got no HTTP answer.
#[derive(Debug)]
pub enum ProbeError {
    /// The TLS handshake failed: what went wrong, and a fix.
    Tls(String, String),
    /// Connecting failed (after the doctor's own TCP check passed).
    Connect(String),
    /// No answer within the step's time limit.
    Timeout(Duration),
    /// Anything else (the connection broke, the answer was not HTTP...).
    Other(String),
}

impl ProbeError {
    /// One line for the report.
    pub fn line(&self) -> String {
        match self {
            ProbeError::Tls(m, _) => m.clone(),
            ProbeError::Connect(m) => format!("cannot connect: {m}"),
            ProbeError::Timeout(d) => format!("no answer within {}s", d.as_secs_f64()),
            ProbeError::Other(m) => m.clone(),
        }
    }
}

/// An HTTP answer, body read (bounded).
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The media type, lower case, without parameters (`""` when absent).
    pub content_type: String,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body (the first [`MAX_BODY`] bytes; for an event stream, what was read until the
    /// response arrived).
    pub body: Vec<u8>,
    /// The JSON-RPC response found in the body (JSON, or an SSE event), if any.
    pub message: Option<Value>,
    /// For an event stream: the first event's name and data.
    pub first_event: Option<(String, String)>,
}

impl Answer {
    /// A response header as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    /// The JSON-RPC error object of the answer, if it carries one.
    pub fn rpc_error(&self) -> Option<&Value> {
        self.message.as_ref().and_then(|m| m.get("error")).filter(|e| e.is_object())
    }

    /// The JSON-RPC result of the answer, if it carries one.
    pub fn rpc_result(&self) -> Option<&Value> {
        self.message.as_ref().and_then(|m| m.get("result"))
    }

    /// The body as (lossy) text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// What the answer is, in one line, when it is not a JSON-RPC message: "answered with an
    /// HTML page (text/html, 1234 bytes): <title>...</title> (HTTP 200)".
    pub fn summary(&self) -> String {
        let n = self.body.len();
        let ct = if self.content_type.is_empty() { "no content type".to_owned() } else { self.content_type.clone() };
        let text = self.text();
        let trimmed = text.trim_start();
        let lower = trimmed.get(..trimmed.len().min(512)).unwrap_or("").to_ascii_lowercase();
        let what = if n == 0 {
            "an empty body".to_owned()
        } else if self.content_type == "text/html" || lower.starts_with("<!doctype html") || lower.starts_with("<html")
        {
            match html_title(&text) {
                Some(t) => format!("an HTML page ({ct}, {n} bytes): <title>{t}</title>"),
                None => format!("an HTML page ({ct}, {n} bytes)"),
            }
        } else if serde_json::from_slice::<Value>(&self.body).is_ok() {
            format!("JSON that is not JSON-RPC ({ct}, {n} bytes): {}", clip(trimmed, 100))
        } else {
            format!("{ct} ({n} bytes): {}", clip(trimmed.lines().next().unwrap_or(""), 100))
        };
        format!("answered with {what} (HTTP {})", self.status)
    }
}

/// The `<title>` of an HTML page, whitespace collapsed.
fn html_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let end = open_end + lower[open_end..].find("</title")?;
    let t = html.get(open_end..end)?.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then(|| clip(&t, 80))
}

/// `s` cut to `max` bytes (on a character boundary), with an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// An error with its causes, as one line.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = Some(e);
    while let Some(err) = cur {
        let t = err.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        cur = err.source();
    }
    parts.join(": ")
}

/// A TLS failure explained: what went wrong, and the fix.
pub fn explain_tls(why: &str, host: &str) -> Option<(String, String)> {
    let l = why.to_ascii_lowercase();
    let tls = ["certificate", "tls", "handshake", "invalidcontenttype", "corrupt message", "peer sent", "alert"];
    if !tls.iter().any(|k| l.contains(k)) {
        return None;
    }
    let (what, fix) = if l.contains("unknownissuer") || l.contains("unknown issuer") {
        (
            "the certificate is not signed by a trusted authority (self-signed, or a private CA)".to_owned(),
            "use a certificate from a public CA: this client trusts the Mozilla (webpki) root set only".to_owned(),
        )
    } else if l.contains("notvalidforname") || l.contains("not valid for name") {
        (
            format!("the certificate does not cover the host name {host}"),
            format!("connect with a name the certificate lists, or add {host} to its subject alternative names"),
        )
    } else if l.contains("expired") {
        ("the certificate has expired".to_owned(), "renew it (or check this machine's clock)".to_owned())
    } else if l.contains("notvalidyet") || l.contains("not valid yet") {
        (
            "the certificate is not valid yet".to_owned(),
            "check this machine's clock and the certificate's dates".to_owned(),
        )
    } else if l.contains("causedasendentity") {
        (
            "the server presents a CA certificate as its own (a self-signed one made with `openssl req -x509`?)"
                .to_owned(),
            "serve a leaf certificate (basicConstraints CA:FALSE) issued by a public CA".to_owned(),
        )
    } else if l.contains("invalidcontenttype")
        || l.contains("corrupt message")
        || l.contains("wrong version")
        || l.contains("handshake eof")
    {
        (
            "the server did not answer with TLS".to_owned(),
            "it probably speaks plain HTTP on this port: try the URL with http:// instead of https://".to_owned(),
        )
    } else {
        ("the TLS handshake failed".to_owned(), "check the server's TLS configuration and certificate".to_owned())
    };
    // The TLS library's own words, without the HTTP client's "error sending request..." prefix.
    let cause = why.rsplit_once("(Connect): ").map_or(why, |(_, c)| c);
    Some((format!("{what} ({})", clip(cause, 200)), fix))
}

/// Sends requests to one server URL.
#[derive(Debug)]
pub struct Prober {
    client: reqwest::Client,
    /// The server URL.
    pub url: Url,
    headers: Vec<(String, String)>,
    timeout: Duration,
}

impl Prober {
    /// A prober of `url` sending `headers` (lower-case names) with every request; each request
    /// waits at most `timeout` for its whole answer.
    pub fn new(url: Url, headers: Vec<(String, String)>, timeout: Duration) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout)
            .no_proxy()
            .user_agent(concat!("mcp-doctor/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| chain(&e))?;
        Ok(Self { client, url, headers, timeout })
    }

    /// POSTs a JSON-RPC message with `extra` headers; the answer's JSON-RPC response (from a
    /// JSON body or an event stream) is looked for by the message's `id`.
    pub async fn post(&self, message: &Value, extra: &[(String, String)]) -> Result<Answer, ProbeError> {
        let mut h = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ];
        h.extend(extra.iter().cloned());
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        self.send(Method::POST, self.url.clone(), &h, Some(message.to_string()), &id).await
    }

    /// GETs the URL asking for an event stream (HTTP+SSE); reads until the first event.
    pub async fn get_stream(&self, extra: &[(String, String)]) -> Result<Answer, ProbeError> {
        let mut h = vec![("accept".to_owned(), "text/event-stream".to_owned())];
        h.extend(extra.iter().cloned());
        self.send(Method::GET, self.url.clone(), &h, None, &Value::Null).await
    }

    /// Ends a legacy session the initialize probe opened (best effort).
    pub async fn delete_session(&self, session: &str, extra: &[(String, String)]) {
        let mut h = vec![("mcp-session-id".to_owned(), session.to_owned())];
        h.extend(extra.iter().cloned());
        let rb = self.request(Method::DELETE, self.url.clone(), &h);
        let _ = tokio::time::timeout(self.timeout.min(Duration::from_secs(3)), rb.send()).await;
    }

    /// GETs a JSON document (metadata) from `url`: status and parsed body.
    pub async fn get_json(&self, url: &Url) -> Result<(u16, Option<Value>, String), ProbeError> {
        let h = [("accept".to_owned(), "application/json".to_owned())];
        let rb = self.client.request(Method::GET, url.clone()).headers(header_map(&h));
        let a = self.read(rb, &Value::Null, false).await?;
        let json = serde_json::from_slice::<Value>(&a.body).ok();
        let summary = a.summary();
        Ok((a.status, json, summary))
    }

    fn request(&self, method: Method, url: Url, extra: &[(String, String)]) -> reqwest::RequestBuilder {
        // The user's headers (and the token) win over the protocol's defaults.
        let mut all: Vec<(String, String)> = extra.to_vec();
        for (k, v) in &self.headers {
            all.retain(|(n, _)| n != k);
            all.push((k.clone(), v.clone()));
        }
        self.client.request(method, url).headers(header_map(&all))
    }

    async fn send(
        &self,
        method: Method,
        url: Url,
        extra: &[(String, String)],
        body: Option<String>,
        id: &Value,
    ) -> Result<Answer, ProbeError> {
        let mut rb = self.request(method.clone(), url, extra);
        if let Some(b) = body {
            rb = rb.body(b);
        }
        self.read(rb, id, method == Method::GET).await
    }

    /// Sends `rb` and reads its answer within the time limit. `first_event_only`: stop an event
    /// stream at its first event (the HTTP+SSE `endpoint` event).
    async fn read(
        &self,
        rb: reqwest::RequestBuilder,
        id: &Value,
        first_event_only: bool,
    ) -> Result<Answer, ProbeError> {
        let host = self.url.host_str().unwrap_or_default().to_owned();
        let work = async {
            let mut resp = rb.send().await.map_err(|e| classify(&e, &host, self.timeout))?;
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            let content_type = headers
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(|s| s.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
                .unwrap_or_default();
            let sse = content_type == "text/event-stream";
            let mut parser = SseParser::new(MAX_BODY);
            let (mut body, mut message, mut first_event) = (Vec::new(), None, None);
            while body.len() < MAX_BODY {
                let Some(chunk) = resp.chunk().await.map_err(|e| ProbeError::Other(chain(&e)))? else { break };
                body.extend_from_slice(&chunk);
                if !sse {
                    continue;
                }
                for ev in parser.feed(&chunk).map_err(|e| ProbeError::Other(e.to_string()))? {
                    first_event.get_or_insert_with(|| (ev.event.clone(), ev.data.clone()));
                    if let Ok(m) = serde_json::from_str::<Value>(&ev.data) {
                        if is_response(&m, id) {
                            message = Some(m);
                        }
                    }
                }
                if message.is_some() || (first_event_only && first_event.is_some()) {
                    break;
                }
            }
            body.truncate(MAX_BODY);
            if !sse {
                message = json_rpc_response(&body, id);
            }
            Ok(Answer { status, content_type, headers, body, message, first_event })
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(r) => r,
            Err(_) => Err(ProbeError::Timeout(self.timeout)),
        }
    }
}

fn header_map(h: &[(String, String)]) -> HeaderMap {
    let mut m = HeaderMap::new();
    for (k, v) in h {
        if let (Ok(n), Ok(mut v)) = (HeaderName::from_bytes(k.as_bytes()), HeaderValue::from_str(v)) {
            if k == "authorization" || k == "dpop" || k == "cookie" {
                v.set_sensitive(true);
            }
            m.insert(n, v);
        }
    }
    m
}

fn classify(e: &reqwest::Error, host: &str, limit: Duration) -> ProbeError {
    let why = chain(e);
    if let Some((what, fix)) = explain_tls(&why, host) {
        return ProbeError::Tls(what, fix);
    }
    if e.is_timeout() {
        return ProbeError::Timeout(limit);
    }
    if e.is_connect() {
        return ProbeError::Connect(why);
    }
    ProbeError::Other(why)
}

/// Whether `m` is a JSON-RPC response to `id` (an error naming no id counts: it answers the
/// HTTP request it came with).
fn is_response(m: &Value, id: &Value) -> bool {
    let rpc = m.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && m.get("method").is_none()
        && (m.get("result").is_some() || m.get("error").is_some_and(Value::is_object));
    rpc && (id.is_null()
        || m.get("id") == Some(id)
        || (m.get("error").is_some() && m.get("id").is_none_or(Value::is_null)))
}

/// The JSON-RPC response in a JSON body (an object, or a batch holding it).
fn json_rpc_response(body: &[u8], id: &Value) -> Option<Value> {
    match serde_json::from_slice::<Value>(body).ok()? {
        Value::Array(items) => items.into_iter().find(|m| is_response(m, id)),
        m => is_response(&m, id).then_some(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, ct: &str, body: &str) -> Answer {
        let body = body.as_bytes().to_vec();
        let message = json_rpc_response(&body, &serde_json::json!(1));
        Answer { status, content_type: ct.into(), headers: HeaderMap::new(), body, message, first_event: None }
    }

    #[test]
    fn summaries() {
        let page = "<!DOCTYPE html><html><head><title>\n  Welcome to\n nginx!</title></head></html>";
        let a = answer(200, "text/html", page);
        assert!(a.message.is_none());
        assert_eq!(
            a.summary(),
            format!(
                "answered with an HTML page (text/html, {} bytes): <title>Welcome to nginx!</title> (HTTP 200)",
                page.len()
            )
        );
        let a = answer(200, "application/json", r#"{"status":"ok"}"#);
        assert!(a.message.is_none());
        assert!(a.summary().contains("JSON that is not JSON-RPC"), "{}", a.summary());
        let a = answer(404, "", "");
        assert_eq!(a.summary(), "answered with an empty body (HTTP 404)");
        let a = answer(200, "application/json", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(a.message.is_some() && a.rpc_result().is_some());
        let a = answer(400, "application/json", r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#);
        assert_eq!(a.rpc_error().and_then(|e| e.get("code")), Some(&serde_json::json!(-32600)));
    }

    #[test]
    fn tls_explanations() {
        let (what, fix) = explain_tls("invalid peer certificate: UnknownIssuer", "example.com").unwrap();
        assert!(what.contains("not signed by a trusted authority") && fix.contains("public CA"));
        let (what, _) = explain_tls("invalid peer certificate: NotValidForName", "example.com").unwrap();
        assert!(what.contains("does not cover the host name example.com"));
        let (_, fix) = explain_tls("received corrupt message of type InvalidContentType", "h").unwrap();
        assert!(fix.contains("http://"));
        let (what, _) =
            explain_tls("error sending request for url (https://h/): client error (Connect): tls handshake eof", "h")
                .unwrap();
        assert_eq!(what, "the server did not answer with TLS (tls handshake eof)");
        assert!(explain_tls("connection reset by peer", "h").is_none());
    }
}
