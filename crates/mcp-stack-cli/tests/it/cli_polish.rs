//! What a new user meets first, with the built `mcp` binary: nested `--arg` keys, `tools
//! show`, one-line summaries of answers that are not MCP, no colour on a pipe, hints for a
//! URL without a scheme and for our server's Host refusal, `serve --help` without client
//! flags, structured results shown once, and `listen` on legacy servers. Everything listens
//! on loopback.

use crate::support::bounded;
use crate::support::http_server;
use crate::support::raw_http;

use bounded::Run;
use http_server::EverythingHttp;
use raw_http::read_request;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp");

/// Runs `mcp ARGS` (stdin closed, `MCP_LOG` from `env` only), bounded to 60 s.
fn run_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("MCP_LOG").env_remove("NO_COLOR").env("HOME", std::env::temp_dir());
    for (k, v) in env {
        cmd.env(k, v);
    }
    bounded::run(cmd, None)
}

fn run(args: &[&str]) -> Run {
    run_env(args, &[])
}

/// `mcp ARGS -- mcp serve everything --stdio`.
fn stdio(args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.extend(["--", BIN, "serve", "everything", "--stdio"]);
    run(&all)
}

/// Serves one canned answer to every request on 127.0.0.1 (a thread per connection).
fn canned(status: u16, content_type: &'static str, body: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                if read_request(&s).is_some() {
                    let head = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = s.write_all(head.as_bytes());
                    let _ = s.write_all(body.as_bytes());
                }
            });
        }
    });
    addr
}

// ------------------------------------------------------------------------------------------
// Answers that are not MCP
// ------------------------------------------------------------------------------------------

#[test]
fn an_html_page_is_summarized_in_one_line() {
    const PAGE: &str = "<!doctype html>\n<html><head><title>Welcome to nginx!</title></head><body>hi</body></html>";
    let addr = canned(200, "text/html; charset=utf-8", PAGE);
    let url = format!("http://{addr}/");
    let r = run(&["tools", "list", &url]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let expected = format!(
        "mcp: {url} answered with an HTML page (text/html, {} bytes): <title>Welcome to nginx!</title> (HTTP 200), \
         not MCP — is the endpoint path right (usually /mcp)?\n",
        PAGE.len()
    );
    assert_eq!(r.stderr, expected);
}

#[test]
fn json_that_is_not_json_rpc_and_a_plain_404_are_summarized() {
    let addr = canned(200, "application/json", r#"{"status":"ok","uptime":12}"#);
    let r = run(&["tools", "list", &format!("http://{addr}/api")]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("answered with JSON that is not JSON-RPC (application/json, 27 bytes)"), "{}", r.stderr);
    assert!(r.stderr.contains("not MCP — is the endpoint path right (usually /mcp)?"), "{}", r.stderr);

    let addr = canned(404, "text/plain", "404 page not found");
    let r = run(&["--json", "discover", &format!("http://{addr}/wrong")]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        doc["error"]["message"],
        format!(
            "http://{addr}/wrong answered with text/plain (18 bytes): 404 page not found (HTTP 404), not MCP — \
             is the endpoint path right (usually /mcp)?"
        )
    );
}

// ------------------------------------------------------------------------------------------
// Hints
// ------------------------------------------------------------------------------------------

#[test]
fn a_url_without_a_scheme_gets_a_hint_and_a_bare_name_does_not() {
    let r = run(&["tools", "list", "127.0.0.1:3000/mcp"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.starts_with("mcp: `127.0.0.1:3000/mcp` has no scheme: did you mean http://127.0.0.1:3000/mcp?\n"),
        "{}",
        r.stderr
    );
    let r = run(&["tools", "list", "localhost:3000"]);
    assert!(r.stderr.contains("did you mean http://localhost:3000?"), "{}", r.stderr);
    let r = run(&["tools", "list", "example.com/mcp"]);
    assert!(r.stderr.contains("did you mean https://example.com/mcp?"), "{}", r.stderr);
    let r = run(&["tools", "list", "myserver"]);
    assert_eq!(r.code, 2);
    assert!(!r.stderr.contains("did you mean"), "{}", r.stderr);
    assert!(r.stderr.contains("`myserver` is not an http(s):// URL"), "{}", r.stderr);
}

#[cfg(unix)]
#[test]
fn a_stdio_server_that_echoes_its_input_is_named_as_such_at_once() {
    // `cat` sends every request straight back: the first one coming back ends the wait (not the
    // 60 s timeout) with a message that says what happened.
    let started = std::time::Instant::now();
    let r = run(&["tools", "list", "--timeout", "60", "--", "cat"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("sent our own `server/discover` request back"), "{}", r.stderr);
    assert!(r.stderr.contains("a program that echoes its input, like `cat`"), "{}", r.stderr);
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
}

/// A client command's warnings (here: a stdio server printing a line that is not JSON) read
/// like the CLI's other messages, not like a server's log lines.
#[cfg(unix)]
#[test]
fn warnings_of_client_commands_are_in_the_mcp_style() {
    let server = format!("echo 'starting up...'; exec {BIN} serve everything --stdio");
    let r = run(&["tools", "list", "--", "sh", "-c", &server]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = r.stderr.lines().find(|l| l.contains("non-JSON")).unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(line.starts_with("mcp: warning: ignoring a non-JSON line from the server"), "{line}");
    assert!(!line.contains("WARN") && !line.contains("mcp_client::"), "{line}");
}

#[test]
fn a_configured_name_that_looks_like_a_host_is_still_a_name() {
    let dir = std::env::temp_dir().join(format!("mcp-polish-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    let config = json!({"mcpServers": {"local.dev": {"command": BIN, "args": ["serve", "everything", "--stdio"]}}});
    std::fs::write(&file, config.to_string()).unwrap();
    let r = run(&["--json", "tools", "list", "local.dev", "--config", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\"echo\""));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn our_servers_host_refusal_suggests_allow_host() {
    // The whole of 127.0.0.0/8 is loopback, but only localhost, 127.0.0.1 and [::1] pass the
    // server's DNS-rebinding check by default.
    let mut child = Command::new(BIN)
        .args(["serve", "everything", "--http", "127.0.0.2:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("mcp: serving on ").map(str::to_owned))
        .expect("the server announces its address");
    std::thread::spawn(move || lines.for_each(drop));
    let r = run(&["tools", "list", &url]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("Host \"127.0.0.2\" is not allowed"), "{}", r.stderr);
    assert!(r.stderr.contains("`mcp serve ... --allow-host 127.0.0.2`"), "{}", r.stderr);
}

// ------------------------------------------------------------------------------------------
// Colour
// ------------------------------------------------------------------------------------------

#[test]
fn no_ansi_colour_on_a_piped_stderr() {
    // A warning from the tracing subscriber: client credentials without a client id.
    let server = EverythingHttp::start();
    let config = std::env::temp_dir().join(format!("mcp-polish-colour-{}", std::process::id()));
    let env = [("MCP_CONFIG_DIR", config.to_str().unwrap()), ("MCP_OAUTH_CLIENT_CREDENTIALS", "1")];
    let r = run_env(&["tools", "list", &server.url], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("mcp: warning: the client credentials grant needs"), "{}", r.stderr);
    assert!(!r.stderr.contains('\x1b') && !r.stdout.contains('\x1b'), "no escape sequences: {:?}", r.stderr);
}

/// On a terminal (a pty from util-linux `script`), log lines are coloured unless `NO_COLOR`.
#[cfg(target_os = "linux")]
#[test]
fn no_colour_on_a_terminal_with_no_color() {
    if !mcp_cluster::needs::program("script", "bsdutils") {
        return;
    }
    let server = EverythingHttp::start();
    let config = std::env::temp_dir().join(format!("mcp-polish-pty-{}", std::process::id()));
    let line = format!("{BIN} tools list {}", server.url);
    let mut env = vec![("MCP_CONFIG_DIR", config.to_str().unwrap()), ("MCP_OAUTH_CLIENT_CREDENTIALS", "1")];
    let tty = |env: &[(&str, &str)]| {
        let mut cmd = Command::new("script");
        cmd.args(["-qec", &line, "/dev/null"]).env_remove("MCP_LOG").env_remove("NO_COLOR").envs(env.iter().copied());
        let out = cmd.stdin(Stdio::null()).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let coloured = tty(&env);
    assert!(coloured.contains("warning"), "{coloured}");
    assert!(coloured.contains("\x1b["), "a terminal gets colours: {coloured:?}");
    env.push(("NO_COLOR", "1"));
    let plain = tty(&env);
    let warn = plain.lines().find(|l| l.contains("mcp: warning:")).unwrap_or_else(|| panic!("{plain}"));
    assert!(!warn.contains('\x1b'), "NO_COLOR: {warn:?}");
}

/// Runs `line` in a pty (util-linux `script`) in `cwd` with HOME/XDG_CONFIG_HOME under `home`,
/// typing `input`; what the terminal showed. `None` (said on stderr) when `script` is missing and
/// `MCP_TEST_SKIP_MISSING=1`.
#[cfg(target_os = "linux")]
fn on_a_pty(line: &str, cwd: &std::path::Path, home: &std::path::Path, input: &str) -> Option<String> {
    if !mcp_cluster::needs::program("script", "bsdutils") {
        return None;
    }
    let mut cmd = Command::new("script");
    cmd.args(["-qec", line, "/dev/null"])
        .current_dir(cwd)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("MCP_LOG")
        .env_remove("MCP_ESCAPE")
        .env_remove("MCP_TRUST_PROJECT_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "{line}: still running after 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    Some(reader.join().unwrap())
}

/// On a real terminal: a project file is asked about (`[y/N]`, the answer remembered), and
/// server text is shown escaped without any forcing.
#[cfg(target_os = "linux")]
#[test]
fn on_a_terminal_project_files_are_asked_about_and_server_text_is_escaped() {
    let base = std::env::temp_dir().join(format!("mcp-polish-trust-{}", std::process::id()));
    let (project, home) = (base.join("project"), base.join("home"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let config = json!({"mcpServers": {"p": {"command": BIN, "args": ["serve", "everything", "--stdio"]}}});
    std::fs::write(project.join(".mcp.json"), config.to_string()).unwrap();
    let store = home.join(".config/mcp/trusted-projects.json");
    let call = format!("{BIN} tools call p echo --arg text=hi");
    let Some(no) = on_a_pty(&call, &project, &home, "n\n") else { return };
    assert!(no.contains("Use servers from .mcp.json? it defines:"), "{no}");
    assert!(no.contains(&format!("p (stdio: {BIN} serve everything --stdio)")) && no.contains("[y/N]"), "{no}");
    assert!(no.contains("has not been approved") && !store.exists(), "{no}");
    let yes = on_a_pty(&call, &project, &home, "y\n").unwrap();
    assert!(yes.lines().any(|l| l.trim() == "hi"), "{yes}");
    assert!(store.exists());
    // Remembered: not asked again. The echoed text is the server's: escaped on the terminal.
    let evil = format!(r#"{BIN} tools call p echo '{{"text": "a\u001b]52;c;aGk=\u0007b\u202ec\u001b[2Kd"}}'"#);
    let shown = on_a_pty(&evil, &project, &home, "").unwrap();
    assert!(!shown.contains("Use servers from"), "{shown}");
    assert!(shown.contains(r"a\x1b]52;c;aGk=\x07b\u{202e}c\x1b[2Kd"), "{shown:?}");
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{202e}'), "{shown:?}");
    let _ = std::fs::remove_dir_all(&base);
}

// ------------------------------------------------------------------------------------------
// Results
// ------------------------------------------------------------------------------------------

#[test]
fn text_that_copies_the_structured_content_is_shown_once() {
    // `add` answers `{"sum":3}` both as a text block and as structuredContent.
    let r = stdio(&["tools", "call", "add", r#"{"a": 1, "b": 2}"#]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "{\n  \"sum\": 3\n}\n");
    assert_eq!(r.stderr, "");
}

// ------------------------------------------------------------------------------------------
// --arg
// ------------------------------------------------------------------------------------------

#[test]
fn dotted_args_build_nested_objects_and_unknown_keys_are_refused() {
    let r = stdio(&[
        "--json",
        "tools",
        "call",
        "json_schema_2020_12_tool",
        "--arg",
        "name=Ann",
        "--arg",
        "email=a@b.c",
        "--arg",
        "address.city=Paris",
        "--arg",
        "address.street=10",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let text = doc["content"][0]["text"].as_str().unwrap();
    let sent: Value = serde_json::from_str(text.split_once("called with: ").unwrap().1).unwrap();
    assert_eq!(sent, json!({"address": {"city": "Paris", "street": "10"}, "email": "a@b.c", "name": "Ann"}));

    let r = stdio(&["tools", "call", "json_schema_2020_12_tool", "--arg", "address.town=Paris"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("mcp: --arg address.town: unknown key `town` in `address`; known keys: city, street\n"),
        "{}",
        r.stderr
    );
    let r = stdio(&["tools", "call", "add", "--arg", "a=1", "--arg", "c=2"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.starts_with("mcp: --arg c: unknown key `c`; known keys: a, b\n"), "{}", r.stderr);
}

// ------------------------------------------------------------------------------------------
// tools show
// ------------------------------------------------------------------------------------------

#[test]
fn tools_show_renders_the_schemas_and_json_prints_the_definition() {
    let r = stdio(&["tools", "show", "add"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "add\nAdds two integers; the sum is returned as structured content.\n\n\
         Input schema (arguments):\n  a  integer, required — First addend.\n  b  integer, required — Second addend.\n\n\
         Output schema (structuredContent):\n  sum  integer, required\n"
    );
    let r = stdio(&["tools", "show", "echo"]);
    assert!(r.stdout.starts_with("echo — Echo\nReturns the given text unchanged.\n\nAnnotations:\n"), "{}", r.stdout);
    assert!(r.stdout.contains("  readOnlyHint    true (does not modify its environment)\n"), "{}", r.stdout);
    let r = stdio(&["tools", "show", "json_schema_2020_12_tool"]);
    assert!(r.stdout.contains("  address        object, optional\n    city    string, optional\n"), "{}", r.stdout);
    // What makes a call fail is shown too: the rules beside the properties.
    assert!(
        r.stdout.ends_with(
            "  rules:\n    no other keys\n    any of (phone required | email required)\n    \
             if contactMethod = \"phone\": phone required; otherwise email required\n"
        ),
        "{}",
        r.stdout
    );

    let r = stdio(&["--json", "tools", "show", "echo"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tool: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(tool["name"], "echo");
    assert_eq!(tool["inputSchema"]["properties"]["text"]["type"], "string");

    let r = stdio(&["tools", "show", "nope"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.starts_with("mcp: unknown tool `nope`: the server does not offer it\n  available tools: "));
}

// ------------------------------------------------------------------------------------------
// Help
// ------------------------------------------------------------------------------------------

#[test]
fn serve_help_lists_only_server_flags() {
    for args in [&["serve", "--help"][..], &["help", "serve"], &["serve", "-h"]] {
        let r = run(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("Usage: mcp serve [OPTIONS] <NAME>"), "{args:?}: {}", r.stdout);
        for flag in ["--http", "--stdio", "--allow-host", "--auth-issuer", "--max-body-bytes"] {
            assert!(r.stdout.contains(flag), "{args:?} lacks {flag}: {}", r.stdout);
        }
        for flag in ["--json", "--timeout", "--header", "--root", "--no-input", "--log-level", "--config"] {
            let shown = r.stdout.contains(&format!("{flag} ")) || r.stdout.contains(&format!("{flag}\n"));
            assert!(!shown, "{args:?} shows the client flag {flag}: {}", r.stdout);
        }
    }
    let r = run(&["tools", "call", "--help"]);
    assert!(r.stdout.contains("Client options:") && r.stdout.contains("--json") && r.stdout.contains("--header"));
    let r = run(&["--help"]);
    assert!(r.stdout.contains("  serve ") && r.stdout.contains("Client options:"), "{}", r.stdout);
    // Client flags keep working on either side of the subcommand.
    let r = stdio(&["tools", "list", "--json", "--timeout", "30"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = stdio(&["--json", "--timeout", "30", "tools", "list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A serve usage error names `mcp serve`.
    let r = run(&["serve", "nothing"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("invalid value 'nothing'"), "{}", r.stderr);
}

// ------------------------------------------------------------------------------------------
// listen on legacy servers
// ------------------------------------------------------------------------------------------

/// The next stdout line of a running `mcp listen`, within 20 s.
fn next_line(lines: &mpsc::Receiver<String>, what: &str) -> Value {
    let l = lines.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("no {what} within 20 s"));
    serde_json::from_str(&l).unwrap_or_else(|e| panic!("{what}: {l:?} is not JSON: {e}"))
}

#[test]
fn listen_on_a_legacy_http_session_prints_list_changes_and_resource_updates() {
    let server = EverythingHttp::start();
    let mut child = Command::new(BIN)
        .args(["--force-legacy", "2025-11-25", "--json", "listen", &server.url, "--tools"])
        .args(["--resource", "test://watched-resource"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    let out = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || out.lines().map_while(Result::ok).for_each(|l| drop(tx.send(l))));
    let ack = next_line(&lines, "acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched-resource"]})
    );
    // Another client changes the tool list and touches the resource.
    assert_eq!(run(&["tools", "call", &server.url, "toggle_extra_tool"]).code, 0);
    let note = next_line(&lines, "tools/list_changed");
    assert_eq!(note["method"], "notifications/tools/list_changed");
    assert_eq!(run(&["tools", "call", &server.url, "touch_watched_resource"]).code, 0);
    let note = next_line(&lines, "resources/updated");
    assert_eq!(
        note,
        json!({"method": "notifications/resources/updated", "params": {"uri": "test://watched-resource"}})
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn force_legacy_takes_only_legacy_versions() {
    let r = stdio(&["--force-legacy", "2026-07-28", "tools", "list"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--force-legacy 2026-07-28: not a legacy protocol version"), "{}", r.stderr);
    let r = stdio(&["--force-legacy", "2025-11-25", "discover"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("legacy (initialize handshake), protocol 2025-11-25"), "{}", r.stdout);
}
