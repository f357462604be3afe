//! What the client makes of a server's answers never panics: JSON bodies, SSE streams cut
//! into arbitrary chunks, error bodies, stdio lines, and the era negotiation and MRTR round
//! machines fed the messages that come out.
use mcp_client::__fuzz;
use mcp_client::protocol::{Negotiation, Probed, Rounds};
use serde_json::{json, Map, Value};

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    // The first bytes choose the request id's kind, chunk cuts and the error status.
    let (head, body) = data.split_at(data.len().min(4));
    let pick = |i: usize| head.get(i).copied().unwrap_or(0);
    let id = if pick(0) & 1 == 0 { json!(1) } else { json!("req-1") };

    let mut messages = Vec::new();
    if let Ok(m) = __fuzz::http_json_body(body, &id) {
        messages.extend(m);
    }

    // The SSE body, cut at two points chosen by the input (a cut may split a UTF-8 char).
    let a = usize::from(pick(1)) % (body.len() + 1);
    let b = a + usize::from(pick(2)) % (body.len() - a + 1);
    let chunks = [&body[..a], &body[a..b], &body[b..]];
    if let Ok(m) = __fuzz::http_sse_body(&chunks, &id, 4096) {
        // Nothing is delivered after the response to our request.
        if let Some(pos) = m.iter().position(|m| m.get("id") == Some(&id) && m.get("method").is_none()) {
            let is_response = m[pos].get("result").is_some() || m[pos].get("error").is_some();
            assert!(!is_response || pos == m.len() - 1, "messages after the response");
        }
        messages.extend(m);
    }
    // The same stream in one piece.
    let _ = __fuzz::http_sse_body(&[body], &id, 1 << 20);

    let status = 400 + u16::from(pick(3)) % 200;
    let www = std::str::from_utf8(body).ok().filter(|_| pick(3) & 1 == 1);
    if let Ok(m) = __fuzz::http_error_body(status, www, body, pick(3) & 2 == 2, &id) {
        // An error answer is always given the request's id.
        assert_eq!(m.get("id"), Some(&id));
        messages.push(m);
    }

    for line in body.split(|b| *b == b'\n') {
        let _ = __fuzz::stdio_line(line);
    }

    // The core's decisions on whatever came out.
    for m in messages.iter().take(8) {
        let _ = Negotiation::new(true).handle(Probed::Response(m));
        let _ = Negotiation::new(false).handle(Probed::Response(m));
        if let Some(result) = m.get("result") {
            let _ = Rounds::new(Map::new(), 3).handle_result(result.clone());
        }
    }
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let mut rounds = Rounds::new(Map::new(), 2);
        let _ = rounds.handle_result(v);
        rounds.handle_answers(Map::new());
    }
}
