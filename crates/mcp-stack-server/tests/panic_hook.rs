//! The one-line panic hook: 100 panicking requests under `RUST_BACKTRACE=1` write 100 short
//! lines, are counted, get `-32603` each, and the server keeps serving. Alone in its test binary:
//! the panic hook is process-wide.

use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION};
use mcp_protocol::Request;
use mcp_server::{Args, RequestEnv, Server, Tool};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A writer the test reads back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn request(id: u64, params: Value) -> Request {
    let mut params = params.as_object().cloned().unwrap();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {} }));
    Request { id: json!(id), method: "tools/call".into(), params }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_handler_panics_write_a_hundred_lines() {
    std::env::set_var("RUST_BACKTRACE", "1");
    // Panics off the request path must still reach the hook installed before.
    let elsewhere = Arc::new(AtomicUsize::new(0));
    let seen = elsewhere.clone();
    std::panic::set_hook(Box::new(move |info| {
        seen.fetch_add(1, Ordering::SeqCst);
        eprintln!("previous hook: {info}");
    }));
    let out = Captured::default();
    mcp_server::panic::install_hook_with_writer(out.clone());
    assert!(mcp_server::panic::is_installed());

    let boom = Tool::new("boom").handler(|Args(a): Args<Map<String, Value>>| async move {
        let n = a.get("n").and_then(Value::as_u64).unwrap_or(0);
        if n < 1000 {
            panic!("boom {n}\nsecond line of the message");
        }
        "unreachable in this test"
    });
    let ok = Tool::new("ok").handler(|| async { "still serving" });
    let s = Server::builder("t", "1").tools([boom, ok]).build().unwrap();

    let calls = (0..100u64).map(|i| {
        let s = s.clone();
        tokio::spawn(async move {
            s.handle(request(i, json!({"name": "boom", "arguments": {"n": i}})), RequestEnv::default()).await
        })
    });
    let mut references = Vec::new();
    for c in calls {
        let e = c.await.unwrap().unwrap_err();
        assert_eq!(e.code(), -32603);
        // The client learns nothing of the panic but a reference to the log line.
        assert!(!e.message().contains("boom"), "{}", e.message());
        let m = e.message().to_string();
        let r = m.strip_prefix("Internal error: the handler failed (ref ").and_then(|r| r.strip_suffix(')'));
        references.push(r.unwrap_or_else(|| panic!("{m}")).to_owned());
    }
    let r = s.handle(request(1000, json!({"name": "ok"})), RequestEnv::default()).await.unwrap();
    assert_eq!(r["content"][0]["text"], "still serving");

    assert_eq!(s.panic_count(), 100);
    assert_eq!(mcp_server::panic::count(), 100);
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 100, "one line per panic, no backtrace:\n{text}");
    assert!(text.len() < 100 * 300, "{} bytes", text.len());
    let line = lines.iter().find(|l| l.contains("id=7 ")).expect("the line of request 7");
    assert!(line.starts_with("mcp: handler panicked: method=tools/call tool=\"boom\" id=7 "), "{line}");
    assert!(line.contains(r#"message="boom 7\nsecond line of the message""#), "{line}");
    assert!(line.contains(" at ") && line.contains("panic_hook.rs:"), "the location: {line}");
    for r in &references {
        assert_eq!(
            lines.iter().filter(|l| l.ends_with(&format!(" ref={r}"))).count(),
            1,
            "ref {r} in the log:\n{text}"
        );
    }

    assert_eq!(elsewhere.load(Ordering::SeqCst), 0);
    let _ = std::thread::spawn(|| panic!("not in a request")).join();
    assert_eq!(elsewhere.load(Ordering::SeqCst), 1, "other panics go to the previous hook");
    assert_eq!(mcp_server::panic::count(), 100);
    assert_eq!(out.0.lock().unwrap().len(), text.len(), "and are not written by this hook");
}
