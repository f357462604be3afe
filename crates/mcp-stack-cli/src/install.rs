//! `mcp install CLIENT [--name NAME] TARGET`: writes a server into an MCP host's configuration
//! file (Claude Desktop, Claude Code, Cursor, VS Code, Gemini CLI, or a plain `mcp.json`),
//! merging with what is there.
//!
//! Only the one entry is added (or replaced with `--force`); every other byte of the file is
//! kept as it was (key order, spacing, numbers of any size). The old file is saved
//! as `FILE.bak` first and the new one is written atomically (a fresh temporary file renamed
//! over it). A file that is not plain JSON (comments, trailing commas) or that writes a key
//! twice is left alone with an error rather than rewritten. A project folder (`--project`,
//! `mcp.json` in the current folder, a relative `--file`) is untrusted: links in it that lead
//! outside are refused and nothing is written through a link. A new file that
//! holds `--header` or `--env` values is readable by its owner only; an existing file keeps its
//! mode. `--dry-run` prints the file as it would be and writes nothing.
//!
//! Entry shapes follow each host's documentation: `mcpServers` (VS Code: `servers`); stdio as
//! `command`/`args`/`env` (with `"type": "stdio"` for Claude Code and VS Code); Streamable HTTP
//! as `url`/`headers` (`"type": "http"` for Claude Code and VS Code, `httpUrl` for Gemini CLI).
//! Claude Desktop's file takes stdio servers only, so a URL is written as this binary's own
//! bridge: `mcp proxy --stdio URL`.

use serde_json::{json, Map, Value};
use std::path::{Component, Path, PathBuf};

mod doc;
mod write;

/// The hosts `mcp install` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    /// Claude Desktop (`claude_desktop_config.json`; stdio only).
    ClaudeDesktop,
    /// Claude Code (`~/.claude.json`, or `.mcp.json` with `--project`).
    ClaudeCode,
    /// Cursor (`~/.cursor/mcp.json`, or `.cursor/mcp.json`).
    Cursor,
    /// VS Code (the user profile's `mcp.json`, or `.vscode/mcp.json`).
    Vscode,
    /// Gemini CLI (`~/.gemini/settings.json`, or `.gemini/settings.json`).
    Gemini,
    /// A plain `mcp.json` (`--file`, default `./mcp.json`), as `mcp` itself reads it.
    Json,
}

/// What to install where.
#[derive(Debug, Clone)]
pub struct Install {
    /// The host.
    pub host: Host,
    /// The entry's name (default: from the URL's host or the command's program).
    pub name: Option<String>,
    /// The project's file instead of the user's (hosts that have one).
    pub project: bool,
    /// This file instead of the host's own.
    pub file: Option<PathBuf>,
    /// Replace an entry of the same name.
    pub force: bool,
    /// Print the result, write nothing.
    pub dry_run: bool,
    /// A Streamable HTTP URL, or empty for a stdio command.
    pub url: Option<String>,
    /// `Name: value` headers (HTTP).
    pub headers: Vec<(String, String)>,
    /// The stdio command and its arguments.
    pub command: Vec<String>,
    /// `K=V` environment of the stdio command.
    pub env: Vec<(String, String)>,
}

fn home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from)
        .ok_or_else(|| "no home folder (set HOME)".to_owned())
}

/// The per-user application-data folder: `~/Library/Application Support` on macOS,
/// `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` or `~/.config` elsewhere.
fn app_data() -> Result<PathBuf, String> {
    if cfg!(target_os = "macos") {
        return Ok(home()?.join("Library/Application Support"));
    }
    if cfg!(windows) {
        if let Some(a) = std::env::var_os("APPDATA") {
            return Ok(PathBuf::from(a));
        }
    }
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(x) => Ok(PathBuf::from(x)),
        None => Ok(home()?.join(".config")),
    }
}

impl Install {
    /// The file to change, and the key holding the servers in it.
    pub fn file(&self) -> Result<(PathBuf, &'static str), String> {
        let key = if self.host == Host::Vscode { "servers" } else { "mcpServers" };
        if let Some(f) = &self.file {
            return Ok((f.clone(), key));
        }
        let cwd = || std::env::current_dir().map_err(|e| e.to_string());
        let path = match (self.host, self.project) {
            (Host::ClaudeDesktop, false) => app_data()?.join("Claude/claude_desktop_config.json"),
            (Host::ClaudeCode, false) => home()?.join(".claude.json"),
            (Host::ClaudeCode, true) => cwd()?.join(".mcp.json"),
            (Host::Cursor, false) => home()?.join(".cursor/mcp.json"),
            (Host::Cursor, true) => cwd()?.join(".cursor/mcp.json"),
            (Host::Vscode, false) => app_data()?.join("Code/User/mcp.json"),
            (Host::Vscode, true) => cwd()?.join(".vscode/mcp.json"),
            (Host::Gemini, false) => home()?.join(".gemini/settings.json"),
            (Host::Gemini, true) => cwd()?.join(".gemini/settings.json"),
            (Host::Json, _) => cwd()?.join("mcp.json"),
            (Host::ClaudeDesktop, true) => return Err("Claude Desktop has no project file".into()),
        };
        Ok((path, key))
    }

    /// The entry's name: as given, else from the URL's host or the program's file name.
    pub fn name(&self) -> Result<String, String> {
        let name = match (&self.name, &self.url) {
            (Some(n), _) => n.clone(),
            (None, Some(u)) => {
                url::Url::parse(u).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default()
            }
            (None, None) => self
                .command
                .first()
                .map(|p| Path::new(p).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
                .unwrap_or_default(),
        };
        let ok = !name.is_empty()
            && name.len() <= 64
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if ok {
            Ok(name)
        } else {
            Err(format!("{name:?} is not a usable server name: give --name with letters, digits, '-', '_' or '.'"))
        }
    }

    /// The entry as this host writes it.
    pub fn entry(&self) -> Result<Value, String> {
        let mut e = Map::new();
        let typed = matches!(self.host, Host::ClaudeCode | Host::Vscode);
        let headers: Map<String, Value> = self.headers.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        match (&self.url, self.host) {
            (Some(url), Host::ClaudeDesktop) => {
                // Stdio only: this binary bridges to the URL.
                let me = std::env::current_exe().map_err(|e| format!("cannot name this program: {e}"))?;
                e.insert("command".into(), json!(me.to_string_lossy()));
                let mut args = vec![json!("proxy"), json!("--stdio")];
                for (k, v) in &self.headers {
                    args.push(json!("--header"));
                    args.push(json!(format!("{k}: {v}")));
                }
                args.push(json!(url));
                e.insert("args".into(), Value::Array(args));
            }
            (Some(url), host) => {
                if typed {
                    e.insert("type".into(), json!("http"));
                }
                e.insert(if host == Host::Gemini { "httpUrl" } else { "url" }.into(), json!(url));
                if !headers.is_empty() {
                    e.insert("headers".into(), Value::Object(headers));
                }
            }
            (None, _) => {
                let (program, args) =
                    self.command.split_first().ok_or("nothing to install: give a URL or `-- COMMAND`")?;
                if typed {
                    e.insert("type".into(), json!("stdio"));
                }
                e.insert("command".into(), json!(program));
                e.insert("args".into(), json!(args));
                if !self.env.is_empty() {
                    let env: Map<String, Value> = self.env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
                    e.insert("env".into(), Value::Object(env));
                }
            }
        }
        Ok(Value::Object(e))
    }

    /// The project folder `file` belongs to (the current folder), if it is a project's file:
    /// `--project`, a plain `mcp.json` here, or a relative `--file` that stays below here.
    fn project_root(&self) -> Result<Option<PathBuf>, String> {
        let scoped = match &self.file {
            Some(f) => f.is_relative() && f.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)),
            None => self.project || self.host == Host::Json,
        };
        if !scoped {
            return Ok(None);
        }
        std::env::current_dir().map(Some).map_err(|e| e.to_string())
    }

    /// `current` (a host file's text; empty for a new file) with the entry added under `key`.
    pub fn merged(&self, current: &str, key: &str) -> Result<String, String> {
        let name = self.name()?;
        doc::add_entry(current, key, &name, &self.entry()?, self.force).map_err(|r| r.message(key, &name))
    }
}

/// Runs `mcp install`: prints what it did (or would do).
pub fn run(i: &Install) -> Result<(), String> {
    let (file, key) = i.file()?;
    let root = i.project_root()?;
    let file = match &root {
        Some(root) if file.is_relative() => root.join(&file),
        _ => file,
    };
    let name = i.name()?;
    let host_file = write::HostFile::open(&file, root.as_deref())?;
    let text = i.merged(host_file.text(), key).map_err(|e| format!("{}: {e}", file.display()))?;
    if i.dry_run {
        println!("{text}");
        eprintln!("mcp install: would add {name:?} to {} (dry run: nothing written)", file.display());
        return Ok(());
    }
    let secrets = !i.headers.is_empty() || !i.env.is_empty();
    if let Some(backup) = host_file.replace(&text, secrets)? {
        eprintln!("mcp install: the previous file is saved as {}", backup.display());
    }
    eprintln!("mcp install: added {name:?} to {}", file.display());
    Ok(())
}
