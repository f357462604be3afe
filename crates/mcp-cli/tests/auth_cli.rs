//! `mcp auth status|logout` on a stored session: no token is ever printed, the store stays
//! private, and other commands explain how to log in.

use std::process::Command;

fn mcp(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(args)
        .env("MCP_CONFIG_DIR", dir)
        .env_remove("MCP_OAUTH_CLIENT_CREDENTIALS")
        .output()
        .expect("run mcp");
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
