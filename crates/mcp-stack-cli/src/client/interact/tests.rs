use super::*;

fn term<'a>(answers: &'a str, out: &'a mut Vec<u8>) -> Term<'a> {
    let input: &'a mut &'a [u8] = Box::leak(Box::new(answers.as_bytes()));
    Term { input, out, echo: true }
}

fn run_form(params: Value, answers: &str) -> Value {
    let mut out = Vec::new();
    form_elicitation(&params, "srv", &mut term(answers, &mut out)).unwrap()
}

#[test]
fn form_types_defaults_and_required() {
    let params = json!({"message": "Tell me", "requestedSchema": {"type": "object", "properties": {
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "color": {"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#0f0", "title": "Green"}], "default": "#0f0"},
        "name": {"type": "string"},
        "ok": {"type": "boolean", "default": false},
        "size": {"type": "string", "enum": ["S", "M", "L"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1}
    }, "required": ["name", "age"]}});
    // age: "x" rejected, "200" rejected, then 30; color: empty takes default; name: empty is
    // refused (required), then Ann; ok: y; size: 3; tags: 1,3; then accept (empty).
    let r = run_form(params, "x\n200\n30\n\n\nAnn\ny\n3\n1, 3\n\n");
    assert_eq!(
        r,
        json!({"action": "accept", "content": {"age": 30, "color": "#0f0", "name": "Ann", "ok": true, "size": "L", "tags": ["a", "c"]}})
    );
}

#[test]
fn form_fields_are_asked_in_the_server_s_order() {
    // As the client crate reads it: the written order next to the (sorted) properties.
    let params = json!({"message": "Who?", "requestedSchema": {"type": "object", "properties": {
        "age": {"type": "integer"}, "email": {"type": "string"}, "name": {"type": "string"}
    }, "required": ["name"], mcp_client::elicit::PROPERTY_ORDER: ["name", "email", "age"]}});
    let mut out = Vec::new();
    let r = form_elicitation(&params, "srv", &mut term("Ada\nada@example.com\n36\n\n", &mut out)).unwrap();
    assert_eq!(r, json!({"action": "accept", "content": {"name": "Ada", "email": "ada@example.com", "age": 36}}));
    let out = String::from_utf8(out).unwrap();
    let at = |f: &str| out.find(&format!("{f}\u{1b}")).or_else(|| out.find(&format!("{f} ("))).unwrap();
    assert!(at("name") < at("email") && at("email") < at("age"), "{out}");
    assert!(out.contains(r#"{"name":"Ada","email":"ada@example.com","age":36}"#), "{out}");
}

#[test]
fn form_decline_cancel_and_eof() {
    let params = json!({"message": "Name?", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string"}}, "required": ["name"]}});
    assert_eq!(run_form(params.clone(), ":decline\n")["action"], "decline");
    assert_eq!(run_form(params.clone(), "Bob\nc\n")["action"], "cancel");
    assert_eq!(run_form(params.clone(), "")["action"], "cancel");
    let r = run_form(params, "Bob\ne\nAnn\na\n");
    assert_eq!(r, json!({"action": "accept", "content": {"name": "Ann"}}));
}

#[test]
fn url_mode_needs_consent() {
    let params = json!({"mode": "url", "message": "Sign in", "url": "https://xn--80ak6aa92e.com/path?x=1"});
    let mut out = Vec::new();
    let r = url_elicitation(&params, "srv", false, &mut term("\n", &mut out)).unwrap();
    assert_eq!(r["action"], "decline");
    let text = String::from_utf8_lossy(&out).to_string();
    assert!(text.contains("https://xn--80ak6aa92e.com/path?x=1"), "{text}");
    assert!(text.contains("Punycode"), "{text}");
    // "o" is not offered without a terminal: asked again, then "y" (user opens it) and Enter.
    let mut out = Vec::new();
    let r = url_elicitation(&params, "srv", false, &mut term("o\ny\n\n", &mut out)).unwrap();
    assert_eq!(r, json!({"action": "accept"}));
    let mut out = Vec::new();
    let r = url_elicitation(&params, "srv", false, &mut term("y\nc\n", &mut out)).unwrap();
    assert_eq!(r["action"], "cancel");
    let js = json!({"mode": "url", "message": "x", "url": "javascript:alert(1)"});
    let r = url_elicitation(&js, "srv", true, &mut term("y\n\n", &mut Vec::new())).unwrap();
    assert_eq!(r["action"], "decline");
}

#[test]
fn sampling_reads_until_empty_line() {
    let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 10});
    let mut out = Vec::new();
    let r = sampling_prompt(&params, "srv", &mut term("four\nfor sure\n\nignored\n", &mut out)).unwrap();
    assert_eq!(r.as_deref(), Some("four\nfor sure"));
    assert!(String::from_utf8_lossy(&out).contains("2+2?"));
    let r = sampling_prompt(&params, "srv", &mut term("\n", &mut Vec::new())).unwrap();
    assert_eq!(r, None);
}
