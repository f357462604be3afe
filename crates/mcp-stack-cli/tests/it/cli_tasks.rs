//! `mcp` with tasks and skills, against `mcp serve everything --http 127.0.0.1:0` (tasks outlive
//! one command, so the server is a long-lived child): `--detach`, `mcp tasks`, Ctrl-C (SIGINT)
//! cancelling and then detaching, `mcp skills`.

use crate::support::http_server;
use http_server::EverythingHttp as Server;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp");

fn mcp(args: &[&str]) -> Output {
    let out = Command::new(BIN).args(args).env_remove("MCP_LOG").stdin(Stdio::null()).output().unwrap();
    assert!(out.status.code().is_some(), "mcp {args:?} was killed");
    out
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    })
}

fn status(url: &str, id: &str) -> String {
    json(&mcp(&["tasks", "get", url, id, "--json"]))["status"].as_str().unwrap().to_owned()
}

fn sigint(child: &Child) {
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
}

/// Starts `mcp tools call URL slow_compute` and returns it once its task exists, with the id.
fn running_call(url: &str) -> (Child, String, std::io::Lines<BufReader<std::process::ChildStderr>>) {
    let mut child = Command::new(BIN)
        .args(["tools", "call", url, "slow_compute", "--arg", "seconds=60"])
        .env_remove("MCP_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // Without a terminal, each status change is one line: `[task ID] working: ...`.
    let id = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("[task ").and_then(|r| r.split_once(']')).map(|(id, _)| id.to_owned()))
        .expect("the call became a task");
    (child, id, lines)
}

fn wait(mut child: Child) -> i32 {
    for _ in 0..200 {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code().unwrap_or(-1);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("mcp did not exit after SIGINT");
}

#[test]
fn detach_then_get_cancel_and_wait() {
    let s = Server::start();
    let out = mcp(&["tools", "call", &s.url, "slow_compute", "--arg", "seconds=60", "--detach", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let id = json(&out)["taskId"].as_str().unwrap().to_owned();
    assert_eq!(status(&s.url, &id), "working");
    assert_eq!(mcp(&["tasks", "cancel", &s.url, &id]).status.code(), Some(0));
    let waited = mcp(&["tasks", "wait", &s.url, &id]);
    assert_eq!(waited.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&waited.stderr).contains(&format!("task {id} was cancelled")));
    assert_eq!(status(&s.url, &id), "cancelled");
    // A finished task's result, picked up later.
    let out =
        mcp(&["tools", "call", &s.url, "slow_compute", "--arg", "seconds=0.2", "--arg", "label=later", "--detach"]);
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let done = mcp(&["tasks", "wait", &s.url, &id]);
    assert_eq!(String::from_utf8_lossy(&done.stdout).trim(), "computed later in 0.2s");
    let unknown = mcp(&["tasks", "get", &s.url, "no-such-task"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("Task not found"));
}

#[test]
fn ctrl_c_cancels_the_task_and_a_second_one_detaches() {
    let s = Server::start();
    let (child, id, lines) = running_call(&s.url);
    sigint(&child);
    let code = wait(child);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(code, 1, "{rest:?}");
    assert!(rest.iter().any(|l| l.contains(&format!("cancelling task {id}"))), "{rest:?}");
    assert_eq!(status(&s.url, &id), "cancelled");

    // The second Ctrl-C (while the client waits for the server to confirm) detaches.
    let (child, id, mut lines) = running_call(&s.url);
    sigint(&child);
    let seen = lines.by_ref().map_while(Result::ok).find(|l| l.contains("cancelling task"));
    assert!(seen.is_some(), "the first Ctrl-C cancels");
    std::thread::sleep(Duration::from_millis(50));
    sigint(&child);
    let code = wait(child);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(code, 130, "{rest:?}");
    assert!(rest.iter().any(|l| l.contains(&format!("detached: task {id}"))), "{rest:?}");
}

#[test]
fn skills_list_get_and_verified_read() {
    let s = Server::start();
    let list = json(&mcp(&["skills", "list", &s.url, "--json"]));
    let names: Vec<&str> =
        list["skills"].as_array().unwrap().iter().map(|k| k["frontmatter"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["pdf-processing", "release-notes"]);
    let got = json(&mcp(&["skills", "get", &s.url, "pdf-processing", "--json"]));
    assert_eq!(got["skill"]["uri"], "skill://pdf-processing/SKILL.md");
    let read = mcp(&["skills", "read", &s.url, "pdf-processing", "references/FORMS.md"]);
    assert!(String::from_utf8_lossy(&read.stdout).starts_with("# PDF forms"));
    let refused = mcp(&["skills", "read", &s.url, "pdf-processing", "../secret"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not listed"));
    let unknown = mcp(&["skills", "read", &s.url, "no-such-skill"]);
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("available skills: pdf-processing, release-notes"));
}
