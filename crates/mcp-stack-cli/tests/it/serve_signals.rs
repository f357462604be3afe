//! `mcp serve` stopped as an operator stops it: SIGTERM (what systemd, Docker and Kubernetes
//! send) to the real binary, over HTTP and over stdio. What `serve` itself does at a shutdown
//! signal is tested in mcp-stack-http and mcp-stack-stdio.
#![cfg(unix)]

use crate::common::*;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

/// `mcp serve` (the real binary) on SIGTERM: the 2-second call in flight gets its full answer,
/// a new connection is refused, and the process exits 0.
#[tokio::test]
async fn mcp_serve_drains_on_sigterm_and_exits_zero() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "everything", "--http", "127.0.0.1:0", "--drain-timeout", "30"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mcp");
    let addr = announced_addr(child.stderr.take().expect("stderr")).await;
    // A call taking 2 s that notifies at once: its first event says it is in flight.
    let args = json!({"steps": 2, "delay_ms": 1000});
    let p = with_meta_kv(call("count_with_progress", args), &[("progressToken", json!("t"))]);
    let body = req(1, "tools/call", p);
    let mut counting = open(addr, "POST", "/mcp", &std_headers(&body), full(body.to_string())).await;
    assert_eq!(counting.next().await.expect("progress")["method"], "notifications/progress");
    sigterm(child.id().expect("pid"));
    refused_soon(addr).await;
    let last = counting.response().await;
    assert_eq!(first_text(&result_of(&last, &json!(1))), "counted to 2");
    let status = within("mcp serve to exit", child.wait()).await.expect("wait");
    assert!(status.success(), "exit status {status}");
}

/// The address `mcp serve` announces on stderr (its readiness signal); the rest of stderr is
/// drained in the background.
async fn announced_addr(stderr: tokio::process::ChildStderr) -> std::net::SocketAddr {
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

/// `mcp serve --stdio` on SIGTERM (stdin still open): the call in flight gets its answer and
/// the process exits 0. (Here beside the HTTP one: both are the operator's stop.)
#[tokio::test]
async fn mcp_serve_stdio_finishes_its_calls_on_sigterm() {
    let (mut child, mut stdin, mut out) = spawn_stdio_everything();
    let args = json!({"steps": 2, "delay_ms": 500});
    let p = with_meta_kv(call("count_with_progress", args), &[("progressToken", json!("t"))]);
    stdin.write_all(format!("{}\n", req(1, "tools/call", p)).as_bytes()).await.expect("write");
    let mut next = async || -> Value {
        let line = within("a line on stdout", out.next_line()).await.expect("read").expect("a line");
        serde_json::from_str(&line).expect("JSON")
    };
    assert_eq!(next().await["method"], "notifications/progress", "the call is in flight");
    sigterm(child.id().expect("pid"));
    let last = loop {
        let v = next().await;
        if v.get("id").is_some() {
            break v;
        }
    };
    assert_eq!(first_text(&result_of(&last, &json!(1))), "counted to 2");
    let status = within("mcp serve --stdio to exit", child.wait()).await.expect("wait");
    assert!(status.success(), "exit status {status}");
    drop(stdin);
}
