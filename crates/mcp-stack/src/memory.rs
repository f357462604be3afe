//! A client connected to a server in the same process: no sockets, no child process. For
//! tests of servers (and of clients) that want the whole protocol without a transport.
//!
//! Nothing is skipped: the client's stdio transport and the server's stdio driver
//! ([`mcp_stdio::serve`], with its session core and limits) talk newline-delimited JSON over a
//! pair of in-memory pipes ([`tokio::io::duplex`]), exactly as over a child's stdin and stdout.
//!
//! ```
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp::prelude::*;
//!
//! /// Echoes the text.
//! #[tool]
//! async fn echo(text: String) -> String { text }
//!
//! let server = Server::builder("t", "1").tool(echo::tool()).build()?;
//! let client = mcp::memory::connect(server, mcp::client::ClientBuilder::new("test", "1")).await?;
//! assert_eq!(client.call_tool("echo", json!({"text": "hi"})).await?.text(), "hi");
//! # Ok(()) }
//! ```

use mcp_client::transport::stdio::StdioTransport;
use mcp_client::{Client, ClientBuilder, ClientError};
use mcp_server::Server;
use mcp_stdio::StdioConfig;

/// Bytes each in-memory pipe buffers before its writer waits for the reader.
const PIPE_BYTES: usize = 64 << 10;

/// Connects a client built by `builder` to `server`, in memory.
pub async fn connect(server: Server, builder: ClientBuilder) -> Result<Client, ClientError> {
    builder.connect(transport(server)).await
}

/// A client transport to `server` in this process: the server is served (on a task of the
/// current runtime, with [`StdioConfig::default`]) on the other ends of the pipes, until the
/// transport is closed or dropped.
pub fn transport(server: Server) -> StdioTransport {
    transport_with(server, StdioConfig::default())
}

/// [`transport`] with the server's stdio limits given.
pub fn transport_with(server: Server, config: StdioConfig) -> StdioTransport {
    let (client_end, server_end) = tokio::io::duplex(PIPE_BYTES);
    let (server_in, server_out) = tokio::io::split(server_end);
    let (client_in, client_out) = tokio::io::split(client_end);
    tokio::spawn(async move {
        if let Err(e) = mcp_stdio::serve(server, server_in, server_out, config).await {
            tracing::debug!(error = %e, "in-memory server ended");
        }
    });
    StdioTransport::from_io(client_in, client_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_client::transport::{OutgoingRequest, Transport, EXCHANGE_CAP};
    use mcp_server::{Context, Tool};
    use serde_json::json;
    use std::sync::Arc;

    #[tokio::test]
    async fn an_unread_exchange_holds_a_bounded_number_of_notifications() {
        // 200,000 progress notifications while the caller reads nothing.
        let done = Arc::new(tokio::sync::Notify::new());
        let d = done.clone();
        let flood = Tool::new("flood").handler(move |ctx: Context| {
            let d = d.clone();
            async move {
                for i in 0..200_000u32 {
                    ctx.progress(f64::from(i), None, None);
                }
                d.notify_one();
                "flooded"
            }
        });
        let t = transport(Server::builder("m", "1").tool(flood).build().unwrap());
        let finished = done.notified();
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}, "progressToken": 1});
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "flood", "arguments": {}, "_meta": meta}});
        let mut ex = t.request(OutgoingRequest::new(req, Vec::new()).unwrap()).await.unwrap();
        // Nothing is read until the handler is done.
        tokio::time::timeout(std::time::Duration::from_secs(60), finished).await.unwrap();
        let mut notes = 0;
        let response = loop {
            let m = ex.next().await.unwrap().unwrap();
            if m.get("id").is_some() {
                break m;
            }
            notes += 1;
        };
        // The exchange holds at most EXCHANGE_CAP while unread; what the pipes and the server's
        // bounded output held besides comes on reading. Nothing near all 200,000 is kept.
        assert!(notes < 20 * EXCHANGE_CAP, "{notes} notifications were held");
        assert_eq!(response["result"]["content"][0]["text"], "flooded");
    }
}
