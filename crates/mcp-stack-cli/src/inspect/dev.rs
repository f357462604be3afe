//! `mcp dev -- COMMAND`: the inspector on a server under development, restarted when its files
//! change.
//!
//! A stdio server (`-- COMMAND`) is the inspector's own target: a restart connects again, which
//! starts a fresh process (the old one is stopped with its client). An HTTP server (`--http URL
//! --cmd COMMAND`) runs as a child of `mcp dev`: a restart stops it, starts it again, waits for
//! its port, then connects again. Either way the page stays open and follows the new
//! connection.
//!
//! The `--cmd` command runs in its own process group, and stopping it (on a restart, and when
//! `mcp dev` ends) stops the whole group: `SIGTERM` to the group, then `SIGKILL` to whatever is
//! left after a grace period (5 s). A command that forks (`cargo run`, `npm run`, a shell script that
//! starts the server in the background) leaves no old server on the port. On Windows the tree
//! is ended with `taskkill /T /F`.
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
/// How long a stopped `--cmd` server's process group has to exit before it is killed.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(5);

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
    let server = if dev.http_command.is_empty() {
        None
    } else {
        Some(Arc::new(tokio::sync::Mutex::new(Some(Server::start(&dev.http_command)?))))
    };
    let command = dev.http_command.clone();
    let watcher = Arc::new(parking_lot::Mutex::new(None));
    let (slot, handle) = (server.clone(), watcher.clone());
    let started = move |inspector: Arc<Inspector>| {
        *handle.lock() = Some(tokio::spawn(watch_and_restart(inspector, watch, command, slot)));
    };
    let served = super::serve(opts, target, dev.inspect, "mcp dev", started).await;
    // No restart after this; then the server's whole group goes.
    let watching = watcher.lock().take();
    if let Some(w) = watching {
        w.abort();
        let _ = w.await;
    }
    if let Some(slot) = server {
        let running = slot.lock().await.take();
        if let Some(s) = running {
            s.stop(STOP_GRACE).await;
        }
    }
    served
}

/// The `--cmd` server: a child in a process group of its own, stopped as a whole (killed if
/// dropped without [`Server::stop`]).
#[derive(Debug)]
pub(crate) struct Server {
    child: tokio::process::Child,
    /// The group's id (the child's pid), kept after the child is reaped.
    group: Option<u32>,
}

impl Server {
    /// Starts `command` (program and arguments) in a new process group.
    pub(crate) fn start(command: &[String]) -> Result<Self, String> {
        let (program, args) = command.split_first().ok_or("--cmd needs a command")?;
        let mut c = tokio::process::Command::new(program);
        c.args(args).kill_on_drop(true).stdin(std::process::Stdio::null());
        #[cfg(unix)]
        c.process_group(0);
        let child = c.spawn().map_err(|e| format!("{program}: {e}"))?;
        let group = child.id();
        Ok(Self { child, group })
    }

    /// Stops the whole process group: `SIGTERM`, up to `grace` for every process in it to
    /// exit, then `SIGKILL` for the rest.
    pub(crate) async fn stop(mut self, grace: Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        signal_group(self.group, false);
        let _ = tokio::time::timeout_at(deadline, self.child.wait()).await;
        while group_alive(self.group) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        if group_alive(self.group) {
            signal_group(self.group, true);
        }
        let _ = self.child.kill().await;
        self.group = None;
    }

    /// Stops this server and starts `command` again.
    pub(crate) async fn restart(self, command: &[String], grace: Duration) -> Result<Self, String> {
        self.stop(grace).await;
        Self::start(command)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        signal_group(self.group, true);
    }
}

/// Signals the process group `group` (`kill`: `SIGKILL`, else `SIGTERM`); on Windows ends the
/// process tree.
fn signal_group(group: Option<u32>, kill: bool) {
    let Some(g) = group else { return };
    #[cfg(unix)]
    if let Some(pg) = rustix::process::Pid::from_raw(g as i32) {
        use rustix::process::{kill_process_group, Signal};
        let _ = kill_process_group(pg, if kill { Signal::KILL } else { Signal::TERM });
    }
    #[cfg(windows)]
    {
        let _ = kill;
        let _ = std::process::Command::new("taskkill")
            .args(["/PID", &g.to_string(), "/T", "/F"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
    #[cfg(not(any(unix, windows)))]
    let _ = (g, kill);
}

/// Whether any process of `group` still runs. On Linux exited processes nobody reaped yet
/// (zombies: in a container whose first process does not reap) do not count.
fn group_alive(group: Option<u32>) -> bool {
    let Some(g) = group else { return false };
    #[cfg(unix)]
    {
        let Some(pg) = rustix::process::Pid::from_raw(g as i32) else { return false };
        if rustix::process::test_kill_process_group(pg).is_err() {
            return false;
        }
        let Ok(procs) = std::fs::read_dir("/proc") else { return true };
        // Bounded by the process table; only read while the group answers a signal.
        procs.flatten().any(|e| {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { return false };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            // `pid (comm) state ppid pgrp ...`: the fields after the last `)`.
            let mut f = stat.rsplit_once(')').map_or("", |(_, r)| r).split_whitespace();
            let (state, pgrp) = (f.next(), f.nth(1));
            state != Some("Z") && pgrp == Some(g.to_string().as_str())
        })
    }
    #[cfg(not(unix))]
    {
        let _ = g;
        false
    }
}

async fn watch_and_restart(
    inspector: Arc<Inspector>,
    root: PathBuf,
    http_command: Vec<String>,
    server: Option<Arc<tokio::sync::Mutex<Option<Server>>>>,
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
        if let Some(slot) = &server {
            let mut running = slot.lock().await;
            let started = match running.take() {
                Some(old) => old.restart(&http_command, STOP_GRACE).await,
                None => Server::start(&http_command),
            };
            match started {
                Ok(s) => *running = Some(s),
                Err(e) => eprintln!("mcp dev: {e}"),
            }
            drop(running);
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

    /// Whether process `pid` runs (an unreaped zombie does not).
    #[cfg(unix)]
    fn running(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, r)| !r.trim_start().starts_with('Z')),
            Err(_) if Path::new("/proc/self").exists() => false,
            Err(_) => rustix::process::Pid::from_raw(pid as i32)
                .is_some_and(|p| rustix::process::test_kill_process(p).is_ok()),
        }
    }

    /// The pid a command wrote to `file` (written once the command runs).
    #[cfg(unix)]
    async fn pid_in(file: &Path, not: Option<u32>) -> u32 {
        for _ in 0..400 {
            if let Some(pid) = std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse().ok()) {
                if Some(pid) != not {
                    return pid;
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no pid in {}", file.display());
    }

    /// A command that forks, as `cargo run` or `npm run` do: a shell that starts a background
    /// process (standing for the server that holds the port) and writes its pid, then waits.
    /// A restart must stop the background process too, not only the shell.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_restart_stops_the_command_s_forked_processes() {
        let dir = std::env::temp_dir().join(format!("mcp-dev-group-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("server.pid");
        let script = format!("sleep 300 & echo $! > '{}'; wait", pid_file.display());
        let command = vec!["sh".to_owned(), "-c".to_owned(), script];
        let first = Server::start(&command).unwrap();
        let old = pid_in(&pid_file, None).await;
        assert!(running(old));
        let second = first.restart(&command, Duration::from_secs(10)).await.unwrap();
        assert!(!running(old), "the old command's forked process {old} is gone after a restart");
        let new = pid_in(&pid_file, Some(old)).await;
        assert!(running(new), "the new command runs");
        second.stop(Duration::from_secs(10)).await;
        assert!(!running(new), "stopping (as on exit) ends the forked process {new} too");
        let _ = std::fs::remove_dir_all(&dir);
    }

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
