//! The examples work: the client examples run against the server examples, as real processes
//! over a pipe and a loopback socket.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// Builds the examples once and returns the folder holding them.
fn examples_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let status = Command::new(env!("CARGO"))
                .args(["build", "-q", "-p", "mcp-stack", "--features", "http,client"])
                .args(["--example", "stdio_server", "--example", "http_server"])
                .args(["--example", "stdio_client", "--example", "http_client"])
                .status()
                .expect("cargo runs");
            assert!(status.success(), "the examples build");
            // target/debug/deps/examples-HASH -> target/debug/examples
            let exe = std::env::current_exe().expect("test path");
            exe.parent().and_then(|d| d.parent()).expect("target dir").join("examples")
        })
        .clone()
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_stdio_client_calls_the_stdio_server() {
    let dir = examples_dir();
    let out = Command::new(dir.join("stdio_client")).arg(dir.join("stdio_server")).output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "shout: HELLO");
}

#[test]
fn the_http_client_calls_the_http_server_with_progress_and_elicitation() {
    let dir = examples_dir();
    let mut server =
        Command::new(dir.join("http_server")).arg("127.0.0.1:0").stderr(Stdio::piped()).spawn().expect("server starts");
    let stderr = server.stderr.take().expect("piped");
    let server = Killed(server);
    let url = std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("serving on ").map(str::to_owned))
        .expect("the server announces its address");
    let run = |tool: &str, args: &str| Command::new(dir.join("http_client")).args([&url, tool, args]).output().unwrap();
    let out = run("write_note", r#"{"text": "Ship it"}"#);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("tool write_note") && stdout.contains("tool delete_note"), "{stdout}");
    assert!(stdout.trim_end().ends_with("saved"), "{stdout}");
    assert_eq!(String::from_utf8_lossy(&out.stderr).matches("progress").count(), 3, "three progress steps");
    let out = run("delete_note", "{}");
    assert!(String::from_utf8_lossy(&out.stdout).trim_end().ends_with("deleted"), "the client said yes");
    drop(server);
}
