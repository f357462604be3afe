//! The stdio walk: the command, the spawn, era detection, and the child's stderr when it
//! exits early.

use crate::era::{capability_names, server_label};
use crate::{client_builder, program_exists, Options, Report, Target, STDIO_STEPS};
use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
use mcp_client::{ClientError, ServerEra, TransportError};
use mcp_protocol::{meta, version};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// The stdio walk.
pub(crate) async fn walk(report: &mut Report, opts: &Options, target: &Target) {
    let timeout = opts.step_timeout;
    let Target::Stdio { program, args, env, cwd } = target else { return };
    if let Some(d) = cwd.as_ref().filter(|d| !d.is_dir()) {
        report.fail("command", format!("the working directory {} does not exist", d.display())).hint("fix --cwd DIR");
        return report.skip_rest(STDIO_STEPS, "no working directory");
    }
    if !program_exists(program, env, cwd.as_deref()) {
        let step = report.fail("command", format!("command not found: {program}"));
        if program.contains('/') {
            step.hint("check the path, and that the file is executable (chmod +x)");
        } else {
            step.hint(format!("check the spelling, install it, or give its full path: {program} is not on PATH"));
        }
        return report.skip_rest(STDIO_STEPS, "no command to run");
    }
    report.pass(
        "command",
        format!("{} found", which(program, env).map(|p| p.display().to_string()).unwrap_or(program.clone())),
    );
    let mut cmd = StdioCommand::new(program.clone()).args(args.iter().cloned()).envs(env.iter().cloned());
    if let Some(d) = cwd {
        cmd = cmd.cwd(d.clone());
    }
    let transport = match StdioTransport::spawn(cmd) {
        Ok(t) => t,
        Err(e) => {
            report
                .fail("spawn", e.to_string())
                .hint("check the file's permissions and format (a script needs a #! line)");
            return report.skip_rest(STDIO_STEPS, "the server did not start");
        }
    };
    report.pass("spawn", format!("started (pid {})", transport.pid().map(|p| p.to_string()).unwrap_or("?".into())));
    let b = client_builder(timeout);
    match b.connect(transport).await {
        Ok(client) => {
            match client.era() {
                Some(ServerEra::Modern { version, discover }) => {
                    let discover = discover.into_raw();
                    let versions: Vec<&str> = discover
                        .get("supportedVersions")
                        .and_then(Value::as_array)
                        .map(|v| v.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let versions = versions.join(", ");
                    let label =
                        server_label(discover.pointer(&format!("/_meta/{}", meta::SERVER_INFO.replace('/', "~1"))));
                    report.pass(
                        "discover",
                        format!(
                            "{label} speaks {version}; supports {versions}; capabilities: {}",
                            capability_names(&discover)
                        ),
                    );
                    report.skip("initialize", format!("not needed: the server speaks {}", version::LATEST));
                    report.pass(
                        "connect",
                        format!("the client connects as modern {version}: one request at a time over stdio"),
                    );
                    report.era = Some(("modern", version));
                }
                Some(ServerEra::Legacy { version, initialize }) => {
                    report.warn(
                        "discover",
                        format!(
                            "not a {} server: no DiscoverResult; the client fell back to initialize",
                            version::LATEST
                        ),
                    );
                    report.pass(
                        "initialize",
                        format!(
                            "{} negotiated {version}; capabilities: {}",
                            server_label(initialize.get("serverInfo")),
                            capability_names(&initialize)
                        ),
                    );
                    report.pass(
                        "connect",
                        format!("the client connects as legacy {version}: an initialize session over stdio"),
                    );
                    report.era = Some(("legacy", version));
                }
                None => {
                    report.fail("discover", "connected, but no era was detected");
                }
            }
            client.close().await;
        }
        Err(e) => {
            failure(report, e, target, opts, timeout);
            report.skip_rest(STDIO_STEPS, "the server did not answer");
        }
    }
}

/// A failed stdio handshake: the exit, the silence, or the error, with the child's stderr.
fn failure(report: &mut Report, e: ClientError, target: &Target, opts: &Options, timeout: Duration) {
    match e {
        ClientError::Transport(TransportError::Closed(why)) => {
            let (why, stderr) = match why.split_once("; last stderr lines: ") {
                Some((w, s)) => (w.to_owned(), Some(s.to_owned())),
                None => (why, None),
            };
            let why = if why.contains("closed its output") { "it closed its output".to_owned() } else { why };
            let step = report.fail("discover", format!("the server exited before answering ({why})"));
            match stderr {
                Some(s) => step.hint(format!("its stderr: {}", crate::probe::clip(&s, 400))),
                None => step.hint("it wrote nothing to stderr; run the command by hand to see what it does"),
            };
        }
        ClientError::Timeout(_) => {
            report
                .fail("discover", format!("no answer to server/discover or initialize within {}s", (timeout * 3).as_secs_f64()))
                .hint("is this an MCP stdio server? It must read JSON-RPC lines on stdin and write only JSON-RPC to stdout (logs go to stderr)");
        }
        other => {
            let f = opts.explained(other, target);
            let step = report.fail("discover", f.message);
            for h in f.hints {
                step.hint(h);
            }
        }
    }
}

/// Where `program` is on `PATH` (or the path itself).
fn which(program: &str, env: &[(String, String)]) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path =
        env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).or_else(|| std::env::var("PATH").ok())?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}
