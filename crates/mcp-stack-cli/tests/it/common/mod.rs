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

/// The real `mcp serve everything --http 127.0.0.1:0 ARGS..` child process (killed on drop)
/// and the address it announced.
pub(crate) async fn spawn_http_everything(args: &[&str]) -> (tokio::process::Child, std::net::SocketAddr) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "everything", "--http", "127.0.0.1:0"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mcp");
    let addr = announced_addr(child.stderr.take().expect("stderr")).await;
    (child, addr)
}

/// The address `mcp serve` announces on stderr (its readiness signal); the rest of stderr is
/// drained in the background.
pub(crate) async fn announced_addr(stderr: tokio::process::ChildStderr) -> std::net::SocketAddr {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let prefix = "mcp: serving on http://";
    let line = within("the server to announce its address", async {
        while let Ok(Some(l)) = lines.next_line().await {
            if let Some(rest) = l.strip_prefix(prefix) {
                return rest.trim_end_matches("/mcp").to_owned();
            }
        }
        panic!("mcp serve ended before announcing its address")
    })
    .await;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    line.parse().expect("an address")
}
