//! The era-detection probes of `mcp doctor` over HTTP: `server/discover` (2026-07-28), the
//! `initialize` fallback (2025-11-25 and older), and the deprecated HTTP+SSE transport
//! (2024-11-05); and what any answer can reveal on the way: authorization wanted, a refused
//! `Host`/`Origin`, `Accept` or `Content-Type` header, a redirect, a server error, or an answer
//! that is not MCP at all.

use crate::probe::{self, Answer, Prober};
use crate::{Report, Status};
use mcp_protocol::error::code;
use mcp_protocol::{meta, version};
use serde_json::{json, Value};
use url::Url;

/// What an answer to a probe means for the walk.
pub(crate) enum Verdict {
    /// The step passed; the era is known.
    Found,
    /// Not this era: try the next one.
    Fallback,
    /// The server wants authorization.
    Auth,
    /// A failure that ends the raw probes.
    Stop,
}

/// A suggestion for a URL that is probably not the MCP endpoint.
pub(crate) fn endpoint_hint(url: &Url) -> String {
    if url.path().trim_end_matches('/').ends_with("/mcp") {
        return "this URL is probably not the MCP endpoint: check the server's documentation for its endpoint path"
            .into();
    }
    let mut u = url.clone();
    u.set_path("/mcp");
    u.set_query(None);
    format!("this URL is probably not the MCP endpoint (servers usually serve it at /mcp): try mcp doctor {u}")
}

/// Checks an answer for what any probe can meet: authorization, refused headers, redirects,
/// server errors, and answers that are not MCP. `None`: the answer carries a JSON-RPC message
/// for the caller to read.
pub(crate) fn triage(report: &mut Report, name: &'static str, a: &Answer, url: &Url) -> Option<Verdict> {
    let www = a.header("www-authenticate");
    if a.status == 401 || (a.status == 403 && www.is_some()) {
        return Some(Verdict::Auth);
    }
    let said = a.rpc_error().and_then(|e| e.get("message")).and_then(Value::as_str).map(str::to_owned);
    let said = said.unwrap_or_else(|| probe::clip(a.text().trim(), 200));
    let lower = said.to_ascii_lowercase();
    let names_header = lower.contains("host") || lower.contains("origin");
    let refusal = matches!(a.status, 403 | 421)
        || ["not allowed", "invalid host", "invalid origin", "rebinding"].iter().any(|k| lower.contains(k));
    if matches!(a.status, 400 | 403 | 421) && names_header && refusal {
        // The host the server names (it may differ from the URL's: a Host header was given).
        let quoted = said.split('"').nth(1).filter(|q| !q.is_empty() && !q.contains(' '));
        let host = quoted.map(|q| q.split(':').next().unwrap_or(q)).unwrap_or(url.host_str().unwrap_or_default());
        let what = if lower.contains("origin") { "Origin" } else { "Host" };
        let step = report.fail(name, format!("the server refused the {what} header (HTTP {}): {said}", a.status));
        if what == "Host" {
            step.hint(format!(
                "its DNS-rebinding protection does not accept the host name {host}: start the server with \
                 --allow-host {host} (`mcp serve`), or add {host} to its allowed hosts"
            ));
        } else {
            step.hint("the server does not accept this Origin: remove the Origin header, or add it to the server's allowed origins");
        }
        return Some(Verdict::Stop);
    }
    if (300..400).contains(&a.status) {
        let to = a.header("location").unwrap_or_default();
        let same = url.join(&to).ok().is_some_and(|l| l.origin() == url.origin());
        if matches!(a.status, 307 | 308) && same {
            report.warn(name, format!("redirects (HTTP {}) to {to}", a.status)).hint(format!(
                "the client follows it, but every request pays the detour: use the final URL, mcp doctor {}",
                url.join(&to).map(|u| u.to_string()).unwrap_or(to)
            ));
        } else if matches!(a.status, 307 | 308) {
            report
                .fail(name, format!("redirects (HTTP {}) to another origin: {to}", a.status))
                .hint("the client refuses cross-origin redirects unless given --follow-cross-origin-redirects; better, use that URL directly");
        } else {
            report
                .fail(name, format!("redirects (HTTP {}) to {to}", a.status))
                .hint(format!("MCP clients do not follow {} redirects of a POST: use {to} directly", a.status));
        }
        return Some(Verdict::Stop);
    }
    if a.status == 406 {
        report.fail(name, format!("the server refused the Accept header (HTTP 406): {said}")).hint(
            "MCP clients send `Accept: application/json, text/event-stream`; a server (or a proxy in front of it) \
             that refuses it is not a conforming MCP endpoint",
        );
        return Some(Verdict::Stop);
    }
    if a.status == 415 {
        report.fail(name, format!("the server refused the Content-Type application/json (HTTP 415): {said}")).hint(
            "MCP requests are JSON-RPC with `Content-Type: application/json`: is this URL the MCP endpoint, and does a proxy rewrite the request?",
        );
        return Some(Verdict::Stop);
    }
    if a.message.is_some() {
        return None;
    }
    if a.status == 501 {
        // Not a failure inside an MCP server: this URL does not take POST requests at all.
        report
            .fail(name, format!("not an MCP endpoint: POST is not implemented here ({})", a.summary()))
            .hint(endpoint_hint(url));
        return Some(Verdict::Stop);
    }
    if a.status >= 500 {
        report
            .fail(name, format!("server error: {}", a.summary()))
            .hint("the server failed while answering: its logs say why");
        return Some(Verdict::Stop);
    }
    if (200..300).contains(&a.status) {
        report.fail(name, format!("not an MCP server: {}", a.summary())).hint(endpoint_hint(url));
        return Some(Verdict::Stop);
    }
    report.warn(name, a.summary());
    Some(Verdict::Fallback)
}

/// A server's name and version from a `serverInfo` object.
pub(crate) fn server_label(info: Option<&Value>) -> String {
    let Some(info) = info else { return "server (no serverInfo)".into() };
    let name = info.get("title").or_else(|| info.get("name")).and_then(Value::as_str).unwrap_or("?");
    match info.get("version").and_then(Value::as_str) {
        Some(v) => format!("server \"{name}\" {v}"),
        None => format!("server \"{name}\""),
    }
}

/// The capability names of a discover or initialize result.
pub(crate) fn capability_names(result: &Value) -> String {
    match result.get("capabilities").and_then(Value::as_object) {
        Some(c) if !c.is_empty() => c.keys().cloned().collect::<Vec<_>>().join(", "),
        _ => "none".into(),
    }
}

/// Reads the answer to `server/discover`.
pub(crate) fn discover_verdict(report: &mut Report, a: &Answer, url: &Url) -> Verdict {
    if let Some(v) = triage(report, "discover", a, url) {
        if matches!(v, Verdict::Fallback) {
            let s = report.steps.last_mut().expect("triage reported");
            s.detail = format!("not a {} server ({}); trying initialize", version::LATEST, s.detail);
        }
        return v;
    }
    if let Some(result) = a.rpc_result() {
        let versions: Vec<&str> = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if versions.is_empty() || !result.get("capabilities").is_some_and(Value::is_object) {
            report.warn(
                "discover",
                "answered server/discover without a DiscoverResult (a legacy server?); trying initialize",
            );
            return Verdict::Fallback;
        }
        let label = server_label(result.pointer(&format!("/_meta/{}", meta::SERVER_INFO.replace('/', "~1"))));
        let step = report.pass(
            "discover",
            format!(
                "{label} speaks {}; supports {}; capabilities: {}",
                version::LATEST,
                versions.join(", "),
                capability_names(result)
            ),
        );
        if !versions.contains(&version::LATEST) {
            step.status = Status::Warn;
            step.hint(format!("it does not list {}, the version this client asked for", version::LATEST));
        }
        return Verdict::Found;
    }
    let err = a.rpc_error().cloned().unwrap_or_default();
    let c = err.get("code").and_then(Value::as_i64).unwrap_or(0);
    let msg = err.get("message").and_then(Value::as_str).unwrap_or("").to_owned();
    if c == code::HEADER_MISMATCH {
        let step = report.fail("discover", format!("the server rejected a request header (JSON-RPC {c}): {msg}"));
        if msg.to_ascii_lowercase().contains("protocol-version") {
            step.hint(format!(
                "the request carried `MCP-Protocol-Version: {}`: a proxy or gateway in front of the server may strip MCP-* headers",
                version::LATEST
            ));
        } else {
            step.hint("the client sends MCP-Protocol-Version, Mcp-Method and Mcp-Name: a proxy in front of the server may drop or rewrite them");
        }
        return Verdict::Stop;
    }
    if c == code::UNSUPPORTED_PROTOCOL_VERSION {
        let theirs: Vec<String> = err
            .pointer("/data/supported")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        if theirs.iter().any(|t| version::LEGACY.contains(&t.as_str())) {
            report.warn("discover", format!("the server supports only {}; trying initialize", theirs.join(", ")));
            return Verdict::Fallback;
        }
        let mut ours: Vec<&str> = version::MODERN.to_vec();
        ours.extend_from_slice(version::LEGACY);
        report
            .fail("discover", format!("no protocol version in common: the server supports {}", theirs.join(", ")))
            .hint(format!("this client supports {}", ours.join(", ")));
        return Verdict::Stop;
    }
    if c == code::MISSING_REQUIRED_CLIENT_CAPABILITY {
        report
            .fail("discover", format!("the server requires client capabilities even for server/discover: {msg}"))
            .hint("server/discover must work without client capabilities: this is a server bug");
        return Verdict::Stop;
    }
    report.warn(
        "discover",
        format!("not a {} server (server/discover: error {c}: {msg}); trying initialize", version::LATEST),
    );
    Verdict::Fallback
}

/// Reads the answer to `initialize`; ends the session it opened.
pub(crate) async fn initialize_verdict(
    report: &mut Report,
    prober: &Prober,
    a: &Answer,
    extra: &[(String, String)],
) -> Verdict {
    if let Some(v) = triage(report, "initialize", a, &prober.url) {
        if matches!(v, Verdict::Fallback) {
            let s = report.steps.last_mut().expect("triage reported");
            s.detail = format!("no Streamable HTTP initialize ({}); trying HTTP+SSE", s.detail);
        }
        return v;
    }
    let session = a.header("mcp-session-id");
    if let Some(sid) = &session {
        prober.delete_session(sid, extra).await;
    }
    if let Some(err) = a.rpc_error() {
        let c = err.get("code").and_then(Value::as_i64).unwrap_or(0);
        let msg = err.get("message").and_then(Value::as_str).unwrap_or("");
        report
            .fail("initialize", format!("initialize failed (JSON-RPC {c}): {msg}"))
            .hint("the server answers JSON-RPC but refuses the legacy handshake; its logs may say why");
        return Verdict::Stop;
    }
    let result = a.rpc_result().cloned().unwrap_or_default();
    let negotiated = result.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
    if !version::LEGACY.contains(&negotiated) {
        report
            .fail("initialize", format!("the server answered initialize with protocol version {negotiated:?}"))
            .hint(format!("this client's legacy versions are {}", version::LEGACY.join(", ")));
        return Verdict::Stop;
    }
    let label = server_label(result.get("serverInfo"));
    let sess = if session.is_some() { "with an Mcp-Session-Id session" } else { "without a session id" };
    report.pass(
        "initialize",
        format!("{label} negotiated {negotiated} {sess}; capabilities: {}", capability_names(&result)),
    );
    Verdict::Found
}

/// Reads the answer to the HTTP+SSE GET.
pub(crate) fn sse_verdict(report: &mut Report, a: &Answer, url: &Url) -> Verdict {
    if a.status == 401 || (a.status == 403 && a.header("www-authenticate").is_some()) {
        return Verdict::Auth;
    }
    match &a.first_event {
        Some((event, data)) if a.status == 200 && event == "endpoint" => {
            let same = url.join(data.trim()).ok().is_some_and(|e| e.origin() == url.origin());
            if same {
                report
                    .pass("http+sse", format!("GET opened an event stream; its endpoint event names {}", data.trim()));
                Verdict::Found
            } else {
                report
                    .fail("http+sse", format!("the endpoint event names another origin: {}", data.trim()))
                    .hint("the client only posts to the server's own origin: fix the endpoint the server announces");
                Verdict::Stop
            }
        }
        Some((event, _)) if a.status == 200 => {
            report
                .fail("http+sse", format!("the event stream's first event is {event:?}, not \"endpoint\""))
                .hint("an HTTP+SSE (2024-11-05) server must send its `endpoint` event first");
            Verdict::Stop
        }
        _ => {
            report.fail("http+sse", format!("no HTTP+SSE stream either: GET {}", a.summary()));
            Verdict::Stop
        }
    }
}

/// How the doctor introduces itself.
fn client_info() -> Value {
    json!({ "name": "mcp-doctor", "version": env!("CARGO_PKG_VERSION") })
}

/// The `server/discover` probe.
pub(crate) fn discover_message() -> Value {
    let m = json!({ meta::PROTOCOL_VERSION: version::LATEST, meta::CLIENT_CAPABILITIES: {}, meta::CLIENT_INFO: client_info() });
    json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": m } })
}

/// The `initialize` probe (our newest legacy version).
pub(crate) fn initialize_message() -> Value {
    let p = json!({ "protocolVersion": version::LEGACY[0], "capabilities": {}, "clientInfo": client_info() });
    json!({ "jsonrpc": "2.0", "id": 2, "method": "initialize", "params": p })
}
