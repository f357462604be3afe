//! `mcp serve everything --http 127.0.0.1:0` as a child process (shared by the HTTP tests).

use std::io::BufRead;
use std::process::{Child, Command, Stdio};

/// The running server; killed on drop.
pub(crate) struct EverythingHttp {
    pub(crate) child: Child,
    pub(crate) url: String,
}

impl EverythingHttp {
    /// Binds port 0 and waits for the server's "serving on URL" line (its readiness signal).
    pub(crate) fn start() -> Self {
        Self::start_with(&[])
    }

    /// [`EverythingHttp::start`] with extra `mcp serve` flags.
    pub(crate) fn start_with(extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["serve", "everything", "--http", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("mcp: serving on ").map(str::to_owned))
            .expect("the server announces its address");
        // Keep draining stderr so the child never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self { child, url }
    }
}

#[allow(dead_code)] // each test binary uses a different subset
impl EverythingHttp {
    /// The socket address the server listens on.
    pub(crate) fn addr(&self) -> std::net::SocketAddr {
        let hostport = self.url.trim_start_matches("http://").split('/').next().unwrap_or_default();
        hostport.parse().expect("a socket address")
    }

    /// The server's resident memory in KiB (Linux `/proc`; 0 elsewhere).
    pub(crate) fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for EverythingHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
