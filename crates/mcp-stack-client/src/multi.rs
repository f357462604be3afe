//! Several servers as one tool set: connects to every server of a [`McpConfig`], lists their
//! tools under prefixed names (`{server}_{tool}` by default) and routes a call of a prefixed
//! name to its server.
//!
//! A server that fails to connect (or whose configuration entry is invalid, or comes from a
//! project file not approved with [`McpConfig::approve`]) is reported in
//! [`MultiClient::failures`]; the others are used as usual.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_client::config::{McpConfig, SearchPaths};
//! use mcp_client::multi::MultiClient;
//! use mcp_client::ClientBuilder;
//!
//! let config = McpConfig::search(&SearchPaths::from_env())?;
//! let multi = MultiClient::builder()
//!     .client(|_server| ClientBuilder::new("my-app", "1.0.0"))
//!     .separator("__")
//!     .connect(&config)
//!     .await;
//! for f in multi.failures() {
//!     eprintln!("{}: {}", f.server, f.error);
//! }
//! let listing = multi.list_tools().await;
//! for t in &listing.tools {
//!     println!("{} (tool `{}` of server `{}`)", t.name, t.tool_name(), t.server);
//! }
//! let result = multi.call_tool("everything__echo", serde_json::json!({"text": "hi"})).await?;
//! println!("{}", result.text());
//! multi.close().await;
//! # Ok(()) }
//! ```

use crate::config::{ConfigError, McpConfig};
use crate::{Client, ClientBuilder, ClientError, ToolResult};
use serde_json::Value;
use std::path::PathBuf;

/// What went wrong with one server, or with routing a call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MultiError {
    /// The server's configuration entry is unusable (e.g. an unset variable).
    #[error("{0}")]
    Config(String),
    /// Connecting to the server, or a request to it, failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// No connected server's prefix matches the tool name.
    #[error("no server offers a tool named `{0}`")]
    UnknownTool(String),
    /// The name routes to a server that is not connected (see [`MultiClient::failures`]).
    #[error("server `{0}` is not connected")]
    NotConnected(String),
}

impl From<&ConfigError> for MultiError {
    fn from(e: &ConfigError) -> Self {
        MultiError::Config(e.to_string())
    }
}

/// One server's failure.
#[derive(Debug)]
#[non_exhaustive]
pub struct ServerFailure {
    /// The server's name.
    pub server: String,
    /// The file its entry came from.
    pub source: PathBuf,
    /// What went wrong.
    pub error: MultiError,
}

/// One tool of one server, under its prefixed name.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PrefixedTool {
    /// `{server}{separator}{tool}`: the name to pass to [`MultiClient::call_tool`].
    pub name: String,
    /// The server offering it.
    pub server: String,
    /// The tool's definition as the server sent it (with its own `name`).
    pub tool: crate::Typed<mcp_protocol::types::Tool>,
}

impl PrefixedTool {
    /// The tool's own name on its server.
    pub fn tool_name(&self) -> &str {
        &self.tool.name
    }

    /// The definition with `name` replaced by the prefixed name (to hand to a model).
    pub fn prefixed_definition(&self) -> Value {
        let mut t = self.tool.raw().clone();
        if let Some(o) = t.as_object_mut() {
            o.insert("name".into(), Value::String(self.name.clone()));
        }
        t
    }
}

/// The tools of every connected server, and the servers whose listing failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolList {
    /// Tools in server order (servers sorted by name), each server's in its own order.
    pub tools: Vec<PrefixedTool>,
    /// Servers whose `tools/list` failed.
    pub failures: Vec<ServerFailure>,
}

type Factory = Box<dyn Fn(&str) -> ClientBuilder + Send + Sync>;

/// Configures a [`MultiClient`].
pub struct MultiClientBuilder {
    factory: Factory,
    separator: String,
}

impl std::fmt::Debug for MultiClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiClientBuilder").field("separator", &self.separator).finish_non_exhaustive()
    }
}

impl Default for MultiClientBuilder {
    fn default() -> Self {
        Self {
            factory: Box::new(|_| ClientBuilder::new("mcp-multi-client", env!("CARGO_PKG_VERSION"))),
            separator: "_".into(),
        }
    }
}

impl MultiClientBuilder {
    /// Builds each server's client with `f` (given the server's name): client info, handlers,
    /// timeouts. Default: `ClientBuilder::new("mcp-multi-client", VERSION)`.
    pub fn client(mut self, f: impl Fn(&str) -> ClientBuilder + Send + Sync + 'static) -> Self {
        self.factory = Box::new(f);
        self
    }

    /// What joins a server's name and a tool's name (default `_`).
    pub fn separator(mut self, sep: impl Into<String>) -> Self {
        self.separator = sep.into();
        self
    }

    /// Connects to every server of `config` at once. Never fails as a whole: a server that
    /// cannot be used is in [`MultiClient::failures`].
    pub async fn connect(self, config: &McpConfig) -> MultiClient {
        let mut failures = Vec::new();
        let mut pending = Vec::new();
        for entry in config.servers() {
            match entry.spec() {
                Ok(spec) => {
                    let builder = (self.factory)(entry.name());
                    let (name, source) = (entry.name().to_owned(), entry.source().to_path_buf());
                    pending.push(async move { (name, source, spec.connect(builder).await) });
                }
                Err(e) => failures.push(ServerFailure {
                    server: entry.name().to_owned(),
                    source: entry.source().to_path_buf(),
                    error: e.into(),
                }),
            }
        }
        let mut servers = Vec::new();
        for (name, source, r) in futures::future::join_all(pending).await {
            match r {
                Ok(client) => servers.push(Connected { name, source, client }),
                Err(e) => failures.push(ServerFailure { server: name, source, error: e.into() }),
            }
        }
        failures.sort_by(|a, b| a.server.cmp(&b.server));
        MultiClient { servers, failures, separator: self.separator }
    }
}

#[derive(Debug)]
struct Connected {
    name: String,
    source: PathBuf,
    client: Client,
}

/// Clients of several servers, with tools addressed by prefixed names.
#[derive(Debug)]
pub struct MultiClient {
    /// Connected servers, sorted by name.
    servers: Vec<Connected>,
    failures: Vec<ServerFailure>,
    separator: String,
}

impl MultiClient {
    /// Starts configuring one.
    pub fn builder() -> MultiClientBuilder {
        MultiClientBuilder::default()
    }

    /// Connects to every server of `config` with the default settings (see
    /// [`MultiClientBuilder::connect`]).
    pub async fn connect(config: &McpConfig) -> MultiClient {
        Self::builder().connect(config).await
    }

    /// The connected servers (name and client), sorted by name.
    pub fn clients(&self) -> impl Iterator<Item = (&str, &Client)> {
        self.servers.iter().map(|s| (s.name.as_str(), &s.client))
    }

    /// The client of the connected server `name`.
    pub fn client(&self, name: &str) -> Option<&Client> {
        self.servers.iter().find(|s| s.name == name).map(|s| &s.client)
    }

    /// The servers that could not be connected, sorted by name.
    pub fn failures(&self) -> &[ServerFailure] {
        &self.failures
    }

    /// The separator between server and tool names.
    pub fn separator(&self) -> &str {
        &self.separator
    }

    /// The prefixed name of `server`'s tool `tool`.
    pub fn prefixed(&self, server: &str, tool: &str) -> String {
        format!("{server}{}{tool}", self.separator)
    }

    /// Which server and tool a prefixed name designates: the longest server name (connected
    /// or not) that, with the separator, starts `name` and leaves a non-empty tool name.
    pub fn route<'a>(&self, name: &'a str) -> Option<(&str, &'a str)> {
        let connected = self.servers.iter().map(|s| s.name.as_str());
        let failed = self.failures.iter().map(|f| f.server.as_str());
        connected
            .chain(failed)
            .filter_map(|s| {
                let tool = name.strip_prefix(s)?.strip_prefix(self.separator.as_str())?;
                (!tool.is_empty()).then_some((s, tool))
            })
            .max_by_key(|(s, _)| s.len())
    }

    /// Every connected server's tools (`tools/list`, all pages, asked of all servers at once).
    /// A tool whose prefixed name routes to another server (`a` + `b_c` against a server named
    /// `a_b`) is left out with a warning.
    pub async fn list_tools(&self) -> ToolList {
        let lists = futures::future::join_all(self.servers.iter().map(|s| s.client.list_tools())).await;
        let mut tools = Vec::new();
        let mut failures = Vec::new();
        for (Connected { name: server, source, .. }, r) in self.servers.iter().zip(lists) {
            match r {
                Ok(list) => {
                    for tool in list {
                        let own = tool.name.as_str();
                        let name = self.prefixed(server, own);
                        if self.route(&name) != Some((server.as_str(), own)) {
                            tracing::warn!(%server, tool = %own, %name, "tool hidden: its prefixed name routes to another server");
                            continue;
                        }
                        tools.push(PrefixedTool { name, server: server.clone(), tool });
                    }
                }
                Err(e) => {
                    failures.push(ServerFailure { server: server.clone(), source: source.clone(), error: e.into() })
                }
            }
        }
        ToolList { tools, failures }
    }

    /// Calls the tool with the prefixed `name` on its server (see [`MultiClient::route`]).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, MultiError> {
        let (server, tool) = self.route(name).ok_or_else(|| MultiError::UnknownTool(name.to_owned()))?;
        self.call_server_tool(server, tool, arguments).await
    }

    /// Calls `server`'s tool `tool` (its own, unprefixed name).
    pub async fn call_server_tool(&self, server: &str, tool: &str, arguments: Value) -> Result<ToolResult, MultiError> {
        let client = self.client(server).ok_or_else(|| MultiError::NotConnected(server.to_owned()))?;
        Ok(client.call_tool(tool, arguments).await?)
    }

    /// Closes every connection (stdio servers are terminated).
    pub async fn close(&self) {
        futures::future::join_all(self.servers.iter().map(|s| s.client.close())).await;
    }
}
