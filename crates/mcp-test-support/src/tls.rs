//! `openssl s_server` on 127.0.0.1 with a fresh self-signed certificate for `localhost`, for
//! the tests of https clients; killed (and its files removed) on drop.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// What the TLS server answers.
#[derive(Debug, Clone, Copy)]
pub enum TlsAnswers<'a> {
    /// `s_server -www`: a status page for any request (an https endpoint that is not MCP).
    StatusPage,
    /// `s_server -HTTP`: each file, by path, is a complete HTTP response (head and body).
    Files(&'a [(&'a str, Vec<u8>)]),
}

/// A running `openssl s_server`.
pub struct TlsServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its certificate (PEM), for a client to trust.
    pub cert: Vec<u8>,
    dir: PathBuf,
}

impl TlsServer {
    /// Starts one. `None` (the test then returns, reported as skipped on stderr) only under
    /// `MCP_TEST_SKIP_MISSING=1` when `openssl` is missing; otherwise a missing `openssl`
    /// fails the test naming the package to install.
    pub fn start(answers: TlsAnswers<'_>) -> Option<Self> {
        if !mcp_cluster::needs::program("openssl", "openssl") {
            return None;
        }
        let dir = temp_dir();
        std::fs::create_dir_all(&dir).expect("temp dir");
        make_certificate(&dir);
        let mode = match answers {
            TlsAnswers::StatusPage => "-www",
            TlsAnswers::Files(files) => {
                for (name, body) in files {
                    std::fs::write(dir.join(name), body).expect("write a response file");
                }
                "-HTTP"
            }
        };
        let cert = std::fs::read(dir.join("cert.pem")).expect("cert.pem");
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
            let child = Command::new("openssl")
                .args(["s_server", "-quiet", mode, "-accept", &format!("127.0.0.1:{port}")])
                .args(["-cert", "cert.pem", "-key", "key.pem"])
                .current_dir(&dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .ok()?;
            let server = TlsServer { child, port, cert: cert.clone(), dir: dir.clone() };
            // Ready when it accepts connections (bounded).
            for _ in 0..100 {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(server);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        None
    }

    /// Adds (or replaces) the response file served at `/{name}` ([`TlsAnswers::Files`]).
    pub fn put_file(&self, name: &str, response: &[u8]) {
        std::fs::write(self.dir.join(name), response).expect("write a response file");
    }

    /// `https://localhost:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }
}

/// A fresh directory under the system's temporary one.
fn temp_dir() -> PathBuf {
    std::env::temp_dir().join(format!(
        "mcp-test-tls-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
    ))
}

/// Writes `cert.pem` and `key.pem` (P-256, self-signed, valid for `localhost`) into `dir`.
fn make_certificate(dir: &std::path::Path) {
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"])
        .args(["-subj", "/CN=localhost", "-addext", "basicConstraints=critical,CA:FALSE"])
        .args(["-addext", "subjectAltName=DNS:localhost", "-keyout", "key.pem", "-out", "cert.pem"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run openssl");
    assert!(made.success(), "openssl could not make a test certificate");
}

/// A self-signed certificate for `localhost` and its private key, both PEM (made by
/// `openssl`; `None` only under `MCP_TEST_SKIP_MISSING=1` when it is missing).
pub fn self_signed_localhost() -> Option<(Vec<u8>, Vec<u8>)> {
    if !mcp_cluster::needs::program("openssl", "openssl") {
        return None;
    }
    let dir = temp_dir();
    std::fs::create_dir_all(&dir).expect("temp dir");
    make_certificate(&dir);
    let pair = (std::fs::read(dir.join("cert.pem")).expect("cert"), std::fs::read(dir.join("key.pem")).expect("key"));
    let _ = std::fs::remove_dir_all(&dir);
    Some(pair)
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
