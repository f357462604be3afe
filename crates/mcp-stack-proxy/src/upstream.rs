//! The upstream server (a stdio command or a URL) and connecting one client session to it.
//!
//! A session declares exactly the input capabilities of the downstream clients it serves
//! ([`InputCaps`]), and its elicitation, sampling and roots handlers hand each question to the
//! call it belongs to ([`Asker`]): the call whose task asks (a modern upstream's rounds are
//! answered inside the call), else the call a legacy session is serving right now; see
//! `flight.rs`.
//!
//! Upstream URLs are logged redacted ([`redact_url`]): no userinfo, no query, no fragment.

use mcp_client::config::ServerSpec;
use mcp_client::transport::http::HttpTransport;
use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
use mcp_client::{Client, ClientBuilder, ClientError, ElicitationModes, Sampling, TransportError};
use parking_lot::Mutex;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// How to reach the upstream server: a configured server ([`ServerSpec`], the client's own
/// description of a stdio command or an HTTP endpoint), and for an HTTP one the proxy's own
/// authorization there.
#[derive(Clone)]
pub struct Upstream {
    spec: ServerSpec,
    auth: Option<Arc<dyn mcp_client::AuthProvider>>,
}

/// The input capabilities a downstream request declared, which its upstream session declares
/// in turn: only these questions can come back from the upstream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct InputCaps {
    /// Form-mode elicitation.
    pub(crate) form: bool,
    /// URL-mode elicitation.
    pub(crate) url: bool,
    /// Sampling.
    pub(crate) sampling: bool,
    /// Sampling with tools.
    pub(crate) sampling_tools: bool,
    /// Roots.
    pub(crate) roots: bool,
    /// MCP Apps (not a question the upstream asks, but what it lists: app-only tools exist
    /// only for sessions that render apps).
    pub(crate) apps: bool,
}

impl InputCaps {
    /// What a request's `clientCapabilities` declares (`elicitation: {}` means form mode).
    pub(crate) fn from_client(caps: &Map<String, Value>) -> Self {
        let present = |k: &str| caps.get(k).is_some_and(|v| !v.is_null());
        let elicitation = caps.get("elicitation").and_then(Value::as_object);
        let mode = |m: &str| elicitation.is_some_and(|e| e.contains_key(m));
        Self {
            form: elicitation.is_some_and(|e| e.is_empty()) || mode("form"),
            url: mode("url"),
            sampling: present("sampling"),
            sampling_tools: caps.get("sampling").and_then(|s| s.get("tools")).is_some(),
            roots: present("roots"),
            apps: mcp::server::mcp_protocol::apps::renders_apps(caps),
        }
    }

    /// Whether the upstream may ask anything at all.
    pub(crate) fn any(&self) -> bool {
        self.form || self.url || self.sampling || self.roots
    }
}

/// A question from the upstream for the downstream client, and where its answer goes.
pub(crate) struct Question {
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub(crate) method: String,
    /// The request's params.
    pub(crate) params: Value,
    /// The answer (the result object) or why there is none.
    pub(crate) reply: oneshot::Sender<Result<Value, ClientError>>,
}

impl std::fmt::Debug for Question {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Question").field("method", &self.method).finish_non_exhaustive()
    }
}

tokio::task_local! {
    /// Where the questions of the call running in this task go (see [`asking`]).
    static CALL: mpsc::Sender<Question>;
}

/// Runs `call` with its questions going to `to`: an input handler invoked inside the call (a
/// modern upstream's `input_required` rounds are answered there) asks this call, whichever
/// session it runs on, so a modern session can be shared by calls that may be asked.
pub(crate) async fn asking<F: std::future::Future>(to: mpsc::Sender<Question>, call: F) -> F::Output {
    CALL.scope(to, call).await
}

/// Where a session's questions go: the asking call's own (see [`asking`]), else the call the
/// session serves now (legacy sessions that can be asked serve one call at a time, so a
/// server-to-client request always belongs to that call).
#[derive(Default)]
pub(crate) struct Asker(Mutex<Option<mpsc::Sender<Question>>>);

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Asker")
    }
}

impl Asker {
    /// Routes questions to `to` (or nowhere).
    pub(crate) fn route(&self, to: Option<mpsc::Sender<Question>>) {
        *self.0.lock() = to;
    }

    async fn ask(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let to = CALL.try_with(Clone::clone).ok().or_else(|| self.0.lock().clone());
        let to = to.ok_or_else(|| ClientError::handler(format!("{method} outside of a proxied call")))?;
        let (reply, answer) = oneshot::channel();
        // The channel is bounded (the call's questions of one round): past it the upstream's
        // question is refused rather than queued.
        to.try_send(Question { method: method.to_owned(), params, reply }).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => {
                ClientError::handler("too many questions from the upstream at once for one proxied call")
            }
            mpsc::error::TrySendError::Closed(_) => ClientError::handler("the proxied call has ended"),
        })?;
        answer.await.unwrap_or_else(|_| Err(ClientError::handler("the downstream client did not answer")))
    }
}

/// How long an upstream request may wait for its next message (input rounds included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

impl std::fmt::Debug for Upstream {
    /// Names only for environment variables and headers, the URL redacted: they may hold
    /// credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.spec {
            ServerSpec::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", &redact_url(url))
                .field("headers", &headers.iter().map(|(k, _)| k).collect::<Vec<_>>())
                .field("auth", &self.auth.is_some())
                .finish(),
            spec => std::fmt::Debug::fmt(spec, f),
        }
    }
}

impl Upstream {
    /// The server `spec` names (a stdio command: one child process per session; an HTTP
    /// endpoint: its headers are the proxy's own, never the downstream's).
    pub fn new(spec: ServerSpec) -> Self {
        Self { spec, auth: None }
    }

    /// The proxy's own authorization at an HTTP upstream (e.g. an `mcp_oauth::OAuthProvider`),
    /// shared by every session; never the downstream client's token. Unused for stdio.
    pub fn auth(mut self, provider: Arc<dyn mcp_client::AuthProvider>) -> Self {
        self.auth = Some(provider);
        self
    }

    /// The server this upstream is.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    /// A short description for logs (URLs redacted: no userinfo, query or fragment).
    pub fn describe(&self) -> String {
        match &self.spec {
            ServerSpec::Http { url, .. } => redact_url(url),
            ServerSpec::Stdio { command, args, .. } => format!("`{} {}`", command, args.join(" ")).replace(" `", "`"),
            other => format!("{other:?}"),
        }
    }

    /// Whether sessions are child processes (a lost one is "restarted").
    pub(crate) fn is_process(&self) -> bool {
        matches!(self.spec, ServerSpec::Stdio { .. })
    }

    /// Connects one session declaring `caps` (and the tasks extension when `tasks`), its
    /// questions going to `asker`; with `force_legacy`, an `initialize` session at that version
    /// without the era probe. The lists its client reads in full (the tool list it reads to
    /// learn a tool's headers, the resources it subscribes to) are bounded by `list`, the
    /// proxy's own list bounds.
    pub(crate) async fn connect(
        &self,
        caps: InputCaps,
        tasks: bool,
        asker: Arc<Asker>,
        timeout: Duration,
        force_legacy: Option<&str>,
        list: crate::lists::ListLimits,
    ) -> Result<Client, ClientError> {
        let mut b = ClientBuilder::new("mcp-proxy", env!("CARGO_PKG_VERSION"))
            .max_list(list.max_bytes, list.max_items)
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(timeout)
            .probe_timeout(timeout / 3)
            .tasks(tasks)
            .apps(caps.apps)
            .log_attribution(caps.any()); // without input caps, calls of many callers share it
        if let Some(v) = force_legacy {
            b = b.force_legacy(v);
        }
        if caps.form || caps.url {
            let a = asker.clone();
            let modes = ElicitationModes { form: caps.form, url: caps.url };
            b = b.on_elicitation_raw(modes, move |p| {
                let a = a.clone();
                async move { a.ask("elicitation/create", p).await }
            });
        }
        if caps.sampling {
            let a = asker.clone();
            let kind = if caps.sampling_tools { Sampling::WithTools } else { Sampling::Text };
            b = b.on_sampling_raw(kind, move |p| {
                let a = a.clone();
                async move { a.ask("sampling/createMessage", p).await }
            });
        }
        if caps.roots {
            b = b.on_roots_raw(move |p| {
                let a = asker.clone();
                async move { a.ask("roots/list", p).await }
            });
        }
        match &self.spec {
            ServerSpec::Stdio { command, args, env, cwd } => {
                let mut cmd = StdioCommand::new(command.clone()).args(args.iter().cloned()).envs(env.iter().cloned());
                if let Some(d) = cwd {
                    cmd = cmd.cwd(d.clone());
                }
                b.connect(StdioTransport::spawn(cmd)?).await
            }
            ServerSpec::Http { url, headers } => {
                let mut t = HttpTransport::builder(url).connect_timeout(timeout);
                for (k, v) in headers {
                    t = t.header(k.clone(), v.clone());
                }
                if let Some(p) = &self.auth {
                    t = t.auth(p.clone());
                }
                b.connect(t.build()?).await
            }
            other => Err(ClientError::Transport(TransportError::Connect(
                format!("cannot proxy {other:?}: not a stdio or HTTP server"),
                None,
            ))),
        }
    }
}

/// `url` without what must not reach a log or another caller: userinfo (`user:pass@`), the
/// query (`?api_key=...`) and the fragment.
pub(crate) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.split(['?', '#']).next().unwrap_or_default().to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let path = tail.split(['?', '#']).next().unwrap_or_default();
    format!("{scheme}://{host}{path}")
}

/// An upstream's `text` (an error message, a name) as a log line carries it: URLs redacted
/// ([`redact_urls`]) and every control and bidi character escaped
/// ([`mcp::server::mcp_protocol::text::escape_line`]), so an upstream cannot forge, overwrite
/// or reorder the proxy's log lines on a terminal.
pub(crate) fn loggable(text: &str) -> String {
    mcp::server::mcp_protocol::text::escape_line(&redact_urls(text)).into_owned()
}

/// `text` (an error message, a log line) with every `http://` or `https://` URL in it
/// redacted as [`redact_url`] does.
pub(crate) fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["http://", "https://"].iter().filter_map(|s| rest.find(s)).min();
        let Some(at) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        let url = &rest[at..];
        let end = url
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | ')' | '`'))
            .unwrap_or(url.len());
        out.push_str(&redact_url(&url[..end]));
        rest = &url[end..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls_lose_their_userinfo_query_and_fragment() {
        assert_eq!(redact_url("https://u:p@h.example:8443/mcp?api_key=S#f"), "https://h.example:8443/mcp");
        assert_eq!(redact_url("http://h/?k=v"), "http://h/");
        assert_eq!(redact_url("http://h?k=v"), "http://h");
        let text = "error sending request for url (http://127.0.0.1:9/mcp?api_key=SECRET): refused; \
                    also https://a:b@x/y";
        let out = redact_urls(text);
        assert!(!out.contains("SECRET") && !out.contains("a:b"), "{out}");
        assert!(out.contains("(http://127.0.0.1:9/mcp): refused") && out.ends_with("https://x/y"), "{out}");
    }

    #[test]
    fn upstream_text_in_a_log_line_is_redacted_and_escaped() {
        let out = loggable("bad\r\u{1b}[2K\u{202e}gnp.exe see http://u:pw@h/mcp?k=S\nforged");
        assert_eq!(out, "bad\\r\\u{1b}[2K\\u{202e}gnp.exe see http://h/mcp\\nforged");
    }

    #[test]
    fn input_caps_follow_the_declaration() {
        let caps = |v: Value| InputCaps::from_client(v.as_object().unwrap());
        assert!(!caps(json!({})).any());
        assert_eq!(caps(json!({ "elicitation": {} })), InputCaps { form: true, ..Default::default() });
        let c = caps(json!({ "elicitation": { "url": {} }, "sampling": { "tools": {} }, "roots": {} }));
        assert_eq!(
            c,
            InputCaps { form: false, url: true, sampling: true, sampling_tools: true, roots: true, apps: false }
        );
        let apps = caps(
            json!({ "extensions": { "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] } } }),
        );
        assert!(apps.apps && !apps.any(), "rendering apps asks nothing");
    }
}
