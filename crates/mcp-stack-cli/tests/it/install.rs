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

    /// `mcp install ARGS` with HOME (and XDG_CONFIG_HOME) here, in this folder.
    fn run(&self, args: &[&str]) -> (bool, String, String) {
        self.run_in(&self.0, args)
    }

    /// `mcp install ARGS` with HOME (and XDG_CONFIG_HOME) here, in folder `cwd`.
    fn run_in(&self, cwd: &Path, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(BIN)
            .arg("install")
            .args(args)
            .env("HOME", &self.0)
            .env("XDG_CONFIG_HOME", self.0.join(".config"))
            .current_dir(cwd)
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

#[test]
fn the_rest_of_the_file_is_kept_byte_for_byte_and_duplicate_keys_are_refused() {
    let h = Home::new("bytes");
    let before =
        "{\n  \"numStartups\": 123456789012345678901234567890,\n  \"tipsHistory\": {\"z\": 1, \"a\": 0.10},\n  \
                  \"mcpServers\": {\n    \"old\": {\"command\": \"old\"}\n  },\n  \"after\": true\n}\n";
    h.write(".claude.json", before);
    let (ok, _, err) = h.run(&["claude-code", "--name", "new", "--", "srv", "-v"]);
    assert!(ok, "{err}");
    let after = std::fs::read_to_string(h.0.join(".claude.json")).unwrap();
    assert_eq!(
        after,
        "{\n  \"numStartups\": 123456789012345678901234567890,\n  \"tipsHistory\": {\"z\": 1, \"a\": 0.10},\n  \
         \"mcpServers\": {\n    \"old\": {\"command\": \"old\"},\n    \"new\": {\n      \"type\": \"stdio\",\n      \
         \"command\": \"srv\",\n      \"args\": [\n        \"-v\"\n      ]\n    }\n  },\n  \"after\": true\n}\n"
    );
    // A key written twice: which one the host reads is unclear, so nothing is written.
    for dup in [r#"{"mcpServers": {"a": {"command": "1"}, "a": {"command": "2"}}}"#, r#"{"x": 1, "x": 2}"#] {
        h.write(".cursor/mcp.json", dup);
        let (ok, _, err) = h.run(&["cursor", "--", "srv"]);
        assert!(!ok && err.contains("is written twice"), "{err}");
        assert_eq!(std::fs::read_to_string(h.0.join(".cursor/mcp.json")).unwrap(), dup);
        assert!(!h.0.join(".cursor/mcp.json.bak").exists());
    }
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
#[test]
fn a_new_file_with_secrets_is_private_and_an_existing_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let h = Home::new("modes");
    let (ok, _, err) =
        h.run(&["vscode", "--project", "--header", "Authorization: Bearer s3cret", "https://x.example/mcp"]);
    assert!(ok, "{err}");
    assert_eq!(mode(&h.0.join(".vscode/mcp.json")), 0o600, "a new file holding a header is private");
    let (ok, _, err) = h.run(&["cursor", "--env", "API_KEY=s3cret", "--", "srv"]);
    assert!(ok, "{err}");
    assert_eq!(mode(&h.0.join(".cursor/mcp.json")), 0o600, "a new file holding env values is private");
    h.write("mcp.json", "{}");
    std::fs::set_permissions(h.0.join("mcp.json"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let (ok, _, err) = h.run(&["json", "--header", "X-Key: k", "https://x.example/mcp"]);
    assert!(ok, "{err}");
    assert_eq!(mode(&h.0.join("mcp.json")), 0o640, "an existing file keeps its mode");
    assert_eq!(mode(&h.0.join("mcp.json.bak")), 0o640, "and so does its backup");
}

/// A hostile clone: links where `mcp install --project` writes, each leading outside the
/// project to a file that stands for one the user cares about.
#[cfg(unix)]
#[test]
fn links_a_cloned_project_ships_are_never_written_through() {
    use std::os::unix::fs::symlink;
    let h = Home::new("hostile");
    let (proj, outside) = (h.0.join("proj"), h.0.join("outside"));
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(outside.join("cursor")).unwrap();
    let hook = outside.join("pre-commit"); // stands for .git/hooks/pre-commit
    let bashrc = outside.join("bashrc"); // stands for ~/.bashrc
    std::fs::write(&hook, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::write(&bashrc, "export PATH=$PATH\n").unwrap();
    let original = r#"{"mcpServers": {}}"#;
    std::fs::write(proj.join(".mcp.json"), original).unwrap();
    symlink(&hook, proj.join(".mcp.json.bak")).unwrap();
    symlink(&bashrc, proj.join(".mcp.json.mcp-install.tmp")).unwrap();
    let untouched = |what: &str| {
        assert_eq!(std::fs::read_to_string(&hook).unwrap(), "#!/bin/sh\nexit 0\n", "{what}: the hook");
        assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "export PATH=$PATH\n", "{what}: the profile");
        assert_eq!(std::fs::read_dir(outside.join("cursor")).unwrap().count(), 0, "{what}: the linked folder");
        assert!(!outside.join("made").exists(), "{what}: no folder made outside");
    };

    // A backup path that is a link: refused, nothing changes.
    let (ok, _, err) = h.run_in(&proj, &["claude-code", "--project", "--", "srv"]);
    assert!(!ok && err.contains("not a regular file"), "{err}");
    untouched("backup link");
    assert_eq!(std::fs::read_to_string(proj.join(".mcp.json")).unwrap(), original);
    // With the backup link gone, the old predictable temporary name is not used either.
    std::fs::remove_file(proj.join(".mcp.json.bak")).unwrap();
    let (ok, _, err) = h.run_in(&proj, &["claude-code", "--project", "--", "srv"]);
    assert!(ok, "{err}");
    untouched("temporary link");
    assert!(std::fs::symlink_metadata(proj.join(".mcp.json")).unwrap().is_file());
    assert_eq!(std::fs::read_to_string(proj.join(".mcp.json.bak")).unwrap(), original);
    assert_eq!(std::fs::read_link(proj.join(".mcp.json.mcp-install.tmp")).unwrap(), bashrc);
    let left: Vec<_> = std::fs::read_dir(&proj)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && n != ".mcp.json.mcp-install.tmp")
        .collect();
    assert!(left.is_empty(), "no temporary file left: {left:?}");

    // A parent folder that is a link outside (existing, or to be made): refused.
    symlink(outside.join("cursor"), proj.join(".cursor")).unwrap();
    let (ok, _, err) = h.run_in(&proj, &["cursor", "--project", "--", "srv"]);
    assert!(!ok && err.contains("outside the project folder"), "{err}");
    symlink(outside.join("made/deeper"), proj.join(".vscode")).unwrap();
    let (ok, _, err) = h.run_in(&proj, &["vscode", "--project", "--", "srv"]);
    assert!(!ok && err.contains("symbolic link"), "{err}");
    // The file itself a link outside: refused, whatever the host.
    std::fs::create_dir_all(proj.join(".gemini")).unwrap();
    symlink(&bashrc, proj.join(".gemini/settings.json")).unwrap();
    let (ok, _, err) = h.run_in(&proj, &["gemini", "--project", "--", "srv"]);
    assert!(!ok && err.contains("outside the project folder"), "{err}");
    symlink(&hook, proj.join("mcp.json")).unwrap();
    let (ok, _, err) = h.run_in(&proj, &["json", "--", "srv"]);
    assert!(!ok && err.contains("outside the project folder"), "{err}");
    untouched("links outside");

    // A link that stays inside the project is followed: the file it names changes, the link stays.
    std::fs::create_dir_all(proj.join("conf")).unwrap();
    std::fs::write(proj.join("conf/servers.json"), "{}").unwrap();
    std::fs::remove_file(proj.join("mcp.json")).unwrap();
    symlink("conf/servers.json", proj.join("mcp.json")).unwrap();
    let (ok, _, err) = h.run_in(&proj, &["json", "--", "srv"]);
    assert!(ok, "{err}");
    assert!(std::fs::symlink_metadata(proj.join("mcp.json")).unwrap().file_type().is_symlink());
    let inside: Value =
        serde_json::from_str(&std::fs::read_to_string(proj.join("conf/servers.json")).unwrap()).unwrap();
    assert_eq!(inside["mcpServers"]["srv"]["command"], "srv");
    untouched("a link inside");
}
