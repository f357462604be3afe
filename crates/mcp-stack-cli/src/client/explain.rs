//! Turning a client error into one clear line (and hints) on stderr: what failed, why, and
//! what to try, with any secret in a URL redacted; a failed connection to something that is not
//! an MCP endpoint is probed once more and summarized (with the hints of `hints`).

use super::hints::{self, host_refusal, not_mcp_line};
use super::{is_http_url, Failure, Options, Target};
use mcp::protocol::version;
use mcp_client::{ClientError, ServerEra, TransportError};
use mcp_doctor::probe::Prober;
use serde_json::json;
use std::time::Duration;

/// The cause of a connection failure, without the URL the transport may have put first.
fn connect_cause(m: &str) -> String {
    let m = match m.split_once(": ") {
        Some((head, rest)) if is_http_url(head) => rest,
        _ => m,
    };
    let lower = m.to_ascii_lowercase();
    if lower.contains("connection refused") {
        "connection refused (is the server running?)".into()
    } else if lower.contains("dns error")
        || lower.contains("failed to lookup")
        || lower.contains("name or service not known")
    {
        format!("the host name could not be resolved ({m})")
    } else {
        m.to_owned()
    }
}

/// Turns a client error into a one-line failure naming its cause.
pub(super) fn describe(
    e: ClientError,
    target: &Target,
    era: Option<&ServerEra>,
    method: &str,
    opts: &Options,
) -> Failure {
    let mut f = describe_inner(e, target, era, method, opts);
    // The URL may carry a secret (a `${TOKEN}` in its query): never in a message.
    if let Target::Http { url, .. } = target {
        let shown = mcp_client::config::redact_url(url);
        if shown != *url {
            f.message = f.message.replace(url.as_str(), &shown);
            for h in &mut f.hints {
                *h = h.replace(url.as_str(), &shown);
            }
        }
    }
    f
}

fn describe_inner(e: ClientError, target: &Target, era: Option<&ServerEra>, method: &str, opts: &Options) -> Failure {
    let legacy = match era {
        Some(ServerEra::Legacy { version, .. }) => Some(version.clone()),
        _ => None,
    };
    let t = target.describe();
    match e {
        ClientError::Transport(te) => match te {
            TransportError::Connect(m, _) => match target {
                Target::Http { .. } => Failure::new(format!("cannot connect to {t}: {}", connect_cause(&m))),
                Target::Stdio { program, .. } => Failure::new(format!("cannot start {program}: {m}")),
            },
            TransportError::Closed(m) => match target {
                Target::Http { .. } => Failure::new(format!("{t} closed the connection: {m}")),
                Target::Stdio { .. } => Failure::new(format!("the connection to the server process {t} ended: {m}")),
            },
            TransportError::Http { status, body, .. } => {
                let body: String = body.trim().chars().take(300).collect();
                let mut f = Failure::new(format!(
                    "{t} answered HTTP {status}{}",
                    if body.is_empty() { String::new() } else { format!(": {body}") }
                ));
                if status == 404 {
                    f = f.hint("is this the server's MCP endpoint (often /mcp)?");
                }
                f
            }
            TransportError::Timeout => timeout_failure(opts),
            TransportError::Auth(m, _) => Failure::new(format!("{t}: authorization failed: {m}"))
                .hint(format!("log in again with `mcp auth login {}`", target.describe())),
            other => Failure::new(format!("{t}: {other}")),
        },
        ClientError::Timeout(d) => timeout_failure(opts).hint(format!("no answer from the server within {d:?}")),
        ClientError::AuthRequired { status, www_authenticate } => {
            let mut f =
                Failure::new(format!("{t} requires authorization (HTTP {status}); log in with `mcp auth login {t}`"));
            let sent_auth =
                opts.headers.iter().any(|h| h.trim_start().to_ascii_lowercase().starts_with("authorization:"));
            f = f.hint(if sent_auth {
                "the server did not accept the Authorization header given with --header"
            } else {
                "a token you already have can be sent with --header 'Authorization: Bearer TOKEN'"
            });
            if let Some(w) = www_authenticate {
                f = f.hint(format!("server challenge: {w}"));
            }
            f
        }
        ClientError::Server { code, message, data } => {
            let mut f = if code == mcp::protocol::error::code::METHOD_NOT_FOUND {
                let mut f = Failure::new(format!("the server does not support {method} (JSON-RPC {code}: {message})"));
                let caps = match era {
                    Some(ServerEra::Modern { discover, .. }) => discover.raw().get("capabilities").cloned(),
                    Some(ServerEra::Legacy { initialize, .. }) => initialize.get("capabilities").cloned(),
                    None => None,
                };
                let family = match method.split('/').next().unwrap_or("") {
                    "completion" => "completions",
                    f => f,
                };
                if let Some(c) = caps.filter(|c| c.is_object() && c.get(family).is_none()) {
                    if matches!(family, "tools" | "resources" | "prompts" | "completions" | "logging") && c.is_object()
                    {
                        f = f.hint(format!("it does not declare the `{family}` capability"));
                    }
                }
                if let Some(v) = &legacy {
                    f = f.hint(format!("it is a legacy server (protocol {v}), which may predate this method"));
                }
                f
            } else if code == mcp::protocol::error::code::MISSING_REQUIRED_CLIENT_CAPABILITY {
                hints::missing_capability(&message, data.as_ref(), opts)
            } else {
                Failure::new(format!("server error {code}: {message}"))
            };
            let shown = code == mcp::protocol::error::code::MISSING_REQUIRED_CLIENT_CAPABILITY;
            if let Some(d) = data.as_ref().filter(|d| !d.is_null() && !shown) {
                let s = d.to_string();
                if s.len() <= 300 {
                    f = f.hint(format!("data: {s}"));
                }
            }
            f.code = Some(code);
            f.data = data;
            f
        }
        ClientError::ResourceNotFound { uri, .. } => {
            let mut f = Failure::new(format!("resource not found: {uri}"));
            f.code = Some(mcp::protocol::error::code::INVALID_PARAMS);
            f
        }
        ClientError::NoCommonVersion { server } => {
            let mut ours: Vec<&str> = version::MODERN.to_vec();
            ours.extend_from_slice(version::LEGACY);
            Failure::new(format!(
                "no protocol version in common: {t} supports {}; this client supports {}",
                server.join(", "),
                ours.join(", ")
            ))
        }
        ClientError::Unsupported { request: what, .. } => {
            if what.contains("legacy server") {
                Failure::new(format!(
                    "{method} needs a modern ({}) server; {t} is a legacy server (protocol {})",
                    version::LATEST,
                    legacy.unwrap_or_else(|| "?".into())
                ))
            } else if opts.no_input {
                Failure::new(format!("the server asked for {what}, which --no-input refuses"))
            } else {
                Failure::new(format!("the server asked for {what}, which this client does not support"))
            }
        }
        ClientError::ListTooLarge { method, bound } => {
            Failure::new(format!("{t}: the {method} answer is larger than {bound}; stopped reading it there"))
                .hint("raise the bound with --max-list-bytes BYTES or --max-list-items N")
        }
        other => Failure::new(other.to_string()),
    }
}

fn timeout_failure(opts: &Options) -> Failure {
    let limit = opts.timeout.map(|d| format!("{}s", d.as_secs_f64())).unwrap_or_else(|| "60s".into());
    Failure::new(format!("timed out waiting for the server (limit {limit}; change it with --timeout SECS)"))
}

/// Whether a connection failure may come from an endpoint that does not speak MCP.
fn maybe_not_mcp(e: &ClientError) -> bool {
    matches!(
        e,
        ClientError::Transport(TransportError::Http { .. } | TransportError::Malformed(_) | TransportError::Closed(_))
            | ClientError::InvalidResponse { .. }
    ) && !matches!(e, ClientError::Transport(TransportError::Http { status: 401, .. }))
}

/// Turns a failed connection into a failure; for an HTTP target whose failure may mean "this
/// is not an MCP endpoint", one more `server/discover` POST is read raw and summarized.
pub(super) async fn connect_failure(e: ClientError, target: &Target, opts: &Options) -> Failure {
    if let (Target::Http { url, headers }, true) = (target, maybe_not_mcp(&e)) {
        if let Some(line) = probe_not_mcp(url, headers, opts).await {
            return Failure::new(line);
        }
    }
    host_refusal(describe(e, target, None, "server/discover", opts))
}

/// One raw `server/discover` POST to `url`: its one-line summary when plainly not MCP.
async fn probe_not_mcp(url: &str, headers: &[(String, String)], opts: &Options) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let timeout = opts.timeout.unwrap_or(Duration::from_secs(10)).min(Duration::from_secs(10));
    let prober = Prober::new(parsed, headers.to_vec(), timeout).ok()?;
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}});
    let extra = [("mcp-protocol-version".to_owned(), mcp::protocol::version::LATEST.to_owned())];
    let a = prober.post(&discover, &extra).await.ok()?;
    not_mcp_line(url, &a)
}
