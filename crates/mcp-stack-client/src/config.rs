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
//! # Search order, and project files
//!
//! [`McpConfig::search`] reads `mcp.json` in the user's config directory
//! ([`default_user_dir`]) and then the *project files* `./.mcp.json`, `./mcp.json`,
//! `./.vscode/mcp.json` (relative to [`SearchPaths::root`]). All files found are merged; the
//! user's file wins a name clash with a project file (each clash is kept in
//! [`McpConfig::clashes`]), and between project files the earlier one wins.
//!
//! A project file comes with whatever folder it was found in (a cloned repository), so it
//! is **not trusted**: its servers are listed ([`ServerEntry::written`]) but nothing in them is
//! expanded, read or run until the caller approves the file with [`McpConfig::approve`]
//! (typically after asking the user, and remembering the answer in a
//! [`trust::TrustStore`] by the file's [`ProjectFile::digest`]). Until then the entries'
//! [`ServerEntry::spec`] is [`ConfigError::Untrusted`]. An approved project file is expanded
//! under stricter rules than the user's own files:
//! - only `${workspaceFolder}` and the variables the file lists in a top-level
//!   `"allowEnv": ["NAME", ...]` array are expanded; any other `${VAR}` is
//!   [`ConfigError::UndeclaredVariable`] (the value is never read);
//! - `envFile` must be inside the project folder (after resolving `..` and symbolic links),
//!   else [`ConfigError::EnvFileOutside`].
//!
//! A file given explicitly ([`McpConfig::load`], `--config FILE` in the CLI) is the user's
//! choice and follows the user's rules.
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
    /// A server of a project file that has not been approved (see [`McpConfig::approve`]).
    #[error("{}: server `{server}`: this project file is not trusted yet", path.display())]
    Untrusted {
        /// The file.
        path: PathBuf,
        /// The server's name.
        server: String,
    },
    /// A project file uses a variable it does not list in its `allowEnv` array.
    #[error(
        "{}: server `{server}`: {field} uses ${{{variable}}}, which this project file does not declare (only ${{workspaceFolder}} and the names in its top-level \"allowEnv\" array are expanded in a project file)",
        path.display()
    )]
    UndeclaredVariable {
        /// The file.
        path: PathBuf,
        /// The server's name.
        server: String,
        /// Where (`args[1]`, `env.TOKEN`, `url`...).
        field: String,
        /// The variable.
        variable: String,
    },
    /// A project file's `envFile` is outside the project folder.
    #[error("{}: server `{server}`: envFile {} is outside the project folder {}", path.display(), file.display(), folder.display())]
    EnvFileOutside {
        /// The file.
        path: PathBuf,
        /// The server's name.
        server: String,
        /// The `envFile` as resolved.
        file: PathBuf,
        /// The project folder.
        folder: PathBuf,
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

/// Whose file a server entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// The user's own file (the user config folder, or a file given explicitly).
    User,
    /// A project file found in the project folder (`./.mcp.json`...): untrusted until approved.
    Project,
}

/// A server entry as written in its file, nothing expanded: what to show before (and
/// instead of) its expanded form, which may hold secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Written {
    /// `"stdio"`, `"http"`, or `"?"` when the entry has neither `command` nor `url`.
    pub transport: &'static str,
    /// The command as written (stdio).
    pub command: Option<String>,
    /// The arguments as written (stdio).
    pub args: Vec<String>,
    /// The URL as written, with its userinfo and query redacted ([`redact_url`]).
    pub url: Option<String>,
    /// The names of the `env` entries (values are never shown).
    pub env: Vec<String>,
    /// The names of the headers (values are never shown).
    pub headers: Vec<String>,
    /// The `envFile` as written.
    pub env_file: Option<String>,
}

impl Written {
    fn of(s: &RawServer) -> Self {
        let transport = match (&s.command, &s.url) {
            (Some(_), None) => "stdio",
            (None, Some(_)) => "http",
            _ => "?",
        };
        Self {
            transport,
            command: s.command.clone(),
            args: s.args.clone(),
            url: s.url.as_deref().map(redact_url),
            env: s.env.keys().cloned().collect(),
            headers: s.headers.keys().cloned().collect(),
            env_file: s.env_file.clone(),
        }
    }

    /// The command line (arguments with spaces quoted) or the redacted URL, as written.
    pub fn target(&self) -> String {
        if let Some(c) = &self.command {
            let mut words = vec![quote(c)];
            words.extend(self.args.iter().map(|a| quote(a)));
            return words.join(" ");
        }
        self.url.clone().unwrap_or_default()
    }
}

pub use crate::redact::redact_url;

/// One named server from a configuration file.
#[derive(Debug)]
pub struct ServerEntry {
    name: String,
    source: PathBuf,
    origin: Origin,
    written: Written,
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

    /// Whose file it came from.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// The entry as written (nothing expanded, URL redacted): safe to show.
    pub fn written(&self) -> &Written {
        &self.written
    }

    /// Whether the entry may be used: `false` for a project file not approved yet.
    pub fn is_trusted(&self) -> bool {
        !matches!(self.spec, Err(ConfigError::Untrusted { .. }))
    }

    /// How to reach it, or what is wrong with this entry (e.g. an unset variable, or
    /// [`ConfigError::Untrusted`] for a project file not approved yet).
    pub fn spec(&self) -> Result<&ServerSpec, &ConfigError> {
        self.spec.as_ref()
    }
}

/// A project file found by [`McpConfig::search`], waiting for approval.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    path: PathBuf,
    canonical: PathBuf,
    text: String,
    digest: String,
}

impl ProjectFile {
    fn new(path: &Path, text: String) -> Self {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let digest = project_digest(&canonical, &text);
        Self { path: path.to_path_buf(), canonical, text, digest }
    }

    /// The file, as found.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's canonical path.
    pub fn canonical(&self) -> &Path {
        &self.canonical
    }

    /// SHA-256 (hex) of the canonical path and the contents that were read: what an approval
    /// is remembered by, so that a changed (or moved) file needs a new one.
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

/// SHA-256 (lower-case hex) of `canonical`'s bytes, a NUL, and `text`.
pub fn project_digest(canonical: &Path, text: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(canonical.to_string_lossy().as_bytes());
    h.update([0u8]);
    h.update(text.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A server name defined both in the user's file and in a project file: the user's is used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Clash {
    /// The server's name.
    pub name: String,
    /// The file whose server is used.
    pub kept: PathBuf,
    /// The file whose server is ignored.
    pub ignored: PathBuf,
}

/// How a file's `${VAR}`s are expanded.
#[derive(Clone, Copy)]
enum Rules {
    /// The user's own file: every variable.
    User,
    /// An approved project file: `${workspaceFolder}` and `allowEnv` only; `envFile` confined.
    Project,
    /// A project file not approved yet: nothing.
    Untrusted,
}

/// The servers of one or more configuration files, by name.
#[derive(Debug, Default)]
pub struct McpConfig {
    servers: Vec<ServerEntry>,
    files: Vec<PathBuf>,
    searched: Vec<PathBuf>,
    pending: Vec<ProjectFile>,
    clashes: Vec<Clash>,
}

impl McpConfig {
    /// Parses `text`, the contents of the file at `path` (used in errors, as each server's
    /// source, and for `${workspaceFolder}` and relative paths); `vars` looks variables up.
    /// The file is the user's own ([`Origin::User`]): every variable is expanded.
    pub fn parse(text: &str, path: impl AsRef<Path>, vars: Vars<'_>) -> Result<Self, ConfigError> {
        Self::parse_as(text, path.as_ref(), vars, Rules::User)
    }

    /// Parses an approved project file ([`Origin::Project`]): only `${workspaceFolder}` and
    /// the variables of its top-level `allowEnv` array are expanded, and an `envFile` must be
    /// inside the project folder.
    pub fn parse_project(text: &str, path: impl AsRef<Path>, vars: Vars<'_>) -> Result<Self, ConfigError> {
        Self::parse_as(text, path.as_ref(), vars, Rules::Project)
    }

    fn parse_as(text: &str, path: &Path, vars: Vars<'_>, rules: Rules) -> Result<Self, ConfigError> {
        let path = path.to_path_buf();
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
        let origin = if matches!(rules, Rules::User) { Origin::User } else { Origin::Project };
        let allow = raw.allow_env.unwrap_or_default();
        let mut servers: Vec<ServerEntry> = Vec::new();
        for (name, server) in raw.mcp_servers.into_iter().chain(raw.servers).flatten() {
            if server.disabled || servers.iter().any(|s| s.name == name) {
                continue;
            }
            let written = Written::of(&server);
            let spec = match rules {
                Rules::Untrusted => Err(ConfigError::Untrusted { path: path.clone(), server: name.clone() }),
                Rules::User | Rules::Project => {
                    let ctx = Ctx {
                        path: &path,
                        server: &name,
                        base: &base,
                        vars,
                        allow: matches!(rules, Rules::Project).then_some(allow.as_slice()),
                    };
                    ctx.spec(server)
                }
            };
            servers.push(ServerEntry { name, source: path.clone(), origin, written, spec });
        }
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self { servers, files: vec![path.clone()], searched: vec![path], ..Default::default() })
    }

    /// Reads and parses the file at `path`, expanding variables from the process environment.
    /// The file is the user's choice ([`Origin::User`]).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Self::load_with(path, &process_env)
    }

    /// [`McpConfig::load`] with variables from `vars`.
    pub fn load_with(path: impl AsRef<Path>, vars: Vars<'_>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        Self::parse(&read(path)?, path, vars)
    }

    /// Reads every file of the search order that exists (see the module docs) and merges them:
    /// the user's file first, then the project files, untrusted ([`McpConfig::pending`]). No
    /// file found gives an empty configuration.
    pub fn search(paths: &SearchPaths) -> Result<Self, ConfigError> {
        Self::search_with(paths, &process_env)
    }

    /// [`McpConfig::search`] with variables from `vars`.
    pub fn search_with(paths: &SearchPaths, vars: Vars<'_>) -> Result<Self, ConfigError> {
        let mut config = McpConfig::default();
        if let Some(user) = paths.user_file() {
            if user.is_file() {
                config.merge(Self::load_with(&user, vars)?);
            }
        }
        for path in paths.project_files() {
            if path.is_file() {
                let text = read(&path)?;
                let mut found = Self::parse_as(&text, &path, vars, Rules::Untrusted)?;
                found.pending.push(ProjectFile::new(&path, text));
                config.merge(found);
            }
        }
        config.searched = paths.candidates();
        Ok(config)
    }

    /// Adds `other`'s servers whose names are not taken yet (`self` wins a clash; a user
    /// server taking the name of a project server is recorded in [`McpConfig::clashes`]).
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
            match self.get(&s.name) {
                None => self.servers.push(s),
                Some(kept) => {
                    if kept.origin != s.origin {
                        let (user, project) = if kept.origin == Origin::User {
                            (kept.source.clone(), s.source.clone())
                        } else {
                            (s.source.clone(), kept.source.clone())
                        };
                        self.clashes.push(Clash { name: s.name.clone(), kept: user, ignored: project });
                    }
                }
            }
        }
        for p in other.pending {
            if !self.pending.iter().any(|q| q.path == p.path) {
                self.pending.push(p);
            }
        }
        self.clashes.extend(other.clashes);
        self.servers.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Approves the project file `path` (one of [`McpConfig::pending`]): its servers in this
    /// configuration are expanded under the project rules (see the module docs), from the
    /// contents read by the search (the approval is for those bytes). `false` when `path` is
    /// not pending.
    pub fn approve(&mut self, path: &Path, vars: Vars<'_>) -> Result<bool, ConfigError> {
        let Some(i) = self.pending.iter().position(|p| p.path == path) else { return Ok(false) };
        let file = self.pending.remove(i);
        let approved = Self::parse_as(&file.text, &file.path, vars, Rules::Project)?;
        for entry in approved.servers {
            if let Some(slot) = self.servers.iter_mut().find(|s| s.name == entry.name && s.source == entry.source) {
                *slot = entry;
            }
        }
        Ok(true)
    }

    /// The project files not approved yet, in search order.
    pub fn pending(&self) -> &[ProjectFile] {
        &self.pending
    }

    /// The pending project file `path`, if it is one.
    pub fn pending_file(&self, path: &Path) -> Option<&ProjectFile> {
        self.pending.iter().find(|p| p.path == path)
    }

    /// Server names defined both in the user's file and in a project file (the user's wins).
    pub fn clashes(&self) -> &[Clash] {
        &self.clashes
    }

    /// Every server, sorted by name.
    pub fn servers(&self) -> &[ServerEntry] {
        &self.servers
    }

    /// The servers from the file `path`.
    pub fn servers_of<'a>(&'a self, path: &'a Path) -> impl Iterator<Item = &'a ServerEntry> + 'a {
        self.servers.iter().filter(move |s| s.source == path)
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

/// The largest configuration file read (4 MiB); a larger one is an error.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

fn read(path: &Path) -> Result<String, ConfigError> {
    use std::io::Read as _;
    let io = |source| ConfigError::Io { path: path.into(), source };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut text = String::new();
    f.take(MAX_FILE_BYTES + 1).read_to_string(&mut text).map_err(io)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(io(std::io::Error::other(format!("larger than {MAX_FILE_BYTES} bytes"))));
    }
    Ok(text)
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

    /// The files looked for, in order: the user's, then the project's.
    pub fn candidates(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.user_file().into_iter().collect();
        v.extend(self.project_files());
        v
    }

    /// The user's file (`mcp.json` in [`SearchPaths::user_dir`]).
    pub fn user_file(&self) -> Option<PathBuf> {
        self.user_dir.as_ref().map(|d| d.join("mcp.json"))
    }

    /// The project files, in order.
    pub fn project_files(&self) -> Vec<PathBuf> {
        vec![self.root.join(".mcp.json"), self.root.join("mcp.json"), self.root.join(".vscode/mcp.json")]
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

mod raw;
use raw::{strip_jsonc, strip_position, Ctx, RawFile, RawServer};

pub mod trust;

#[cfg(test)]
mod tests;
