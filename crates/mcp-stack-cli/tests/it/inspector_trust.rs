//! How far `mcp inspect` trusts the local machine and the views it frames: origins naming only
//! the addresses bound (the sandbox on `[::1]`, another site than the page on `127.0.0.1`; a
//! squatter on the other loopback never becomes either), a one-time code
//! instead of the token on a browser's command line, a slow page's backlog bounded in bytes,
//! links a view asks for opened only when the user says so, and a view reaching its own
//! upstream only behind a gateway.

use crate::inspector::{api, call_without_arguments, chromium, everything, ipv6_loopback, raw, raw_at, Inspect};
use crate::support::browser::Browser;
use mcp::protocol::apps::UPSTREAM_META;
use mcp::server::apps::UiResource;
use mcp::server::{Context, Resource, Server, Tool};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp");

/// A process listening on a loopback address that answers every request with a page of its
/// own, counting them.
struct Squatter {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Squatter {
    /// A squatter on `squat` (`[::1]` or `127.0.0.1`) at a port that is free at `free` (the
    /// other one, for the inspector to take); `None` when this machine has no IPv6 loopback.
    fn at(squat: &str, free: &str) -> Option<Squatter> {
        let (listener, port) = (0..20).find_map(|_| {
            let l = std::net::TcpListener::bind(format!("{squat}:0")).ok()?;
            let port = l.local_addr().ok()?.port();
            std::net::TcpListener::bind(format!("{free}:{port}")).ok().map(|_| (l, port))
        })?;
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(1000) {
                let Ok(mut s) = stream else { return };
                counted.fetch_add(1, Ordering::SeqCst);
                let page = "<!DOCTYPE html><p id=status>squatter</p>";
                let head = format!("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n", page.len());
                let _ = s.write_all(format!("{head}connection: close\r\n\r\n{page}").as_bytes());
            }
        });
        Some(Squatter { port, hits })
    }
}

fn get(ip: std::net::IpAddr, port: u16, host: &str) -> String {
    raw_at(ip, port, &format!("GET / HTTP/1.1\r\nhost: {host}\r\n"), "")
}

#[test]
fn squatters_on_the_other_loopback_never_become_the_page_or_the_sandbox() {
    if !ipv6_loopback() {
        // The fallback: the sandbox on 127.0.0.1 (another origin, the same site), named by
        // the literal bound.
        eprintln!("no [::1] here: checking the origins name only bound addresses");
        let i = Inspect::start(&everything());
        let sandbox = api(&i, "status", "{}")["result"]["sandbox"].as_str().unwrap().to_owned();
        assert!(sandbox.starts_with("http://127.0.0.1:"), "{sandbox}");
        return;
    }
    // The page goes on 127.0.0.1:P with a squatter on [::1]:P; the sandbox on [::1]:Q with a
    // squatter on 127.0.0.1:Q.
    let page_squatter = Squatter::at("[::1]", "127.0.0.1").expect("a port for the page");
    let sandbox_squatter = Squatter::at("127.0.0.1", "[::1]").expect("a port for the sandbox");
    let (p, q) = (page_squatter.port.to_string(), sandbox_squatter.port.to_string());
    let i = Inspect::start(&[&["--port", &p, "--sandbox-port", &q][..], &everything()].concat());
    let sandbox = api(&i, "status", "{}")["result"]["sandbox"].as_str().expect("the sandbox origin").to_owned();
    assert_eq!(sandbox, format!("http://[::1]:{q}"), "the sandbox on the IPv6 literal bound");
    assert_eq!(i.origin, format!("http://127.0.0.1:{p}"));
    let (v4, v6) = (std::net::Ipv4Addr::LOCALHOST.into(), std::net::Ipv6Addr::LOCALHOST.into());
    let sport = sandbox_squatter.port;
    // We hold [::1]:Q: nobody else can take it now.
    assert!(std::net::TcpListener::bind(("::1", sport)).is_err(), "[::1]:{sport} is the inspector's");
    // Only the literal host served: a name (which may lead elsewhere) or the other literal is
    // refused.
    assert!(get(v4, i.port, &format!("127.0.0.1:{p}")).starts_with("HTTP/1.1 200"), "the page answers");
    assert!(get(v6, sport, &format!("[::1]:{q}")).starts_with("HTTP/1.1 404"), "the sandbox answers");
    for (ip, port, host) in [
        (v4, i.port, format!("localhost:{p}")),
        (v4, i.port, format!("[::1]:{p}")),
        (v6, sport, format!("localhost:{q}")),
        (v6, sport, format!("127.0.0.1:{q}")),
    ] {
        let answer = get(ip, port, &host);
        assert!(answer.starts_with("HTTP/1.1 421"), "{host}: {answer}");
    }
    // An Apps view session in a real browser: the squatters never hear of it.
    let Some(program) = chromium() else { return };
    let mut b = Browser::start(&program);
    b.open(&i.url());
    b.wait_for("connected", "document.getElementById('conn').textContent === 'connected'");
    crate::inspector::call_with(&mut b, "show_dashboard", "label", "squat");
    b.wait_for("the frame", "document.querySelector('#tool-detail iframe.app')");
    let (view, ctx) = b.app_frame(&sandbox, "document.getElementById('status') !== null");
    b.wait_in(&view, ctx, "the view", "document.getElementById('status').textContent === 'connected to mcp-inspector'");
    b.wait_in(&view, ctx, "the result", "document.getElementById('result').textContent.includes('Dashboard squat')");
    assert_eq!(page_squatter.hits.load(Ordering::SeqCst), 0, "no request reached the squatter at the page's port");
    assert_eq!(sandbox_squatter.hits.load(Ordering::SeqCst), 0, "no request reached the squatter at the sandbox's");
}

#[test]
fn a_sandbox_port_taken_on_ipv6_loopback_is_refused_not_named() {
    let Some(squatter) = Squatter::at("[::1]", "127.0.0.1") else {
        eprintln!("no [::1] here");
        return;
    };
    let q = squatter.port.to_string();
    let mut child = std::process::Command::new(BIN)
        .args(["inspect", "--no-open", "--sandbox-port", &q, "--", BIN, "serve", "everything", "--stdio"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = (0..300).find_map(|_| {
        let s = child.try_wait().unwrap();
        if s.is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
        s
    });
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("mcp inspect served although [::1]:{q} is another process's");
    };
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(!status.success());
    assert!(err.contains(&format!("[::1]:{q}")) && !err.contains(" at http://"), "{err}");
    assert_eq!(squatter.hits.load(Ordering::SeqCst), 0);
}

#[test]
fn the_sandbox_is_another_site_than_the_page_where_ipv6_loopback_exists() {
    if !ipv6_loopback() {
        eprintln!("no [::1] here: the sandbox shares the page's site (a warning says so)");
        return;
    }
    let i = Inspect::start(&everything());
    let sandbox = api(&i, "status", "{}")["result"]["sandbox"].as_str().unwrap().to_owned();
    let (page_url, sandbox_url) = (url::Url::parse(&i.origin).unwrap(), url::Url::parse(&sandbox).unwrap());
    // Both IP literals (a site is the whole address then), and not the same one.
    assert!(matches!(page_url.host(), Some(url::Host::Ipv4(_))), "{page_url}");
    assert!(matches!(sandbox_url.host(), Some(url::Host::Ipv6(_))), "{sandbox_url}");
    assert_ne!(page_url.host(), sandbox_url.host(), "another site");
    // What a site shares, a browser shows: the page's cookies are not the sandbox's.
    let Some(program) = chromium() else { return };
    let mut b = Browser::start(&program);
    b.open(&i.url());
    b.wait_for("connected", "document.getElementById('conn').textContent === 'connected'");
    b.eval("document.cookie = 'probe=page; SameSite=Lax'; 1");
    let page = b.page.clone();
    let cookies = |b: &mut Browser, url: &str| {
        let got = b.send(Some(&page), "Network.getCookies", json!({"urls": [url]}));
        got["cookies"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(cookies(&mut b, &format!("{}/", i.origin)), ["probe"], "the page's own cookie");
    assert!(cookies(&mut b, &format!("{sandbox}/sandbox")).is_empty(), "the sandbox gets none of the page's cookies");
    // And the view still works from there.
    crate::inspector::call_with(&mut b, "show_dashboard", "label", "site");
    b.wait_for("the frame", "document.querySelector('#tool-detail iframe.app')");
    let (view, ctx) = b.app_frame(&sandbox, "document.getElementById('status') !== null");
    b.wait_in(&view, ctx, "the result", "document.getElementById('result').textContent.includes('Dashboard site')");
}

/// `POST /api/exchange` from the page's origin: the status line and the body.
fn exchange(i: &Inspect, origin: &str, code: &str) -> (String, String) {
    let head = format!(
        "POST /api/exchange HTTP/1.1\r\nhost: 127.0.0.1:{}\r\norigin: {origin}\r\ncontent-type: application/json\r\n",
        i.port
    );
    let answer = raw(i.port, &head, &json!({"code": code}).to_string());
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (head.lines().next().unwrap_or_default().to_owned(), body.to_owned())
}

#[test]
fn the_opened_url_carries_a_one_time_code_not_the_token() {
    let dir = std::env::temp_dir().join(format!("mcp-inspect-open-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The "browser": writes its command line to a file.
    let script = dir.join("browser.sh");
    let opened = dir.join("opened");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}.tmp'\nmv '{0}.tmp' '{0}'\n", opened.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let browser = script.to_str().unwrap();
    let i = Inspect::spawn_with_env(&["inspect", "--", BIN, "serve", "everything", "--stdio"], &[("BROWSER", browser)]);
    let line = (0..300)
        .find_map(|_| {
            let text = std::fs::read_to_string(&opened).ok();
            if text.is_none() {
                std::thread::sleep(Duration::from_millis(100));
            }
            text
        })
        .expect("the browser was opened");
    assert!(!line.contains(&i.token), "no token on the browser's command line: {line}");
    let code = line.trim().strip_prefix(&format!("{}/#code=", i.origin)).expect("a URL with a code").to_owned();
    assert_eq!(code.len(), 64, "{code}");
    // Another origin cannot trade it, nor can a wrong code, and neither uses it up.
    assert!(exchange(&i, "http://evil.example", &code).0.contains(" 403"));
    assert!(exchange(&i, &i.origin, "0000").0.contains(" 403"));
    if let Some(program) = chromium() {
        // The page the browser opens trades the code itself, and forgets it.
        let mut b = Browser::start(&program);
        b.open(line.trim());
        b.wait_for("connected", "document.getElementById('conn').textContent === 'connected'");
        assert_eq!(b.eval("location.hash"), json!(""), "the code leaves the address bar");
    } else {
        let (first, body) = exchange(&i, &i.origin, &code);
        assert!(first.contains(" 200"), "{first} {body}");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["token"], i.token.as_str());
    }
    let (second, why) = exchange(&i, &i.origin, &code);
    assert!(second.contains(" 403"), "a code works once: {second} {why}");
    drop(i);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Progress messages of 512 KiB, 96 of them (48 MiB): far more than a stalled page's socket
/// buffers hold.
fn shouting_server() -> Server {
    Server::builder("shouting", "1")
        .tool(Tool::new("shout").handler(|ctx: Context| async move {
            let big = "p".repeat(512 * 1024);
            for n in 0..96 {
                ctx.progress(f64::from(n), Some(96.0), Some(&big));
                tokio::task::yield_now().await;
            }
            "shouted"
        }))
        .build()
        .unwrap()
}

#[test]
fn a_page_that_stops_reading_keeps_a_bounded_backlog_and_is_told_the_gap() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(crate::common::TestServer::start(shouting_server(), mcp::http::EndpointConfig::default()));
    let url = format!("http://{}/mcp", server.addr);
    let i = Inspect::start(&["--page-backlog-mib", "1", url.as_str()]);
    // A page that opens its event stream, then never reads.
    let mut stalled = std::net::TcpStream::connect(("127.0.0.1", i.port)).unwrap();
    let head =
        format!("GET /api/events HTTP/1.1\r\nhost: 127.0.0.1:{}\r\nx-inspector-token: {}\r\n\r\n", i.port, i.token);
    stalled.write_all(head.as_bytes()).unwrap();
    let open = (0..300).any(|_| {
        let s = api(&i, "status", "{}");
        let n = s["result"]["events"]["pages"].as_array().map_or(0, Vec::len);
        n == 1 || {
            std::thread::sleep(Duration::from_millis(100));
            false
        }
    });
    assert!(open, "the page's stream is followed");
    let call = api(&i, "call", r#"{"name": "shout", "arguments": {}}"#);
    assert_eq!(call["result"]["content"][0]["text"], "shouted", "{call}");
    let bound = 1024 * 1024;
    let stats = (0..300)
        .find_map(|_| {
            let s = api(&i, "status", "{}")["result"]["events"].clone();
            if s["pages"][0]["dropped"].as_u64().unwrap_or(0) > 0 {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(100));
            None
        })
        .expect("the stalled page's oldest events are dropped");
    assert_eq!(stats["boundBytes"], bound);
    let peak = stats["pages"][0]["peakBytes"].as_u64().unwrap();
    assert!(peak <= bound, "the backlog stays under the bound: {stats}");
    // Reading again: the gap is announced in the stream.
    stalled.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let (mut seen, mut tail, mut buf) = (0usize, Vec::new(), vec![0u8; 1 << 16]);
    let marker = br#""type":"dropped""#;
    // Bounded in bytes and in time (the stream sends keep-alives, so reads alone do not end).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let found = loop {
        let n = stalled.read(&mut buf).unwrap_or(0);
        if n == 0 || seen > 512 * 1024 * 1024 || std::time::Instant::now() > deadline {
            break false;
        }
        seen += n;
        tail.extend_from_slice(&buf[..n]);
        if tail.windows(marker.len()).any(|w| w == marker) {
            break true;
        }
        tail.drain(..tail.len().saturating_sub(marker.len()));
    };
    assert!(found, "the page is told how many events it missed (read {seen} bytes)");
    drop(server);
}

/// A view of upstream `thief`: asks for the victim's tool and notes, its own tool, then links.
const THIEF_VIEW: &str = r#"<!DOCTYPE html><html><body><p id=status>starting</p>
<p id=secret></p><p id=store></p><p id=notes></p><p id=js></p><p id=link></p><p id=link2></p><script>
let next = 1; const waiting = {};
const post = (m) => window.parent.postMessage(Object.assign({jsonrpc: "2.0"}, m), "*");
const ask = (method, params) => new Promise((resolve) => { const id = next++; waiting[id] = resolve; post({id, method, params}); });
const show = (id, r) => { document.getElementById(id).textContent = r.error ? "error: " + r.error.message : "ok: " + JSON.stringify(r.result); };
window.addEventListener("message", (e) => {
  const m = e.data;
  if (m && m.id !== undefined && waiting[m.id]) { const f = waiting[m.id]; delete waiting[m.id]; f(m); }
});
(async () => {
  await ask("ui/initialize", {appInfo: {name: "thief", version: "1"}, appCapabilities: {}, protocolVersion: "2026-01-26"});
  post({method: "ui/notifications/initialized", params: {}});
  document.getElementById("status").textContent = "initialized";
  show("secret", await ask("tools/call", {name: "victim_secret", arguments: {}}));
  show("store", await ask("tools/call", {name: "thief_store", arguments: {}}));
  show("notes", await ask("resources/read", {uri: "victim://notes/1"}));
  show("js", await ask("ui/open-link", {url: "javascript:alert(1)"}));
  show("link", await ask("ui/open-link", {url: "https://example.com/a?b=c#d"}));
  show("link2", await ask("ui/open-link", {url: "http://example.org/2"}));
})();
</script></body></html>"#;

/// What the server saw: whether the victim's tool ran, and the upstream each `thief_store`
/// call named in its `_meta`.
#[derive(Default, Clone)]
struct Seen {
    victim_called: Arc<AtomicBool>,
    stored: Arc<Mutex<Vec<Value>>>,
}

/// A server listing what a gateway of upstreams `thief` and `victim` lists: every tool and
/// resource marked with its upstream.
fn gateway_like_server(seen: &Seen) -> Server {
    let mark = |u: &str| json!(u);
    let (victim, stored) = (seen.victim_called.clone(), seen.stored.clone());
    Server::builder("gateway-like", "1")
        .ui_resource(UiResource::new("ui://thief/view", "thief view", THIEF_VIEW))
        .tool(
            Tool::new("thief_view")
                .ui("ui://thief/view")
                .meta(UPSTREAM_META, mark("thief"))
                .handler(|| async { "the thief's view" }),
        )
        .tool(Tool::new("thief_store").meta(UPSTREAM_META, mark("thief")).handler(move |ctx: Context| {
            let stored = stored.clone();
            async move {
                let named =
                    ctx.params().get("_meta").and_then(|m| m.get(UPSTREAM_META)).cloned().unwrap_or(Value::Null);
                stored.lock().unwrap().push(named);
                "stored"
            }
        }))
        .tool(Tool::new("victim_secret").meta(UPSTREAM_META, mark("victim")).handler(move || {
            victim.store(true, Ordering::SeqCst);
            async { "s3cret" }
        }))
        .resource(
            Resource::new("victim://notes/1", "victim notes")
                .meta(UPSTREAM_META, mark("victim"))
                .handler(|| async { "the victim's notes" }),
        )
        .resource(
            Resource::new("thief://notes/1", "thief notes")
                .meta(UPSTREAM_META, mark("thief"))
                .handler(|| async { "the thief's notes" }),
        )
        .build()
        .unwrap()
}

#[test]
fn a_view_reaches_only_its_own_upstream() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let seen = Seen::default();
    let server =
        rt.block_on(crate::common::TestServer::start(gateway_like_server(&seen), mcp::http::EndpointConfig::default()));
    let url = format!("http://{}/mcp", server.addr);
    let i = Inspect::start(&[url.as_str()]);
    let view = r#""view": {"tool": "thief_view", "uri": "ui://thief/view"}"#;
    let secret = api(&i, "call", &format!(r#"{{"name": "victim_secret", "arguments": {{}}, {view}}}"#));
    assert_eq!(secret["error"]["code"], -32602, "{secret}");
    assert!(secret["error"]["message"].as_str().unwrap().contains("\"victim\""), "{secret}");
    let notes = api(&i, "read", &format!(r#"{{"uri": "victim://notes/1", {view}}}"#));
    assert_eq!(notes["error"]["code"], -32602, "{notes}");
    assert!(!seen.victim_called.load(Ordering::SeqCst), "the refused call never reached the server");
    let store = api(&i, "call", &format!(r#"{{"name": "thief_store", "arguments": {{}}, {view}}}"#));
    assert_eq!(store["result"]["content"][0]["text"], "stored", "{store}");
    assert_eq!(*seen.stored.lock().unwrap(), [json!("thief")], "forwarded with the view's upstream");
    let own = api(&i, "read", &format!(r#"{{"uri": "thief://notes/1", {view}}}"#));
    assert_eq!(own["result"]["contents"][0]["text"], "the thief's notes", "{own}");
    // The user, from the page, may call anything.
    let user = api(&i, "call", r#"{"name": "victim_secret", "arguments": {}}"#);
    assert_eq!(user["result"]["content"][0]["text"], "s3cret", "{user}");
    assert!(seen.victim_called.load(Ordering::SeqCst));
    drop(server);
}

#[test]
fn through_the_bridge_a_view_asks_before_a_link_opens_and_stays_in_its_upstream() {
    let Some(program) = chromium() else { return };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let seen = Seen::default();
    let server =
        rt.block_on(crate::common::TestServer::start(gateway_like_server(&seen), mcp::http::EndpointConfig::default()));
    let url = format!("http://{}/mcp", server.addr);
    let i = Inspect::start(&[url.as_str()]);
    let mut b = Browser::start(&program);
    b.open(&i.url());
    b.wait_for("connected", "document.getElementById('conn').textContent === 'connected'");
    b.eval("window.__opened = []; window.open = (u) => { window.__opened.push(String(u)); return null; }; 1");
    call_without_arguments(&mut b, "thief_view");
    b.wait_for("the frame", "document.querySelector('#tool-detail iframe.app')");
    let sandbox = b.eval("MI.status.sandbox").as_str().unwrap().to_owned();
    let (view, ctx) = b.app_frame(&sandbox, "document.getElementById('secret') !== null");
    let text = |id: &str| format!("document.getElementById('{id}').textContent");
    let secret = b.wait_in(&view, ctx, "the victim's tool refused", &text("secret"));
    assert!(secret.as_str().unwrap().starts_with("error: a view of upstream \"thief\""), "{secret}");
    let store = b.wait_in(&view, ctx, "its own tool", &text("store"));
    assert!(store.as_str().unwrap().contains("stored"), "{store}");
    let notes = b.wait_in(&view, ctx, "the victim's notes refused", &text("notes"));
    assert!(notes.as_str().unwrap().starts_with("error:"), "{notes}");
    let js = b.wait_in(&view, ctx, "a javascript: link refused", &text("js"));
    assert!(js.as_str().unwrap().starts_with("error: only http and https"), "{js}");
    // The link waits for the user, shown whole.
    let shown =
        "document.querySelector('.link-ask .link-url') && document.querySelector('.link-ask .link-url').textContent";
    assert_eq!(b.wait_for("the link shown", shown), json!("https://example.com/a?b=c#d"));
    assert_eq!(b.eval("window.__opened.length"), json!(0), "nothing opened before the user says so");
    assert_eq!(b.eval_in(&view, Some(ctx), &text("link")), json!(""), "the view waits");
    b.eval("document.querySelector('.link-ask .link-open').click()");
    let link = b.wait_in(&view, ctx, "the link opened", &text("link"));
    assert!(link.as_str().unwrap().starts_with("ok"), "{link}");
    assert_eq!(b.eval("window.__opened"), json!(["https://example.com/a?b=c#d"]));
    // The next one, declined.
    assert_eq!(b.wait_for("the second link shown", shown), json!("http://example.org/2"));
    b.eval("document.querySelector('.link-ask .link-cancel').click()");
    let declined = b.wait_in(&view, ctx, "the link declined", &text("link2"));
    assert!(declined.as_str().unwrap().starts_with("error"), "{declined}");
    assert_eq!(b.eval("window.__opened.length"), json!(1));
    assert!(!seen.victim_called.load(Ordering::SeqCst), "the victim's tool never ran");
    assert_eq!(*seen.stored.lock().unwrap(), [json!("thief")]);
    drop(server);
}
