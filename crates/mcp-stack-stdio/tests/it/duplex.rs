//! The stdio transport over an in-memory duplex pipe: no child process.

use mcp::prelude::*;
use mcp::stdio::{serve, StdioConfig};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Echoes the text, after reporting progress once.
#[tool]
async fn echo(ctx: Context, text: String) -> String {
    ctx.progress(1.0, Some(1.0), None);
    text
}

/// Adds tool `late` at run time.
#[tool]
async fn grow(ctx: Context) -> Result<&'static str, HandlerError> {
    /// Added at run time.
    #[tool]
    async fn late() -> &'static str {
        "late"
    }
    ctx.server().add_tool(late::tool())?;
    Ok("grown")
}

struct Peer {
    to_server: tokio::io::DuplexStream,
    from_server: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

fn start(config: StdioConfig) -> Peer {
    let server = Server::builder("duplex", "1").tools([echo::tool(), grow::tool()]).build().unwrap();
    let (client_in, server_out) = tokio::io::duplex(1 << 16);
    let (server_in, client_out) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(serve(server, server_in, server_out, config));
    Peer { to_server: client_out, from_server: BufReader::new(client_in).lines(), served }
}

impl Peer {
    async fn send(&mut self, line: &str) {
        self.to_server.write_all(line.as_bytes()).await.unwrap();
        self.to_server.write_all(b"\n").await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), self.from_server.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    }
}

fn modern(id: i64, method: &str, mut params: Value) -> String {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}, "progressToken": id});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[tokio::test]
async fn modern_requests_get_notifications_then_their_response() {
    let mut p = start(StdioConfig::default());
    p.send(&modern(1, "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}))).await;
    let progress = p.recv().await;
    assert_eq!(
        (progress["method"].as_str(), progress["params"]["progressToken"].as_i64()),
        (Some("notifications/progress"), Some(1))
    );
    let r = p.recv().await;
    assert_eq!((r["id"].as_i64(), r["result"]["content"][0]["text"].as_str()), (Some(1), Some("hi")));
}

#[tokio::test]
async fn bad_lines_get_errors_and_the_transport_keeps_serving() {
    let mut p = start(StdioConfig { max_line_bytes: 256, ..StdioConfig::default() });
    p.send("{not json").await;
    assert_eq!(p.recv().await["error"]["code"], -32700);
    p.send(&"x".repeat(1000)).await;
    assert_eq!(p.recv().await["error"]["code"], -32600, "an over-long line is refused");
    p.send(r#"{"jsonrpc": "2.0", "id": 7, "method": "nope", "params": {}}"#).await;
    assert_eq!(p.recv().await["error"]["code"], -32601);
    p.send(&modern(8, "tools/call", json!({"name": "echo", "arguments": {"text": "still"}}))).await;
    let _progress = p.recv().await;
    assert_eq!(p.recv().await["result"]["content"][0]["text"], "still");
}

#[tokio::test]
async fn a_legacy_session_gets_list_changes_unsolicited() {
    let mut p = start(StdioConfig::default());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}});
    p.send(&init.to_string()).await;
    assert_eq!(p.recv().await["result"]["protocolVersion"], "2025-11-25");
    p.send(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#).await;
    p.send(r#"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "grow", "arguments": {}}}"#).await;
    let (mut changed, mut answered) = (false, false);
    for _ in 0..2 {
        let m = p.recv().await;
        changed |= m["method"] == "notifications/tools/list_changed";
        answered |= m["id"] == 2 && m["result"]["content"][0]["text"] == "grown";
    }
    assert!(changed && answered);
}

#[tokio::test]
async fn end_of_input_ends_the_transport_cleanly() {
    let Peer { to_server, served, .. } = start(StdioConfig::default());
    drop(to_server);
    let done = tokio::time::timeout(std::time::Duration::from_secs(10), served).await.expect("ends").unwrap();
    assert!(done.is_ok());
}

/// Reports progress `n` times, then says it is done (on `State`).
#[tool]
async fn flood(ctx: Context, State(done): State<std::sync::Arc<tokio::sync::Notify>>, n: u64) -> &'static str {
    for i in 0..n {
        ctx.progress(i as f64, None, None);
        if i % 1000 == 0 {
            tokio::task::yield_now().await;
        }
    }
    done.notify_one();
    "flooded"
}

#[tokio::test]
async fn a_handler_notifying_to_a_client_that_does_not_read_loses_notifications_not_memory() {
    let done = std::sync::Arc::new(tokio::sync::Notify::new());
    let server = Server::builder("duplex", "1").state(done.clone()).tool(flood::tool()).build().unwrap();
    let (client_in, server_out) = tokio::io::duplex(1 << 16);
    let (server_in, mut to_server) = tokio::io::duplex(1 << 16);
    let config = StdioConfig { max_output_bytes: 64 << 10, ..StdioConfig::default() };
    let _served = tokio::spawn(serve(server, server_in, server_out, config));
    let finished = done.notified();
    let line = modern(1, "tools/call", json!({"name": "flood", "arguments": {"n": 200_000}}));
    to_server.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    // Nothing is read until the handler is done.
    tokio::time::timeout(std::time::Duration::from_secs(60), finished).await.expect("the handler ends");
    let mut lines = BufReader::new(client_in).lines();
    let mut notes = 0;
    let response = loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("a line");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v.get("id").is_some() {
            break v;
        }
        notes += 1;
    };
    // What waited for the client is bounded by the output limit (and the pipe), not by what
    // the handler sent; the response itself is never dropped.
    assert!(notes < 5_000, "{notes} notifications were held for the client");
    assert_eq!(response["result"]["content"][0]["text"], "flooded");
}

#[tokio::test]
async fn the_client_library_talks_to_the_server_over_a_duplex_pipe() {
    use mcp::client::transport::stdio::StdioTransport;
    let server = Server::builder("duplex", "1").tools([echo::tool(), grow::tool()]).build().unwrap();
    let (client_in, server_out) = tokio::io::duplex(1 << 16);
    let (server_in, client_out) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(serve(server, server_in, server_out, StdioConfig::default()));
    let t = StdioTransport::from_io(client_in, client_out);
    let client = mcp::client::ClientBuilder::new("t", "1").connect(t).await.unwrap();
    assert!(client.is_modern());
    let discover = client.discover().await.unwrap();
    assert_eq!(discover.meta.as_ref().and_then(|m| m.server_info.as_ref()).map(|i| i.name.as_str()), Some("duplex"));
    let mut names: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|t| t.into_inner().name).collect();
    names.sort();
    assert_eq!(names, ["echo", "grow"]);
    let steps = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = steps.clone();
    let r = client
        .call_tool("echo", json!({"text": "over io"}))
        .on_progress(move |_| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
        .await
        .unwrap();
    assert_eq!((r.text(), steps.load(std::sync::atomic::Ordering::SeqCst)), ("over io".to_owned(), 1));
    // Closing the client ends the server's input: the server stops.
    client.close().await;
    tokio::time::timeout(std::time::Duration::from_secs(10), served).await.unwrap().unwrap().unwrap();
}

/// Reports progress, then works 200 ms more.
#[tool]
async fn nap(ctx: Context) -> &'static str {
    ctx.progress(1.0, None, None);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    "rested"
}

#[tokio::test]
async fn shutdown_ends_the_input_and_lets_calls_in_flight_finish() {
    // What `mcp serve --stdio` does on SIGTERM: `Server::shutdown`, with stdin still open.
    let server = Server::builder("duplex", "1").tool(nap::tool()).build().unwrap();
    let (client_in, server_out) = tokio::io::duplex(1 << 16);
    let (server_in, client_out) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(serve(server.clone(), server_in, server_out, StdioConfig::default()));
    let mut peer = Peer { to_server: client_out, from_server: BufReader::new(client_in).lines(), served };
    peer.send(&modern(1, "tools/call", json!({"name": "nap", "arguments": {}}))).await;
    assert_eq!(peer.recv().await["method"], "notifications/progress", "the call is in flight");
    server.shutdown();
    let answer = peer.recv().await;
    assert_eq!(answer["result"]["content"][0]["text"], "rested", "{answer}");
    let done = tokio::time::timeout(std::time::Duration::from_secs(10), peer.served).await.expect("ends").unwrap();
    assert!(done.is_ok());
    drop(peer.to_server);
}
