//! `mcp install`: each host's file and entry shape, merging with what is there (other keys and
//! servers kept, a backup made), refusing to clobber a name or a file with comments, dry runs.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mcp");

/// A fresh home folder, removed on drop.
struct Home(PathBuf);

impl Home {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("mcp-install-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Self(d)
    }

    /// `mcp install ARGS` with HOME (and XDG_CONFIG_HOME) here, in folder `cwd`.
    fn run(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(BIN)
            .arg("install")
            .args(args)
            .env("HOME", &self.0)
            .env("XDG_CONFIG_HOME", self.0.join(".config"))
            .current_dir(&self.0)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
    }

    fn json(&self, rel: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.0.join(rel)).unwrap()).unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn each_host_gets_its_own_file_and_shape() {
    let h = Home::new("hosts");
    let (ok, _, err) = h.run(&["cursor", "--env", "LOG=debug", "--", "mcp", "serve", "everything", "--stdio"]);
    assert!(ok, "{err}");
    assert_eq!(
        h.json(".cursor/mcp.json"),
        json!({"mcpServers": {"mcp": {"command": "mcp", "args": ["serve", "everything", "--stdio"], "env": {"LOG": "debug"}}}})
    );
    let (ok, _, err) = h.run(&["vscode", "--name", "web", "--header", "X-Key: k", "https://mcp.example.com/mcp"]);
    assert!(ok, "{err}");
    assert_eq!(
        h.json(".config/Code/User/mcp.json"),
        json!({"servers": {"web": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Key": "k"}}}})
    );
    assert!(h.run(&["gemini", "https://mcp.example.com/mcp"]).0);
    assert_eq!(
        h.json(".gemini/settings.json")["mcpServers"]["mcp.example.com"],
        json!({"httpUrl": "https://mcp.example.com/mcp"})
    );
    assert!(h.run(&["claude-code", "--project", "--", "srv"]).0);
    assert_eq!(h.json(".mcp.json")["mcpServers"]["srv"], json!({"type": "stdio", "command": "srv", "args": []}));
    // Claude Desktop runs stdio servers only: a URL goes through `mcp proxy --stdio`.
    assert!(h.run(&["claude-desktop", "--name", "remote", "https://mcp.example.com/mcp"]).0);
    let entry = &h.json(".config/Claude/claude_desktop_config.json")["mcpServers"]["remote"];
    assert!(entry["command"].as_str().unwrap().ends_with("mcp"), "{entry}");
    assert_eq!(entry["args"], json!(["proxy", "--stdio", "https://mcp.example.com/mcp"]));
    assert!(h.run(&["json", "--file", "here.json", "--", "x"]).0);
    assert_eq!(h.json("here.json")["mcpServers"]["x"]["command"], "x");
}

#[test]
fn merging_keeps_the_rest_and_backs_up_the_old_file() {
    let h = Home::new("merge");
    let before =
        r#"{"numStartups": 7, "projects": {"/p": {"mcpServers": {}}}, "mcpServers": {"old": {"command": "old"}}}"#;
    h.write(".claude.json", before);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(h.0.join(".claude.json"), std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let (ok, _, err) = h.run(&["claude-code", "--name", "new", "http://127.0.0.1:3000/mcp"]);
    assert!(ok, "{err}");
    let after = h.json(".claude.json");
    assert_eq!(after["numStartups"], 7);
    assert_eq!(after["projects"], json!({"/p": {"mcpServers": {}}}));
    assert_eq!(after["mcpServers"]["old"], json!({"command": "old"}));
    assert_eq!(after["mcpServers"]["new"], json!({"type": "http", "url": "http://127.0.0.1:3000/mcp"}));
    assert_eq!(std::fs::read_to_string(h.0.join(".claude.json.bak")).unwrap(), before);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(h.0.join(".claude.json")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the file stays private");
    }
    // The same name again: refused, file untouched; --force replaces it.
    let (ok, _, err) = h.run(&["claude-code", "--name", "new", "--", "other"]);
    assert!(!ok && err.contains("is there already"), "{err}");
    assert_eq!(h.json(".claude.json")["mcpServers"]["new"]["url"], "http://127.0.0.1:3000/mcp");
    assert!(h.run(&["claude-code", "--name", "new", "--force", "--", "other"]).0);
    assert_eq!(h.json(".claude.json")["mcpServers"]["new"]["command"], "other");
}

#[test]
fn files_it_cannot_keep_intact_and_dry_runs_are_left_alone() {
    let h = Home::new("refuse");
    let jsonc = "{\n  // my servers\n  \"servers\": {}\n}\n";
    h.write(".vscode/mcp.json", jsonc);
    let (ok, _, err) = h.run(&["vscode", "--project", "--", "srv"]);
    assert!(!ok && err.contains("not plain JSON"), "{err}");
    assert_eq!(std::fs::read_to_string(h.0.join(".vscode/mcp.json")).unwrap(), jsonc);
    let (ok, out, err) = h.run(&["cursor", "--dry-run", "--", "srv", "--flag"]);
    assert!(ok, "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["mcpServers"]["srv"]["args"], json!(["--flag"]));
    assert!(!Path::new(&h.0.join(".cursor/mcp.json")).exists(), "a dry run writes nothing");
    let (ok, _, err) = h.run(&["cursor", "--name", "bad name", "--", "srv"]);
    assert!(!ok && err.contains("not a usable server name"), "{err}");
    let (ok, _, err) = h.run(&["cursor", "ftp://x"]);
    assert!(!ok && err.contains("not an http(s):// URL"), "{err}");
}
