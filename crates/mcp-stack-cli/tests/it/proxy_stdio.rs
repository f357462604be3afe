//! `mcp proxy --stdio URL` for a desktop host that speaks only the 2025 `initialize` handshake,
//! in front of our OAuth-protected HTTP server used in the 2026-07-28 era: the proxy refreshes
//! the stored (expired) token at the authorization server, and the remote's MRTR elicitation
//! reaches the host as a real `elicitation/create` request. Every wait is bounded.

#[allow(dead_code)] // `start` is for other tests
use crate::support::http_server;
use crate::support::token_issuer;

use http_server::EverythingHttp;
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use token_issuer::TokenIssuer;

const AUDIENCE: &str = "http://127.0.0.1/mcp";
const WAIT: Duration = Duration::from_secs(30);

/// The host's end of `mcp proxy --stdio`: writes lines, reads messages (bounded waits).
struct Host {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    stderr: mpsc::Receiver<String>,
}

impl Host {
    fn spawn(url: &str, config_dir: &std::path::Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["proxy", "--stdio", url])
            .env("MCP_CONFIG_DIR", config_dir)
            .env_remove("MCP_OAUTH_CLIENT_CREDENTIALS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let v: Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let (etx, stderr) = mpsc::channel();
        let err = std::io::BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || err.lines().map_while(Result::ok).for_each(|l| drop(etx.send(l))));
        Self { child, stdin, lines, stderr }
    }

    fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message from the proxy (skipping notifications).
    fn next(&self) -> Value {
        for _ in 0..100 {
            let m = self.lines.recv_timeout(WAIT).expect("a message from the proxy within the wait");
            if m.get("id").is_some() {
                return m;
            }
        }
        panic!("only notifications from the proxy");
    }

    /// Sends request `id` and returns its response.
    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let m = self.next();
        assert_eq!(m["id"], id, "{m}");
        m
    }

    fn stderr(&self) -> String {
        self.stderr.try_iter().collect::<Vec<_>>().join("\n")
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A token store (as `mcp auth login` writes it) whose access token has expired and whose
/// refresh token the issuer honours.
fn expired_store(dir: &std::path::Path, url: &str, issuer: &str) {
    let stored = json!({
        "clients": { issuer: { "client_id": "proxy-test-client", "redirect_uris": [] } },
        "sessions": [{ "server_url": url, "resource": url, "issuer": issuer,
            "tokens": { "access_token": "EXPIRED", "token_type": "Bearer", "refresh_token": "REFRESH-1",
                        "expires_at": 1, "scopes": [], "requested_scopes": [] } }],
    });
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("oauth.json"), stored.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_host_reaches_a_protected_modern_server() {
    let issuer = TokenIssuer::start(AUDIENCE, "REFRESH-1").await;
    let flags = ["--auth-issuer".to_owned(), issuer.issuer.clone(), "--auth-audience".into(), AUDIENCE.into()];
    let server = tokio::task::spawn_blocking(move || {
        EverythingHttp::start_with(&flags.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .unwrap();
    let dir = std::env::temp_dir().join(format!("mcp-proxy-stdio-{}", std::process::id()));
    expired_store(&dir, &server.url, &issuer.issuer);
    let (url, dir2) = (server.url.clone(), dir.clone());
    let outcome = tokio::task::spawn_blocking(move || host_session(&url, &dir2)).await;
    let _ = std::fs::remove_dir_all(&dir);
    let log = outcome.unwrap();
    assert!(issuer.refreshes() >= 1, "the proxy refreshed the stored token");
    assert!(log.contains("modern, protocol 2026-07-28"), "{log}");
}

/// The host's side of the conversation; returns the proxy's stderr.
fn host_session(url: &str, dir: &std::path::Path) -> String {
    let mut host = Host::spawn(url, dir);
    let caps = json!({ "elicitation": {} });
    let info = json!({ "name": "desktop-host", "version": "1.0" });
    let init = json!({ "protocolVersion": "2025-06-18", "capabilities": caps, "clientInfo": info });
    let r = host.request(1, "initialize", init);
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18", "{r}");
    assert!(r["result"].get("resultType").is_none(), "a legacy answer: {r}");
    host.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let tools = host.request(2, "tools/list", json!({}));
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"echo") && names.contains(&"greet_user"), "{names:?}");
    let echo = host.request(3, "tools/call", json!({ "name": "echo", "arguments": { "text": "via proxy" } }));
    assert_eq!(echo["result"]["content"][0]["text"], "via proxy", "{echo}");
    // The remote asks (an MRTR round); the host gets a legacy server-to-client request.
    host.send(json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call",
                      "params": { "name": "greet_user", "arguments": {} } }));
    let ask = host.next();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer = json!({ "action": "accept", "content": { "name": "Ada" } });
    host.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": answer }));
    let greeted = host.next();
    assert_eq!(greeted["id"], 4, "{greeted}");
    assert_eq!(greeted["result"]["content"][0]["text"], "Hello, Ada!", "{greeted}");
    host.stderr()
}
