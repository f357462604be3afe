//! Helpers of the CLI's integration tests: the shared ones of `mcp-test-support`, plus the
//! real `mcp` binary as a child process.
#![allow(dead_code)] // each test binary uses a different subset

pub(crate) use mcp_test_support::*;

/// Sends process `pid` SIGTERM (what systemd, Docker and Kubernetes send to stop a service).
#[cfg(unix)]
pub(crate) fn sigterm(pid: u32) {
    let pid = pid.to_string();
    let sent = std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill");
    assert!(sent.success(), "kill -TERM {pid}");
}

/// The real `mcp serve everything --stdio` child process (killed on drop), its stdin and its
/// stdout as lines.
pub(crate) fn spawn_stdio_everything() -> (
    tokio::process::Child,
    tokio::process::ChildStdin,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "everything", "--stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mcp");
    let stdin = child.stdin.take().expect("stdin");
    let out = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    (child, stdin, out)
}
