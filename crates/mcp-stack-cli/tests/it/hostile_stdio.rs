//! The stdio transport under a client that does not read its replies: `mcp serve everything
//! --stdio` as a child process stops reading once its output backlog is full, holds bounded
//! memory, and loses nothing once the client reads again.

use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn echo(id: usize, text: &str) -> String {
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let v = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}, "_meta": meta}});
    format!("{v}\n")
}

#[tokio::test]
async fn an_unread_stdout_pauses_reading_and_nothing_is_lost() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "everything", "--stdio", "--max-output-bytes", "1048576"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mcp");
    let pid = child.id().expect("pid");
    let (mut stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let total = 20_000;
    let text = "x".repeat(4096);
    let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = tokio::spawn({
        let written = written.clone();
        async move {
            for id in 0..total {
                stdin.write_all(echo(id, &text).as_bytes()).await.expect("write a request");
                written.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            drop(stdin);
        }
    });
    // Nobody reads stdout: the writer soon stalls, because the server stopped reading.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = usize::MAX;
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = written.load(std::sync::atomic::Ordering::Relaxed);
        if now == last || Instant::now() > deadline {
            break;
        }
        last = now;
    }
    let stalled_at = written.load(std::sync::atomic::Ordering::Relaxed);
    assert!(stalled_at < total, "the server read all {total} requests with its output unread");
    let rss = rss_kib(pid);
    // 20,000 replies of 4 KiB queued would be 80+ MiB; the backlog is 1 MiB.
    assert!(rss < 40 * 1024, "RSS {rss} KiB with stdout unread ({stalled_at} requests taken)");
    // Reading again: every request is answered.
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = vec![false; total];
    let read_all = async {
        for _ in 0..total {
            let line = lines.next_line().await.expect("read").expect("a reply per request");
            let v: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            let id = v["id"].as_u64().expect("an id") as usize;
            assert_eq!(v["result"]["content"][0]["text"].as_str().map(str::len), Some(4096), "{id}");
            seen[id] = true;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read_all).await.expect("all replies in time");
    assert!(seen.iter().all(|s| *s));
    writer.await.unwrap();
    let _ = child.wait().await;
}
