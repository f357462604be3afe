//! Configuration files: both formats, variables, errors, the search order and merging.

use super::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh folder under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let dir = std::env::temp_dir().join(format!(
            "mcp-config-test-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |k: &str| m.get(k).cloned()
}

fn no_vars(_: &str) -> Option<String> {
    None
}

fn parse(text: &str) -> McpConfig {
    McpConfig::parse(text, "/proj/mcp.json", &no_vars).unwrap()
}

fn spec<'a>(c: &'a McpConfig, name: &str) -> &'a ServerSpec {
    c.get(name).unwrap_or_else(|| panic!("no server {name}")).spec().unwrap()
}

fn err<'a>(c: &'a McpConfig, name: &str) -> &'a ConfigError {
    c.get(name).unwrap().spec().unwrap_err()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn mcp_servers_format() {
    let c = parse(
        r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-files"], "env": {"LOG": "debug", "N": 3, "ON": true}, "cwd": "sub"},
            "remote": {"url": "https://mcp.example.com/mcp", "headers": {"X-Api-Key": "k"}},
            "typed": {"type": "stdio", "command": "srv"},
            "streamable": {"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"},
            "old": {"type": "sse", "url": "http://127.0.0.1:2/sse"},
            "plain": {"type": "http", "url": "http://127.0.0.1:3/mcp", "description": "unknown keys are ignored"},
            "off": {"command": "nope", "disabled": true}
        }}"#,
    );
    assert_eq!(c.names(), ["files", "old", "plain", "remote", "streamable", "typed"]);
    assert_eq!(
        spec(&c, "files"),
        &ServerSpec::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "server-files".into()],
            env: pairs(&[("LOG", "debug"), ("N", "3"), ("ON", "true")]),
            cwd: Some(PathBuf::from("/proj/sub")),
        }
    );
    assert_eq!(
        spec(&c, "remote"),
        &ServerSpec::Http { url: "https://mcp.example.com/mcp".into(), headers: pairs(&[("X-Api-Key", "k")]) }
    );
    assert_eq!(spec(&c, "typed").transport_name(), "stdio");
    for (name, url) in [("streamable", "http://127.0.0.1:1/mcp"), ("old", "http://127.0.0.1:2/sse")] {
        assert!(matches!(spec(&c, name), ServerSpec::Http { url: u, .. } if u == url), "{name}");
    }
    assert_eq!(c.get("files").unwrap().source(), Path::new("/proj/mcp.json"));
    assert_eq!(c.files(), [PathBuf::from("/proj/mcp.json")]);
}

#[test]
fn vscode_format_with_env_file_and_workspace_folder() {
    let dir = TempDir::new();
    dir.write(".env", "# comment\nexport A=from-file\nB=\"quoted value\"\nC='x'\n\n");
    let path = dir.write(
        ".vscode/mcp.json",
        r#"{
            // VS Code writes JSONC
            "inputs": [{"type": "promptString", "id": "key", "description": "API key"}],
            "servers": {
                "local": {"type": "stdio", "command": "${workspaceFolder}/bin/srv", "args": ["--root", "${workspaceFolder}"],
                          "envFile": "${workspaceFolder}/.env", "env": {"C": "from-env"}},
                "web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
            },
        }"#,
    );
    let c = McpConfig::load_with(&path, &vars(&[("TOKEN", "t0k")])).unwrap();
    let root = dir.0.to_string_lossy().into_owned();
    let ServerSpec::Stdio { command, args, env, cwd } = spec(&c, "local") else { panic!("stdio") };
    assert_eq!(command, &format!("{root}/bin/srv"));
    assert_eq!(args, &["--root".to_owned(), root.clone()]);
    // The file first, then `env` (which wins: later entries override).
    assert_eq!(env, &pairs(&[("A", "from-file"), ("B", "quoted value"), ("C", "x"), ("C", "from-env")]));
    assert_eq!(cwd, &None);
    assert_eq!(
        spec(&c, "web"),
        &ServerSpec::Http { url: "http://127.0.0.1:9/mcp".into(), headers: pairs(&[("Authorization", "Bearer t0k")]) }
    );
    assert_eq!(c.get("web").unwrap().source(), path);
    // A missing envFile is that server's error only.
    let path = dir.write("other/mcp.json", r#"{"servers": {"s": {"command": "x", "envFile": "missing.env"}}}"#);
    let c = McpConfig::load_with(&path, &no_vars).unwrap();
    assert!(matches!(err(&c, "s"), ConfigError::Io { path, .. } if path.ends_with("other/missing.env")));
}

#[test]
fn both_keys_in_one_file() {
    let c = parse(
        r#"{"mcpServers": {"a": {"command": "first"}}, "servers": {"a": {"command": "second"}, "b": {"command": "b"}}}"#,
    );
    assert_eq!(c.names(), ["a", "b"]);
    assert!(matches!(spec(&c, "a"), ServerSpec::Stdio { command, .. } if command == "first"));
}

#[test]
fn variable_expansion() {
    let v = vars(&[("HOME", "/home/u"), ("EMPTY", ""), ("TOKEN", "s3cret")]);
    let text = r#"{"mcpServers": {"s": {"command": "${HOME}/bin/x", "args": [
        "${env:TOKEN}", "${UNSET:-fallback}", "${EMPTY:-used}", "${EMPTY}", "$${HOME}", "$HOME", "a$", "${HOME}${TOKEN}"
    ], "env": {"K": "${TOKEN}"}, "cwd": "${HOME}/work"}}}"#;
    let c = McpConfig::parse(text, "/p/.mcp.json", &v).unwrap();
    let ServerSpec::Stdio { command, args, env, cwd } = spec(&c, "s") else { panic!("stdio") };
    assert_eq!(command, "/home/u/bin/x");
    assert_eq!(args, &["s3cret", "fallback", "used", "", "${HOME}", "$HOME", "a$", "/home/us3cret"]);
    assert_eq!(env, &pairs(&[("K", "s3cret")]));
    assert_eq!(cwd.as_deref(), Some(Path::new("/home/u/work")));
    let c = McpConfig::parse(
        r#"{"mcpServers": {"h": {"url": "https://${HOST}/mcp"}}}"#,
        "/p/m.json",
        &vars(&[("HOST", "h.example")]),
    )
    .unwrap();
    assert!(matches!(spec(&c, "h"), ServerSpec::Http { url, .. } if url == "https://h.example/mcp"));
}

#[test]
fn variable_errors_stay_with_their_server() {
    let text = r#"{"mcpServers": {
        "ok": {"command": "fine"},
        "missing": {"command": "x", "args": ["a", "${NOPE}"]},
        "header": {"url": "http://127.0.0.1/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "input": {"command": "x", "env": {"KEY": "${input:key}"}},
        "cmd": {"command": "${command:pick}"},
        "open": {"command": "${HOME"},
        "bad": {"command": "${1x}"}
    }}"#;
    let c = McpConfig::parse(text, "/p/.mcp.json", &no_vars).unwrap();
    assert!(spec(&c, "ok").target() == "fine");
    let e = err(&c, "missing");
    assert!(
        matches!(e, ConfigError::MissingVariable { server, field, variable, .. } if server == "missing" && field == "args[1]" && variable == "NOPE"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "/p/.mcp.json: server `missing`: args[1] uses ${NOPE}, which is not set");
    assert!(
        matches!(err(&c, "header"), ConfigError::MissingVariable { field, variable, .. } if field == "headers.Authorization" && variable == "TOKEN")
    );
    let e = err(&c, "input").to_string();
    assert!(e.contains("env.KEY") && e.contains("VS Code input variables") && e.contains("not supported"), "{e}");
    let e = err(&c, "cmd").to_string();
    assert!(e.contains("`command:` variables are not supported"), "{e}");
    assert!(err(&c, "open").to_string().contains("unterminated"));
    assert!(err(&c, "bad").to_string().contains("not a valid variable"));
}

#[test]
fn invalid_entries() {
    let text = r#"{"mcpServers": {
        "both": {"command": "x", "url": "http://127.0.0.1/mcp"},
        "neither": {"args": ["x"]},
        "stdio-url": {"type": "stdio", "url": "http://127.0.0.1/mcp"},
        "http-cmd": {"type": "http", "command": "x"},
        "sse-none": {"type": "sse"},
        "http-args": {"url": "http://127.0.0.1/mcp", "args": ["x"]},
        "stdio-headers": {"command": "x", "headers": {"A": "b"}},
        "empty": {"command": " "}
    }}"#;
    let c = parse(text);
    let msg = |n: &str| match err(&c, n) {
        ConfigError::Invalid { server, message, .. } if server == n => message.clone(),
        other => panic!("{n}: {other:?}"),
    };
    assert!(msg("both").contains("both `command` and `url`"));
    assert!(msg("neither").contains("neither `command`"));
    assert!(msg("stdio-url").contains("`type: stdio` but has no `command`"));
    assert!(msg("http-cmd").contains("`type: http` but has `command`"));
    assert!(msg("sse-none").contains("`type: sse` but has no `url`"));
    assert!(msg("http-args").contains("do not apply"));
    assert!(msg("stdio-headers").contains("`headers` do not apply"));
    assert!(msg("empty").contains("empty"));
}

#[test]
fn file_errors_have_positions() {
    let p = |text: &str| McpConfig::parse(text, "/p/mcp.json", &no_vars).unwrap_err();
    // Syntax.
    let e = p("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n  }\n");
    assert!(matches!(e, ConfigError::Parse { line: 5, .. }), "{e:?}");
    assert!(e.to_string().starts_with("/p/mcp.json:5:"), "{e}");
    // An unknown transport type, with where it is.
    let e = p("{\"mcpServers\": {\n  \"a\": {\"type\": \"websocket\", \"url\": \"ws://x\"}}}");
    let ConfigError::Parse { line, column, message, .. } = &e else { panic!("{e:?}") };
    assert_eq!(*line, 2);
    assert!(*column > 10, "{e}");
    assert!(message.contains("unknown variant `websocket`") && message.contains("streamable-http"), "{message}");
    assert!(!message.contains(" at line "), "the position is not repeated: {message}");
    // Wrong value types.
    let e = p(r#"{"mcpServers": {"a": {"command": "x", "args": "--flag"}}}"#);
    assert!(
        matches!(&e, ConfigError::Parse { message, line: 1, .. } if message.contains("expected a sequence")),
        "{e:?}"
    );
    let e = p(r#"{"mcpServers": {"a": {"command": "x", "env": {"K": [1]}}}}"#);
    assert!(e.to_string().contains("a string, number or boolean"), "{e}");
    let e = p(r#"{"mcpServers": {"a": "npx server"}}"#);
    assert!(e.to_string().contains("a server object"), "{e}");
    let e = p("[]");
    assert!(e.to_string().contains("an object with `mcpServers` or `servers`"), "{e}");
    assert!(matches!(p(r#"{"other": {}}"#), ConfigError::NoServers { .. }));
    let e = McpConfig::load("/definitely/not/here/mcp.json").unwrap_err();
    assert!(matches!(&e, ConfigError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound), "{e:?}");
}

#[test]
fn jsonc_comments_and_trailing_commas() {
    let text = "{\n  // a comment with \"quotes\"\n  \"mcpServers\": { /* block\n comment */\n    \"a\": {\"command\": \"x\", \"args\": [\"http://not/a/comment\", \"/* kept */\", \"a,]\",],},\n  },\n}";
    let c = parse(text);
    assert!(
        matches!(spec(&c, "a"), ServerSpec::Stdio { args, .. } if args == &["http://not/a/comment", "/* kept */", "a,]"])
    );
    // Positions survive the stripping.
    let e = McpConfig::parse("// one\n/* two\n*/ {\"mcpServers\": 1}", "/p/mcp.json", &no_vars).unwrap_err();
    assert!(matches!(e, ConfigError::Parse { line: 3, .. }), "{e:?}");
}

#[test]
fn search_order_and_merge() {
    let root = TempDir::new();
    let user = TempDir::new();
    let empty = McpConfig::search_with(&SearchPaths::new(&root.0, Some(user.0.clone())), &no_vars).unwrap();
    assert!(empty.is_empty() && empty.files().is_empty());
    assert_eq!(empty.searched().len(), 4);
    let dot = root.write(".mcp.json", r#"{"mcpServers": {"a": {"command": "dot-mcp"}}}"#);
    let plain = root.write("mcp.json", r#"{"mcpServers": {"a": {"command": "mcp"}, "b": {"command": "mcp"}}}"#);
    let vscode = root.write(
        ".vscode/mcp.json",
        r#"{"servers": {"b": {"type": "stdio", "command": "vscode"}, "c": {"type": "stdio", "command": "vscode"}}}"#,
    );
    let home =
        user.write("mcp.json", r#"{"mcpServers": {"c": {"command": "user"}, "d": {"url": "http://127.0.0.1/mcp"}}}"#);
    let paths = SearchPaths::new(&root.0, Some(user.0.clone()));
    assert_eq!(paths.candidates(), [home.clone(), dot.clone(), plain.clone(), vscode.clone()]);
    let mut c = McpConfig::search_with(&paths, &no_vars).unwrap();
    assert_eq!(c.names(), ["a", "b", "c", "d"]);
    // The user's file wins a clash with a project file; the clash is recorded.
    assert_eq!(spec(&c, "c").target(), "user");
    assert_eq!(c.clashes(), [Clash { name: "c".into(), kept: home.clone(), ignored: vscode.clone() }]);
    // Project files are pending: listed as written, not usable until approved.
    assert_eq!(
        c.pending().iter().map(|p| p.path().to_path_buf()).collect::<Vec<_>>(),
        [dot.clone(), plain.clone(), vscode.clone()]
    );
    let a = c.get("a").unwrap();
    assert!(!a.is_trusted() && a.origin() == Origin::Project && a.written().target() == "dot-mcp");
    assert!(matches!(a.spec(), Err(ConfigError::Untrusted { .. })));
    for f in [&dot, &plain, &vscode] {
        assert!(c.approve(f, &no_vars).unwrap());
    }
    assert!(c.pending().is_empty() && !c.approve(&dot, &no_vars).unwrap());
    let from = |c: &McpConfig, n: &str| (spec(c, n).target(), c.get(n).unwrap().source().to_path_buf());
    assert_eq!(from(&c, "a"), ("dot-mcp".into(), dot.clone()));
    assert_eq!(from(&c, "b"), ("mcp".into(), plain.clone()));
    assert_eq!(from(&c, "c"), ("user".into(), home.clone()));
    assert_eq!(from(&c, "d"), ("http://127.0.0.1/mcp".into(), home.clone()));
    assert_eq!(c.files(), [home.clone(), dot.clone(), plain, vscode]);
    assert_eq!(c.searched(), paths.candidates().as_slice());
    // Without a user folder, only the project's files.
    let c = McpConfig::search_with(&SearchPaths::new(&root.0, None), &no_vars).unwrap();
    assert_eq!(c.names(), ["a", "b", "c"]);
    // A broken file found on the way is an error naming it.
    std::fs::write(&dot, "{ nope").unwrap();
    let e = McpConfig::search_with(&paths, &no_vars).unwrap_err();
    assert!(matches!(&e, ConfigError::Parse { path, .. } if *path == dot), "{e:?}");
}

#[test]
fn project_files_expand_declared_variables_only() {
    let root = TempDir::new();
    let env = vars(&[("GITHUB_TOKEN", "ghp_s3cret"), ("PORT", "8080")]);
    let text = r#"{"allowEnv": ["PORT"], "mcpServers": {
        "leak": {"url": "http://127.0.0.1/mcp", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
        "dflt": {"command": "x", "args": ["${GITHUB_TOKEN:-none}"]},
        "ok": {"url": "http://127.0.0.1:${PORT}/mcp?ws=${workspaceFolder}"}}}"#;
    let path = root.write(".mcp.json", text);
    let c = McpConfig::parse_project(text, &path, &env).unwrap();
    for n in ["leak", "dflt"] {
        let e = err(&c, n);
        assert!(matches!(e, ConfigError::UndeclaredVariable { variable, .. } if variable == "GITHUB_TOKEN"), "{e:?}");
        let m = e.to_string();
        assert!(m.contains("GITHUB_TOKEN") && m.contains(".mcp.json") && !m.contains("s3cret"), "{m}");
    }
    let ok = spec(&c, "ok").target();
    assert_eq!(ok, format!("http://127.0.0.1:8080/mcp?ws={}", root.0.display()));
    // The user's own file expands anything, and ignores `allowEnv`.
    let c = McpConfig::parse(text, &path, &env).unwrap();
    assert!(matches!(spec(&c, "leak"), ServerSpec::Http { headers, .. } if headers[0].1 == "Bearer ghp_s3cret"));
}

#[test]
fn project_env_file_stays_in_the_project() {
    let outside = TempDir::new();
    let root = TempDir::new();
    let secret = outside.write("creds.env", "AWS_SECRET_ACCESS_KEY=s3cret\n");
    root.write("local.env", "A=1\n");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret, root.0.join("link.env")).unwrap();
    let up = format!("../{}/creds.env", outside.0.file_name().unwrap().to_string_lossy());
    let text = serde_json::json!({"mcpServers": {
        "local": {"command": "x", "envFile": "${workspaceFolder}/local.env"},
        "abs": {"command": "x", "envFile": secret},
        "up": {"command": "x", "envFile": up},
        "link": {"command": "x", "envFile": "link.env"}}})
    .to_string();
    let path = root.write(".mcp.json", &text);
    let c = McpConfig::parse_project(&text, &path, &no_vars).unwrap();
    assert!(matches!(spec(&c, "local"), ServerSpec::Stdio { env, .. } if *env == pairs(&[("A", "1")])));
    let bad: &[&str] = if cfg!(unix) { &["abs", "up", "link"] } else { &["abs", "up"] };
    for n in bad {
        assert!(matches!(err(&c, n), ConfigError::EnvFileOutside { .. }), "{n}: {:?}", err(&c, n));
    }
    // The user's file may read it.
    let c = McpConfig::parse(&text, &path, &no_vars).unwrap();
    assert!(matches!(spec(&c, "abs"), ServerSpec::Stdio { env, .. } if env[0].1 == "s3cret"));
}

#[test]
fn urls_are_redacted() {
    assert_eq!(redact_url("https://u:p@h.example/mcp?key=1#x"), "https://<redacted>@h.example/mcp?<redacted>");
    assert_eq!(redact_url("http://127.0.0.1:9/mcp"), "http://127.0.0.1:9/mcp");
    assert_eq!(redact_url("https://${HOST}/mcp?k=${KEY}"), "https://${HOST}/mcp?<redacted>");
    assert_eq!(redact_url("https://h/a@b"), "https://h/a@b");
}

#[test]
fn trust_store_remembers_digests() {
    let root = TempDir::new();
    let cfg = TempDir::new();
    let path = root.write(".mcp.json", r#"{"mcpServers": {"a": {"command": "x"}}}"#);
    let paths = SearchPaths::new(&root.0, None);
    let c = McpConfig::search_with(&paths, &no_vars).unwrap();
    let file = c.pending_file(&path).unwrap().clone();
    let store_path = cfg.0.join("sub/trusted-projects.json");
    let mut store = trust::TrustStore::open(&store_path).unwrap();
    assert!(!store.is_trusted(&file));
    store.trust(&file).unwrap();
    let store = trust::TrustStore::open(&store_path).unwrap();
    assert!(store.is_trusted(&file) && store.entries().len() == 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&store_path).unwrap().permissions().mode() & 0o777, 0o600);
    }
    // A changed file is another digest.
    std::fs::write(&path, r#"{"mcpServers": {"a": {"command": "y"}}}"#).unwrap();
    let c = McpConfig::search_with(&paths, &no_vars).unwrap();
    let changed = c.pending_file(&path).unwrap().clone();
    assert_ne!(changed.digest(), file.digest());
    assert!(!store.is_trusted(&changed));
    let mut store = store;
    store.trust(&changed).unwrap();
    assert_eq!(store.entries().len(), 1, "one entry per path");
}

#[cfg(unix)]
#[test]
fn user_dir() {
    assert_eq!(
        user_dir_from(&vars(&[("XDG_CONFIG_HOME", "/x/cfg"), ("HOME", "/home/u")])),
        Some(PathBuf::from("/x/cfg/mcp"))
    );
    // A relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
    assert_eq!(
        user_dir_from(&vars(&[("XDG_CONFIG_HOME", "rel"), ("HOME", "/home/u")])),
        Some(PathBuf::from("/home/u/.config/mcp"))
    );
    assert_eq!(user_dir_from(&no_vars), None);
}

#[test]
fn display_and_debug() {
    let c = parse(
        r#"{"mcpServers": {"s": {"command": "my server", "args": ["a b", "", "it's", "--x"], "env": {"TOKEN": "s3cret"}},
            "h": {"url": "http://127.0.0.1/mcp", "headers": {"Authorization": "Bearer s3cret"}}}}"#,
    );
    assert_eq!(spec(&c, "s").target(), r#"'my server' 'a b' '' 'it'\''s' --x"#);
    for n in ["s", "h"] {
        let d = format!("{:?}", spec(&c, n));
        assert!(!d.contains("s3cret") && (d.contains("TOKEN") || d.contains("Authorization")), "{d}");
    }
}

#[test]
fn merge_keeps_the_first() {
    let mut a = McpConfig::parse(r#"{"mcpServers": {"x": {"command": "a"}}}"#, "/a.json", &no_vars).unwrap();
    let b = McpConfig::parse(r#"{"mcpServers": {"x": {"command": "b"}, "y": {"command": "b"}}}"#, "/b.json", &no_vars)
        .unwrap();
    a.merge(b);
    assert_eq!(spec(&a, "x").target(), "a");
    assert_eq!(a.get("y").unwrap().source(), Path::new("/b.json"));
    assert_eq!(a.files(), [PathBuf::from("/a.json"), PathBuf::from("/b.json")]);
}
