//! `mcp doctor TARGET`: the arguments mapped onto [`mcp_doctor`] (a URL, a configured server
//! name, or `-- COMMAND`), and its report printed (`✓` passed, `!` works with a caveat, `✗`
//! failed, `–` skipped, each failure with a fix; one JSON document with `--json`). The exit
//! code is 1 when a step failed.

use super::{args, describe, Options, Target, TargetArgs};
use mcp_doctor::{Explanation, Report, Status};
use serde_json::json;
use std::process::ExitCode;
use std::time::Duration;

/// Default time limit of each network step (`--timeout` overrides it).
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// The mark of a step's status, coloured when the terminal takes colours.
fn mark(status: Status) -> String {
    let s = console::style(match status {
        Status::Pass => "✓",
        Status::Warn => "!",
        Status::Fail => "✗",
        _ => "–",
    });
    match status {
        Status::Pass => s.green(),
        Status::Warn => s.yellow(),
        Status::Fail => s.red(),
        _ => s.dim(),
    }
    .to_string()
}

/// The report as text: one line per step, hints under it, a verdict last.
fn to_text(report: &Report) -> String {
    let mut out = format!("mcp doctor {}\n", report.target);
    let width = report.steps.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &report.steps {
        out.push_str(&format!("  {} {:width$}  {}\n", mark(s.status), s.name, s.detail));
        for h in &s.hints {
            out.push_str(&format!("    {:width$}  → {h}\n", ""));
        }
    }
    out.push_str(&match (report.failed(), &report.era) {
        (0, Some((era, v))) => format!("No problems found: the client connects to this {era} server with {v}.\n"),
        (0, None) => "No problems found.\n".to_owned(),
        (1, _) => "1 step failed.\n".to_owned(),
        (n, _) => format!("{n} steps failed.\n"),
    });
    out
}

/// Runs `mcp doctor` on `target` and prints the report (one JSON document with `--json`).
/// Exit code 0 when no step failed, 1 when one did, 2 for bad usage, 130 when interrupted.
pub async fn run(opts: Options, target: TargetArgs) -> ExitCode {
    let walk = async { walk(&opts, target).await };
    let outcome = tokio::select! {
        r = walk => r,
        _ = tokio::signal::ctrl_c() => Err(("interrupted".to_owned(), 130)),
    };
    match outcome {
        Ok(report) => {
            if opts.json {
                super::render::print_json(&report.to_json());
            } else {
                super::render::Stream::Out.write(&to_text(&report));
            }
            ExitCode::from(u8::from(report.failed() > 0))
        }
        Err((message, exit)) => {
            eprintln!("mcp: {}", super::terminal::err(&message));
            if opts.json {
                super::render::print_json(&json!({ "error": { "message": message } }));
            }
            ExitCode::from(exit)
        }
    }
}

async fn walk(opts: &Options, t: TargetArgs) -> Result<Report, (String, u8)> {
    let usage = |m: String| (m, 2u8);
    let headers = opts.headers.iter().map(|h| args::parse_header(h)).collect::<Result<Vec<_>, _>>().map_err(usage)?;
    let timeout = opts.timeout.unwrap_or(STEP_TIMEOUT);
    if !t.command.is_empty() {
        if let Some(extra) = t.positionals.first() {
            return Err(usage(format!("unexpected argument `{extra}` (the stdio command comes after `--`)")));
        }
        if !headers.is_empty() {
            return Err(usage("--header applies to HTTP targets only".into()));
        }
        let mut env = Vec::new();
        for e in &t.env {
            let (k, v) = args::split_pair("--env", e).map_err(usage)?;
            env.push((k.to_owned(), v.to_owned()));
        }
        let mut cmd = t.command;
        let program = cmd.remove(0);
        let target = Target::Stdio { program, args: cmd, env, cwd: t.cwd };
        return Ok(diagnose(opts, &target, None, Vec::new(), timeout).await);
    }
    let raw = match t.positionals.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(usage(
                "no server given: pass an http(s):// URL, a configured server name, or `-- COMMAND [ARGS...]` \
                 to start a stdio server"
                    .into(),
            ))
        }
        [_, extra, ..] => return Err(usage(format!("unexpected argument `{extra}`"))),
    };
    let lower = raw.trim().to_ascii_lowercase();
    let mut name_hints = Vec::new();
    if !lower.starts_with("http://") && !lower.starts_with("https://") && !raw.contains("://") {
        // A server named in a config file (`--config`, ./.mcp.json...)?
        match super::servers::named_target(opts, &raw, headers.clone(), &t.env, t.cwd.clone()) {
            Ok(target) => return Ok(diagnose(opts, &target, Some(&raw), Vec::new(), timeout).await),
            Err(f) => {
                if !f.message.contains("is not an http(s):// URL") {
                    name_hints.push(format!("as a server name: {}", f.message));
                }
                name_hints.extend(f.hints.into_iter().filter(|h| h.starts_with("configured servers:")));
            }
        }
    }
    if !t.env.is_empty() || t.cwd.is_some() {
        return Err(usage("--env and --cwd apply to stdio targets (`-- COMMAND ...`) only".into()));
    }
    let target = Target::Http { url: raw, headers };
    Ok(diagnose(opts, &target, None, name_hints, timeout).await)
}

/// Runs the library's walk on `target` (`name` when it came from a configuration file), with
/// the CLI's token store, its wording of client errors, and `url_hints` for a bad URL.
async fn diagnose(
    opts: &Options,
    target: &Target,
    name: Option<&str>,
    url_hints: Vec<String>,
    timeout: Duration,
) -> Report {
    let (doctor_target, auth) = match target.clone() {
        Target::Http { url, headers } => {
            let auth = super::auth::provider_for(&url);
            (mcp_doctor::Target::Http { url, headers }, auth)
        }
        Target::Stdio { program, args, env, cwd } => (mcp_doctor::Target::Stdio { program, args, env, cwd }, None),
    };
    let cli = opts.clone();
    let cli_target = target.clone();
    let mut options = mcp_doctor::Options::default()
        .step_timeout(timeout)
        .stored_auth(super::auth::store_path().ok(), auth)
        .explain(move |e, _| {
            let f = describe(e, &cli_target, None, "server/discover", &cli);
            Explanation { message: f.message, hints: f.hints }
        });
    options.follow_cross_origin_redirects = opts.follow_cross_origin_redirects;
    options.url_hints = url_hints;
    let mut report = mcp_doctor::diagnose(&doctor_target, &options).await;
    if let Some(name) = name {
        report.target = format!("{name} = {}", report.target);
    }
    report
}
