//! A form's fields are asked in the order the server wrote them, not alphabetically (the JSON
//! map of this workspace is sorted by key). Unix only: the server is a python3 script.

use crate::support::bounded;
use std::process::Command;

/// A legacy stdio server whose one tool asks a form with `name`, `email`, `age` (in that
/// order, which is not the alphabetical one) and answers with the client's reply.
const SERVER: &str = r#"
import json, sys
FORM = ('{"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string"}, '
        '"age": {"type": "integer"}}, "required": ["name"]}')
def send(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
def reply(rid, result):
    send(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))
call = None
for line in sys.stdin:
    m = json.loads(line)
    method, rid = m.get("method"), m.get("id")
    if method is None and rid == "form" and call is not None:
        reply(call, {"content": [{"type": "text", "text": json.dumps(m.get("result"))}]})
    elif method == "initialize":
        reply(rid, {"protocolVersion": "2025-11-25", "serverInfo": {"name": "form", "version": "1"},
                    "capabilities": {"tools": {}}})
    elif method == "tools/list":
        reply(rid, {"tools": [{"name": "ask", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call":
        call = rid
        send('{"jsonrpc": "2.0", "id": "form", "method": "elicitation/create", "params": '
             '{"message": "Who are you?", "requestedSchema": ' + FORM + '}}')
    elif method is not None and rid is not None:
        send(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}))
"#;

#[test]
fn form_fields_are_asked_in_the_server_s_order() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp"));
    cmd.args(["--interactive", "tools", "call", "ask", "--", "python3", "-c", SERVER]).env_remove("MCP_LOG");
    // Answers in the server's order: name, email, age, then accept.
    let r = bounded::run(cmd, Some("Ada\nada@example.com\n36\n\n"));
    assert_eq!(r.code, 0, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    let answer: serde_json::Value =
        serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    assert_eq!(
        answer,
        serde_json::json!({"action": "accept", "content": {"name": "Ada", "email": "ada@example.com", "age": 36}})
    );
    let at = |f: &str| r.stderr.find(&format!("{f} (")).unwrap_or_else(|| panic!("no {f} prompt: {}", r.stderr));
    assert!(at("name") < at("email") && at("email") < at("age"), "{}", r.stderr);
}
