//! `mcp tools list --save-icons DIR`: the validated icons are saved, each refused one is
//! printed with its reason. The server is a raw loopback one (a 2025-11-25 Streamable HTTP
//! server) that also serves the icon files.

use crate::support::raw_http;

use raw_http::{read_request, respond, Req};
use serde_json::{json, Value};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn png(w: u32, h: u32) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut v = (data.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(kind);
        v.extend_from_slice(data);
        v.extend_from_slice(&[0; 4]);
        v
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
    v.extend(chunk(b"IHDR", &ihdr));
    v.extend(chunk(b"IDAT", &[0x78, 0x9C, 0x63, 0, 0, 0, 1, 0, 1]));
    v.extend(chunk(b"IEND", &[]));
    v
}

/// The server: MCP at `/mcp`, icon files under `/icons/`; every icon request recorded.
fn server(icons: impl Fn(SocketAddr) -> Value + Send + Sync + 'static) -> (SocketAddr, Arc<Mutex<Vec<Req>>>) {
    server_with(move |addr| {
        json!([{"name": "search/web", "inputSchema": {"type": "object"}, "icons": icons(addr)},
               {"name": "plain", "inputSchema": {"type": "object"}}])
    })
}

/// Text a hostile server sends: an OSC 52 clipboard write, a title change, line erasing, a
/// CSI in its C1 form and a bidi override.
const EVIL: &str =
    "copy\u{1b}]52;c;ZWNobyBwd25lZA==\u{7} title\u{1b}]0;pwned\u{7} erase\u{1b}[2K\r\u{9b}1A rtl\u{202e}txt";

/// The server of [`server`] with these tools; `tools/call` answers with [`EVIL`] text and
/// `prompts/get`... is not needed.
fn server_with(tools: impl Fn(SocketAddr) -> Value + Send + Sync + 'static) -> (SocketAddr, Arc<Mutex<Vec<Req>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Vec<Req>>> = Arc::default();
    let (icons, log) = (Arc::new(tools), seen.clone());
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            let (icons, log) = (icons.clone(), log.clone());
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let Some(req) = read_request(&s) else { return };
                let msg: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
                let reply = |s: &mut TcpStream, result: Value| {
                    let body = json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}).to_string();
                    respond(
                        s,
                        200,
                        &[("content-type", "application/json"), ("mcp-session-id", "s-1")],
                        body.as_bytes(),
                    );
                };
                match (req.method.as_str(), msg["method"].as_str()) {
                    ("GET", _) if req.path == "/icons/good.png" => {
                        respond(&mut s, 200, &[("content-type", "image/png")], &png(16, 16))
                    }
                    ("GET", _) if req.path == "/icons/evil.svg" => respond(
                        &mut s,
                        200,
                        &[("content-type", "image/svg+xml")],
                        b"<svg><script>alert(1)</script></svg>",
                    ),
                    ("POST", Some("initialize")) => reply(
                        &mut s,
                        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                               "serverInfo": {"name": "icons-test", "version": "1"}}),
                    ),
                    ("POST", Some(m)) if m.starts_with("notifications/") => respond(&mut s, 202, &[], b""),
                    ("POST", Some("tools/list")) if req.headers.iter().any(|(k, _)| k == "mcp-session-id") => {
                        reply(&mut s, json!({ "tools": icons(addr) }))
                    }
                    ("POST", Some("tools/call")) => reply(
                        &mut s,
                        json!({"content": [{"type": "text", "text": EVIL}], "isError": msg["params"]["name"] == "fail"}),
                    ),
                    ("POST", _) => {
                        let e = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "No valid session ID"}});
                        respond(&mut s, 400, &[("content-type", "application/json")], e.to_string().as_bytes())
                    }
                    _ => respond(&mut s, 404, &[], b""),
                }
                if req.path.starts_with("/icons/") {
                    log.lock().unwrap().push(req);
                }
            });
        }
    });
    (addr, seen)
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcp-icons-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn mcp(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn data_png() -> String {
    use base64::Engine as _;
    format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png(8, 4)))
}

fn hostile_icons(addr: SocketAddr) -> Value {
    json!([
        {"src": format!("http://{addr}/icons/good.png"), "mimeType": "image/png", "sizes": ["16x16"]},
        {"src": "javascript:alert(1)"},
        {"src": format!("http://{addr}/icons/evil.svg"), "mimeType": "image/svg+xml"},
        {"src": data_png()},
        {"src": format!("http://127.0.0.2:{}/icons/good.png", addr.port())},
        {"src": format!("http://{addr}/icons/good.png"), "mimeType": "image/jpeg"},
    ])
}

#[test]
fn save_icons_keeps_the_valid_ones_and_explains_the_others() {
    let (addr, seen) = server(hostile_icons);
    let dir = temp_dir("text");
    let url = format!("http://{addr}/mcp");
    let (code, out, err) = mcp(&["tools", "list", &url, "--save-icons", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("search/web"), "the table is still printed: {out}");
    let mut files: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert_eq!(files, ["search_web-0.png", "search_web-3.png"], "{out}\n{err}");
    assert_eq!(std::fs::read(dir.join("search_web-0.png")).unwrap(), png(16, 16));
    assert_eq!(std::fs::read(dir.join("search_web-3.png")).unwrap(), png(8, 4));
    assert!(out.contains("saved ") && out.contains("search_web-0.png (image/png, 16x16)"), "{out}");
    assert!(
        err.contains("refused icon 1 of search/web (javascript:alert(1)): icon URI scheme `javascript:` is refused"),
        "{err}"
    );
    assert!(
        err.contains("refused icon 2 of search/web") && err.contains("SVG refused: scripts and external references"),
        "{err}"
    );
    assert!(err.contains("refused icon 4 of search/web") && err.contains("is not on the server's origin"), "{err}");
    assert!(
        err.contains("refused icon 5 of search/web")
            && err.contains("mimeType says \"image/jpeg\" but the content is image/png"),
        "{err}"
    );
    // Two fetches reached the server (good.png twice, evil.svg once); none carried credentials.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3, "{:?}", seen.iter().map(|r| &r.path).collect::<Vec<_>>());
    for r in seen.iter() {
        assert!(
            r.headers.iter().all(|(k, _)| k != "cookie" && k != "authorization" && k != "mcp-session-id"),
            "{:?}",
            r.headers
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn save_icons_in_json() {
    let (addr, _) = server(hostile_icons);
    let dir = temp_dir("json");
    let url = format!("http://{addr}/mcp");
    let (code, out, err) = mcp(&["tools", "list", &url, "--json", "--save-icons", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let icons = doc["icons"].as_array().unwrap();
    assert_eq!(icons.len(), 6);
    assert_eq!(icons[0]["mimeType"], "image/png");
    assert!(icons[0]["saved"].as_str().unwrap().ends_with("search_web-0.png"));
    assert_eq!(
        icons[1]["refused"],
        "icon URI scheme `javascript:` is refused: only https: and data: icons are fetched"
    );
    assert_eq!(doc["tools"].as_array().unwrap().len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tools_show_lists_the_icons_and_saves_the_valid_ones() {
    let (addr, _) = server(hostile_icons);
    let dir = temp_dir("show");
    let url = format!("http://{addr}/mcp");
    let (code, out, err) = mcp(&["tools", "show", &url, "search/web"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Icons:"), "an icons section: {out}");
    assert!(out.contains(&format!("http://{addr}/icons/good.png")) && out.contains("16x16"), "{out}");
    assert!(out.contains("javascript:alert(1)"), "every icon is listed, safe or not: {out}");
    assert!(!dir.exists() || std::fs::read_dir(&dir).unwrap().next().is_none(), "nothing fetched without the flag");

    let (code, out, err) = mcp(&["tools", "show", &url, "search/web", "--json", "--save-icons", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["tool"]["name"], "search/web");
    let icons = doc["icons"].as_array().unwrap();
    assert_eq!(icons.len(), 6, "{doc}");
    assert!(icons[0]["saved"].as_str().unwrap().ends_with("search_web-0.png"));
    assert!(icons[2]["refused"].as_str().unwrap().contains("SVG refused"), "{doc}");
    let mut files: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert_eq!(files, ["search_web-0.png", "search_web-3.png"]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn mcp_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp")).args(args).envs(env.iter().copied()).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `--save-icons` stops at `--max-icons` icons and at `--max-icon-bytes` bytes, saying so.
#[test]
fn save_icons_stops_at_its_bounds() {
    let many = |_: SocketAddr| {
        let icons: Vec<Value> = (0..40).map(|_| json!({"src": data_png()})).collect();
        json!([{"name": "many", "inputSchema": {"type": "object"}, "icons": icons}])
    };
    let (addr, _) = server_with(many);
    let url = format!("http://{addr}/mcp");
    let count = |d: &PathBuf| std::fs::read_dir(d).map(|r| r.count()).unwrap_or(0);
    // By count.
    let dir = temp_dir("bound-count");
    let (code, out, err) = mcp(&["tools", "list", &url, "--save-icons", dir.to_str().unwrap(), "--max-icons", "3"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(count(&dir), 3, "{out}\n{err}");
    assert!(err.contains("--save-icons stopped after 3 icons (the limit; raise it with --max-icons N)"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
    // By bytes: each icon is png(8, 4), so room for two.
    let size = png(8, 4).len();
    let dir = temp_dir("bound-bytes");
    let max = (2 * size + size / 2).to_string();
    let (code, out, err) =
        mcp(&["--json", "tools", "list", &url, "--save-icons", dir.to_str().unwrap(), "--max-icon-bytes", &max]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(count(&dir), 2);
    assert!(err.contains(&format!("would pass the limit of {max} bytes")), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let icons = doc["icons"].as_array().unwrap();
    assert_eq!(icons.len(), 3, "{doc}");
    assert!(icons[2]["stopped"].is_string(), "{doc}");
    let _ = std::fs::remove_dir_all(&dir);
    // The default bound (256 icons) holds for a server listing more.
    let lots = |_: SocketAddr| {
        let icons: Vec<Value> = (0..300).map(|_| json!({"src": "javascript:x"})).collect();
        json!([{"name": "lots", "inputSchema": {"type": "object"}, "icons": icons}])
    };
    let (addr, _) = server_with(lots);
    let dir = temp_dir("bound-default");
    let (_, out, err) =
        mcp(&["--json", "tools", "list", &format!("http://{addr}/mcp"), "--save-icons", dir.to_str().unwrap()]);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert_eq!(doc["icons"].as_array().unwrap().len(), 257, "256 handled, then the stop entry");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Server text (a tool's name, description, a call's result, a tool error) is shown escaped
/// on a terminal (forced here with MCP_ESCAPE=always) and raw with --json or in a pipe.
#[test]
fn server_text_is_escaped_on_a_terminal() {
    let tools = |_: SocketAddr| {
        json!([{"name": format!("t\u{1b}]0;x\u{7}"), "title": "T", "description": EVIL, "inputSchema": {"type": "object"}},
               {"name": "fail", "description": "d", "inputSchema": {"type": "object"}}])
    };
    let (addr, _) = server_with(tools);
    let url = format!("http://{addr}/mcp");
    let tty = [("MCP_ESCAPE", "always")];
    let raw_bytes =
        |s: &str| s.contains('\u{1b}') || s.contains('\u{9b}') || s.contains('\u{202e}') || s.contains('\r');
    let escaped = |s: &str| s.contains("\\x1b]52;c;") && s.contains("\\x1b[2K") && s.contains("\\u{202e}");
    let (code, out, err) = mcp_env(&["tools", "list", &url], &tty);
    assert_eq!(code, 0, "{err}");
    assert!(!raw_bytes(&out), "no raw control characters on a terminal: {out:?}");
    assert!(out.contains("\\x1b]52;c;") && out.contains("t\\x1b]0;x\\x07"), "{out}");
    for name in ["echo", "fail"] {
        let (_, out, err) = mcp_env(&["tools", "call", &url, name], &tty);
        let all = format!("{out}{err}");
        assert!(!raw_bytes(&all) && escaped(&all), "{name}: {all:?}");
    }
    // --json: the server's bytes, as JSON carries them.
    let (code, out, _) = mcp_env(&["--json", "tools", "list", &url], &tty);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["tools"][0]["description"], EVIL);
    assert!(out.contains('\u{202e}') && out.contains('\u{9b}'), "raw in JSON: {out:?}");
    // A pipe (not a terminal): raw.
    let (_, out, _) = mcp_env(&["tools", "call", &url, "echo"], &[("MCP_ESCAPE", "auto")]);
    assert!(out.contains(EVIL), "{out:?}");
}
