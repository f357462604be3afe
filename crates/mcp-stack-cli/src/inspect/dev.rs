//! `mcp dev -- COMMAND`: the inspector on a server under development, restarted when its files
//! change.
//!
//! A stdio server (`-- COMMAND`) is the inspector's own target: a restart connects again, which
//! starts a fresh process (the old one is stopped with its client). An HTTP server (`--http URL
//! --cmd COMMAND`) runs as a child of `mcp dev`: a restart stops it, starts it again, waits for
//! its port, then connects again. Either way the page stays open and follows the new
//! connection.
//!
//! Changes are found by polling the working folder's modification times every 500 ms (bounded
//! to 20,000 files; `target/`, `.git/`, `node_modules/` and dot-folders are skipped): no native
//! watcher dependency, and it works the same in containers and on network file systems. A
//! restart waits until nothing changed for 300 ms (an editor's save of several files, a build
//! writing many), and changes during a restart lead to one more.

use super::state::Inspector;
use super::InspectOptions;
use crate::client::{Options, Resolved, TargetArgs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Most files looked at per scan.
const MAX_FILES: usize = 20_000;
const POLL: Duration = Duration::from_millis(500);
const QUIET: Duration = Duration::from_millis(300);
/// How long an HTTP server may take to listen after a (re)start.
const HTTP_START: Duration = Duration::from_secs(60);

/// How `mcp dev` runs.
#[derive(Debug, Clone, Default)]
pub struct DevOptions {
    /// The inspector's ports and browser.
    pub inspect: InspectOptions,
    /// The folder watched (default: the current one).
    pub watch: Option<PathBuf>,
    /// For an HTTP server: the command that runs it (its URL is the target).
    pub http_command: Vec<String>,
}

/// Runs `mcp dev` until a stop signal.
pub async fn run(opts: Options, target: TargetArgs, dev: DevOptions) -> Result<(), String> {
    let target = Resolved::new(&opts, target)?;
    let watch = match dev.watch {
        Some(w) => w,
        None => std::env::current_dir().map_err(|e| e.to_string())?,
    };
    let mut child = None;
    if !dev.http_command.is_empty() {
        child = Some(start_http(&dev.http_command).await?);
    }
    let command = dev.http_command.clone();
    let started = move |inspector: Arc<Inspector>| {
        tokio::spawn(watch_and_restart(inspector, watch, command, child));
    };
    super::serve(opts, target, dev.inspect, "mcp dev", started).await
}

async fn start_http(command: &[String]) -> Result<tokio::process::Child, String> {
    let (program, args) = command.split_first().ok_or("--cmd needs a command")?;
    tokio::process::Command::new(program)
        .args(args)
        .kill_on_drop(true)
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{program}: {e}"))
}

async fn watch_and_restart(
    inspector: Arc<Inspector>,
    root: PathBuf,
    http_command: Vec<String>,
    mut child: Option<tokio::process::Child>,
) {
    let mut seen = snapshot(&root);
    loop {
        tokio::time::sleep(POLL).await;
        let now = snapshot(&root);
        if now == seen {
            continue;
        }
        // Wait for quiet: the snapshot stops changing.
        let mut settled = now;
        loop {
            tokio::time::sleep(QUIET).await;
            let again = snapshot(&root);
            if again == settled {
                break;
            }
            settled = again;
        }
        seen = settled;
        eprintln!("mcp dev: files changed under {}; restarting the server", root.display());
        if let Some(old) = child.as_mut() {
            let _ = old.kill().await;
            child = match start_http(&http_command).await {
                Ok(c) => Some(c),
                Err(e) => {
                    eprintln!("mcp dev: {e}");
                    None
                }
            };
            let deadline = tokio::time::Instant::now() + HTTP_START;
            while tokio::time::Instant::now() < deadline && inspector.client(true).await.is_err() {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        } else if let Err(e) = inspector.client(true).await {
            eprintln!("mcp dev: the server did not come back: {e}");
        }
    }
}

/// What a scan sees: file count and the newest modification time (with the total size, so a
/// change within the same clock tick shows too).
#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    files: usize,
    newest: Option<SystemTime>,
    bytes: u64,
}

fn skipped(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "target" | "node_modules")
}

fn snapshot(root: &Path) -> Snapshot {
    let mut s = Snapshot { files: 0, newest: None, bytes: 0 };
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            if s.files >= MAX_FILES {
                return s;
            }
            let name = e.file_name();
            if skipped(&name.to_string_lossy()) {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                s.files += 1;
                s.bytes = s.bytes.wrapping_add(meta.len());
                if let Ok(m) = meta.modified() {
                    s.newest = s.newest.max(Some(m));
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_sees_changes_outside_skipped_folders_only() {
        let root = std::env::temp_dir().join(format!("mcp-dev-scan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        let before = snapshot(&root);
        assert_eq!(before.files, 1);
        std::fs::write(root.join("target/debug/out"), "built").unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/index"), "x").unwrap();
        assert_eq!(snapshot(&root), before, "target/ and dot-folders are not watched");
        std::fs::write(root.join("src/main.rs"), "fn main() { println!(); }").unwrap();
        assert_ne!(snapshot(&root), before);
        let _ = std::fs::remove_dir_all(&root);
    }
}
