//! One `run` per command of the `mcp` binary: each takes its command's flags (and the client
//! options where it has any) and returns the process's exit code. Part of the binary
//! (`main.rs`), not of the `mcp_cli` library.

use crate::args::{Call, DevArgs, Global, InspectArgs, InstallArgs, ServeArgs, ServersCmd};
use mcp_cli::client::{Options, TargetArgs};
use std::process::ExitCode;
use std::time::Duration;
use tokio::runtime::Runtime;

/// `mcp serve`: the everything server on HTTP or stdio.
pub(crate) fn serve(rt: &Runtime, args: ServeArgs) -> ExitCode {
    let ServeArgs { name: _, http, stdio, allow_hosts, skills, auth, shared, limits, telemetry: _ } = args;
    let result = rt.block_on(async move {
        let shared = shared.open(mcp_everything::NAME).await?;
        let builder = limits.apply_server(shared.apply(mcp_everything::builder()));
        let server = match skills {
            None => builder.skills(mcp_everything::skills::demo()).build(),
            Some(dir) => builder.skills_dir(&dir).build(),
        }
        .map_err(std::io::Error::other)?;
        match (http, stdio) {
            (Some(addr), _) => mcp_cli::serve_http(server, addr, allow_hosts, auth, &shared, &limits).await,
            (None, true) => {
                mcp_cli::stop_on_signal(&server);
                mcp::stdio::serve_stdio_with(server, limits.stdio()).await
            }
            (None, false) => Err(std::io::Error::other("choose a transport: --http ADDR or --stdio")),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `mcp proxy`: the gateway, with the client options that apply to its upstreams.
pub(crate) fn proxy(rt: &Runtime, args: mcp_cli::proxy::ProxyArgs, global: Global) -> ExitCode {
    let globals = mcp_cli::proxy::ProxyGlobals {
        list_bounds: list_bounds(&global),
        headers: global.headers,
        timeout: global.timeout.map(Duration::from_secs_f64),
        force_legacy: global.force_legacy,
        config: global.config,
    };
    finish("mcp proxy", rt.block_on(mcp_cli::proxy::run(args, globals)))
}

/// `mcp servers list|trust`.
pub(crate) fn servers(cmd: ServersCmd, global: Global) -> ExitCode {
    match cmd {
        ServersCmd::List => mcp_cli::client::servers::list(global.config, global.json),
        ServersCmd::Trust { file } => mcp_cli::client::servers::trust(file, global.json),
    }
}

/// `mcp doctor`.
pub(crate) fn doctor(rt: Runtime, global: Global, target: TargetArgs) -> ExitCode {
    with_options(global, |opts| {
        let code = rt.block_on(mcp_cli::client::doctor::run(opts, target));
        rt.shutdown_timeout(Duration::from_millis(100));
        code
    })
}

/// `mcp inspect`.
pub(crate) fn inspect(rt: &Runtime, global: Global, args: InspectArgs) -> ExitCode {
    let InspectArgs { pos, port, sandbox_port, backlog, no_open, target } = args;
    with_options(global, |opts| {
        let page_backlog = backlog as usize * 1024 * 1024;
        let how = mcp_cli::inspect::InspectOptions { port, sandbox_port, open: !no_open, page_backlog };
        finish("mcp inspect", rt.block_on(mcp_cli::inspect::run(opts, target.with(pos), how)))
    })
}

/// `mcp dev`: the inspector on a server it restarts when files change.
pub(crate) fn dev(rt: &Runtime, global: Global, args: DevArgs) -> ExitCode {
    let DevArgs { pos, cmd, watch, port, no_open, target } = args;
    with_options(global, |opts| {
        let http_command: Vec<String> = cmd.iter().flat_map(|c| c.split_whitespace().map(str::to_owned)).collect();
        if http_command.is_empty() == target.command.is_empty() {
            eprintln!("mcp dev: give `-- COMMAND` (a stdio server), or `--cmd COMMAND URL` (an HTTP server)");
            return ExitCode::from(2);
        }
        let inspect = mcp_cli::inspect::InspectOptions { port, open: !no_open, ..Default::default() };
        let dev = mcp_cli::inspect::dev::DevOptions { inspect, watch, http_command };
        finish("mcp dev", rt.block_on(mcp_cli::inspect::dev::run(opts, target.with(pos), dev)))
    })
}

/// `mcp install`: the entry from the URL or command, written into the host's file.
pub(crate) fn install(args: InstallArgs, headers: &[String]) -> ExitCode {
    finish("mcp install", install_entry(args, headers))
}

fn install_entry(args: InstallArgs, headers: &[String]) -> Result<(), String> {
    let InstallArgs { client: host, url, name, project, file, force, dry_run, target: t } = args;
    let pair = |what: &str, s: &str, sep: char| {
        s.split_once(sep)
            .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| format!("{what} {s:?}: write {}", if sep == '=' { "K=V" } else { "'Name: value'" }))
    };
    let url = match (url, t.command.is_empty()) {
        (Some(u), true) if u.starts_with("http://") || u.starts_with("https://") => Some(u),
        (Some(u), true) => {
            return Err(format!("{u} is not an http(s):// URL; for a stdio server pass `-- COMMAND ...`"))
        }
        (Some(_), false) => return Err("give a URL or `-- COMMAND`, not both".into()),
        (None, false) => None,
        (None, true) => return Err("nothing to install: give a URL or `-- COMMAND [ARGS...]`".into()),
    };
    let install = mcp_cli::install::Install {
        host,
        name,
        project,
        file,
        force,
        dry_run,
        url,
        headers: headers.iter().map(|h| pair("--header", h, ':')).collect::<Result<_, _>>()?,
        command: t.command,
        env: t.env.iter().map(|e| pair("--env", e, '=')).collect::<Result<_, _>>()?,
    };
    mcp_cli::install::run(&install)
}

/// A client command (`discover`, `tools ...`, `resources ...`, `prompts ...`, `tasks ...`,
/// `skills ...`, `complete`, `listen`): one call of the client against its target.
pub(crate) fn client(rt: Runtime, global: Global, call: Result<Call, String>) -> ExitCode {
    let json = global.json;
    let code = match options(global).and_then(|opts| call.map(|call| (opts, call))) {
        Ok((opts, (target, action))) => rt.block_on(mcp_cli::client::run(opts, target, action)),
        Err(e) => {
            eprintln!("mcp: {e}");
            if json {
                println!("{}", serde_json::json!({ "error": { "message": e } }));
            }
            ExitCode::from(2)
        }
    };
    // A prompt may still be blocked reading stdin (after Ctrl-C): don't wait for it.
    rt.shutdown_timeout(Duration::from_millis(100));
    code
}

/// The client options from the global flags, or why they are unusable.
fn options(g: Global) -> Result<Options, String> {
    let bounds = list_bounds(&g);
    let timeout = match g.timeout {
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => return Err(format!("--timeout must be a positive number of seconds, got {s}")),
        None => None,
    };
    Ok(Options {
        json: g.json,
        timeout,
        headers: g.headers,
        roots: g.roots,
        no_input: g.no_input,
        interactive: g.interactive,
        log_level: g.log_level,
        follow_cross_origin_redirects: g.follow_cross_origin_redirects,
        config: g.config,
        force_legacy: g.force_legacy,
        trust_project_config: g.trust_project_config,
        icon_limits: mcp_cli::client::IconLimits { max_icons: g.max_icons, max_bytes: g.max_icon_bytes },
        list_bounds: bounds,
    })
}

/// `--max-list-bytes` and `--max-list-items`.
fn list_bounds(g: &Global) -> mcp_cli::client::ListBounds {
    mcp_cli::client::ListBounds { max_bytes: g.max_list_bytes, max_items: g.max_list_items }
}

/// The exit code of a command that reports its own failure as `LABEL: error`.
fn finish(label: &str, r: Result<(), impl std::fmt::Display>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{label}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `f` with the client options, or says why they are unusable (exit code 2).
fn with_options(g: Global, f: impl FnOnce(Options) -> ExitCode) -> ExitCode {
    match options(g) {
        Ok(opts) => f(opts),
        Err(e) => {
            eprintln!("mcp: {e}");
            ExitCode::from(2)
        }
    }
}
