//! Template parsing and matching never panic (first line: template, rest: URI).
use mcp_server::UriTemplate;

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let (t, uri) = s.split_once('\n').unwrap_or((s, ""));
    if let Ok(t) = UriTemplate::parse(t) {
        let _ = t.matches(uri);
    }
}
