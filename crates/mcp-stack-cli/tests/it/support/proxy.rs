//! `mcp proxy` as a child process, and the legacy-only stdio server the proxy tests put behind
//! it (`tests/it/fixtures/legacy_server.py`, run with python3).
#![allow(dead_code)] // each test binary uses a different subset

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// The legacy fixture server as the proxy's upstream: `-- python3 legacy_server.py`.
pub(crate) fn legacy_upstream() -> Vec<String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/fixtures/legacy_server.py");
    vec!["--".into(), "python3".into(), script.into()]
}

/// A running `mcp proxy`; killed on drop. Its stderr lines are kept for the tests to read.
pub(crate) struct Proxy {
    child: Child,
    /// The front's URL (`--http`).
    pub(crate) url: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    /// `mcp proxy --http 127.0.0.1:0 FLAGS UPSTREAM` (a URL, or `--` and a command), waiting
    /// (30 s at most) for its "serving on" line. Without `--auth-issuer` in `flags` the front
    /// runs with `--no-auth` (an HTTP front refuses to start without one or the other).
    pub(crate) fn http(flags: &[&str], upstream: &[String]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp"));
        cmd.args(["proxy", "--http", "127.0.0.1:0"]).args(flags);
        if !flags.iter().any(|f| *f == "--auth-issuer" || *f == "--no-auth") {
            cmd.arg("--no-auth");
        }
        cmd.args(upstream);
        let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("mcp: serving on ") {
                    let _ = tx.send(url.to_owned());
                }
                kept.lock().unwrap().push(line);
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!("the proxy did not start: {:?}", stderr.lock().unwrap());
            }
        };
        Self { child, url, stderr }
    }

    /// Everything the proxy wrote on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Sends the proxy SIGTERM (what systemd, Docker and Kubernetes send to stop it).
    #[cfg(unix)]
    pub(crate) fn terminate(&self) {
        crate::common::sigterm(self.child.id());
    }

    /// Waits for the proxy to exit (bound the wait with `within`) and returns its status.
    pub(crate) async fn exit_status(&mut self) -> std::process::ExitStatus {
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The socket address of the front.
    pub(crate) fn addr(&self) -> std::net::SocketAddr {
        self.url.trim_start_matches("http://").split('/').next().unwrap().parse().unwrap()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// POSTs `body` to `/mcp` with `headers` and returns the whole response as text, waiting up to
/// 30 s (longer than the pool's own 10 s wait for a session, which the common helpers' bounded
/// waits are not).
pub(crate) async fn slow_post(addr: std::net::SocketAddr, headers: &[(String, String)], body: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut head =
        format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-length: {}\r\n", body.len());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let exchange = async {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        tcp.write_all(format!("{head}\r\n{body}").as_bytes()).await.unwrap();
        let mut out = Vec::new();
        tcp.read_to_end(&mut out).await.unwrap();
        String::from_utf8_lossy(&out).into_owned()
    };
    tokio::time::timeout(Duration::from_secs(30), exchange).await.expect("an answer within 30 s")
}
