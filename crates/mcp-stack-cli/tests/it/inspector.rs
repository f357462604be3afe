//! `mcp inspect`: who may talk to it (over raw HTTP), and the page in a real headless Chromium
//! against `mcp serve everything` (a tool called through its form, an elicitation answered in
//! the page, a listen notification, the MCP Apps fixture rendered in the double-iframe sandbox
//! and its button calling a tool through the bridge, and what the view cannot reach).

use crate::support::browser::{self, Browser};
use serde_json::{json, Value};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp");

/// A running `mcp inspect`, killed on drop.
pub(crate) struct Inspect {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(crate) origin: String,
    pub(crate) port: u16,
    pub(crate) token: String,
}

impl Inspect {
    /// `mcp inspect --no-open TARGET...`, waiting (30 s at most) for its URL line.
    pub(crate) fn start(target: &[&str]) -> Self {
        Self::spawn(&[&["inspect", "--no-open"], target].concat(), None)
    }

    /// `mcp ARGS` with environment variables `env`, an inspector printing its URL.
    pub(crate) fn spawn_with_env(args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn_in(args, None, env)
    }

    /// `mcp ARGS` (in `cwd`), an inspector printing its URL.
    pub(crate) fn spawn(args: &[&str], cwd: Option<&std::path::Path>) -> Self {
        Self::spawn_in(args, cwd, &[])
    }

    fn spawn_in(args: &[&str], cwd: Option<&std::path::Path>, env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(BIN);
        if let Some(d) = cwd {
            cmd.current_dir(d);
        }
        cmd.envs(env.iter().copied());
        let mut child =
            cmd.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Some((_, url)) = line.split_once(" at http://") {
                    let _ = tx.send(format!("http://{url}"));
                }
            }
        });
        let url = rx.recv_timeout(Duration::from_secs(30)).expect("mcp inspect printed its URL");
        let (origin, token) = url.split_once("/#token=").expect("URL with a token");
        let port = origin.rsplit(':').next().unwrap().parse().unwrap();
        Self { child, origin: origin.to_owned(), port, token: token.to_owned() }
    }

    pub(crate) fn url(&self) -> String {
        format!("{}/#token={}", self.origin, self.token)
    }
}

impl Drop for Inspect {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn everything() -> Vec<&'static str> {
    vec!["--", BIN, "serve", "everything", "--stdio"]
}

/// A raw request to the inspector's page (127.0.0.1): status line and the whole answer.
pub(crate) fn raw(port: u16, head: &str, body: &str) -> String {
    raw_at(std::net::Ipv4Addr::LOCALHOST.into(), port, head, body)
}

/// A raw request to `ip:port`: status line and the whole answer.
pub(crate) fn raw_at(ip: std::net::IpAddr, port: u16, head: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let text = format!("{head}content-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
    let mut s = std::net::TcpStream::connect((ip, port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(text.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn the_api_needs_our_host_our_origin_and_the_token() {
    let i = Inspect::start(&everything());
    let (p, t) = (i.port, i.token.clone());
    let host = format!("host: 127.0.0.1:{p}\r\n");
    let origin = format!("origin: http://127.0.0.1:{p}\r\n");
    let post = |extra: &str| format!("POST /api/status HTTP/1.1\r\n{extra}content-type: application/json\r\n");
    let ok = raw(p, &post(&format!("{host}{origin}x-inspector-token: {t}\r\n")), "{}");
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("\"era\":\"modern\""), "{ok}");
    assert!(!ok.to_ascii_lowercase().contains("access-control-allow"), "no CORS: {ok}");
    let without = raw(p, &post(&format!("{host}{origin}")), "{}");
    assert!(without.starts_with("HTTP/1.1 403"), "{without}");
    let flipped = if t.ends_with('0') { '1' } else { '0' };
    let wrong = raw(p, &post(&format!("{host}{origin}x-inspector-token: {}{flipped}\r\n", &t[..63])), "{}");
    assert!(wrong.starts_with("HTTP/1.1 403"), "{wrong}");
    let foreign = raw(p, &post(&format!("{host}origin: http://evil.example\r\nx-inspector-token: {t}\r\n")), "{}");
    assert!(foreign.starts_with("HTTP/1.1 403"), "{foreign}");
    let no_origin = raw(p, &post(&format!("{host}x-inspector-token: {t}\r\n")), "{}");
    assert!(no_origin.starts_with("HTTP/1.1 403"), "a POST must name its origin: {no_origin}");
    let rebound = raw(p, &post(&format!("host: evil.example:{p}\r\n{origin}x-inspector-token: {t}\r\n")), "{}");
    assert!(rebound.starts_with("HTTP/1.1 421"), "{rebound}");
    let page = raw(p, "GET / HTTP/1.1\r\nhost: evil.example\r\n", "");
    assert!(page.starts_with("HTTP/1.1 421"), "{page}");
    let preflight = raw(p, &format!("OPTIONS /api/status HTTP/1.1\r\n{host}{origin}"), "");
    assert!(preflight.starts_with("HTTP/1.1 405"), "{preflight}");
    let form = raw(
        p,
        &format!("POST /api/status HTTP/1.1\r\n{host}{origin}x-inspector-token: {t}\r\ncontent-type: text/plain\r\n"),
        "{}",
    );
    assert!(form.starts_with("HTTP/1.1 415"), "{form}");
    // The page itself: a strict policy, not framable.
    let index = raw(p, &format!("GET / HTTP/1.1\r\n{host}"), "");
    assert!(index.starts_with("HTTP/1.1 200"), "{index}");
    let lower = index.to_ascii_lowercase();
    assert!(lower.contains("content-security-policy: default-src 'none'; script-src 'self';"), "{index}");
    assert!(lower.contains("frame-ancestors 'none'") && lower.contains("x-frame-options: deny"), "{index}");
    assert!(!index.contains(&t), "the page never carries the token");
}

#[test]
fn the_sandbox_serves_our_page_only_with_the_views_policy() {
    let i = Inspect::start(&everything());
    let status = raw(
        i.port,
        &format!(
            "POST /api/status HTTP/1.1\r\nhost: 127.0.0.1:{p}\r\norigin: http://127.0.0.1:{p}\r\nx-inspector-token: {t}\r\ncontent-type: application/json\r\n",
            p = i.port,
            t = i.token
        ),
        "{}",
    );
    let body: Value = serde_json::from_str(&status[status.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    let sandbox = body["result"]["sandbox"].as_str().unwrap().to_owned();
    let (ip, sport) = sandbox_address(&sandbox);
    let literal = if ipv6_loopback() { "http://[::1]:" } else { "http://127.0.0.1:" };
    assert!(sandbox.starts_with(literal), "the address bound: {sandbox}");
    assert_ne!(sport, i.port, "another origin");
    let host = sandbox.strip_prefix("http://").unwrap().to_owned();
    let get = |query: &str| raw_at(ip, sport, &format!("GET /sandbox?{query} HTTP/1.1\r\nhost: {host}\r\n"), "");
    let ours = format!("host={}", url_encode(&i.origin));
    let ok = get(&format!(
        "{ours}&csp={}",
        url_encode(r#"{"connectDomains":["https://api.example.com","x; script-src *"]}"#)
    ));
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let csp = ok.lines().find(|l| l.to_ascii_lowercase().starts_with("content-security-policy:")).unwrap();
    assert!(csp.contains("connect-src https://api.example.com;") && !csp.contains("script-src *"), "{csp}");
    assert!(csp.contains(&format!("frame-ancestors {}", i.origin)), "{csp}");
    let default = get(&ours);
    assert!(default.contains("connect-src 'none'"), "the restrictive default: {default}");
    let other = get(&format!("host={}", url_encode("http://evil.example")));
    assert!(other.starts_with("HTTP/1.1 403"), "{other}");
    // The page may frame it: CSP cannot name an IPv6 literal, so `[::1]` is allowed by its port.
    let index = raw(i.port, &format!("GET / HTTP/1.1\r\nhost: 127.0.0.1:{}\r\n", i.port), "");
    let frame_src =
        if ipv6_loopback() { format!("frame-src http://*:{sport};") } else { format!("frame-src {sandbox};") };
    assert!(index.contains(&frame_src), "{index}");
}

/// Whether this machine has an IPv6 loopback this process can bind.
pub(crate) fn ipv6_loopback() -> bool {
    std::net::TcpListener::bind("[::1]:0").is_ok()
}

/// The address and port of a sandbox origin the inspector names (`http://IP:PORT`, an IP
/// literal: a name would panic here).
pub(crate) fn sandbox_address(origin: &str) -> (std::net::IpAddr, u16) {
    let url = url::Url::parse(origin).unwrap();
    let ip = match url.host() {
        Some(url::Host::Ipv4(v4)) => v4.into(),
        Some(url::Host::Ipv6(v6)) => v6.into(),
        other => panic!("the sandbox is named by an IP literal, not {other:?}"),
    };
    (ip, url.port().expect("an explicit port"))
}

/// `POST /api/NAME` with the token: the answer's JSON.
pub(crate) fn api(i: &Inspect, name: &str, body: &str) -> Value {
    let head = format!(
        "POST /api/{name} HTTP/1.1\r\nhost: 127.0.0.1:{p}\r\norigin: http://127.0.0.1:{p}\r\nx-inspector-token: {t}\r\ncontent-type: application/json\r\n",
        p = i.port,
        t = i.token
    );
    let answer = raw(i.port, &head, body);
    serde_json::from_str(&answer[answer.find("\r\n\r\n").expect("a body") + 4..]).unwrap_or(Value::Null)
}

#[test]
fn dev_restarts_the_server_when_files_change_and_keeps_the_inspector() {
    let dir = std::env::temp_dir().join(format!("mcp-dev-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("target")).unwrap();
    std::fs::write(dir.join("src/server.rs"), "v1").unwrap();
    let i = Inspect::spawn(&["dev", "--no-open", "--", BIN, "serve", "everything", "--stdio"], Some(&dir));
    let first = generation_once_connected(&i);
    // A build writing under target/ is not a change of the sources.
    std::fs::write(dir.join("target/out"), "built").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(generation(&i), Some(first));
    std::fs::write(dir.join("src/server.rs"), "v2, longer").unwrap();
    assert_restarted_and_serving(&i, first);
    drop(i);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The inspector's connection count (`None` while it cannot reach the server).
fn generation(i: &Inspect) -> Option<u64> {
    api(i, "status", "{}")["result"]["generation"].as_u64()
}

/// The connection count once the inspector reaches the server (30 s at most).
fn generation_once_connected(i: &Inspect) -> u64 {
    let found = (0..300).find_map(|_| {
        generation(i).or_else(|| {
            std::thread::sleep(Duration::from_millis(100));
            None
        })
    });
    found.expect("the inspector reaches the server")
}

/// Waits (30 s at most) for a connection newer than `first`, then checks a call works.
fn assert_restarted_and_serving(i: &Inspect, first: u64) {
    let restarted = (0..300).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        generation(i).is_some_and(|g| g > first)
    });
    assert!(restarted, "a change restarts the server and the inspector connects again");
    let echo = api(i, "call", r#"{"name": "echo", "arguments": {"text": "after the restart"}}"#);
    assert_eq!(echo["result"]["content"][0]["text"], "after the restart", "{echo}");
}

#[test]
fn dev_restarts_an_http_server_it_runs() {
    let dir = std::env::temp_dir().join(format!("mcp-dev-http-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("server.py"), "v1").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cmd = format!("{BIN} serve everything --http 127.0.0.1:{port}");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let i = Inspect::spawn(&["dev", "--no-open", "--cmd", &cmd, &url], Some(&dir));
    let first = generation_once_connected(&i);
    std::fs::write(dir.join("server.py"), "v2, longer").unwrap();
    assert_restarted_and_serving(&i, first);
    drop(i);
    let _ = std::fs::remove_dir_all(&dir);
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The browser, or `None` (reported) when it is not installed and MCP_TEST_SKIP_MISSING is set.
pub(crate) fn chromium() -> Option<String> {
    match browser::program() {
        Some(p) => Some(p),
        None if std::env::var_os("MCP_TEST_SKIP_MISSING").is_some() => {
            eprintln!("SKIPPED: chromium is not installed (Debian package `chromium`)");
            None
        }
        None => panic!("chromium is not installed: install the Debian package `chromium` (scripts/test-deps.sh)"),
    }
}

/// Clicks the tool `name` in the Tools pane.
pub(crate) fn open_tool(b: &mut Browser, name: &str) {
    b.eval("MI.show('tools')");
    b.wait_for(
        &format!("the tool {name} listed"),
        &format!("[...document.querySelectorAll('#tool-list li')].some(li => li.firstChild.textContent === {name:?})"),
    );
    b.eval(&format!(
        "[...document.querySelectorAll('#tool-list li')].find(li => li.firstChild.textContent === {name:?}).click()"
    ));
}

/// Opens the tool `name`, types `value` into its form's `field`, and presses Call.
pub(crate) fn call_with(b: &mut Browser, name: &str, field: &str, value: &str) {
    open_tool(b, name);
    let input = format!("document.querySelector('#tool-detail input[name={field}]')");
    b.wait_for("the form", &input);
    b.eval(&format!("{input}.value = {value:?}"));
    b.eval("document.querySelector('#tool-detail button.call').click()");
}

/// Opens the tool `name` and presses Call without filling anything in.
pub(crate) fn call_without_arguments(b: &mut Browser, name: &str) {
    open_tool(b, name);
    b.wait_for("the call button", "document.querySelector('#tool-detail button.call')");
    b.eval("document.querySelector('#tool-detail button.call').click()");
}

#[test]
fn the_inspector_works_in_a_real_browser() {
    let Some(program) = chromium() else { return };
    let i = Inspect::start(&everything());
    let mut b = Browser::start(&program);
    b.open(&i.url());
    b.wait_for("connected", "document.getElementById('conn').textContent === 'connected'");
    assert_eq!(b.eval("location.hash"), json!(""), "the token leaves the address bar");
    assert_eq!(b.eval("document.getElementById('era').textContent.startsWith('modern')"), json!(true));

    // A tool called through its generated form.
    call_with(&mut b, "echo", "text", "from the form");
    b.wait_for("the echo", "document.querySelector('#tool-detail .result').textContent.includes('from the form')");

    // An elicitation answered in the page.
    call_without_arguments(&mut b, "greet_user");
    b.wait_for(
        "the question",
        "!document.getElementById('questions').hidden && document.querySelector('#questions input[name=name]')",
    );
    b.eval("document.querySelector('#questions input[name=name]').value = 'Ada'");
    b.eval("document.querySelector('#questions .q-accept').click()");
    b.wait_for("the greeting", "document.querySelector('#tool-detail .result').textContent.includes('Hello, Ada!')");

    // A sampling request answered in the page (the user plays the model).
    call_with(&mut b, "ask_llm", "question", "Why?");
    b.wait_for("the sampling question", "document.querySelector('#questions .q-text')");
    b.eval("document.querySelector('#questions .q-text').value = 'Because.'");
    b.eval("document.querySelector('#questions .q-reply').click()");
    b.wait_for(
        "the model's answer",
        "document.querySelector('#tool-detail .result').textContent.includes('The model says: Because.')",
    );

    // A listen notification arriving in the page.
    b.eval("MI.show('listen')");
    b.eval("document.getElementById('l-start').click()");
    b.wait_for("listening", "document.getElementById('l-state').textContent.startsWith('listening')");
    b.eval("MI.api('call', {name: 'toggle_extra_tool', arguments: {}})");
    b.wait_for(
        "the notification",
        "document.getElementById('listen-log').textContent.includes('notifications/tools/list_changed')",
    );

    // A task: started by the call, followed in the Tasks pane to its result.
    open_tool(&mut b, "slow_compute");
    b.wait_for("the form", "document.querySelector('#tool-detail input[name=seconds]')");
    b.eval("document.querySelector('#tool-detail input[name=seconds]').value = '0.3'");
    b.eval("document.querySelector('#tool-detail input[name=label]').value = 'paned'");
    b.eval("document.querySelector('#tool-detail button.call').click()");
    b.wait_for(
        "the task started",
        "document.querySelector('#tool-detail .result').textContent.includes('started task')",
    );
    b.wait_for(
        "the task's result",
        "document.getElementById('task-list').textContent.includes('computed paned in 0.3s')",
    );
    // A long one, cancelled from its card.
    b.eval("document.querySelector('#tool-detail input[name=seconds]').value = '60'");
    b.eval("document.querySelector('#tool-detail button.call').click()");
    b.wait_for("the second task", "document.querySelectorAll('#task-list .task-card').length === 2");
    b.eval("document.querySelector('#task-list .task-card .task-cancel').click()");
    b.wait_for(
        "the task cancelled",
        "document.querySelector('#task-list .task-card').textContent.includes('was cancelled')",
    );

    // A template read with completion of its variable, and a prompt with arguments.
    b.eval("MI.show('resources')");
    let template = "[...document.querySelectorAll('#resource-list li')].find(li => li.textContent.includes('test://template/{id}/data'))";
    b.wait_for("the template listed", template);
    b.eval(&format!("{template}.click()"));
    b.wait_for("the variable", "document.querySelector('#resource-detail input[name=id]')");
    b.eval("const v = document.querySelector('#resource-detail input[name=id]'); v.value = 'pa'; v.dispatchEvent(new Event('input'))");
    b.wait_for("completions", "document.querySelectorAll('#complete-id option').length === 3");
    b.eval("document.querySelector('#resource-detail input[name=id]').value = '42'");
    b.eval("[...document.querySelectorAll('#resource-detail button')].find(x => x.textContent === 'Read').click()");
    b.wait_for("the read", "document.getElementById('resource-detail').textContent.includes('Data for ID: 42')");
    b.eval("MI.show('prompts')");
    let prompt = "[...document.querySelectorAll('#prompt-list li')].find(li => li.firstChild.textContent === 'test_prompt_with_arguments')";
    b.wait_for("the prompt listed", prompt);
    b.eval(&format!("{prompt}.click()"));
    b.wait_for("its arguments", "document.querySelector('#prompt-detail input[name=arg1]')");
    b.eval("document.querySelector('#prompt-detail input[name=arg1]').value = 'one'");
    b.eval("document.querySelector('#prompt-detail input[name=arg2]').value = 'two'");
    b.eval("[...document.querySelectorAll('#prompt-detail button')].find(x => x.textContent === 'Get').click()");
    b.wait_for("the messages", "document.getElementById('prompt-detail').textContent.includes('one')");

    // Skills of the server.
    b.eval("MI.show('skills')");
    b.wait_for(
        "skills listed",
        "document.querySelectorAll('#skill-list li').length > 0 && !document.querySelector('#skill-list li.muted')",
    );

    // The raw traffic, with timings.
    b.eval("MI.show('traffic')");
    b.wait_for("traffic rows", "document.querySelectorAll('#traffic tbody tr').length > 4");

    // The MCP Apps fixture: rendered in the sandbox, its button calls a tool through the bridge.
    call_with(&mut b, "show_dashboard", "label", "browser");
    b.wait_for("the frame", "document.querySelector('#tool-detail iframe.app')");
    let sandbox = b.eval("MI.status.sandbox").as_str().unwrap().to_owned();

    let (view, ctx) = b.app_frame(&sandbox, "document.getElementById('status') !== null");
    b.wait_in(
        &view,
        ctx,
        "initialized",
        "document.getElementById('status').textContent === 'connected to mcp-inspector'",
    );
    b.wait_in(&view, ctx, "the tool input", "document.getElementById('input').textContent.includes('browser')");
    b.wait_in(
        &view,
        ctx,
        "the tool result",
        "document.getElementById('result').textContent.includes('Dashboard browser')",
    );
    b.eval_in(&view, Some(ctx), "document.getElementById('add').click()");
    let added = b.wait_in(&view, ctx, "the app-only tool's answer", "document.getElementById('added').textContent");
    assert!(added.as_str().unwrap().starts_with("the counter is "), "{added}");
    b.wait_for("the frame resized", "document.querySelector('#tool-detail iframe.app').style.height !== ''");
    b.wait_for(
        "the text fallback beside the view",
        "document.querySelector('#tool-detail .result').textContent.includes('the counter is')",
    );
    // `MCP_INSPECTOR_SCREENSHOT=docs/inspector.png` keeps a picture of the page for the docs.
    if let Ok(path) = std::env::var("MCP_INSPECTOR_SCREENSHOT") {
        std::fs::write(path, b.screenshot()).unwrap();
    }

    // What the view cannot reach: the page's DOM, its storage (the token), the API.
    let probe = |b: &mut Browser, js: &str| b.eval_in(&view, Some(ctx), js);
    let dom = probe(&mut b, "(() => { try { return String(window.parent.parent.document.body.innerHTML.length); } catch (e) { return 'blocked'; } })()");
    assert_eq!(dom, json!("blocked"));
    let storage = probe(
        &mut b,
        "(() => { try { return String(window.top.sessionStorage.length); } catch (e) { return 'blocked'; } })()",
    );
    assert_eq!(storage, json!("blocked"));
    let own =
        probe(&mut b, "(() => { try { return String(localStorage.length); } catch (e) { return 'blocked'; } })()");
    assert_eq!(own, json!("blocked"), "an opaque origin has no storage");
    let api = probe(
        &mut b,
        &format!("fetch('{}/api/status', {{method: 'POST', headers: {{'content-type': 'application/json'}}, body: '{{}}'}}).then(r => 'reached ' + r.status, () => 'blocked')", i.origin),
    );
    assert_eq!(api, json!("blocked"), "connect-src 'none'");
    let html = probe(&mut b, "document.documentElement.outerHTML + location.href + document.referrer");
    assert!(!html.as_str().unwrap().contains(&i.token), "the token never reaches the view");

    // Teardown from the page.
    b.eval("document.querySelector('#tool-detail .app-close').click()");
    b.wait_for("closed", "!document.querySelector('#tool-detail iframe.app')");
}

/// Markup in every field a server controls; each payload would set `window.__pwned` if it ran.
const PAYLOAD: &str = "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script><b id=pwn>b</b>";

/// A view that floods the host with messages and never answers teardown.
const FLOODING_VIEW: &str = r#"<!DOCTYPE html><html><body><p id=state>flooding</p><script>
const post = (m) => window.parent.postMessage(Object.assign({jsonrpc: "2.0"}, m), "*");
post({id: 1, method: "ui/initialize", params: {appInfo: {name: "flood", version: "1"}, appCapabilities: {}, protocolVersion: "2026-01-26"}});
window.addEventListener("message", (e) => { if (e.data && e.data.id === 1) post({method: "ui/notifications/initialized", params: {}}); });
setInterval(() => { for (let i = 0; i < 2000; i++) post({method: "ui/notifications/size-changed", params: {width: 1, height: 1 + (i % 50)}}); }, 5);
</script></body></html>"#;

fn hostile_server() -> mcp::server::Server {
    use mcp::server::apps::UiResource;
    use mcp::server::{Resource, Tool};
    let name = format!("evil{PAYLOAD}");
    mcp::server::Server::builder("hostile", "1")
        .instructions(PAYLOAD)
        .tool(Tool::new(name).title(PAYLOAD).description(PAYLOAD).handler(|| async { PAYLOAD }))
        .tool(Tool::new("huge").handler(|| async { "x".repeat(1_000_000) }))
        .ui_resource(UiResource::new("ui://hostile/flood", "flood", FLOODING_VIEW))
        .tool(Tool::new("flood").ui("ui://hostile/flood").handler(|| async { "flooded" }))
        .resource(Resource::new("mem://evil", PAYLOAD).description(PAYLOAD).handler(|| async { PAYLOAD }))
        .build()
        .unwrap()
}

#[test]
fn nothing_from_the_server_becomes_markup_and_a_bad_view_cannot_hang_the_page() {
    let Some(program) = chromium() else { return };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(crate::common::TestServer::start(hostile_server(), mcp::http::EndpointConfig::default()));
    let url = format!("http://{}/mcp", server.addr);
    let i = Inspect::start(&[url.as_str()]);
    let mut b = Browser::start(&program);
    b.open(&i.url());
    b.wait_for("connected", "document.getElementById('conn').textContent === 'connected'");
    b.wait_for(
        "the instructions shown as text",
        "document.getElementById('tab-server').textContent.includes('<script>window.__pwned=2</script>')",
    );
    call_without_arguments(&mut b, &format!("evil{PAYLOAD}"));
    b.wait_for("the result as text", "document.querySelector('#tool-detail .result').textContent.includes('onerror=')");
    b.eval("MI.show('resources')");
    let evil = "[...document.querySelectorAll('#resource-list li')].find(li => li.textContent.includes('mem://evil'))";
    b.wait_for("the resource listed", evil);
    b.eval(&format!("{evil}.click()"));
    b.wait_for("the resource text", "document.getElementById('resource-detail').textContent.includes('<b id=pwn>')");
    b.eval("MI.show('traffic')");
    b.eval("document.querySelector('#traffic tbody tr:last-child').click()");
    let ran =
        b.eval("String(window.__pwned) + ' ' + document.querySelectorAll('img[src=x], #pwn, main script').length");
    assert_eq!(ran, json!("undefined 0"), "no payload ran or became an element");

    // A huge result: cut in the page, the whole downloadable.
    call_without_arguments(&mut b, "huge");
    let note = b.wait_for(
        "the cut",
        "document.querySelector('#tool-detail .result').textContent.match(/shown: \\d+ of 1000000 characters/)",
    );
    assert!(note.is_array(), "{note}");
    assert_eq!(
        b.eval(
            "[...document.querySelectorAll('#tool-detail .result button')].some(x => x.textContent === 'Download all')"
        ),
        json!(true)
    );

    // A view flooding the page with messages, that never answers teardown.
    call_without_arguments(&mut b, "flood");
    b.wait_for(
        "the flood noticed",
        "document.querySelector('#tool-detail .app-bar').textContent.includes('messages dropped')",
    );
    let started = std::time::Instant::now();
    assert_eq!(b.eval("1 + 1"), json!(2), "the page still answers");
    b.eval("document.querySelector('#tool-detail .app-close').click()");
    b.wait_for("closed without the view's answer", "!document.querySelector('#tool-detail iframe.app')");
    assert!(started.elapsed() < Duration::from_secs(10), "teardown waits a bounded time: {:?}", started.elapsed());
    drop(server);
}
