//! Hints for the mistakes new users make first: a URL typed without its scheme, a Host header
//! our own server's DNS-rebinding check refuses, an HTTP answer that is not MCP at all (a web
//! page, a JSON API, a plain-text 404), summarized in one line by the summarizer `mcp doctor`
//! uses, client capabilities a server needs but was not offered, and the names a server does
//! offer. Plain text from plain data: nothing here connects or explains a client error (that is
//! `explain`, which builds on these).

use super::{Failure, Options};
use mcp_doctor::probe::Answer;
use serde_json::Value;

/// The URL a scheme-less word probably meant, if it looks like `host[:port][/path]`: a
/// loopback name gets `http://` (local servers rarely have certificates), any other host
/// `https://`. A bare word without a dot or a port (`myserver`) is not taken for a host: it
/// is a server name from a config file.
pub(super) fn scheme_less_url(word: &str) -> Option<String> {
    if word.is_empty() || word.contains("://") || word.chars().any(char::is_whitespace) || word.starts_with('-') {
        return None;
    }
    let authority = word.split(['/', '?', '#']).next().unwrap_or("");
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if port.is_some_and(|p| !p.bytes().all(|b| b.is_ascii_digit()) || p.parse::<u16>().is_err()) {
        return None;
    }
    let label_ok = |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let ipv6 = authority.starts_with('[') && host.parse::<std::net::Ipv6Addr>().is_ok();
    let hostname = host.split('.').all(label_ok);
    if !ipv6 && !hostname {
        return None;
    }
    let loopback = ipv6 && host == "::1"
        || host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::Ipv4Addr>().is_ok_and(|a| a.is_loopback());
    // `name` alone stays a config name; `name:3000`, `example.com`, `localhost` look like hosts.
    if !ipv6 && port.is_none() && !host.contains('.') && !loopback {
        return None;
    }
    let scheme = if loopback { "http" } else { "https" };
    Some(format!("{scheme}://{word}"))
}

/// Rewrites the "not a URL or a configured name" failure for a word that looks like a URL
/// without its scheme; other failures (a configured name that is broken) are kept.
pub(super) fn scheme_less(word: &str, f: Failure) -> Failure {
    match scheme_less_url(word) {
        Some(url) if f.message.contains("is not an http(s):// URL") => {
            let mut g = Failure::usage(format!("`{word}` has no scheme: did you mean {url}?"));
            g.hints = f.hints;
            g
        }
        _ => f,
    }
}

/// `-32021`: names the capabilities and the flag that declares them.
pub(super) fn missing_capability(message: &str, data: Option<&Value>, opts: &Options) -> Failure {
    let required = data.and_then(|d| d.get("requiredCapabilities")).and_then(Value::as_object);
    let names: Vec<String> = required
        .map(|r| {
            r.iter()
                .map(|(k, v)| match v.as_object().filter(|o| !o.is_empty()) {
                    Some(o) => {
                        format!("{k} ({})", o.keys().cloned().collect::<Vec<_>>().join(", "))
                    }
                    None => k.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    let what = if names.is_empty() { message.to_owned() } else { names.join(", ") };
    let mut f = Failure::new(format!("the server needs client capabilities this command did not declare: {what}"));
    let needs = |k: &str| required.is_some_and(|r| r.contains_key(k));
    if needs("roots") {
        f = f.hint("declare roots with --root URI (repeatable)");
    }
    if (needs("elicitation") || needs("sampling")) && opts.no_input {
        f = f.hint("--no-input turns elicitation and sampling off");
    }
    if needs("sampling") && required.and_then(|r| r.get("sampling")).and_then(|s| s.get("tools")).is_some() {
        f = f.hint("sampling with tools is not supported by this client");
    }
    f
}

/// Checks a `--force-legacy VERSION`: one of the legacy versions this client speaks.
pub(super) fn legacy_version(v: &str) -> Result<String, Failure> {
    if mcp::protocol::version::LEGACY.contains(&v) {
        Ok(v.to_owned())
    } else {
        Err(Failure::usage(format!(
            "--force-legacy {v}: not a legacy protocol version (one of {})",
            mcp::protocol::version::LEGACY.join(", ")
        )))
    }
}

/// The host name in our server's Host refusal (`Host "name" is not allowed`, see
/// `mcp-http`'s `check_host_origin`), if `said` is one.
fn refused_host(said: &str) -> Option<String> {
    let rest = said.split("Host \"").nth(1)?;
    let (host, tail) = rest.split_once('"')?;
    tail.trim_start().starts_with("is not allowed").then(|| host.to_owned())
}

/// Adds the `--allow-host` hint to a failure that reports our server's Host refusal.
pub(super) fn host_refusal(mut f: Failure) -> Failure {
    let said = [Some(f.message.as_str()), f.data.as_ref().and_then(Value::as_str)].into_iter().flatten();
    let host = said.filter_map(refused_host).next();
    if let Some(h) = host {
        let h = h.split(':').next().unwrap_or(&h).to_owned();
        f = f.hint(format!(
            "the server's DNS-rebinding protection refuses the host name {h}: start it with \
             `mcp serve ... --allow-host {h}` (or add {h} to its allowed hosts), or connect as localhost or 127.0.0.1"
        ));
    }
    f
}

/// What an answer that carries no JSON-RPC message is, in one line, when it is plainly not
/// MCP (a 5xx stays a server failure unless it is a web page, a 401 an authorization matter).
pub(super) fn not_mcp_line(url: &str, a: &Answer) -> Option<String> {
    let auth = a.status == 401 || (a.status == 403 && a.header("www-authenticate").is_some());
    let html = a.content_type == "text/html"
        || a.text().trim_start().get(..5).is_some_and(|s| s.eq_ignore_ascii_case("<!doc"));
    if a.message.is_some() || auth || (a.status >= 500 && !html) || a.content_type == "text/event-stream" {
        return None;
    }
    if a.status == 403 && refused_host(&a.text()).is_some() {
        return None;
    }
    Some(format!("{url} {}, not MCP — is the endpoint path right (usually /mcp)?", a.summary()))
}

/// "available {what}: a, b, …" (at most 25 names), or that the server offers none.
pub(super) fn names_hint(what: &str, names: &[String]) -> String {
    const MAX: usize = 25;
    if names.is_empty() {
        return format!("the server offers no {what}");
    }
    let mut s = names.iter().take(MAX).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > MAX {
        s.push_str(&format!(", … ({} in all)", names.len()));
    }
    format!("available {what}: {s}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_less_words() {
        assert_eq!(scheme_less_url("127.0.0.1:3000/mcp").as_deref(), Some("http://127.0.0.1:3000/mcp"));
        assert_eq!(scheme_less_url("localhost:3000").as_deref(), Some("http://localhost:3000"));
        assert_eq!(scheme_less_url("localhost").as_deref(), Some("http://localhost"));
        assert_eq!(scheme_less_url("example.com/mcp").as_deref(), Some("https://example.com/mcp"));
        assert_eq!(scheme_less_url("[::1]:8080/mcp").as_deref(), Some("http://[::1]:8080/mcp"));
        assert_eq!(scheme_less_url("myhost:8080").as_deref(), Some("https://myhost:8080"));
        for word in ["myserver", "my_server", "github", "a b.c", "ftp://x.y", "host:port", "x.com:99999", ""] {
            assert_eq!(scheme_less_url(word), None, "{word}");
        }
    }

    #[test]
    fn host_refusals() {
        assert_eq!(refused_host("Host \"mcp.example:3000\" is not allowed").as_deref(), Some("mcp.example:3000"));
        assert_eq!(refused_host("server error -32600: Host \"a.b\" is not allowed").as_deref(), Some("a.b"));
        assert_eq!(refused_host("Origin \"http://x\" is not allowed"), None);
        let f = host_refusal(Failure::new("x answered HTTP 403: Host \"evil.test:80\" is not allowed"));
        assert!(f.hints[0].contains("--allow-host evil.test"), "{:?}", f.hints);
    }
}
