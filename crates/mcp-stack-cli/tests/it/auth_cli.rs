//! `mcp auth status|logout` on a stored session: no token is ever printed, the store stays
//! private, and other commands explain how to log in. Pre-registered client credentials go to
//! their own authorization server only (a fake MCP server and authorization servers on
//! 127.0.0.1).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};

fn mcp(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    mcp_env(dir, args, &[])
}

fn mcp_env(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp"));
    cmd.args(args).env("MCP_CONFIG_DIR", dir);
    for v in ["CREDENTIALS", "ID", "SECRET", "KEY", "ISSUER"] {
        cmd.env_remove(format!("MCP_OAUTH_CLIENT_{v}"));
    }
    let out = cmd.envs(env.iter().copied()).output().expect("run mcp");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn status_and_logout_never_show_tokens() {
    let dir = std::env::temp_dir().join(format!("mcp-cli-auth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = "http://127.0.0.1:9/mcp";
    let stored = serde_json::json!({
        "clients": {"http://127.0.0.1:8": {"client_id": "c1", "client_secret": "SECRET-1", "redirect_uris": []}},
        "sessions": [{"server_url": url, "resource": url, "issuer": "http://127.0.0.1:8",
            "tokens": {"access_token": "ACCESS-1", "token_type": "Bearer", "refresh_token": "REFRESH-1",
                       "expires_at": 4102444800u64, "scopes": ["read"], "requested_scopes": ["read"]}}]
    });
    std::fs::write(dir.join("oauth.json"), stored.to_string()).unwrap();

    let (code, out, err) = mcp(&dir, &["auth", "status", url]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("http://127.0.0.1:8") && out.contains("refreshable") && out.contains("read"), "{out}");
    assert!(!out.contains("ACCESS-1") && !out.contains("REFRESH-1") && !out.contains("SECRET-1"));
    let (code, out, _) = mcp(&dir, &["auth", "status", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["issuer"], "http://127.0.0.1:8");
    assert_eq!(v[0]["refresh_token"], true);
    assert!(!out.contains("ACCESS-1") && !out.contains("REFRESH-1") && !out.contains("SECRET-1"));

    let (code, out, _) = mcp(&dir, &["auth", "logout", url]);
    assert_eq!(code, 0);
    assert!(out.contains("Logged out"), "{out}");
    let (code, _, err) = mcp(&dir, &["auth", "status", url]);
    assert_eq!(code, 1);
    assert!(err.contains("not logged in"), "{err}");
    // The registration is kept; the file stays private.
    let kept = std::fs::read_to_string(dir.join("oauth.json")).unwrap();
    assert!(kept.contains("c1") && !kept.contains("ACCESS-1"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("oauth.json")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// One request a fake saw.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: HashMap<String, String>,
    body: String,
}

/// A fake on 127.0.0.1: an MCP endpoint (`/mcp`, 401 until it gets a token it issued), its
/// protected-resource metadata naming `authorization_server`, and an authorization server
/// (metadata + client credentials token endpoint). One request per connection.
#[derive(Clone)]
struct Fake {
    base: String,
    authorization_server: Arc<Mutex<String>>,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    fn start() -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let fake = Fake { authorization_server: Arc::new(Mutex::new(base.clone())), base, log: Arc::default() };
        let f = fake.clone();
        std::thread::spawn(move || {
            for sock in listener.incoming().flatten() {
                let f = f.clone();
                std::thread::spawn(move || f.serve(sock));
            }
        });
        fake
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn seen(&self, path: &str) -> Vec<Seen> {
        self.log.lock().unwrap().iter().filter(|r| r.path == path).cloned().collect()
    }

    fn serve(&self, mut sock: TcpStream) {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let end = loop {
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p;
            }
            match sock.read(&mut chunk) {
                Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or_default().split(' ');
        let (method, target) = (first.next().unwrap_or_default().to_owned(), first.next().unwrap_or_default());
        let path = target.split('?').next().unwrap_or_default().to_owned();
        let headers: HashMap<String, String> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let len: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        let mut body = buf[end + 4..].to_vec();
        while body.len() < len {
            match sock.read(&mut chunk) {
                Ok(n) if n > 0 => body.extend_from_slice(&chunk[..n]),
                _ => break,
            }
        }
        let req = Seen { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() };
        self.log.lock().unwrap().push(req.clone());
        let (status, extra, body) = self.handle(&req);
        let mut out = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
            body.len()
        );
        for (k, v) in extra {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(&body);
        let _ = sock.write_all(out.as_bytes());
    }

    fn handle(&self, r: &Seen) -> (u16, Vec<(String, String)>, String) {
        let base = &self.base;
        match (r.method.as_str(), r.path.as_str()) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => {
                let asv = self.authorization_server.lock().unwrap().clone();
                (200, vec![], serde_json::json!({"resource": self.url(), "authorization_servers": [asv]}).to_string())
            }
            ("GET", "/.well-known/oauth-authorization-server") => (
                200,
                vec![],
                serde_json::json!({
                    "issuer": base,
                    "token_endpoint": format!("{base}/token"),
                    "grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                })
                .to_string(),
            ),
            ("POST", "/token") => {
                let at = format!("at-{}", base.rsplit(':').next().unwrap_or_default());
                (
                    200,
                    vec![],
                    serde_json::json!({"access_token": at, "token_type": "Bearer", "expires_in": 3600}).to_string(),
                )
            }
            ("POST", "/mcp") => {
                let authorized = r.headers.get("authorization").is_some_and(|a| a.starts_with("Bearer at-"));
                if !authorized {
                    let rm = format!("{base}/.well-known/oauth-protected-resource/mcp");
                    return (
                        401,
                        vec![("www-authenticate".into(), format!(r#"Bearer resource_metadata="{rm}""#))],
                        String::new(),
                    );
                }
                let msg: serde_json::Value = serde_json::from_str(&r.body).unwrap_or_default();
                let result = match msg["method"].as_str().unwrap_or_default() {
                    "server/discover" => serde_json::json!({
                        "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"
                    }),
                    "tools/list" => serde_json::json!({"tools": [], "resultType": "complete"}),
                    _ => {
                        let e = serde_json::json!({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}});
                        return (200, vec![], e.to_string());
                    }
                };
                (200, vec![], serde_json::json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}).to_string())
            }
            _ => (404, vec![], "{}".into()),
        }
    }
}

fn basic(id: &str, secret: &str) -> String {
    use base64::Engine as _;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}")))
}

/// No request to `fake` carried the client secret (header or body).
fn got_no_secret(fake: &Fake, secret: &str) -> bool {
    fake.log
        .lock()
        .unwrap()
        .iter()
        .all(|r| !r.body.contains(secret) && r.headers.get("authorization").is_none_or(|a| !a.starts_with("Basic")))
}

#[test]
fn client_credentials_go_only_to_their_named_issuer() {
    let dir = std::env::temp_dir().join(format!("mcp-cli-auth-issuer-{}", std::process::id()));
    let (server, legit, attacker) = (Fake::start(), Fake::start(), Fake::start());
    *server.authorization_server.lock().unwrap() = attacker.base.clone();
    let env = [
        ("MCP_OAUTH_CLIENT_CREDENTIALS", "1"),
        ("MCP_OAUTH_CLIENT_ID", "cid"),
        ("MCP_OAUTH_CLIENT_SECRET", "s3cret-value"),
        ("MCP_OAUTH_CLIENT_ISSUER", legit.base.as_str()),
    ];
    let (code, _, err) = mcp_env(&dir, &["tools", "list", &server.url()], &env);
    assert_ne!(code, 0, "{err}");
    assert!(attacker.seen("/token").is_empty(), "the attacker's token endpoint was called");
    assert!(got_no_secret(&attacker, "s3cret-value"));
    assert!(err.contains(&attacker.base) && err.contains(&legit.base), "names both issuers: {err}");
    // `mcp auth login --client-issuer` likewise.
    let (code, _, err) = mcp_env(
        &dir,
        &[
            "auth",
            "login",
            &server.url(),
            "--client-credentials",
            "--client-id",
            "cid",
            "--client-secret",
            "s3cret-value",
            "--client-issuer",
            &legit.base,
        ],
        &[],
    );
    assert_ne!(code, 0, "{err}");
    assert!(attacker.seen("/token").is_empty() && got_no_secret(&attacker, "s3cret-value"));
    // Named correctly, they work.
    *server.authorization_server.lock().unwrap() = legit.base.clone();
    let (code, _, err) = mcp_env(&dir, &["tools", "list", &server.url()], &env);
    assert_eq!(code, 0, "{err}");
    assert_eq!(legit.seen("/token")[0].headers["authorization"], basic("cid", "s3cret-value"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn client_credentials_without_an_issuer_are_bound_at_first_use() {
    let dir = std::env::temp_dir().join(format!("mcp-cli-auth-bind-{}", std::process::id()));
    let (server, attacker) = (Fake::start(), Fake::start());
    let env = [
        ("MCP_OAUTH_CLIENT_CREDENTIALS", "1"),
        ("MCP_OAUTH_CLIENT_ID", "cid"),
        ("MCP_OAUTH_CLIENT_SECRET", "s3cret-value"),
    ];
    // First use: the server's own authorization server gets them, and the binding is kept.
    let (code, _, err) = mcp_env(&dir, &["tools", "list", &server.url()], &env);
    assert_eq!(code, 0, "{err}");
    assert_eq!(server.seen("/token")[0].headers["authorization"], basic("cid", "s3cret-value"));
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("oauth.json")).unwrap()).unwrap();
    assert_eq!(stored["client_issuers"]["cid"], server.base.as_str());
    // Then the server names another authorization server: nothing goes there.
    std::fs::write(dir.join("oauth.json"), serde_json::json!({"client_issuers": {"cid": server.base}}).to_string())
        .unwrap();
    *server.authorization_server.lock().unwrap() = attacker.base.clone();
    let (code, _, err) = mcp_env(&dir, &["tools", "list", &server.url()], &env);
    assert_ne!(code, 0, "{err}");
    assert!(attacker.seen("/token").is_empty(), "the attacker's token endpoint was called");
    assert!(got_no_secret(&attacker, "s3cret-value"));
    assert!(err.contains(&attacker.base) && err.contains(&server.base), "names both issuers: {err}");
    let _ = std::fs::remove_dir_all(dir);
}
