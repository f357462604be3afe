//! Operation layers over stdio: the same layer sees a modern request and a legacy session's
//! request, each with its era.

use mcp_server::layers::{from_fn, Era};
use mcp_test_support::*;
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

async fn answer(lines: &mut tokio::io::Lines<BufReader<tokio::io::DuplexStream>>, id: i64) -> Value {
    loop {
        let line = within("a line", lines.next_line()).await.unwrap().expect("not EOF");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == json!(id) {
            return v;
        }
    }
}

#[tokio::test]
async fn one_layer_serves_both_eras() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let config = mcp::stdio::StdioConfig::default();
    for legacy in [false, true] {
        // A fresh server each time: the end of input shuts the one being served down.
        let log = seen.clone();
        let server = mcp_everything::builder()
            .layer(from_fn(move |op, next| {
                log.lock().push((op.method().to_owned(), op.era()));
                next.run(op)
            }))
            .build()
            .unwrap();
        let (client_in, server_out) = tokio::io::duplex(1 << 16);
        let (server_in, mut to_server) = tokio::io::duplex(1 << 16);
        let served = tokio::spawn(mcp::stdio::serve(server, server_in, server_out, config.clone()));
        let mut lines = BufReader::new(client_in).lines();
        let echo = if legacy {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": LEGACY_PV, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
            to_server.write_all(format!("{init}\n").as_bytes()).await.unwrap();
            answer(&mut lines, 0).await;
            let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            to_server.write_all(format!("{done}\n").as_bytes()).await.unwrap();
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}})
        } else {
            req(1, "tools/call", call("echo", json!({"text": "x"})))
        };
        to_server.write_all(format!("{echo}\n").as_bytes()).await.unwrap();
        let r = answer(&mut lines, 1).await;
        assert_eq!(r["result"]["content"][0]["text"], "x", "{r}");
        drop(to_server);
        within("serve() to return", served).await.unwrap().unwrap();
    }
    let seen = seen.lock().clone();
    assert!(seen.contains(&("tools/call".to_owned(), Era::Modern)), "{seen:?}");
    assert!(seen.contains(&("tools/call".to_owned(), Era::Legacy)), "{seen:?}");
}
