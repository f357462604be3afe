//! The client commands of the `mcp` binary, run against the stdio `everything` server (the
//! same binary's `serve everything --stdio`).

use crate::support::bounded;

use bounded::Run;
use serde_json::Value;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mcp");

/// Runs `mcp ARGS -- mcp serve everything --stdio` with `input` on stdin (closed afterwards;
/// stdin is never a terminal here), bounded in time.
fn mcp_with_input(args: &[&str], input: &str) -> Run {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--", BIN, "serve", "everything", "--stdio"]);
    run(&all, input)
}

fn mcp(args: &[&str]) -> Run {
    mcp_with_input(args, "")
}

fn run(args: &[&str], input: &str) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("MCP_LOG");
    bounded::run(cmd, Some(input))
}

fn json_doc(r: &Run) -> Value {
    serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}\nstderr: {}", r.stdout, r.stderr))
}

#[test]
fn tools_list_json_is_one_document_with_the_tools() {
    let r = mcp(&["--json", "tools", "list"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let doc = json_doc(&r);
    let tools = doc["tools"].as_array().expect("tools array");
    let echo = tools.iter().find(|t| t["name"] == "echo").expect("echo is listed");
    assert_eq!(echo["inputSchema"]["properties"]["text"]["type"], "string");
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    for name in ["add", "count_with_progress", "greet_user", "toggle_extra_tool"] {
        assert!(tools.iter().any(|t| t["name"] == name), "{name} missing");
    }
}

#[test]
fn tools_list_table() {
    let r = mcp(&["tools", "list"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let header = r.stdout.lines().next().unwrap_or_default();
    assert!(header.starts_with("NAME"), "{header}");
    let echo = r.stdout.lines().find(|l| l.starts_with("echo ")).expect("echo row");
    assert!(echo.contains("read-only"), "{echo}");
    assert!(echo.contains("Echo — Returns the given text unchanged."), "{echo}");
}

#[test]
fn tools_call_echo_prints_the_text() {
    let r = mcp(&["tools", "call", "echo", r#"{"text": "hello from the cli"}"#]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "hello from the cli\n");
    // `--arg` typed by the schema: "3" stays a string for a string property.
    let r = mcp(&["--json", "tools", "call", "echo", "--arg", "text=3"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(json_doc(&r)["content"][0]["text"], "3");
}

#[test]
fn tools_call_structured_content_and_typed_args() {
    let r = mcp(&["tools", "call", "add", "--arg", "a=2", "--arg", "b=40"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("pretty structured content");
    assert_eq!(v, serde_json::json!({"sum": 42}));
}

#[test]
fn resources_read_static_text() {
    let r = mcp(&["resources", "read", "test://static-text"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "This is the content of the static text resource.\n");
}

#[test]
fn prompts_get_simple_prompt() {
    let r = mcp(&["prompts", "get", "test_simple_prompt"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "── user ──\nThis is a simple prompt for testing.\n");
    let r = mcp(&["--json", "prompts", "get", "test_simple_prompt"]);
    let doc = json_doc(&r);
    assert_eq!(doc["messages"][0]["role"], "user");
    assert_eq!(doc["messages"][0]["content"]["text"], "This is a simple prompt for testing.");
}

#[test]
fn unknown_tool_fails_with_a_clear_message() {
    let r = mcp(&["tools", "call", "no_such_tool"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty(), "stdout: {}", r.stdout);
    let first = r.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with("mcp: unknown tool `no_such_tool`"), "{}", r.stderr);
    assert!(r.stderr.contains("available tools:"), "{}", r.stderr);
    assert!(r.stderr.contains("echo"), "{}", r.stderr);
    // With --json the error is the one document on stdout.
    let r = mcp(&["--json", "tools", "call", "no_such_tool"]);
    assert_eq!(r.code, 1);
    let doc = json_doc(&r);
    assert_eq!(doc["error"]["code"], -32602);
}

#[test]
fn missing_command_names_the_command() {
    let r = run(&["tools", "list", "--", "definitely-not-an-installed-command-xyz"], "");
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty(), "stdout: {}", r.stdout);
    assert_eq!(r.stderr.trim_end(), "mcp: command not found: definitely-not-an-installed-command-xyz");
}

#[test]
fn connection_refused_names_the_url() {
    // A loopback port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let r = run(&["--timeout", "5", "tools", "list", &url], "");
    assert_eq!(r.code, 1);
    assert!(r.stderr.starts_with(&format!("mcp: cannot connect to {url}: connection refused")), "{}", r.stderr);
}

#[test]
fn tool_errors_go_to_stderr_with_exit_code_1() {
    let r = mcp(&["tools", "call", "test_error_handling"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty(), "stdout: {}", r.stdout);
    assert!(r.stderr.contains("failed"), "{}", r.stderr);
    // Invalid arguments show the tool's schema.
    let r = mcp(&["tools", "call", "echo"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("arguments of `echo`"), "{}", r.stderr);
    assert!(r.stderr.contains("text  string, required"), "{}", r.stderr);
}

#[test]
fn elicitation_is_declined_without_a_terminal_and_answered_with_interactive() {
    let r = mcp(&["tools", "call", "greet_user"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "No greeting: the user chose to decline.\n");
    assert!(r.stderr.contains("declined a form elicitation"), "{}", r.stderr);
    let r = mcp_with_input(&["--interactive", "tools", "call", "greet_user"], "Ada\n\n");
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "Hello, Ada!\n");
    assert!(r.stderr.contains("What is your name?"), "{}", r.stderr);
}

#[test]
fn usage_errors_exit_2() {
    let r = run(&["tools", "call", "echo"], "");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no server given"), "{}", r.stderr);
    let r = mcp(&["tools", "call"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("missing NAME"), "{}", r.stderr);
}

/// Issue 42, items 17 and 18: `mcp serve everything --stdio`'s log messages reach the CLI in
/// both eras, and `--log-level` reaches a legacy server (as `logging/setLevel`): at `error`
/// the tool's `info` messages are not sent.
#[test]
fn log_messages_reach_the_cli_in_both_eras_at_its_level() {
    let call = ["tools", "call", "count_with_progress", r#"{"steps":2,"delay_ms":5}"#];
    for era in [&[][..], &["--force-legacy", "2025-11-25"][..]] {
        for (level, shown) in [("info", true), ("error", false)] {
            let args: Vec<&str> = era.iter().chain(&["--log-level", level]).chain(&call).copied().collect();
            let r = mcp(&args);
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
            assert!(r.stdout.contains("counted to 2"), "{args:?}: {}", r.stdout);
            for step in ["reached 1", "reached 2"] {
                assert_eq!(r.stderr.contains(step), shown, "{args:?}: {}", r.stderr);
            }
            assert!(!r.stderr.contains("dropping"), "{args:?}: {}", r.stderr);
        }
    }
}
