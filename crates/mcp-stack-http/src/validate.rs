//! Checks that run before dispatch: Host/Origin, and request-metadata headers against the body.

use http::HeaderMap;
use mcp_protocol::headers::{decode_value, header_matches, header_value_for};
use mcp_protocol::{ProtocolError, Request};
use mcp_server::Server;
use serde_json::Value;

/// The host part of a `Host` header or an origin's authority, lower-cased, without port (for
/// messages; the checks compare a [`HostPart`]).
fn host_of(authority: &str) -> String {
    let host = HostPart::of(authority);
    let name = host.name.to_ascii_lowercase();
    if host.bracketed {
        return format!("[{name}]");
    }
    name
}

/// The host part of a `Host` header or an origin's authority, found without allocating (this
/// runs for every request): compared with [`HostPart::is`].
struct HostPart<'a> {
    /// Without the port, and without the brackets of an IPv6 literal.
    name: &'a str,
    bracketed: bool,
}

impl<'a> HostPart<'a> {
    fn of(authority: &'a str) -> Self {
        // ASCII whitespace only (the field's optional whitespace): no Unicode tables per request.
        let a = authority.trim_ascii();
        match a.strip_prefix('[') {
            Some(rest) => Self { name: before(rest, b']'), bracketed: true },
            None => Self { name: before(a, b':'), bracketed: false },
        }
    }

    /// Whether this is the host `allowed` (lower-case, IPv6 literals in brackets).
    fn is(&self, allowed: &str) -> bool {
        if !self.bracketed {
            return allowed.eq_ignore_ascii_case(self.name);
        }
        allowed.len() == self.name.len() + 2
            && allowed.starts_with('[')
            && allowed.ends_with(']')
            && allowed[1..allowed.len() - 1].eq_ignore_ascii_case(self.name)
    }
}

/// `s` up to the first `end` (all of it without one). A plain byte loop: a host is a few
/// bytes, and `str::split`'s searcher is far more code on every request's path.
fn before(s: &str, end: u8) -> &str {
    let at = s.bytes().position(|b| b == end).unwrap_or(s.len());
    // `end` is ASCII, so `at` is a character boundary.
    s.get(..at).unwrap_or("")
}

/// Whether the host of `authority` is one of `allowed`.
fn is_allowed(authority: &str, allowed: &[String]) -> bool {
    let host = HostPart::of(authority);
    allowed.iter().any(|a| host.is(a))
}

/// Validates `Host` (DNS-rebinding protection) and `Origin` against the allow lists.
///
/// More than one `Host` field is a malformed request (400, RFC 9112 section 3.2). `authority`
/// is the request target's authority when the target is in absolute form
/// (`POST http://host:port/mcp`); the server must then use it instead of `Host` (RFC 9112
/// section 3.2.2), so it is checked the same way.
pub(crate) fn check_host_origin(
    h: &HeaderMap,
    authority: Option<&http::uri::Authority>,
    allowed_hosts: &[String],
    allowed_origins: &[String],
) -> Result<(), ProtocolError> {
    let mut hosts = h.get_all(http::header::HOST).iter();
    let host_field = hosts.next();
    if hosts.next().is_some() {
        return Err(ProtocolError::InvalidRequest("more than one Host header".into()));
    }
    if !allowed_hosts.is_empty() {
        let host = match authority {
            Some(a) => Some(a.as_str()),
            None => host_field.and_then(|v| v.to_str().ok()),
        };
        match host {
            Some(host) if is_allowed(host, allowed_hosts) => {}
            Some(host) => {
                return Err(ProtocolError::Forbidden {
                    header: "Host",
                    message: format!("Host {:?} is not allowed", host_of(host)),
                })
            }
            None => return Err(ProtocolError::Forbidden { header: "Host", message: "missing Host header".into() }),
        }
    }
    if let Some(origin) = h.get(http::header::ORIGIN) {
        if !origin_allowed(origin, allowed_origins) {
            let o = origin.to_str().unwrap_or("").trim().to_ascii_lowercase();
            return Err(ProtocolError::Forbidden { header: "Origin", message: format!("Origin {o:?} is not allowed") });
        }
    }
    Ok(())
}

/// Whether an `Origin` header value is on the allow list (exact origins, or `host:NAME` for any
/// scheme and port on NAME).
pub(crate) fn origin_allowed(origin: &http::HeaderValue, allowed_origins: &[String]) -> bool {
    let o = origin.to_str().unwrap_or("").trim_ascii();
    allowed_origins.iter().any(|a| match a.strip_prefix("host:") {
        Some(host) => o.split_once("://").is_some_and(|(_, auth)| HostPart::of(auth).is(host)),
        None => a.eq_ignore_ascii_case(o),
    })
}

/// The MCP request headers as [`http::HeaderName`]s: looked up on every request, so the name
/// is not parsed and hashed from a string each time.
pub(crate) mod names {
    use http::HeaderName;
    use mcp_protocol::headers;
    /// `MCP-Protocol-Version`.
    pub(crate) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static(headers::PROTOCOL_VERSION);
    /// `Mcp-Method`.
    pub(crate) const METHOD: HeaderName = HeaderName::from_static(headers::METHOD);
    /// `Mcp-Name`.
    pub(crate) const NAME: HeaderName = HeaderName::from_static(headers::NAME);
}

fn header_str<K>(h: &HeaderMap, name: K) -> Result<Option<&[u8]>, ProtocolError>
where
    K: http::header::AsHeaderName + std::fmt::Display + Copy,
{
    let mut all = h.get_all(name).iter();
    let first = all.next();
    if all.next().is_some() {
        return Err(repeated(name));
    }
    Ok(first.map(|v| trim_ows(v.as_bytes())))
}

/// The error for a header field that must appear at most once.
#[cold]
fn repeated(name: impl std::fmt::Display) -> ProtocolError {
    ProtocolError::header_mismatch(name.to_string(), format!("{name} header appears more than once"))
}

/// Strips optional whitespace (spaces, tabs) around a field value.
fn trim_ows(mut b: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = b {
        b = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = b {
        b = rest;
    }
    b
}

/// The three request-metadata headers every modern request carries, found in one pass over the
/// header map (three lookups by name would hash each name; this runs for every request).
#[derive(Default)]
struct Metadata<'a> {
    version: Seen<'a>,
    method: Seen<'a>,
    name: Seen<'a>,
}

/// A header field as found: absent, once (trimmed of optional whitespace), or repeated.
#[derive(Default, Clone, Copy)]
enum Seen<'a> {
    #[default]
    Absent,
    Once(&'a [u8]),
    Repeated,
}

impl<'a> Metadata<'a> {
    fn scan(h: &'a HeaderMap) -> Self {
        let mut m = Self::default();
        for (k, v) in h {
            let slot = match k.as_str() {
                mcp_protocol::headers::PROTOCOL_VERSION => &mut m.version,
                mcp_protocol::headers::METHOD => &mut m.method,
                mcp_protocol::headers::NAME => &mut m.name,
                _ => continue,
            };
            *slot = match slot {
                Seen::Absent => Seen::Once(trim_ows(v.as_bytes())),
                _ => Seen::Repeated,
            };
        }
        m
    }
}

impl<'a> Seen<'a> {
    /// The value, or the error for a repeated field (what [`header_str`] gives).
    fn get(self, name: &http::HeaderName) -> Result<Option<&'a [u8]>, ProtocolError> {
        match self {
            Seen::Absent => Ok(None),
            Seen::Once(v) => Ok(Some(v)),
            Seen::Repeated => Err(repeated(name)),
        }
    }
}

/// Checks `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` against the body.
pub(crate) fn check_request_headers(
    h: &HeaderMap,
    req: &Request,
    server: &Server,
    caller: &mcp_server::Caller<'_>,
) -> Result<(), ProtocolError> {
    let body_version = req
        .params
        .get("_meta")
        .and_then(Value::as_object)
        .and_then(|m| m.get(mcp_protocol::meta::PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let seen = Metadata::scan(h);
    match seen.version.get(&names::PROTOCOL_VERSION)? {
        None => {
            return Err(ProtocolError::header_mismatch(
                "MCP-Protocol-Version",
                "missing required MCP-Protocol-Version header",
            ))
        }
        Some(v) => {
            let v = std::str::from_utf8(v).unwrap_or("");
            if let Some(b) = body_version {
                if b != v {
                    return Err(ProtocolError::header_mismatch(
                        "MCP-Protocol-Version",
                        format!("MCP-Protocol-Version header {v:?} does not match _meta protocolVersion {b:?}"),
                    ));
                }
            }
        }
    }
    match seen.method.get(&names::METHOD)? {
        None => return Err(ProtocolError::header_mismatch("Mcp-Method", "missing required Mcp-Method header")),
        Some(m) if m != req.method.as_bytes() => {
            return Err(ProtocolError::header_mismatch(
                "Mcp-Method",
                format!(
                    "Mcp-Method header {:?} does not match body method {:?}",
                    String::from_utf8_lossy(m),
                    req.method
                ),
            ))
        }
        Some(_) => {}
    }
    let name_field = mcp_protocol::Method::parse(&req.method).and_then(mcp_protocol::Method::name_param);
    if let Some(field) = name_field {
        let raw = seen.name.get(&names::NAME)?.ok_or_else(|| {
            ProtocolError::header_mismatch("Mcp-Name", format!("missing required Mcp-Name header for {}", req.method))
        })?;
        let decoded =
            decode_value(raw).map_err(|e| ProtocolError::header_mismatch("Mcp-Name", format!("Mcp-Name: {e}")))?;
        let body = req.params.get(field).and_then(Value::as_str);
        if body != Some(&*decoded) {
            return Err(ProtocolError::header_mismatch(
                "Mcp-Name",
                format!("Mcp-Name header value {decoded:?} does not match body {field} {body:?}"),
            ));
        }
    }
    if req.method == mcp_protocol::Method::ToolsCall.as_str() {
        check_param_headers(h, req, server, caller)?;
    }
    Ok(())
}

fn check_param_headers(
    h: &HeaderMap,
    req: &Request,
    server: &Server,
    caller: &mcp_server::Caller<'_>,
) -> Result<(), ProtocolError> {
    let Some(name) = req.params.get("name").and_then(Value::as_str) else {
        return Ok(());
    };
    // A tool the caller may not see is checked like an unknown one (not at all).
    let Some(params) = mcp_server::internal::header_params_of(server, name, caller) else {
        return Ok(());
    };
    let empty = serde_json::Map::new();
    let args = req.params.get("arguments").and_then(Value::as_object).unwrap_or(&empty);
    for p in params.iter() {
        let raw = header_str(h, p.header_lower.as_str())?;
        let body = header_value_for(args, &p.path);
        match (raw, body) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(ProtocolError::header_mismatch(
                    format!("Mcp-Param-{}", p.header),
                    format!("missing Mcp-Param-{} header for a value present in the body", p.header),
                ))
            }
            (Some(raw), body) => {
                let decoded = decode_value(raw).map_err(|e| {
                    ProtocolError::header_mismatch(
                        format!("Mcp-Param-{}", p.header),
                        format!("Mcp-Param-{}: {e}", p.header),
                    )
                })?;
                match body {
                    Some(b) if header_matches(&decoded, &b) => {}
                    Some(b) => {
                        return Err(ProtocolError::header_mismatch(
                            format!("Mcp-Param-{}", p.header),
                            format!("Mcp-Param-{} header value {decoded:?} does not match body value {b}", p.header),
                        ))
                    }
                    None => {
                        return Err(ProtocolError::header_mismatch(
                            format!("Mcp-Param-{}", p.header),
                            format!("Mcp-Param-{} header present but the body has no value for it", p.header),
                        ))
                    }
                }
            }
        }
    }
    Ok(())
}

/// The refusal of a `tools/call` the principal's scopes do not cover, if any.
pub(crate) fn tool_scope_refusal(
    auth: Option<&mcp_auth::AuthConfig>,
    principal: Option<&mcp_auth::Principal>,
    req: &Request,
) -> Option<crate::response::Resp> {
    let (Some(auth), Some(p)) = (auth, principal) else { return None };
    if mcp_protocol::Method::parse(&req.method) != Some(mcp_protocol::Method::ToolsCall) {
        return None;
    }
    let name = req.params.get("name").and_then(Value::as_str)?;
    auth.check_tool(p, name).err().map(|e| crate::response::auth_refusal(auth, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_parsing() {
        assert_eq!(host_of("127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(host_of("[::1]:80"), "[::1]");
        assert_eq!(host_of("LocalHost"), "localhost");
        // The comparison the checks use agrees with `host_of`, without allocating.
        for (authority, allowed, expect) in [
            ("127.0.0.1:8080", "127.0.0.1", true),
            (" LocalHost:3000 ", "localhost", true),
            ("[::1]:80", "[::1]", true),
            ("[::1", "[::1]", true),
            ("[::1]:80", "::1", false),
            ("[::2]:80", "[::1]", false),
            ("evil.example", "localhost", false),
            ("localhost.evil.example", "localhost", false),
            ("", "", true),
        ] {
            assert_eq!(HostPart::of(authority).is(allowed), expect, "{authority:?} against {allowed:?}");
            assert_eq!(host_of(authority) == allowed, expect, "host_of({authority:?})");
        }
    }

    #[test]
    fn origin_rules() {
        let hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let origins = vec!["host:localhost".to_owned(), "host:127.0.0.1".to_owned()];
        let mut h = HeaderMap::new();
        h.insert("host", "127.0.0.1:3000".parse().unwrap());
        assert!(check_host_origin(&h, None, &hosts, &origins).is_ok());
        h.insert("origin", "http://localhost:5173".parse().unwrap());
        assert!(check_host_origin(&h, None, &hosts, &origins).is_ok());
        h.insert("origin", "https://evil.example".parse().unwrap());
        assert_eq!(check_host_origin(&h, None, &hosts, &origins).unwrap_err().http_status(), 403);
        h.remove("origin");
        h.insert("host", "evil.example".parse().unwrap());
        assert_eq!(check_host_origin(&h, None, &hosts, &origins).unwrap_err().http_status(), 403);
    }

    #[test]
    fn duplicate_host_and_absolute_form_targets() {
        let (hosts, origins) = (vec!["localhost".to_owned()], vec![]);
        let mut h = HeaderMap::new();
        h.insert("host", "localhost:3000".parse().unwrap());
        h.append("host", "localhost:3000".parse().unwrap());
        let e = check_host_origin(&h, None, &hosts, &origins).unwrap_err();
        assert_eq!((e.http_status().as_u16(), e.code()), (400, -32600), "{e}");
        // Even when anything goes, two Host fields are malformed.
        assert_eq!(check_host_origin(&h, None, &[], &origins).unwrap_err().http_status(), 400);
        // An absolute-form target's authority replaces Host and is checked like it.
        h.remove("host");
        h.insert("host", "localhost:3000".parse().unwrap());
        let evil: http::Uri = "http://evil.example:3000/mcp".parse().unwrap();
        let e = check_host_origin(&h, evil.authority(), &hosts, &origins).unwrap_err();
        assert_eq!(e.http_status(), 403);
        assert!(e.to_string().contains("evil.example"), "{e}");
        let good: http::Uri = "http://LOCALHOST:3000/mcp".parse().unwrap();
        assert!(check_host_origin(&h, good.authority(), &hosts, &origins).is_ok());
        // ... even with a bad Host beside it.
        h.insert("host", "evil.example".parse().unwrap());
        assert!(check_host_origin(&h, good.authority(), &hosts, &origins).is_ok());
    }

    #[test]
    fn metadata_headers_are_found_in_one_pass_and_repeats_refused() {
        let server = Server::builder("s", "1").build().expect("server");
        let caller = mcp_server::Caller::new(None, &[]);
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let Ok(mcp_protocol::jsonrpc::Incoming::Request(req)) = mcp_protocol::jsonrpc::parse_incoming(body, 64) else {
            panic!("a request")
        };
        let mut h = HeaderMap::new();
        h.insert("content-type", "application/json".parse().unwrap());
        h.insert("MCP-Protocol-Version", " 2026-07-28\t".parse().unwrap());
        h.insert("mcp-method", "tools/list".parse().unwrap());
        assert!(
            check_request_headers(&h, &req, &server, &caller).is_ok(),
            "whitespace around a value is not part of it"
        );
        h.append("mcp-method", "tools/list".parse().unwrap());
        let e = check_request_headers(&h, &req, &server, &caller).unwrap_err();
        assert!(e.to_string().contains("more than once"), "{e}");
        assert_eq!(e.http_status(), 400);
        h.remove("mcp-method");
        let e = check_request_headers(&h, &req, &server, &caller).unwrap_err();
        assert!(e.to_string().contains("missing required Mcp-Method"), "{e}");
        h.insert("mcp-method", "tools/call".parse().unwrap());
        let e = check_request_headers(&h, &req, &server, &caller).unwrap_err();
        assert!(e.to_string().contains("does not match body method"), "{e}");
    }
}
