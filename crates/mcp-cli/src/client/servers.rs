//! Config-file targets: a server NAME from an `mcpServers` (Claude Desktop, Claude Code,
//! Cursor) or VS Code `servers` file, given with `--config FILE` or found in `./.mcp.json`,
//! `./mcp.json`, `./.vscode/mcp.json` and the user's config folder; and `mcp servers list`.

use super::render::{self, Stream};
use super::{args, Failure, Options, Target};
use mcp_client::config::{McpConfig, SearchPaths, ServerSpec};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `--config FILE` alone, or every file of the search order.
fn load(config: Option<&Path>) -> Result<McpConfig, Failure> {
    let r = match config {
        Some(f) => McpConfig::load(f),
        None => McpConfig::search(&SearchPaths::from_env()),
    };
    r.map_err(|e| Failure::usage(e.to_string()))
}

/// A path for display: relative to the current directory when inside it, `~/..` under the home.
fn show(p: &Path) -> String {
    if let Some(r) = std::env::current_dir().ok().and_then(|d| p.strip_prefix(d).ok().map(Path::to_path_buf)) {
        return r.display().to_string();
    }
    if let Some(r) = std::env::var_os("HOME").and_then(|h| p.strip_prefix(h).ok().map(Path::to_path_buf)) {
        return format!("~/{}", r.display());
    }
    p.display().to_string()
}

fn list_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| show(p)).collect::<Vec<_>>().join(", ")
}

/// The target named `name` in the configuration, with the command line's `--header`s (parsed),
/// `--env` and `--cwd` added.
pub(super) fn named_target(
    opts: &Options,
    name: &str,
    headers: Vec<(String, String)>,
    cli_env: &[String],
    cli_cwd: Option<PathBuf>,
) -> Result<Target, Failure> {
    let config = load(opts.config.as_deref())?;
    let Some(entry) = config.get(name) else {
        let mut f = if config.is_empty() {
            Failure::usage(format!("no server given: `{name}` is not an http(s):// URL, and no servers are configured"))
        } else {
            Failure::usage(format!("`{name}` is not an http(s):// URL or a configured server name"))
                .hint(format!("configured servers: {}", config.names().join(", ")))
        };
        let looked = if opts.config.is_some() { config.files() } else { config.searched() };
        f = f.hint(format!("looked in: {}", list_paths(looked)));
        return Err(f.hint("or pass an http(s):// URL, or `-- COMMAND [ARGS...]` to start a stdio server"));
    };
    let spec = entry.spec().map_err(|e| Failure::usage(e.to_string()))?;
    match spec {
        ServerSpec::Stdio { command, args, env, cwd } => {
            if !headers.is_empty() {
                return Err(Failure::usage(format!(
                    "--header applies to HTTP targets only; `{name}` is a stdio server"
                )));
            }
            let mut env = env.clone();
            for e in cli_env {
                let (k, v) = args::split_pair("--env", e).map_err(Failure::usage)?;
                env.push((k.to_owned(), v.to_owned()));
            }
            let cwd = cli_cwd.or_else(|| cwd.clone());
            Ok(Target::Stdio { program: command.clone(), args: args.clone(), env, cwd })
        }
        ServerSpec::Http { url, headers: own } => {
            if !cli_env.is_empty() || cli_cwd.is_some() {
                return Err(Failure::usage(format!(
                    "--env and --cwd apply to stdio targets; `{name}` is an HTTP server"
                )));
            }
            let mut all: Vec<(String, String)> = own.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
            all.extend(headers);
            Ok(Target::Http { url: url.clone(), headers: all })
        }
        _ => Err(Failure::usage(format!("`{name}`: this kind of server is not supported"))),
    }
}

/// `mcp servers list`: every configured server, its transport, command or URL, and its file.
pub fn list(config: Option<PathBuf>, json: bool) -> ExitCode {
    let config = match load(config.as_deref()) {
        Ok(c) => c,
        Err(f) => {
            f.report(json);
            return ExitCode::from(f.exit);
        }
    };
    if json {
        let servers: Vec<Value> = config.servers().iter().map(entry_json).collect();
        render::print_json(&json!({ "servers": servers, "files": config.files(), "searched": config.searched() }));
        return ExitCode::SUCCESS;
    }
    if config.is_empty() {
        Stream::Err.line(&format!("no servers configured (looked in: {})", list_paths(config.searched())));
        return ExitCode::SUCCESS;
    }
    let rows: Vec<Vec<String>> = config
        .servers()
        .iter()
        .map(|e| {
            let (transport, target) = match e.spec() {
                Ok(s) => (s.transport_name().to_owned(), s.target()),
                Err(err) => ("error".to_owned(), entry_problem(e, err)),
            };
            vec![e.name().to_owned(), transport, show(e.source()), target]
        })
        .collect();
    Stream::Out.write(&render::table(&["NAME", "TRANSPORT", "FILE", "COMMAND / URL"], &rows));
    ExitCode::SUCCESS
}

/// A server entry's problem without the file and server name its row already shows.
fn entry_problem(e: &mcp_client::config::ServerEntry, err: &mcp_client::config::ConfigError) -> String {
    let full = err.to_string();
    let prefix = format!("{}: server `{}`: ", e.source().display(), e.name());
    full.strip_prefix(&prefix).map(str::to_owned).unwrap_or(full)
}

/// One server for `--json`: names only for `env` and `headers` (values may be secrets).
fn entry_json(e: &mcp_client::config::ServerEntry) -> Value {
    let mut v = json!({ "name": e.name(), "file": e.source() });
    let keys = |kv: &[(String, String)]| kv.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    match e.spec() {
        Ok(ServerSpec::Stdio { command, args, env, cwd }) => {
            v["transport"] = json!("stdio");
            v["command"] = json!(command);
            v["args"] = json!(args);
            v["env"] = json!(keys(env));
            v["cwd"] = json!(cwd);
        }
        Ok(ServerSpec::Http { url, headers }) => {
            v["transport"] = json!("http");
            v["url"] = json!(url);
            v["headers"] = json!(keys(headers));
        }
        Ok(_) => v["transport"] = json!("unknown"),
        Err(err) => v["error"] = json!(err.to_string()),
    }
    v
}
