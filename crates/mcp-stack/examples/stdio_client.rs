//! A client over stdio: starts a server program, lists its tools and calls the first one with
//! `{"text": "hello"}`.
//!
//! Run: `cargo run -p mcp-stack --features client --example stdio_client -- SERVER [ARGS...]`,
//! e.g. with the `stdio_server` example built: `... target/debug/examples/stdio_server`.

use mcp::client::transport::stdio::{StdioCommand, StdioTransport};
use mcp::client::ClientBuilder;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let program = args.next().ok_or("usage: stdio_client SERVER [ARGS...]")?;
    let transport = StdioTransport::spawn(StdioCommand::new(program).args(args))?;
    let client = ClientBuilder::new("stdio-client-example", "1.0.0").connect(transport).await?;
    let tools = client.list_tools().await?;
    let first = tools.first().map(|t| t.name.clone()).ok_or("the server has no tools")?;
    let result = client.call_tool(&first, mcp::serde_json::json!({"text": "hello"})).await?;
    println!("{first}: {}", result.text());
    client.close().await;
    Ok(())
}
