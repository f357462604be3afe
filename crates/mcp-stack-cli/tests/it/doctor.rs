//! `mcp doctor`: the built binary against a healthy server, legacy ones (Streamable HTTP with
//! an initialize session, and the deprecated HTTP+SSE transport), an OAuth-protected one
//! (with a small authorization server written here), a port with nothing listening, servers
//! that are not MCP at all, and stdio commands. Each time the right step must fail (or pass)
//! with the right hint. Everything listens on 127.0.0.1.

use crate::support::http_server;
use crate::support::raw_http;

use http_server::EverythingHttp;
use mcp_test_support::tls::{TlsAnswers, TlsServer};
use raw_http::{read_request, respond, Req};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

// ------------------------------------------------------------------------------------------
// Running the doctor
// ------------------------------------------------------------------------------------------

/// A private config directory (no stored tokens unless a test writes some).
struct ConfigDir(PathBuf);

impl ConfigDir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("mcp-doctor-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Self(d)
    }
}

impl Drop for ConfigDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `mcp doctor ARGS` (with a time limit per step) and returns (exit code, stdout, stderr).
fn doctor_in(dir: &ConfigDir, args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .arg("doctor")
        .args(["--timeout", "5"])
        .args(args)
        .env("MCP_CONFIG_DIR", &dir.0)
        .env("NO_COLOR", "1")
        .env_remove("MCP_OAUTH_CLIENT_CREDENTIALS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp doctor");
    // Bounded: the doctor's own limits are 5 s per step; a hang fails the test.
    for _ in 0..1200 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if child.try_wait().unwrap().is_none() {
        let _ = child.kill();
        panic!("mcp doctor {args:?} did not finish within 60 s");
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `mcp doctor --json ARGS`: the exit code and the report.
fn doctor_json_in(dir: &ConfigDir, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, out, err) = doctor_in(dir, &all);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}\nstderr: {err}"));
    (code, v)
}

fn doctor_json(args: &[&str]) -> (i32, Value) {
    doctor_json_in(&ConfigDir::new("json"), args)
}

/// The step called `name` in a report.
fn step<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no step {name} in {report:#}"))
}

fn status<'a>(report: &'a Value, name: &str) -> &'a str {
    step(report, name)["status"].as_str().unwrap()
}

fn detail<'a>(report: &'a Value, name: &str) -> &'a str {
    step(report, name)["detail"].as_str().unwrap()
}

fn hints(report: &Value, name: &str) -> String {
    step(report, name)["hints"].as_array().unwrap().iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n")
}

/// The names of the failed steps.
fn failed(report: &Value) -> Vec<&str> {
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "fail")
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

// ------------------------------------------------------------------------------------------
// A raw HTTP/1.1 server (one request per connection)
// ------------------------------------------------------------------------------------------

fn respond_json(s: &mut TcpStream, status: u16, v: &Value) {
    respond(s, status, &[("content-type", "application/json")], v.to_string().as_bytes());
}

/// Serves `handler` on 127.0.0.1 (a thread per connection, one request each).
fn raw_server(handler: impl Fn(&Req, &mut TcpStream) + Send + Sync + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handler = Arc::new(handler);
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            let h = handler.clone();
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let _ = s.set_write_timeout(Some(Duration::from_secs(10)));
                if let Some(req) = read_request(&s) {
                    h(&req, &mut s);
                }
            });
        }
    });
    addr
}

/// A port nothing listens on (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

// ------------------------------------------------------------------------------------------
// Healthy, absent, and non-MCP servers
// ------------------------------------------------------------------------------------------

#[test]
fn healthy_server_passes_every_step() {
    let server = EverythingHttp::start();
    let (code, r) = doctor_json(&[&server.url]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["ok"], true);
    assert_eq!((r["era"].as_str(), r["protocolVersion"].as_str()), (Some("modern"), Some("2026-07-28")));
    for s in ["url", "dns", "tcp", "discover", "connect"] {
        assert_eq!(status(&r, s), "pass", "{s}: {r:#}");
    }
    assert_eq!(status(&r, "tls"), "skip");
    assert!(detail(&r, "token").contains("not logged in"), "{r:#}");
    assert!(detail(&r, "discover").contains("supports 2026-07-28"), "{r:#}");
    assert!(detail(&r, "discover").contains("tools"), "the capabilities are listed: {r:#}");
    assert!(detail(&r, "initialize").contains("not needed"), "{r:#}");
    assert!(detail(&r, "connect").contains("modern 2026-07-28"), "{r:#}");

    // The text report: one line per step, and the verdict.
    let (code, out, _) = doctor_in(&ConfigDir::new("healthy-text"), &[&server.url]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l.contains("✓ discover")), "{out}");
    assert!(out.lines().any(|l| l.contains("– tls") && l.contains("plain http")), "{out}");
    assert!(out.contains("No problems found"), "{out}");
}

#[test]
fn nothing_listening_fails_the_tcp_step() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, r) = doctor_json(&[&url]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(failed(&r), ["tcp"], "{r:#}");
    assert_eq!(detail(&r, "tcp"), format!("nothing listening on 127.0.0.1:{port}; is the server running?"));
    assert!(hints(&r, "tcp").contains("start the server"), "{r:#}");
    assert!(detail(&r, "discover").starts_with("skipped"), "{r:#}");

    let (code, out, _) = doctor_in(&ConfigDir::new("refused-text"), &[&url]);
    assert_eq!(code, 1);
    assert!(out.contains("✗ tcp") && out.contains("1 step failed"), "{out}");
}

#[test]
fn a_scheme_less_url_gets_a_hint() {
    let (code, r) = doctor_json(&["127.0.0.1:3000/mcp"]);
    assert_eq!(code, 1);
    assert_eq!(failed(&r), ["url"]);
    assert!(hints(&r, "url").contains("mcp doctor http://127.0.0.1:3000/mcp"), "{r:#}");
    let (_, r) = doctor_json(&["mcp.example.com/mcp"]);
    assert!(hints(&r, "url").contains("https://mcp.example.com/mcp"), "{r:#}");
}

#[test]
fn an_html_page_is_summarized_with_an_endpoint_hint() {
    let page = "<!doctype html>\n<html><head><title>It works!</title></head><body>Apache</body></html>";
    let addr =
        raw_server(move |_req, s| respond(s, 200, &[("content-type", "text/html; charset=utf-8")], page.as_bytes()));
    let (code, r) = doctor_json(&[&format!("http://{addr}/")]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(failed(&r), ["discover"], "{r:#}");
    let expected = format!("answered with an HTML page (text/html, {} bytes): <title>It works!</title>", page.len());
    assert!(detail(&r, "discover").contains(&expected), "{r:#}");
    assert!(hints(&r, "discover").contains(&format!("try mcp doctor http://{addr}/mcp")), "{r:#}");
    assert!(detail(&r, "connect").starts_with("skipped"), "{r:#}");
}

/// A web server that does not implement POST (501) is not an MCP endpoint: said so, with the
/// endpoint hint, not "the server failed".
#[test]
fn a_501_is_not_an_mcp_endpoint() {
    let addr = raw_server(|_req, s| respond(s, 501, &[("content-type", "text/plain")], b"Unsupported method ('POST')"));
    let (code, r) = doctor_json(&[&format!("http://{addr}/")]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(failed(&r), ["discover"], "{r:#}");
    assert!(detail(&r, "discover").starts_with("not an MCP endpoint: POST is not implemented here"), "{r:#}");
    assert!(!hints(&r, "discover").contains("logs say why"), "{r:#}");
    assert!(hints(&r, "discover").contains(&format!("try mcp doctor http://{addr}/mcp")), "{r:#}");
}

#[test]
fn json_that_is_not_json_rpc_is_summarized() {
    let addr = raw_server(|_req, s| respond_json(s, 200, &json!({"status": "ok", "uptime": 12})));
    let (code, r) = doctor_json(&[&format!("http://{addr}/api")]);
    assert_eq!(code, 1);
    assert_eq!(failed(&r), ["discover"], "{r:#}");
    assert!(detail(&r, "discover").contains("JSON that is not JSON-RPC (application/json"), "{r:#}");
    assert!(hints(&r, "discover").contains("probably not the MCP endpoint"), "{r:#}");
}

#[test]
fn a_refused_host_header_suggests_allow_host() {
    let server = EverythingHttp::start();
    let (code, r) = doctor_json(&["--header", "Host: mcp.internal.example", &server.url]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(failed(&r), ["discover"], "{r:#}");
    assert!(detail(&r, "discover").contains("refused the Host header (HTTP 403)"), "{r:#}");
    assert!(hints(&r, "discover").contains("--allow-host mcp.internal.example"), "{r:#}");
}

#[test]
fn a_server_rejecting_the_accept_header_is_named() {
    let addr = raw_server(|_req, s| {
        respond(s, 406, &[("content-type", "text/plain")], b"Not Acceptable: Client must accept text/event-stream")
    });
    let (code, r) = doctor_json(&[&format!("http://{addr}/mcp")]);
    assert_eq!(code, 1);
    assert_eq!(failed(&r), ["discover"], "{r:#}");
    assert!(detail(&r, "discover").contains("refused the Accept header (HTTP 406)"), "{r:#}");
    assert!(hints(&r, "discover").contains("application/json, text/event-stream"), "{r:#}");
}

#[test]
fn https_to_a_plain_http_port_fails_the_tls_step() {
    let server = EverythingHttp::start();
    let url = server.url.replace("http://", "https://");
    let (code, r) = doctor_json(&[&url]);
    assert_eq!(code, 1);
    assert_eq!(failed(&r), ["tls"], "{r:#}");
    assert!(detail(&r, "tls").contains("did not answer with TLS"), "{r:#}");
    assert!(hints(&r, "tls").contains("http:// instead of https://"), "{r:#}");
}

#[test]
fn a_self_signed_certificate_is_explained() {
    let Some(tls) = TlsServer::start(TlsAnswers::StatusPage) else { return };
    let (code, r) = doctor_json(&[&format!("https://localhost:{}/mcp", tls.port)]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(failed(&r), ["tls"], "{r:#}");
    assert!(detail(&r, "tls").contains("not signed by a trusted authority (self-signed, or a private CA)"), "{r:#}");
    assert!(detail(&r, "tls").contains("UnknownIssuer"), "{r:#}");
    assert!(hints(&r, "tls").contains("public CA"), "{r:#}");
}

// ------------------------------------------------------------------------------------------
// Legacy servers
// ------------------------------------------------------------------------------------------

/// A 2025-11-25 Streamable HTTP server: sessions from `initialize`, nothing else known.
fn legacy_streamable() -> SocketAddr {
    raw_server(|req, s| match (req.method.as_str(), req.json()["method"].as_str()) {
        ("POST", Some("initialize")) => {
            let result = json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                "serverInfo": {"name": "legacy-test", "version": "0.9"}});
            let body = json!({"jsonrpc": "2.0", "id": req.json()["id"], "result": result}).to_string();
            respond(s, 200, &[("content-type", "application/json"), ("mcp-session-id", "s-1")], body.as_bytes());
        }
        ("POST", Some(m)) if m.starts_with("notifications/") => respond(s, 202, &[], b""),
        ("POST", _) if req.header("mcp-session-id").is_none() => {
            let e = json!({"jsonrpc": "2.0", "id": null,
                           "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}});
            respond_json(s, 400, &e);
        }
        ("POST", _) => {
            let e = json!({"jsonrpc": "2.0", "id": req.json()["id"], "error": {"code": -32601, "message": "Method not found"}});
            respond_json(s, 200, &e);
        }
        ("DELETE", _) => respond(s, 200, &[], b""),
        _ => respond(s, 405, &[("allow", "POST, DELETE")], b""),
    })
}

#[test]
fn a_legacy_streamable_server_is_detected_and_works() {
    let addr = legacy_streamable();
    let (code, r) = doctor_json(&[&format!("http://{addr}/mcp")]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(status(&r, "discover"), "warn");
    assert!(detail(&r, "discover").contains("not a 2026-07-28 server"), "{r:#}");
    assert!(detail(&r, "discover").contains("No valid session ID"), "the server's answer is shown: {r:#}");
    assert_eq!(status(&r, "initialize"), "pass", "{r:#}");
    assert!(
        detail(&r, "initialize").contains("\"legacy-test\" 0.9 negotiated 2025-11-25 with an Mcp-Session-Id session")
    );
    assert_eq!((status(&r, "http+sse"), detail(&r, "http+sse")), ("skip", "not needed: initialize worked"));
    assert_eq!(status(&r, "connect"), "pass", "{r:#}");
    assert!(detail(&r, "connect").contains("legacy 2025-11-25: an initialize session"), "{r:#}");
    assert_eq!(r["era"], "legacy");
}

/// A 2024-11-05 HTTP+SSE server: `GET /sse` is the stream (its first event names the POST
/// endpoint); answers to POSTs arrive on the stream.
fn legacy_sse() -> SocketAddr {
    let stream: Arc<Mutex<Option<mpsc::Sender<String>>>> = Arc::default();
    raw_server(move |req, s| match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/sse") => {
            let (tx, rx) = mpsc::channel::<String>();
            *stream.lock().unwrap() = Some(tx);
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(b"event: endpoint\ndata: /messages?session=1\n\n");
            // Bounded: the stream ends after 30 s of silence.
            while let Ok(msg) = rx.recv_timeout(Duration::from_secs(30)) {
                if s.write_all(format!("event: message\ndata: {msg}\n\n").as_bytes()).is_err() {
                    break;
                }
            }
        }
        ("POST", p) if p.starts_with("/messages") => {
            let m = req.json();
            if m["method"] == "initialize" {
                let result = json!({"protocolVersion": "2024-11-05", "capabilities": {},
                                    "serverInfo": {"name": "sse-test", "version": "0.1"}});
                let reply = json!({"jsonrpc": "2.0", "id": m["id"], "result": result}).to_string();
                if let Some(tx) = stream.lock().unwrap().as_ref() {
                    let _ = tx.send(reply);
                }
            }
            respond(s, 202, &[], b"Accepted");
        }
        _ => respond(s, 405, &[("content-type", "text/plain")], b"Method Not Allowed"),
    })
}

#[test]
fn an_http_sse_server_is_detected_and_works() {
    let addr = legacy_sse();
    let (code, r) = doctor_json(&[&format!("http://{addr}/sse")]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(status(&r, "discover"), "warn", "{r:#}");
    assert_eq!(status(&r, "initialize"), "warn", "{r:#}");
    assert!(detail(&r, "initialize").contains("trying HTTP+SSE"), "{r:#}");
    assert_eq!(status(&r, "http+sse"), "pass", "{r:#}");
    assert!(detail(&r, "http+sse").contains("endpoint event names /messages?session=1"), "{r:#}");
    assert!(detail(&r, "connect").contains("legacy 2024-11-05: the deprecated HTTP+SSE transport"), "{r:#}");
}

#[test]
fn a_plain_404_everywhere_is_not_an_mcp_server() {
    let addr = raw_server(|_req, s| respond(s, 404, &[("content-type", "text/plain")], b"404 page not found"));
    let (code, r) = doctor_json(&[&format!("http://{addr}/v1")]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(failed(&r), ["http+sse"], "{r:#}");
    assert!(detail(&r, "discover").contains("404 page not found"), "{r:#}");
    assert!(hints(&r, "http+sse").contains(&format!("try mcp doctor http://{addr}/mcp")), "{r:#}");
}

// ------------------------------------------------------------------------------------------
// An OAuth-protected server
// ------------------------------------------------------------------------------------------

/// An authorization server's metadata endpoint; `pkce` switches S256 on and off.
fn authorization_server(pkce: Arc<AtomicBool>) -> String {
    let issuer: Arc<Mutex<String>> = Arc::default();
    let i = issuer.clone();
    let addr = raw_server(move |req, s| {
        let issuer = i.lock().unwrap().clone();
        match req.path.as_str() {
            "/.well-known/oauth-authorization-server" => {
                let mut m = json!({
                    "issuer": issuer, "authorization_endpoint": format!("{issuer}/authorize"),
                    "token_endpoint": format!("{issuer}/token"), "jwks_uri": format!("{issuer}/jwks"),
                    "registration_endpoint": format!("{issuer}/register"),
                    "client_id_metadata_document_supported": true, "response_types_supported": ["code"],
                });
                if pkce.load(SeqCst) {
                    m["code_challenge_methods_supported"] = json!(["S256"]);
                }
                respond_json(s, 200, &m);
            }
            "/jwks" => respond_json(s, 200, &json!({"keys": []})),
            _ => respond_json(s, 404, &json!({"error": "not_found"})),
        }
    });
    let url = format!("http://{addr}");
    *issuer.lock().unwrap() = url.clone();
    url
}

/// `mcp serve everything` requiring tokens from `issuer`, on a known port (its audience).
fn protected_server(issuer: &str) -> (EverythingHttp, String) {
    for _ in 0..5 {
        let url = format!("http://127.0.0.1:{}/mcp", free_port());
        let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["serve", "everything", "--http", &addr, "--auth-issuer", issuer, "--auth-audience", &url])
            .args(["--auth-jwks", &format!("{issuer}/jwks"), "--auth-scopes", "mcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let ready = lines.by_ref().map_while(Result::ok).any(|l| l.starts_with("mcp: serving on "));
        std::thread::spawn(move || lines.for_each(drop));
        let server = EverythingHttp { child, url: url.clone() };
        if ready {
            return (server, url);
        }
        // The port was taken in between: try another.
    }
    panic!("could not start the protected server");
}

#[test]
fn an_auth_protected_server_walks_the_discovery_chain() {
    let pkce = Arc::new(AtomicBool::new(true));
    let issuer = authorization_server(pkce.clone());
    let (_server, url) = protected_server(&issuer);

    let dir = ConfigDir::new("auth");
    let (code, r) = doctor_json_in(&dir, &[&url]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(failed(&r), ["authorization"], "{r:#}");
    assert!(detail(&r, "challenge").contains("resource_metadata="), "{r:#}");
    assert!(detail(&r, "challenge").contains("scope=\"mcp\""), "{r:#}");
    assert!(detail(&r, "resource metadata").contains(&format!("authorization server {issuer}")), "{r:#}");
    assert_eq!(status(&r, "auth server"), "pass", "{r:#}");
    assert!(detail(&r, "auth server").contains("RFC 8414"), "{r:#}");
    assert!(detail(&r, "registration").contains("client ID metadata documents and dynamic client registration"));
    assert_eq!(detail(&r, "pkce"), "S256 supported");
    assert!(detail(&r, "authorization").contains("requires authorization; not logged in"), "{r:#}");
    assert!(hints(&r, "authorization").contains(&format!("mcp auth login {url}")), "{r:#}");
    assert!(detail(&r, "connect").starts_with("skipped"), "{r:#}");

    // Without code_challenge_methods_supported the client must refuse: the PKCE step fails.
    pkce.store(false, SeqCst);
    let (code, r) = doctor_json_in(&dir, &[&url]);
    assert_eq!(code, 1);
    assert_eq!(failed(&r), ["pkce", "authorization"], "{r:#}");
    assert!(detail(&r, "pkce").contains("code_challenge_methods_supported is absent"), "{r:#}");
    assert!(hints(&r, "pkce").contains("must list S256"), "{r:#}");
    pkce.store(true, SeqCst);

    // A stored token the server refuses: the token check fails, with a hint to log in again.
    let stored = json!({
        "clients": {},
        "sessions": [{"server_url": url, "resource": url, "issuer": issuer,
            "tokens": {"access_token": "not-a-valid-token", "token_type": "Bearer",
                       "expires_at": 4102444800u64, "scopes": ["mcp"], "requested_scopes": ["mcp"]}}]
    });
    std::fs::write(dir.0.join("oauth.json"), stored.to_string()).unwrap();
    let (code, r) = doctor_json_in(&dir, &[&url]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(failed(&r), ["token", "authorization"], "{r:#}");
    assert!(detail(&r, "token").contains(&format!("Bearer token from {issuer}")), "{r:#}");
    assert!(detail(&r, "token").contains("rejected by the server"), "{r:#}");
    assert!(detail(&r, "authorization").contains("rejected the token"), "{r:#}");
    assert!(hints(&r, "authorization").contains(&format!("log in again: mcp auth login {url}")), "{r:#}");

    // An expired token without a refresh token is reported before anything is sent.
    let mut expired = stored.clone();
    expired["sessions"][0]["tokens"]["expires_at"] = json!(1000);
    std::fs::write(dir.0.join("oauth.json"), expired.to_string()).unwrap();
    let (_, r) = doctor_json_in(&dir, &[&url]);
    assert_eq!(status(&r, "token"), "fail", "{r:#}");
    assert!(detail(&r, "token").contains("expired, not refreshable"), "{r:#}");
    assert!(hints(&r, "token").contains("cannot be refreshed"), "{r:#}");
    assert!(detail(&r, "authorization").contains("not logged in"), "{r:#}");
}

// ------------------------------------------------------------------------------------------
// stdio
// ------------------------------------------------------------------------------------------

#[test]
fn a_healthy_stdio_server_passes() {
    let (code, r) = doctor_json(&["--", env!("CARGO_BIN_EXE_mcp"), "serve", "everything", "--stdio"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["transport"], "stdio");
    for s in ["command", "spawn", "discover", "connect"] {
        assert_eq!(status(&r, s), "pass", "{s}: {r:#}");
    }
    assert!(detail(&r, "connect").contains("modern 2026-07-28"), "{r:#}");
}

#[test]
fn configured_server_names_are_checked() {
    let server = EverythingHttp::start();
    let dir = ConfigDir::new("names");
    let file = dir.0.join("servers.json");
    let config = json!({"mcpServers": {
        "local": {"command": env!("CARGO_BIN_EXE_mcp"), "args": ["serve", "everything", "--stdio"]},
        "remote": {"url": server.url},
    }});
    std::fs::write(&file, config.to_string()).unwrap();
    let file = file.to_str().unwrap();
    let (code, r) = doctor_json_in(&dir, &["--config", file, "local"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["transport"], "stdio");
    assert!(r["target"].as_str().unwrap().starts_with("local = "), "{r:#}");
    let (code, r) = doctor_json_in(&dir, &["--config", file, "remote"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["target"], format!("remote = {}", server.url));
    assert_eq!(status(&r, "discover"), "pass", "{r:#}");
    // An unknown name: the url step names the configured ones.
    let (code, r) = doctor_json_in(&dir, &["--config", file, "remot"]);
    assert_eq!(code, 1);
    assert_eq!(detail(&r, "url"), "remot is not a URL or a configured server name");
    assert!(hints(&r, "url").contains("configured servers: local, remote"), "{r:#}");
}

#[test]
fn a_missing_command_is_named() {
    let (code, r) = doctor_json(&["--", "mcp-doctor-no-such-command", "--stdio"]);
    assert_eq!(code, 1);
    assert_eq!(failed(&r), ["command"], "{r:#}");
    assert_eq!(detail(&r, "command"), "command not found: mcp-doctor-no-such-command");
    assert!(hints(&r, "command").contains("not on PATH"), "{r:#}");
    assert!(detail(&r, "spawn").starts_with("skipped"), "{r:#}");
}

#[test]
fn a_server_that_exits_early_shows_its_stderr() {
    let (code, r) = doctor_json(&["--", "sh", "-c", "echo 'error: config file ~/.srv.toml not found' >&2; exit 3"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(status(&r, "spawn"), "pass");
    assert_eq!(failed(&r), ["discover"], "{r:#}");
    assert!(detail(&r, "discover").contains("exited before answering"), "{r:#}");
    assert!(hints(&r, "discover").contains("error: config file ~/.srv.toml not found"), "{r:#}");
}
