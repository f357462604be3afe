//! MCP server configuration files: the `mcpServers` format of Claude Desktop, Claude Code and
//! Cursor, and VS Code's `servers` format, with `${VAR}` expansion and a search order.
//!
//! # Formats
//!
//! ```json
//! { "mcpServers": {
//!     "files": { "command": "npx", "args": ["-y", "server-files", "${HOME}/src"], "env": {"LOG": "debug"} },
//!     "remote": { "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"} }
//! } }
//! ```
//!
//! ```json
//! { "servers": {
//!     "files": { "type": "stdio", "command": "npx", "args": ["server-files"], "envFile": "${workspaceFolder}/.env" },
//!     "remote": { "type": "http", "url": "https://mcp.example.com/mcp" }
//! } }
//! ```
//!
//! A server is either a stdio command (`command`, `args`, `env`, `cwd`, and VS Code's `envFile`)
//! or an HTTP endpoint (`url`, `headers`). `type` is optional (inferred from `command` or `url`);
//! when present it is `stdio`, `http`, `streamable-http` or `sse` (the HTTP transport falls back
//! to the deprecated HTTP+SSE protocol by itself, so `sse` is reached at the same `url`).
//! Unknown keys (`description`, `autoApprove`, ...) are ignored; an entry with
//! `"disabled": true` is left out. Both keys may appear in one file (`mcpServers` wins a name
//! clash). Comments and trailing commas (JSONC, as VS Code writes) are accepted.
//!
//! # Variables
//!
//! In `command`, `args`, `env` values, `cwd`, `envFile`, `url` and `headers` values:
//! - `${VAR}` and `${env:VAR}`: the environment variable `VAR`; unset is an error naming it.
//! - `${VAR:-default}`: `default` (taken literally) when `VAR` is unset or empty.
//! - `${workspaceFolder}`: the folder the file belongs to (the parent of `.vscode` for
//!   `.vscode/mcp.json`, else the file's own folder).
//! - `$${` is a literal `${`; any other `$` is kept as is (`$HOME` is not expanded).
//! - `${input:ID}` (VS Code prompts), `${command:..}` and `${config:..}` are not supported: the
//!   server using them reports a clear error. VS Code's top-level `inputs` list is ignored.
//!
//! A relative `cwd` or `envFile` is resolved against the same folder as `${workspaceFolder}`.
//! `envFile` lines are `KEY=VALUE` (`#` comments, optional `export ` and quotes, no expansion);
//! `env` entries win over the file's.
//!
//! Problems with one server (an unset variable, `command` and `url` both given...) are kept on
//! that [`ServerEntry`] rather than failing the whole file, so the other servers stay usable; a
//! file that is not valid JSON, or has a value of the wrong type, fails with its line and column.
//!
//! # Search order
//!
//! [`McpConfig::search`] reads, in order, `./.mcp.json`, `./mcp.json`, `./.vscode/mcp.json`
//! (relative to [`SearchPaths::root`]) and `mcp.json` in the user's config directory
//! ([`default_user_dir`]). All files found are merged; on a name clash the earlier file wins.
//!
//! ```
//! use mcp_client::config::{McpConfig, ServerSpec};
//! let text = r#"{"mcpServers": {"demo": {"command": "mcp", "args": ["serve", "everything", "--stdio"]}}}"#;
//! let config = McpConfig::parse(text, "mcp.json", &|_: &str| None)?;
//! let entry = config.get("demo").unwrap();
//! assert!(matches!(entry.spec(), Ok(ServerSpec::Stdio { command, .. }) if command == "mcp"));
//! # Ok::<(), mcp_client::config::ConfigError>(())
//! ```

use crate::transport::http::HttpTransport;
use crate::transport::stdio::{StdioCommand, StdioTransport};
use crate::{Client, ClientBuilder, ClientError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Looks up a variable (`None`: unset). [`process_env`] reads the process environment.
pub type Vars<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment, as a [`Vars`] lookup.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Everything that can be wrong with a configuration file or one of its servers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file (or a server's `envFile`) could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid JSON (JSONC), or a value has the wrong type.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The file has neither a `mcpServers` nor a `servers` object.
    #[error("{}: no `mcpServers` or `servers` object", path.display())]
    NoServers {
        /// The file.
        path: PathBuf,
    },
    /// A server entry is not a valid stdio or HTTP server.
    #[error("{}: server `{server}`: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The server's name.
        server: String,
        /// What is wrong.
        message: String,
    },
    /// A `${VAR}` names an unset environment variable (and gives no default).
    #[error("{}: server `{server}`: {field} uses ${{{variable}}}, which is not set", path.display())]
    MissingVariable {
        /// The file.
        path: PathBuf,
        /// The server's name.
        server: String,
        /// Where (`args[1]`, `env.TOKEN`, `url`...).
        field: String,
        /// The variable.
        variable: String,
    },
    /// A `${...}` this reader does not support (`${input:..}`, `${command:..}`), or a malformed one.
    #[error("{}: server `{server}`: {field}: {message}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// The server's name.
        server: String,
        /// Where (`args[1]`, `env.TOKEN`, `url`...).
        field: String,
        /// What is not supported.
        message: String,
    },
}

/// How to reach one configured server (variables already expanded).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerSpec {
    /// A program speaking MCP on its stdin/stdout.
    Stdio {
        /// The program (looked up on `PATH` unless it names a path).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables, in order (later entries win).
        env: Vec<(String, String)>,
        /// Working directory (absolute when the file gave a relative one).
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP (or legacy HTTP+SSE) endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

impl std::fmt::Debug for ServerSpec {
    /// Names only for `env` and `headers`: their values may be credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = |v: &[(String, String)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        match self {
            ServerSpec::Stdio { command, args, env, cwd } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &keys(env))
                .field("cwd", cwd)
                .finish(),
            ServerSpec::Http { url, headers } => {
                f.debug_struct("Http").field("url", url).field("headers", &keys(headers)).finish()
            }
        }
    }
}

impl ServerSpec {
    /// `"stdio"` or `"http"`.
    pub fn transport_name(&self) -> &'static str {
        match self {
            ServerSpec::Stdio { .. } => "stdio",
            ServerSpec::Http { .. } => "http",
        }
    }

    /// The command line (arguments with spaces quoted) or the URL, for display.
    pub fn target(&self) -> String {
        match self {
            ServerSpec::Stdio { command, args, .. } => {
                let mut words = vec![quote(command)];
                words.extend(args.iter().map(|a| quote(a)));
                words.join(" ")
            }
            ServerSpec::Http { url, .. } => url.clone(),
        }
    }

    /// Starts (stdio) or addresses (HTTP) the server and connects `builder`'s client to it.
    pub async fn connect(&self, builder: ClientBuilder) -> Result<Client, ClientError> {
        match self {
            ServerSpec::Stdio { command, args, env, cwd } => {
                let mut cmd = StdioCommand::new(command.clone()).args(args.iter().cloned()).envs(env.iter().cloned());
                if let Some(d) = cwd {
                    cmd = cmd.cwd(d.clone());
                }
                builder.connect(StdioTransport::spawn(cmd)?).await
            }
            ServerSpec::Http { url, headers } => {
                let mut b = HttpTransport::builder(url);
                for (k, v) in headers {
                    b = b.header(k.clone(), v.clone());
                }
                builder.connect(b.build()?).await
            }
        }
    }
}

fn quote(s: &str) -> String {
    if !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// One named server from a configuration file.
#[derive(Debug)]
pub struct ServerEntry {
    name: String,
    source: PathBuf,
    spec: Result<ServerSpec, ConfigError>,
}

impl ServerEntry {
    /// The server's name (its key in the file).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file it came from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// How to reach it, or what is wrong with this entry (e.g. an unset variable).
    pub fn spec(&self) -> Result<&ServerSpec, &ConfigError> {
        self.spec.as_ref()
    }
}

/// The servers of one or more configuration files, by name.
#[derive(Debug, Default)]
pub struct McpConfig {
    servers: Vec<ServerEntry>,
    files: Vec<PathBuf>,
    searched: Vec<PathBuf>,
}

impl McpConfig {
    /// Parses `text`, the contents of the file at `path` (used in errors, as each server's
    /// source, and for `${workspaceFolder}` and relative paths); `vars` looks variables up.
    pub fn parse(text: &str, path: impl AsRef<Path>, vars: Vars<'_>) -> Result<Self, ConfigError> {
        let path = path.as_ref().to_path_buf();
        let clean = strip_jsonc(text);
        let raw: RawFile = serde_json::from_str(&clean).map_err(|e| ConfigError::Parse {
            path: path.clone(),
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        })?;
        if raw.mcp_servers.is_none() && raw.servers.is_none() {
            return Err(ConfigError::NoServers { path });
        }
        let base = base_dir(&path);
        let mut servers: Vec<ServerEntry> = Vec::new();
        for (name, server) in raw.mcp_servers.into_iter().chain(raw.servers).flatten() {
            if server.disabled || servers.iter().any(|s| s.name == name) {
                continue;
            }
            let ctx = Ctx { path: &path, server: &name, base: &base, vars };
            let spec = ctx.spec(server);
            servers.push(ServerEntry { name, source: path.clone(), spec });
        }
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self { servers, files: vec![path.clone()], searched: vec![path] })
    }

    /// Reads and parses the file at `path`, expanding variables from the process environment.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Self::load_with(path, &process_env)
    }

    /// [`McpConfig::load`] with variables from `vars`.
    pub fn load_with(path: impl AsRef<Path>, vars: Vars<'_>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { path: path.into(), source })?;
        Self::parse(&text, path, vars)
    }

    /// Reads every file of the search order that exists (see the module docs) and merges them,
    /// the earlier file winning a name clash. No file found gives an empty configuration.
    pub fn search(paths: &SearchPaths) -> Result<Self, ConfigError> {
        Self::search_with(paths, &process_env)
    }

    /// [`McpConfig::search`] with variables from `vars`.
    pub fn search_with(paths: &SearchPaths, vars: Vars<'_>) -> Result<Self, ConfigError> {
        let mut config = McpConfig::default();
        let candidates = paths.candidates();
        for path in &candidates {
            if path.is_file() {
                config.merge(Self::load_with(path, vars)?);
            }
        }
        config.searched = candidates;
        Ok(config)
    }

    /// Adds `other`'s servers whose names are not taken yet (`self` wins a clash).
    pub fn merge(&mut self, other: McpConfig) {
        for f in other.files {
            if !self.files.contains(&f) {
                self.files.push(f);
            }
        }
        for f in other.searched {
            if !self.searched.contains(&f) {
                self.searched.push(f);
            }
        }
        for s in other.servers {
            if self.get(&s.name).is_none() {
                self.servers.push(s);
            }
        }
        self.servers.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Every server, sorted by name.
    pub fn servers(&self) -> &[ServerEntry] {
        &self.servers
    }

    /// The server called `name`.
    pub fn get(&self, name: &str) -> Option<&ServerEntry> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The server names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.servers.iter().map(|s| s.name.as_str()).collect()
    }

    /// Whether there is no server at all.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The files that were read, in order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Every path looked at (found or not), in search order.
    pub fn searched(&self) -> &[PathBuf] {
        &self.searched
    }
}

/// Where [`McpConfig::search`] looks: a project folder and the user's config folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPaths {
    /// The project folder (`.mcp.json`, `mcp.json`, `.vscode/mcp.json` in it).
    pub root: PathBuf,
    /// The user's folder (`mcp.json` in it), if any.
    pub user_dir: Option<PathBuf>,
}

impl SearchPaths {
    /// Looks in `root`, and in `user_dir` when given.
    pub fn new(root: impl Into<PathBuf>, user_dir: Option<PathBuf>) -> Self {
        Self { root: root.into(), user_dir }
    }

    /// The current directory and [`default_user_dir`].
    pub fn from_env() -> Self {
        Self::new(std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")), default_user_dir())
    }

    /// The files looked for, in order.
    pub fn candidates(&self) -> Vec<PathBuf> {
        let mut v = vec![self.root.join(".mcp.json"), self.root.join("mcp.json"), self.root.join(".vscode/mcp.json")];
        if let Some(d) = &self.user_dir {
            v.push(d.join("mcp.json"));
        }
        v
    }
}

/// The user's MCP config folder, from the process environment: `$XDG_CONFIG_HOME/mcp` (when
/// absolute) or `$HOME/.config/mcp` on Unix (macOS included), `%APPDATA%\mcp` on Windows.
pub fn default_user_dir() -> Option<PathBuf> {
    user_dir_from(&process_env)
}

fn user_dir_from(vars: Vars<'_>) -> Option<PathBuf> {
    let abs = |k: &str| vars(k).map(PathBuf::from).filter(|p| p.is_absolute());
    if cfg!(windows) {
        return abs("APPDATA").map(|p| p.join("mcp"));
    }
    abs("XDG_CONFIG_HOME").or_else(|| abs("HOME").map(|h| h.join(".config"))).map(|p| p.join("mcp"))
}

/// The folder `${workspaceFolder}` and relative paths refer to.
fn base_dir(path: &Path) -> PathBuf {
    let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let parent = if parent.as_os_str().is_empty() { PathBuf::from(".") } else { parent };
    match parent.file_name() {
        Some(n) if n == ".vscode" => parent.parent().map(Path::to_path_buf).unwrap_or(parent),
        _ => parent,
    }
}

#[derive(Deserialize)]
#[serde(expecting = "an object with `mcpServers` or `servers`")]
struct RawFile {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<BTreeMap<String, RawServer>>,
    servers: Option<BTreeMap<String, RawServer>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a server object (`command` or `url`)")]
struct RawServer {
    #[serde(rename = "type")]
    kind: Option<RawKind>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, Scalar>,
    cwd: Option<String>,
    env_file: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    disabled: bool,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum RawKind {
    Stdio,
    Http,
    StreamableHttp,
    Sse,
}

/// An `env` value: a string, or a number or boolean taken as its text.
#[derive(Deserialize)]
#[serde(untagged, expecting = "a string, number or boolean")]
enum Scalar {
    String(String),
    Number(serde_json::Number),
    Bool(bool),
}

impl Scalar {
    fn text(self) -> String {
        match self {
            Scalar::String(s) => s,
            Scalar::Number(n) => n.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// serde_json appends " at line L column C"; the error carries them separately.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

/// Blanks out `//` and `/* */` comments and trailing commas, keeping every byte position.
fn strip_jsonc(text: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    let blank = |b: &mut [u8], from: usize, to: usize| {
        for c in &mut b[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    let mut last_comma: Option<usize> = None;
    while i < b.len() {
        match b[i] {
            b'"' => {
                last_comma = None;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
                blank(&mut b, i, end);
                i = end;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len(), |p| i + 2 + p + 2);
                blank(&mut b, i, end);
                i = end;
                continue;
            }
            b',' => last_comma = Some(i),
            b'}' | b']' => {
                if let Some(c) = last_comma.take() {
                    b[c] = b' ';
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => last_comma = None,
        }
        i += 1;
    }
    // Only ASCII bytes were replaced, each whole comment at once: still UTF-8.
    String::from_utf8(b).unwrap_or_else(|_| text.to_owned())
}

/// Expansion context of one server entry.
struct Ctx<'a> {
    path: &'a Path,
    server: &'a str,
    base: &'a Path,
    vars: Vars<'a>,
}

impl Ctx<'_> {
    fn invalid(&self, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid { path: self.path.into(), server: self.server.into(), message: message.into() }
    }

    fn spec(&self, s: RawServer) -> Result<ServerSpec, ConfigError> {
        let http = match (s.kind, &s.command, &s.url) {
            (_, Some(_), Some(_)) => return Err(self.invalid("has both `command` and `url`; give one")),
            (None, None, None) => return Err(self.invalid("has neither `command` (stdio) nor `url` (HTTP)")),
            (Some(RawKind::Stdio), None, _) => return Err(self.invalid("is `type: stdio` but has no `command`")),
            (Some(k), None, None) => return Err(self.invalid(format!("is `type: {}` but has no `url`", k.name()))),
            (Some(k), Some(_), None) if k != RawKind::Stdio => {
                return Err(self.invalid(format!("is `type: {}` but has `command` instead of `url`", k.name())))
            }
            (_, Some(_), None) => false,
            (_, None, Some(_)) => true,
        };
        if http {
            if !s.args.is_empty() || !s.env.is_empty() || s.cwd.is_some() || s.env_file.is_some() {
                return Err(self.invalid("is an HTTP server (`url`): `args`, `env`, `envFile` and `cwd` do not apply"));
            }
            let url = self.expand("url", s.url.as_deref().unwrap_or_default())?;
            let mut headers = Vec::with_capacity(s.headers.len());
            for (k, v) in &s.headers {
                headers.push((k.clone(), self.expand(&format!("headers.{k}"), v)?));
            }
            return Ok(ServerSpec::Http { url, headers });
        }
        if !s.headers.is_empty() {
            return Err(self.invalid("is a stdio server (`command`): `headers` do not apply"));
        }
        let command = self.expand("command", s.command.as_deref().unwrap_or_default())?;
        if command.trim().is_empty() {
            return Err(self.invalid("`command` is empty"));
        }
        let args =
            s.args.iter().enumerate().map(|(i, a)| self.expand(&format!("args[{i}]"), a)).collect::<Result<_, _>>()?;
        let mut env = match &s.env_file {
            Some(f) => self.env_file(&self.expand("envFile", f)?)?,
            None => Vec::new(),
        };
        for (k, v) in s.env {
            let v = self.expand(&format!("env.{k}"), &v.text())?;
            env.push((k, v));
        }
        let cwd = match &s.cwd {
            Some(c) => Some(self.base.join(self.expand("cwd", c)?)),
            None => None,
        };
        Ok(ServerSpec::Stdio { command, args, env, cwd })
    }

    /// Reads a dotenv-style file (relative to the base folder).
    fn env_file(&self, file: &str) -> Result<Vec<(String, String)>, ConfigError> {
        let path = self.base.join(file);
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Io { path: path.clone(), source })?;
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let line = line.strip_prefix("export ").unwrap_or(line);
            let Some((k, v)) = line.split_once('=') else {
                return Err(self.invalid(format!("{}:{}: expected KEY=VALUE", path.display(), n + 1)));
            };
            let v = v.trim();
            let v = [('"', '"'), ('\'', '\'')]
                .iter()
                .find_map(|(a, b)| v.strip_prefix(*a).and_then(|r| r.strip_suffix(*b)).filter(|_| v.len() >= 2))
                .unwrap_or(v);
            out.push((k.trim().to_owned(), v.to_owned()));
        }
        Ok(out)
    }

    /// Expands the variables of one field's value.
    fn expand(&self, field: &str, s: &str) -> Result<String, ConfigError> {
        let unsupported = |message: String| ConfigError::Unsupported {
            path: self.path.into(),
            server: self.server.into(),
            field: field.into(),
            message,
        };
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            if let Some(tail) = after.strip_prefix("${") {
                out.push_str("${");
                rest = tail;
                continue;
            }
            let Some(body) = after.strip_prefix('{') else {
                out.push('$');
                rest = after;
                continue;
            };
            let Some(end) = body.find('}') else {
                return Err(unsupported(format!("unterminated `${{` in {s:?}")));
            };
            match self.variable(&body[..end]) {
                Ok(v) => out.push_str(&v),
                Err(VarError::Bad(m)) => return Err(unsupported(m)),
                Err(VarError::Missing(variable)) => {
                    return Err(ConfigError::MissingVariable {
                        path: self.path.into(),
                        server: self.server.into(),
                        field: field.into(),
                        variable,
                    })
                }
            }
            rest = &body[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The value of `${inner}`.
    fn variable(&self, inner: &str) -> Result<String, VarError> {
        if inner == "workspaceFolder" {
            return Ok(self.base.to_string_lossy().into_owned());
        }
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if let Some((scheme, _)) = name.split_once(':') {
            return Err(VarError::Bad(match scheme {
                "input" => format!("`${{{inner}}}`: VS Code input variables (prompts) are not supported; set the value in the file or use ${{env:NAME}}"),
                _ => format!("`${{{inner}}}`: `{scheme}:` variables are not supported (only ${{NAME}}, ${{env:NAME}}, ${{NAME:-default}}, ${{workspaceFolder}})"),
            }));
        }
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(VarError::Bad(format!("`${{{inner}}}` is not a valid variable reference")));
        }
        match ((self.vars)(name), default) {
            (Some(v), Some(d)) if v.is_empty() => Ok(d.to_owned()),
            (Some(v), _) => Ok(v),
            (None, Some(d)) => Ok(d.to_owned()),
            (None, None) => Err(VarError::Missing(name.to_owned())),
        }
    }
}

/// Why a `${...}` has no value.
enum VarError {
    /// The variable is unset (and there is no default).
    Missing(String),
    /// Not supported or malformed: the message.
    Bad(String),
}

impl RawKind {
    fn name(self) -> &'static str {
        match self {
            RawKind::Stdio => "stdio",
            RawKind::Http => "http",
            RawKind::StreamableHttp => "streamable-http",
            RawKind::Sse => "sse",
        }
    }
}

#[cfg(test)]
mod tests;
