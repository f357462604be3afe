//! Config-file targets: `mcp tools list NAME`, `mcp tools call NAME ...`, `mcp servers list`
//! and `--config`, against the `everything` server over stdio and over HTTP, with config files
//! in temporary project and user folders (the user folder comes from `XDG_CONFIG_HOME`).

use crate::support::bounded;
use crate::support::http_server;

use bounded::Run;
use http_server::EverythingHttp;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp");
/// Approves project files for one run.
const TRUST: &str = "MCP_TRUST_PROJECT_CONFIG";

/// A fresh folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-config-targets-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir.canonicalize().unwrap())
    }

    fn write(&self, rel: &str, v: &Value) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A project folder and a home folder (with `~/.config/mcp`), both empty.
struct World {
    project: TempDir,
    home: TempDir,
}

impl World {
    fn new() -> Self {
        Self { project: TempDir::new(), home: TempDir::new() }
    }

    fn user_file(&self, v: &Value) -> PathBuf {
        self.home.write(".config/mcp/mcp.json", v)
    }

    /// Runs `mcp ARGS` in the project folder with HOME and XDG_CONFIG_HOME in the home folder.
    fn mcp(&self, args: &[&str]) -> Run {
        self.mcp_env(args, &[])
    }

    fn mcp_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(&self.project.0)
            .env("HOME", &self.home.0)
            .env("XDG_CONFIG_HOME", self.home.0.join(".config"))
            .env_remove("MCP_LOG")
            .env_remove(TRUST)
            .env_remove("MCP_ESCAPE");
        for (k, v) in env {
            c.env(k, v);
        }
        run(c)
    }
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr: {}", self.stdout, self.stderr))
    }

    fn ok(self) -> Self {
        assert_eq!(self.code, 0, "stdout: {}\nstderr: {}", self.stdout, self.stderr);
        self
    }
}

/// Runs the command, stdin closed, bounded in time.
fn run(c: Command) -> Run {
    bounded::run(c, None)
}

fn stdio_everything() -> Value {
    json!({"command": BIN, "args": ["serve", "everything", "--stdio"]})
}

fn tool_names(r: &Run) -> Vec<String> {
    r.json()["tools"].as_array().expect("tools").iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn tools_by_name_over_stdio_and_http() {
    let http = EverythingHttp::start();
    let w = World::new();
    w.write_project(
        ".mcp.json",
        &json!({"allowEnv": ["MODE", "REMOTE_URL"], "mcpServers": {
            "local": {"command": BIN, "args": ["serve", "everything", "${MODE:-}--stdio"]},
            "remote": {"url": "${REMOTE_URL}", "headers": {"X-Client": "config-test"}}
        }}),
    );
    let env = [("REMOTE_URL", http.url.as_str()), (TRUST, "1")];
    for name in ["local", "remote"] {
        let r = w.mcp_env(&["--json", "tools", "list", name], &env).ok();
        assert!(tool_names(&r).iter().any(|t| t == "echo"), "{name}: {}", r.stdout);
        let r = w.mcp_env(&["tools", "call", name, "echo", r#"{"text":"hi"}"#], &env).ok();
        assert_eq!(r.stdout.trim(), "hi", "{name}");
        // Operands after the name, and --arg, work as with a URL.
        let r = w.mcp_env(&["tools", "call", name, "echo", "--arg", "text=there"], &env).ok();
        assert_eq!(r.stdout.trim(), "there", "{name}");
    }
    // The same file given with --config, from a folder without config files.
    let elsewhere = World::new();
    let file = w.project.0.join(".mcp.json");
    let r = elsewhere
        .mcp_env(&["--config", file.to_str().unwrap(), "tools", "call", "remote", "echo", "--arg", "text=x"], &env);
    assert_eq!(r.ok().stdout.trim(), "x");
    // An unset variable is an error naming it, for that server only.
    let r = w.mcp_env(&["tools", "list", "remote"], &[(TRUST, "1")]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("url uses ${REMOTE_URL}, which is not set"), "{}", r.stderr);
    w.mcp(&["--trust-project-config", "tools", "call", "local", "echo", "--arg", "text=ok"]).ok();
}

impl World {
    fn write_project(&self, rel: &str, v: &Value) -> PathBuf {
        self.project.write(rel, v)
    }
}

#[test]
fn search_order_and_servers_list() {
    let w = World::new();
    let dot = w.write_project(".mcp.json", &json!({"mcpServers": {"a": stdio_everything()}}));
    // `a` is taken by .mcp.json, so this one (a command that does not exist) is never used.
    let plain = w.write_project(
        "mcp.json",
        &json!({"mcpServers": {"a": {"command": "/nonexistent/a"}, "b": stdio_everything()}}),
    );
    // `c` is the user's: the project's is never used.
    let vscode = w.write_project(
        ".vscode/mcp.json",
        &json!({"servers": {
            "b": {"type": "stdio", "command": "/nonexistent/b"},
            "c": {"type": "stdio", "command": "/nonexistent/c"}
        }}),
    );
    let user = w.user_file(&json!({"mcpServers": {
        "c": {"command": BIN, "args": ["serve", "everything", "--stdio"]},
        "d": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer s3cret"}}
    }}));
    for name in ["a", "b", "c"] {
        let r = w.mcp_env(&["tools", "call", name, "echo", "--arg", &format!("text={name}")], &[(TRUST, "1")]).ok();
        assert_eq!(r.stdout.trim(), name);
    }
    let r = w.mcp(&["--json", "servers", "list"]).ok();
    let doc = r.json();
    let servers = doc["servers"].as_array().unwrap();
    let by: Vec<(&str, &str, &str, bool)> = servers
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["transport"].as_str().unwrap(),
                s["file"].as_str().unwrap(),
                s["trusted"].as_bool().unwrap(),
            )
        })
        .collect();
    let p = |p: &Path| p.to_str().unwrap().to_owned();
    let (dot_s, plain_s, vscode_s, user_s) = (p(&dot), p(&plain), p(&vscode), p(&user));
    assert_eq!(
        by,
        [
            ("a", "stdio", dot_s.as_str(), false),
            ("b", "stdio", plain_s.as_str(), false),
            ("c", "stdio", user_s.as_str(), true),
            ("d", "http", user_s.as_str(), true)
        ]
    );
    assert_eq!(servers[0]["command"], BIN);
    assert_eq!(servers[0]["args"], json!(["serve", "everything", "--stdio"]));
    assert_eq!(servers[3]["url"], "http://127.0.0.1:9/mcp");
    assert_eq!(servers[3]["headers"], json!(["Authorization"]));
    assert!(!r.stdout.contains("s3cret"), "header values are not shown");
    assert_eq!(doc["files"], json!([user_s, dot_s, plain_s, vscode_s]));
    assert_eq!(doc["untrusted"], json!([dot_s, plain_s, vscode_s]));
    assert_eq!(doc["clashes"], json!([{"name": "c", "used": user_s, "ignored": vscode_s}]));
    assert_eq!(doc["searched"].as_array().unwrap().len(), 4);
    // The table: one row per server, files shown relative to the project or the home.
    let r = w.mcp(&["servers", "list"]).ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", r.stdout);
    assert!(lines[0].starts_with("NAME") && lines[0].contains("TRANSPORT") && lines[0].contains("FILE"));
    let row = |n: &str| *lines.iter().find(|l| l.starts_with(&format!("{n} "))).unwrap();
    assert!(
        row("a").contains(" .mcp.json (untrusted) ") && row("a").contains(&format!("{BIN} serve everything --stdio"))
    );
    assert!(row("b").contains(" mcp.json (untrusted) "), "{}", row("b"));
    assert!(row("c").contains(" ~/.config/mcp/mcp.json "), "{}", row("c"));
    assert!(
        row("d").contains("http") && row("d").contains("~/.config/mcp/mcp.json") && row("d").contains("127.0.0.1:9")
    );
    assert!(!r.stdout.contains("s3cret"));
    assert!(r.stderr.contains("`c` is defined in both ~/.config/mcp/mcp.json and .vscode/mcp.json"), "{}", r.stderr);
    // --config: that file only, the user's choice (no approval needed).
    let r = w.mcp(&["--json", "--config", vscode.to_str().unwrap(), "servers", "list"]).ok();
    let doc = r.json();
    let names: Vec<&str> = doc["servers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["b", "c"]);
    assert_eq!(doc["files"], json!([vscode_s]));
    assert_eq!(doc["servers"][0]["trusted"], true);
}

/// A project file defining a name the user's file has: the user's server is used, and the
/// clash is reported naming both files.
#[test]
fn the_users_server_wins_a_name_clash_with_a_project_file() {
    let w = World::new();
    w.write_project(".mcp.json", &json!({"mcpServers": {"same": {"command": "/nonexistent/evil"}}}));
    w.user_file(&json!({"mcpServers": {"same": stdio_everything()}}));
    for env in [&[][..], &[(TRUST, "1")][..]] {
        let r = w.mcp_env(&["tools", "call", "same", "echo", "--arg", "text=mine"], env).ok();
        assert_eq!(r.stdout.trim(), "mine");
        assert!(
            r.stderr.contains("server `same` is defined in both ~/.config/mcp/mcp.json and .mcp.json; using the one in ~/.config/mcp/mcp.json"),
            "{}",
            r.stderr
        );
    }
}

/// A project file is used only once approved: refused without a terminal (saying how to
/// approve it), used after `mcp servers trust`, refused again once it changes.
#[test]
fn project_files_need_approval_and_a_changed_file_asks_again() {
    let w = World::new();
    let file = w.write_project(".mcp.json", &json!({"mcpServers": {"proj": stdio_everything()}}));
    let call = ["tools", "call", "proj", "echo", "--arg", "text=hi"];
    let refused = |r: &Run| {
        assert_eq!(r.code, 2, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
        assert!(r.stderr.contains(".mcp.json is a project config file that has not been approved"), "{}", r.stderr);
        assert!(r.stderr.contains("mcp servers trust .mcp.json"), "{}", r.stderr);
        assert!(r.stderr.contains("--trust-project-config") && r.stderr.contains(TRUST), "{}", r.stderr);
    };
    refused(&w.mcp(&call));
    // For one run, by flag or environment: nothing remembered.
    let r = w.mcp(&["--trust-project-config", call[0], call[1], call[2], call[3], call[4], call[5]]).ok();
    assert_eq!(r.stdout.trim(), "hi");
    assert!(r.stderr.contains("using server `proj` from the project file .mcp.json"), "{}", r.stderr);
    assert_eq!(w.mcp_env(&call, &[(TRUST, "1")]).ok().stdout.trim(), "hi");
    refused(&w.mcp(&call));
    // Approved once: remembered.
    let r = w.mcp(&["servers", "trust"]).ok();
    assert!(r.stdout.contains("trusted .mcp.json") && r.stdout.contains("proj (stdio: "), "{}", r.stdout);
    let store = w.home.0.join(".config/mcp/trusted-projects.json");
    assert!(store.is_file(), "the approval is stored");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&store).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let r = w.mcp(&call).ok();
    assert_eq!(r.stdout.trim(), "hi");
    let r = w.mcp(&["--json", "servers", "list"]).ok();
    assert_eq!(r.json()["servers"][0]["trusted"], true);
    // Changed: asks again.
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    v["mcpServers"]["proj"]["args"] = json!(["serve", "everything", "--stdio", "--skills", "/"]);
    std::fs::write(&file, v.to_string()).unwrap();
    refused(&w.mcp(&call));
    // A file of some other folder, by name.
    let r = w.mcp(&["servers", "trust", file.to_str().unwrap()]).ok();
    assert!(r.stdout.contains("trusted"), "{}", r.stdout);
    let r = w.mcp(&["servers", "trust", "nope.json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

const SECRET: &str = "ghp_s3cretTOKEN";

/// `${GITHUB_TOKEN}` in a project file is not expanded (the file does not declare it): an error
/// naming the variable and the file, and the value appears nowhere.
#[test]
fn a_project_file_cannot_expand_undeclared_variables() {
    let w = World::new();
    w.write_project(
        ".mcp.json",
        &json!({"mcpServers": {"leak": {"url": "http://127.0.0.1:9/mcp?t=${GITHUB_TOKEN}",
            "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}}),
    );
    for json in [false, true] {
        let mut args = vec!["tools", "list", "leak"];
        if json {
            args.insert(0, "--json");
        }
        let r = w.mcp_env(&args, &[(TRUST, "1"), ("GITHUB_TOKEN", SECRET)]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("${GITHUB_TOKEN}") && r.stderr.contains(".mcp.json"), "{}", r.stderr);
        assert!(r.stderr.contains("allowEnv"), "{}", r.stderr);
        assert!(!r.stderr.contains(SECRET) && !r.stdout.contains(SECRET), "{}{}", r.stdout, r.stderr);
    }
    // Declared, it is expanded (and never printed in the failure that follows).
    w.write_project(
        ".mcp.json",
        &json!({"allowEnv": ["GITHUB_TOKEN"], "mcpServers": {"leak": {"url": "http://127.0.0.1:9/mcp?t=${GITHUB_TOKEN}"}}}),
    );
    let r = w.mcp_env(&["tools", "list", "leak"], &[(TRUST, "1"), ("GITHUB_TOKEN", SECRET)]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stderr.contains(SECRET), "{}", r.stderr);
}

/// `servers list` shows files as written: no expanded value, no header or env value, URL
/// userinfo and query redacted.
#[test]
fn servers_list_never_prints_a_secret() {
    let w = World::new();
    w.user_file(&json!({"mcpServers": {
        "web": {"url": "https://me:pa55word@mcp.example/mcp?token=${GITHUB_TOKEN}",
                "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
        "cmd": {"command": "tool", "args": ["--token", "${GITHUB_TOKEN}"], "env": {"AWS_SECRET_ACCESS_KEY": "${GITHUB_TOKEN}"}}
    }}));
    w.write_project(".mcp.json", &json!({"mcpServers": {"proj": {"command": "x", "args": ["${GITHUB_TOKEN}"]}}}));
    for args in [&["servers", "list"][..], &["--json", "servers", "list"][..]] {
        let r = w.mcp_env(args, &[("GITHUB_TOKEN", SECRET)]).ok();
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(!all.contains(SECRET) && !all.contains("pa55word"), "{all}");
        assert!(all.contains("<redacted>") && all.contains("${GITHUB_TOKEN}"), "{all}");
    }
    let r = w.mcp_env(&["--json", "servers", "list"], &[("GITHUB_TOKEN", SECRET)]).ok();
    let doc = r.json();
    let cmd = &doc["servers"][0];
    assert_eq!(cmd["args"], json!(["--token", "${GITHUB_TOKEN}"]));
    assert_eq!(cmd["env"], json!(["AWS_SECRET_ACCESS_KEY"]));
    assert_eq!(doc["servers"][2]["url"], "https://<redacted>@mcp.example/mcp?<redacted>");
}

#[test]
fn unknown_names_and_bad_files() {
    let w = World::new();
    let r = w.mcp(&["servers", "list"]).ok();
    assert!(r.stdout.is_empty() && r.stderr.contains("no servers configured"), "{}", r.stderr);
    let r = w.mcp(&["tools", "list", "one"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("no server given: `one` is not an http(s):// URL, and no servers are configured"),
        "{}",
        r.stderr
    );
    w.write_project("mcp.json", &json!({"mcpServers": {"one": stdio_everything(), "two": stdio_everything()}}));
    let r = w.mcp(&["tools", "list", "three"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("`three` is not an http(s):// URL or a configured server name"), "{}", r.stderr);
    assert!(r.stderr.contains("configured servers: one, two"), "{}", r.stderr);
    assert!(
        r.stderr.contains("looked in: ~/.config/mcp/mcp.json, .mcp.json, mcp.json, .vscode/mcp.json"),
        "{}",
        r.stderr
    );
    let r = w.mcp(&["--json", "tools", "call", "three", "echo"]);
    assert_eq!(r.code, 2);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("`three`"));
    // Flags that do not fit the configured server's transport.
    let r = w.mcp(&["--trust-project-config", "tools", "list", "one", "--header", "X-A: 1"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--header applies to HTTP targets only; `one` is a stdio server"), "{}", r.stderr);
    // A missing --config file, and a broken one.
    let r = w.mcp(&["--config", "nope.json", "tools", "list", "one"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cannot read nope.json"), "{}", r.stderr);
    std::fs::write(w.project.0.join(".mcp.json"), "{\"mcpServers\": {\"x\": {\"type\": \"ws\", \"url\": \"u\"}}}")
        .unwrap();
    let r = w.mcp(&["servers", "list"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains(".mcp.json:1:") && r.stderr.contains("unknown variant `ws`"), "{}", r.stderr);
}

/// The library's multi-server client on the same kind of file: one stdio, one HTTP server.
#[tokio::test]
async fn multi_client_over_both_transports() {
    let http = EverythingHttp::start();
    let dir = TempDir::new();
    let file = dir.write(
        "mcp.json",
        &json!({"mcpServers": {"local": stdio_everything(), "remote": {"type": "streamable-http", "url": http.url}}}),
    );
    let config = mcp_client::config::McpConfig::load(&file).unwrap();
    let multi =
        tokio::time::timeout(Duration::from_secs(30), mcp_client::multi::MultiClient::connect(&config)).await.unwrap();
    assert!(multi.failures().is_empty(), "{:?}", multi.failures());
    let listing = multi.list_tools().await;
    let names: Vec<&str> = listing.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"local_echo") && names.contains(&"remote_echo"), "{names:?}");
    for name in ["local_echo", "remote_echo"] {
        let r = multi.call_tool(name, json!({"text": name})).await.unwrap();
        assert_eq!(r.text(), name);
    }
    multi.close().await;
}
