//! A client over Streamable HTTP: lists a server's tools and calls one.
//!
//! Run: `cargo run -p mcp-stack --features client --example http_client -- URL TOOL '{"arg": 1}'`,
//! e.g. against the `http_server` example: `... http://127.0.0.1:3000/mcp write_note '{"text": "hi"}'`.

use mcp::client::types::{ElicitAction, ElicitResult, ElicitValue};
use mcp::client::{transport::http::HttpTransport, ClientBuilder, ElicitationModes};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().ok_or("usage: http_client URL TOOL [JSON-ARGUMENTS]")?;
    let tool = args.next().ok_or("usage: http_client URL TOOL [JSON-ARGUMENTS]")?;
    let arguments: mcp::serde_json::Value = serde_json_arg(args.next())?;
    let client = ClientBuilder::new("http-client-example", "1.0.0")
        // Questions from the server (MRTR elicitation) are answered "yes" here.
        .on_elicitation(ElicitationModes::FORM, |_params| async move {
            let content = [("yes".to_owned(), ElicitValue::Boolean(true))].into();
            Ok(ElicitResult { content: Some(content), ..ElicitResult::new(ElicitAction::Accept) })
        })
        .connect(HttpTransport::new(&url)?)
        .await?;
    for t in client.list_tools().await? {
        println!("tool {}", t.name);
    }
    let result = client.call_tool(&tool, arguments).on_progress(|p| eprintln!("progress {}", p["progress"])).await?;
    println!("{}", result.text());
    client.close().await;
    Ok(())
}

fn serde_json_arg(arg: Option<String>) -> Result<mcp::serde_json::Value, mcp::serde_json::Error> {
    mcp::serde_json::from_str(arg.as_deref().unwrap_or("{}"))
}
