//! The upstream server (a stdio command or a URL) and connecting one client session to it.
//!
//! A session declares exactly the input capabilities of the downstream clients it serves
//! ([`InputCaps`]), and its elicitation, sampling and roots handlers hand each question to the
//! call the session is serving right now ([`Asker`]); see `flight.rs`.

use mcp_client::transport::http::HttpTransport;
use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
use mcp_client::{Client, ClientBuilder, ClientError, ElicitationModes, Sampling};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// How to reach the upstream server.
#[derive(Debug, Clone)]
pub enum Upstream {
    /// A stdio server: one child process per session.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
        /// Working directory.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP (or HTTP+SSE) server.
    Http {
        /// The endpoint URL.
        url: String,
        /// Headers the proxy sends (its own credentials, `--header`); never the downstream's.
        headers: Vec<(String, String)>,
        /// The proxy's OAuth client for this upstream (shared by every session).
        auth: Option<Arc<mcp_oauth::OAuthProvider>>,
    },
}

/// The input capabilities a downstream request declared, which its upstream session declares
/// in turn: only these questions can come back from the upstream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct InputCaps {
    /// Form-mode elicitation.
    pub form: bool,
    /// URL-mode elicitation.
    pub url: bool,
    /// Sampling.
    pub sampling: bool,
    /// Sampling with tools.
    pub sampling_tools: bool,
    /// Roots.
    pub roots: bool,
}

impl InputCaps {
    /// What a request's `clientCapabilities` declares (`elicitation: {}` means form mode).
    pub fn from_client(caps: &Map<String, Value>) -> Self {
        let present = |k: &str| caps.get(k).is_some_and(|v| !v.is_null());
        let elicitation = caps.get("elicitation").and_then(Value::as_object);
        let mode = |m: &str| elicitation.is_some_and(|e| e.contains_key(m));
        Self {
            form: elicitation.is_some_and(|e| e.is_empty()) || mode("form"),
            url: mode("url"),
            sampling: present("sampling"),
            sampling_tools: caps.get("sampling").and_then(|s| s.get("tools")).is_some(),
            roots: present("roots"),
        }
    }

    /// Whether the upstream may ask anything at all.
    pub fn any(&self) -> bool {
        self.form || self.url || self.sampling || self.roots
    }
}

/// A question from the upstream for the downstream client, and where its answer goes.
pub struct Question {
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// The request's params.
    pub params: Value,
    /// The answer (the result object) or why there is none.
    pub reply: oneshot::Sender<Result<Value, ClientError>>,
}

impl std::fmt::Debug for Question {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Question").field("method", &self.method).finish_non_exhaustive()
    }
}

/// Where a session's questions go: the call it serves now (sessions that can be asked serve
/// one call at a time, so a question always belongs to that call).
#[derive(Default)]
pub struct Asker(Mutex<Option<mpsc::UnboundedSender<Question>>>);

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Asker")
    }
}

impl Asker {
    /// Routes questions to `to` (or nowhere).
    pub fn route(&self, to: Option<mpsc::UnboundedSender<Question>>) {
        *self.0.lock().expect("asker lock") = to;
    }

    async fn ask(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let to = self.0.lock().expect("asker lock").clone();
        let to = to.ok_or_else(|| ClientError::Handler(format!("{method} outside of a proxied call")))?;
        let (reply, answer) = oneshot::channel();
        to.send(Question { method: method.to_owned(), params, reply })
            .map_err(|_| ClientError::Handler("the proxied call has ended".into()))?;
        answer.await.unwrap_or_else(|_| Err(ClientError::Handler("the downstream client did not answer".into())))
    }
}

/// How long an upstream request may wait for its next message (input rounds included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

impl Upstream {
    /// A short description for logs.
    pub fn describe(&self) -> String {
        match self {
            Upstream::Stdio { program, args, .. } => format!("`{} {}`", program, args.join(" ")).replace(" `", "`"),
            Upstream::Http { url, .. } => url.clone(),
        }
    }

    /// Whether sessions are child processes (a lost one is "restarted").
    pub fn is_process(&self) -> bool {
        matches!(self, Upstream::Stdio { .. })
    }

    /// Connects one session declaring `caps` (and the tasks extension when `tasks`), its
    /// questions going to `asker`; with `force_legacy`, an `initialize` session at that version
    /// without the era probe.
    pub async fn connect(
        &self,
        caps: InputCaps,
        tasks: bool,
        asker: Arc<Asker>,
        timeout: Duration,
        force_legacy: Option<&str>,
    ) -> Result<Client, ClientError> {
        let mut b = ClientBuilder::new("mcp-proxy", env!("CARGO_PKG_VERSION"))
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(timeout)
            .probe_timeout(timeout / 3)
            .tasks(tasks);
        if let Some(v) = force_legacy {
            b = b.force_legacy(v);
        }
        if caps.form || caps.url {
            let a = asker.clone();
            let modes = ElicitationModes { form: caps.form, url: caps.url };
            b = b.on_elicitation(modes, move |p| {
                let a = a.clone();
                async move { a.ask("elicitation/create", p).await }
            });
        }
        if caps.sampling {
            let a = asker.clone();
            let kind = if caps.sampling_tools { Sampling::WithTools } else { Sampling::Text };
            b = b.on_sampling(kind, move |p| {
                let a = a.clone();
                async move { a.ask("sampling/createMessage", p).await }
            });
        }
        if caps.roots {
            b = b.on_roots(move |p| {
                let a = asker.clone();
                async move { a.ask("roots/list", p).await }
            });
        }
        match self {
            Upstream::Stdio { program, args, env, cwd } => {
                let mut cmd = StdioCommand::new(program.clone()).args(args.iter().cloned()).envs(env.iter().cloned());
                if let Some(d) = cwd {
                    cmd = cmd.cwd(d.clone());
                }
                b.connect(StdioTransport::spawn(cmd)?).await
            }
            Upstream::Http { url, headers, auth } => {
                let mut t = HttpTransport::builder(url).connect_timeout(timeout);
                for (k, v) in headers {
                    t = t.header(k.clone(), v.clone());
                }
                if let Some(p) = auth {
                    t = t.auth(p.clone());
                }
                b.connect(t.build()?).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_caps_follow_the_declaration() {
        let caps = |v: Value| InputCaps::from_client(v.as_object().unwrap());
        assert!(!caps(json!({})).any());
        assert_eq!(caps(json!({ "elicitation": {} })), InputCaps { form: true, ..Default::default() });
        let c = caps(json!({ "elicitation": { "url": {} }, "sampling": { "tools": {} }, "roots": {} }));
        assert_eq!(c, InputCaps { form: false, url: true, sampling: true, sampling_tools: true, roots: true });
    }
}
