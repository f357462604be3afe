//! The command lines of docs/cli.md, run as written against the demo server: every `mcp ...`
//! line aimed at `http://127.0.0.1:3000/mcp` or at `-- mcp serve everything --stdio` runs with
//! the built binary (the URL swapped for a test server on a free loopback port) and must
//! succeed. Lines that need a person (`--interactive`), run until stopped (`listen`), or
//! stand for a value (`TASK_ID`, `get|wait|cancel`) are left out; the list of what ran is
//! checked too, so an edit that drops every example cannot pass.

use crate::support::bounded;
use crate::support::http_server;

use http_server::EverythingHttp;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mcp");
const DOC: &str = include_str!("../../../../docs/cli.md");
const DEMO_URL: &str = "http://127.0.0.1:3000/mcp";

/// The runnable `mcp` lines of the doc's `sh` blocks, comments cut.
fn examples() -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in DOC.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = t == "```sh";
            continue;
        }
        if !in_sh || !t.starts_with("mcp ") {
            continue;
        }
        let cmd = t.split("   #").next().unwrap_or(t).trim();
        let aimed = cmd.contains(DEMO_URL) || cmd.ends_with("-- mcp serve everything --stdio");
        let needs_more = ["--interactive", " listen ", "TASK_ID", "|"].iter().any(|k| cmd.contains(k));
        if aimed && !needs_more {
            out.push(cmd.to_owned());
        }
    }
    out
}

#[test]
fn the_cli_examples_of_the_docs_run() {
    let examples = examples();
    assert!(examples.len() >= 8, "too few examples found: {examples:?}");
    let server = EverythingHttp::start();
    let mut failed = Vec::new();
    for example in &examples {
        // `sh -c` keeps the doc's quoting; `mcp` is the built binary, the URL the test server's.
        let rest = example.strip_prefix("mcp ").expect("an mcp line");
        let line = format!("{BIN} {}", rest.replace(" -- mcp ", &format!(" -- {BIN} "))).replace(DEMO_URL, &server.url);
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &line]).env_remove("MCP_LOG").env("HOME", std::env::temp_dir());
        let r = bounded::run(cmd, None);
        if r.code != 0 {
            failed.push(format!("`{example}` exited {}: {} {}", r.code, r.stderr.trim(), r.stdout.trim()));
        }
    }
    assert!(failed.is_empty(), "{} of {} examples failed:\n{}", failed.len(), examples.len(), failed.join("\n"));
}
