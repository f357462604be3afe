//! Config-file targets: a server NAME from an `mcpServers` (Claude Desktop, Claude Code,
//! Cursor) or VS Code `servers` file, given with `--config FILE` or found in the user's config
//! folder and the project files `./.mcp.json`, `./mcp.json`, `./.vscode/mcp.json`;
//! `mcp servers list` and `mcp servers trust`.
//!
//! The user's file (and a file given with `--config`, the user's own choice) wins a name clash
//! with a project file; the clash is reported on stderr. A project file comes with the folder
//! (a cloned repository): it is used only once approved, on a terminal by answering a
//! question, otherwise with `mcp servers trust [FILE]` (remembered by a SHA-256 of its path and
//! contents in `trusted-projects.json` in the user's config folder, until the file changes) or
//! `--trust-project-config` / `MCP_TRUST_PROJECT_CONFIG=1` (this run only). Nothing in a
//! project file is expanded, read or run before that, and `servers list` shows what it says
//! without expanding it.

use super::render::{self, Stream};
use super::{args, terminal, Failure, Options, Target};
use mcp_client::config::trust::TrustStore;
use mcp_client::config::{
    process_env, ConfigError, McpConfig, Origin, ProjectFile, SearchPaths, ServerEntry, ServerSpec,
};
use serde_json::{json, Value};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The environment variable that approves project files for one run (`1`), as
/// `--trust-project-config` does.
pub const TRUST_ENV: &str = "MCP_TRUST_PROJECT_CONFIG";

/// Whether project files are approved for this run by flag or environment.
fn trusted_by_flag(flag: bool) -> bool {
    flag || std::env::var(TRUST_ENV).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// The trust store; an unreadable one is reported and taken as empty (nothing is trusted).
fn store() -> Option<TrustStore> {
    let path = TrustStore::default_path()?;
    match TrustStore::open(&path) {
        Ok(s) => Some(s),
        Err(e) => {
            Stream::Err.line(&format!("mcp: warning: cannot read the trust store {}: {e}", show(&path)));
            None
        }
    }
}

fn config_failure(e: ConfigError) -> Failure {
    Failure::usage(e.to_string())
}

/// `--config FILE` alone, or every file of the search order, with the project files already
/// approved (trust store, or `force`) approved.
fn load(config: Option<&Path>, force: bool) -> Result<McpConfig, Failure> {
    let Some(f) = config else {
        let mut c = McpConfig::search(&SearchPaths::from_env()).map_err(config_failure)?;
        let store = if force { None } else { store() };
        let pending: Vec<ProjectFile> = c.pending().to_vec();
        for p in pending {
            if force || store.as_ref().is_some_and(|s| s.is_trusted(&p)) {
                c.approve(p.path(), &process_env).map_err(config_failure)?;
            }
        }
        return Ok(c);
    };
    McpConfig::load(f).map_err(config_failure)
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

/// What a project file defines, one server a line: name and command line or URL, as written.
fn summary(config: &McpConfig, file: &Path) -> Vec<String> {
    config
        .servers_of(file)
        .map(|e| format!("{} ({}: {})", e.name(), e.written().transport, e.written().target()))
        .collect()
}

/// Asks on the terminal whether to use `file`'s servers; `true` when the user says yes.
fn ask(config: &McpConfig, file: &Path) -> bool {
    let mut err = terminal::ErrWriter::new();
    let _ = writeln!(err, "Use servers from {}? it defines:", show(file));
    for line in summary(config, file) {
        let _ = writeln!(err, "  {line}");
    }
    let _ = write!(err, "[y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

fn refusal(file: &Path) -> Failure {
    Failure::usage(format!("{} is a project config file that has not been approved", show(file)))
        .hint(format!(
            "review it, then approve it once with `mcp servers trust {}` (remembered until the file changes)",
            show(file)
        ))
        .hint(format!("or pass --trust-project-config (or set {TRUST_ENV}=1) to use it for this run only"))
}

/// Approves the untrusted project file of `name`'s entry, by asking on a terminal; an error
/// saying how to approve it otherwise.
fn approve_interactively(config: &mut McpConfig, file: &Path) -> Result<(), Failure> {
    let tty = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !tty || !ask(config, file) {
        return Err(refusal(file));
    }
    if let (Some(p), Some(mut s)) = (config.pending_file(file).cloned(), store()) {
        if let Err(e) = s.trust(&p) {
            Stream::Err.line(&format!("mcp: warning: cannot save the approval in {}: {e}", show(s.path())));
        }
    }
    config.approve(file, &process_env).map_err(config_failure)?;
    Ok(())
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
    let mut config = load(opts.config.as_deref(), trusted_by_flag(opts.trust_project_config))?;
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
    for c in config.clashes().iter().filter(|c| c.name == name) {
        Stream::Err.line(&format!(
            "mcp: server `{name}` is defined in both {} and {}; using the one in {} (your config wins over the project's)",
            show(&c.kept),
            show(&c.ignored),
            show(&c.kept)
        ));
    }
    let (source, origin) = (entry.source().to_path_buf(), entry.origin());
    if !entry.is_trusted() {
        approve_interactively(&mut config, &source)?;
    }
    if origin == Origin::Project {
        Stream::Err.line(&format!("mcp: using server `{name}` from the project file {}", show(&source)));
    }
    let entry = config.get(name).ok_or_else(|| Failure::usage(format!("`{name}` vanished")))?;
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

fn fail(f: Failure, json: bool) -> ExitCode {
    f.report(json);
    ExitCode::from(f.exit)
}

/// `mcp servers list`: every configured server, its transport, command or URL as written (no
/// variable expanded, URL userinfo and query redacted, header and env values never shown), its
/// file, and whether that file is an approved one.
pub fn list(config: Option<PathBuf>, json: bool) -> ExitCode {
    let config = match load(config.as_deref(), false) {
        Ok(c) => c,
        Err(f) => return fail(f, json),
    };
    for c in config.clashes() {
        Stream::Err.line(&format!(
            "mcp: server `{}` is defined in both {} and {}; the one in {} is used",
            c.name,
            show(&c.kept),
            show(&c.ignored),
            show(&c.kept)
        ));
    }
    let untrusted: Vec<&Path> = config.pending().iter().map(ProjectFile::path).collect();
    if json {
        let servers: Vec<Value> = config.servers().iter().map(entry_json).collect();
        let clashes: Vec<Value> =
            config.clashes().iter().map(|c| json!({ "name": c.name, "used": c.kept, "ignored": c.ignored })).collect();
        render::print_json(&json!({
            "servers": servers, "files": config.files(), "searched": config.searched(),
            "untrusted": untrusted, "clashes": clashes,
        }));
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
            let file = if e.is_trusted() { show(e.source()) } else { format!("{} (untrusted)", show(e.source())) };
            let (transport, target) = match e.spec() {
                Ok(_) | Err(ConfigError::Untrusted { .. }) => (e.written().transport.to_owned(), e.written().target()),
                Err(err) => ("error".to_owned(), entry_problem(e, err)),
            };
            vec![e.name().to_owned(), transport, file, target]
        })
        .collect();
    Stream::Out.write(&render::table(&["NAME", "TRANSPORT", "FILE", "COMMAND / URL"], &rows));
    if !untrusted.is_empty() {
        Stream::Err.line(&format!(
            "untrusted project files (not used until approved with `mcp servers trust FILE`): {}",
            untrusted.iter().map(|p| show(p)).collect::<Vec<_>>().join(", ")
        ));
    }
    ExitCode::SUCCESS
}

/// A server entry's problem without the file and server name its row already shows.
fn entry_problem(e: &ServerEntry, err: &ConfigError) -> String {
    let full = err.to_string();
    let prefix = format!("{}: server `{}`: ", e.source().display(), e.name());
    full.strip_prefix(&prefix).map(str::to_owned).unwrap_or(full)
}

/// One server for `--json`: as written (nothing expanded, the URL redacted), names only for
/// `env` and `headers` (values may be secrets).
fn entry_json(e: &ServerEntry) -> Value {
    let origin = match e.origin() {
        Origin::Project => "project",
        _ => "user",
    };
    let w = e.written();
    let mut v = json!({ "name": e.name(), "file": e.source(), "origin": origin, "trusted": e.is_trusted() });
    v["transport"] = json!(w.transport);
    match w.transport {
        "stdio" => {
            v["command"] = json!(w.command);
            v["args"] = json!(w.args);
            v["env"] = json!(w.env);
            if let Some(f) = &w.env_file {
                v["envFile"] = json!(f);
            }
            if let Ok(ServerSpec::Stdio { cwd, .. }) = e.spec() {
                v["cwd"] = json!(cwd);
            }
        }
        "http" => {
            v["url"] = json!(w.url);
            v["headers"] = json!(w.headers);
        }
        _ => {}
    }
    match e.spec() {
        Ok(_) | Err(ConfigError::Untrusted { .. }) => {}
        Err(err) => {
            v["transport"] = json!("error");
            v["error"] = json!(err.to_string());
        }
    }
    v
}

/// `mcp servers trust [FILE]`: approves a project file (default: every project file of the
/// current folder), remembering it until its contents change.
pub fn trust(file: Option<PathBuf>, json: bool) -> ExitCode {
    let Some(store_path) = TrustStore::default_path() else {
        return fail(Failure::usage("no user config folder (set HOME or XDG_CONFIG_HOME) to keep approvals in"), json);
    };
    let mut store = match TrustStore::open(&store_path) {
        Ok(s) => s,
        Err(e) => return fail(Failure::new(format!("cannot read the trust store {}: {e}", show(&store_path))), json),
    };
    let paths = SearchPaths::from_env();
    let files: Vec<PathBuf> = match file {
        Some(f) => vec![f],
        None => paths.project_files().into_iter().filter(|p| p.is_file()).collect(),
    };
    if files.is_empty() {
        return fail(
            Failure::usage("no project config file here (./.mcp.json, ./mcp.json, ./.vscode/mcp.json)")
                .hint("name the file: `mcp servers trust FILE`"),
            json,
        );
    }
    let mut done = Vec::new();
    for f in files {
        // The file is read once: what is shown is what is approved.
        let root = f.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let root = if root.file_name().is_some_and(|n| n == ".vscode") { root.parent().unwrap_or(root) } else { root };
        let one = SearchPaths { root: root.to_path_buf(), user_dir: None };
        let found = match McpConfig::search(&one) {
            Ok(c) => c,
            Err(e) => return fail(config_failure(e), json),
        };
        let canonical = f.canonicalize().unwrap_or_else(|_| f.clone());
        let Some(p) = found.pending().iter().find(|p| p.canonical() == canonical).cloned() else {
            return fail(
                Failure::usage(format!(
                    "{} is not a project config file (.mcp.json, mcp.json or .vscode/mcp.json)",
                    show(&f)
                ))
                .hint("a file of your own can be used with --config FILE without approval"),
                json,
            );
        };
        let servers = summary(&found, p.path());
        if let Err(e) = store.trust(&p) {
            return fail(Failure::new(format!("cannot save the trust store {}: {e}", show(store.path()))), json);
        }
        if !json {
            Stream::Out.line(&format!("trusted {} (until it changes); it defines:", show(p.path())));
            for s in &servers {
                Stream::Out.line(&format!("  {s}"));
            }
        }
        done.push(json!({ "file": p.path(), "digest": p.digest(), "servers": servers }));
    }
    if json {
        render::print_json(&json!({ "trusted": done, "store": store.path() }));
    }
    ExitCode::SUCCESS
}
