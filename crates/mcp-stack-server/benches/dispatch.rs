//! In-process cost of serving a request the way a transport does (dispatch, then the response
//! bytes), on one core (a current-thread runtime): `tools/call` of a 64-byte echo, and
//! `tools/list` of 50 tools. `cargo bench -p mcp-stack-server --bench dispatch`.

use criterion::{criterion_main, Criterion};
use mcp_protocol::meta::{CLIENT_CAPABILITIES, PROTOCOL_VERSION};
use mcp_protocol::Request;
use mcp_server::{Args, RequestEnv, Server, Tool};
use serde_json::{json, Value};
use std::hint::black_box;
use tokio_util::sync::CancellationToken;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text.
    text: String,
}

fn request(method: &str, params: Value) -> Request {
    let mut params = params.as_object().cloned().unwrap_or_default();
    params.insert("_meta".into(), json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {} }));
    Request { id: json!(1), method: method.into(), params }
}

fn server() -> Server {
    let tools = (0..50).map(|i| {
        Tool::new(format!("echo{i}"))
            .description("Echoes the text back, unchanged, as one text block.")
            .handler(|Args(a): Args<Echo>| async move { a.text })
    });
    Server::builder("bench", "1").tools(tools).build().unwrap()
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let s = server();
    let id = json!(1);
    let env = || RequestEnv::new(CancellationToken::new());
    let call = json!({"name": "echo7", "arguments": {"text": "x".repeat(64)}});
    let mut g = c.benchmark_group("dispatch");
    g.bench_function("tools/call echo 64 B", |b| {
        b.iter(|| {
            rt.block_on(async {
                let r = s.handle_reply(request("tools/call", call.clone()), env()).await;
                black_box(s.encode_response(&id, &r))
            })
        })
    });
    g.bench_function("tools/list 50 tools", |b| {
        b.iter(|| {
            rt.block_on(async {
                let r = s.handle_reply(request("tools/list", json!({})), env()).await;
                black_box(s.encode_response(&id, &r))
            })
        })
    });
    g.finish();
}

#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::dispatch);
}
use group::benches;
criterion_main!(benches);
