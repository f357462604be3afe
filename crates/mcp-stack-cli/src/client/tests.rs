//! Target resolution and operand binding.

use super::*;

fn targs(pos: &[&str], cmd: &[&str]) -> TargetArgs {
    TargetArgs {
        positionals: pos.iter().map(|s| s.to_string()).collect(),
        command: cmd.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

#[test]
fn targets() {
    let o = Options::default();
    let (t, rest) = resolve_target(&o, targs(&["http://127.0.0.1:1/mcp", "echo"], &[])).unwrap();
    assert!(matches!(t, Target::Http { ref url, .. } if url == "http://127.0.0.1:1/mcp"));
    assert_eq!(rest, vec!["echo"]);
    // With a command, every positional is an operand (even one that looks like a URL).
    let (t, rest) = resolve_target(&o, targs(&["https://x/res"], &["srv", "--stdio"])).unwrap();
    assert!(matches!(t, Target::Stdio { ref program, ref args, .. } if program == "srv" && args == &["--stdio"]));
    assert_eq!(rest, vec!["https://x/res"]);
    assert_eq!(resolve_target(&o, targs(&["echo"], &[])).unwrap_err().exit, 2);
    assert_eq!(resolve_target(&o, targs(&["ws://x"], &[])).unwrap_err().exit, 2);
    // The operand before the URL: a usage error that shows the right order.
    let swapped = resolve_target(&o, targs(&["echo", "http://127.0.0.1:1/mcp", "{}"], &[])).unwrap_err();
    assert_eq!(swapped.exit, 2);
    let hint = "the server comes first: did you mean `http://127.0.0.1:1/mcp echo {}`?";
    assert!(swapped.hints.iter().any(|h| h == hint), "{:?}", swapped.hints);
    let h = Options { headers: vec!["X-A: 1".into()], ..Default::default() };
    assert!(resolve_target(&h, targs(&[], &["srv"])).is_err());
    let call = Action::ToolsCall { args: vec![], out: None, detach: false };
    assert!(bind_operands(&call, vec![]).is_err());
    assert!(bind_operands(&call, vec!["a".into(), "{}".into(), "x".into()]).is_err());
    assert!(bind_operands(&call, vec!["a".into()]).is_ok());
}

#[test]
fn finds_programs() {
    assert!(program_exists("sh", &[], None));
    assert!(!program_exists("definitely-not-a-command-xyz", &[], None));
    assert!(!program_exists("./nope/nope", &[], None));
}
