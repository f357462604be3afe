//! An MCP server on Streamable HTTP (127.0.0.1:3000/mcp) with application state, a resource, a
//! prompt, a tool reporting progress, and a tool that asks the user through MRTR elicitation.
//!
//! Run: `cargo run -p mcp-stack --features http --example http_server [ADDR]` (default
//! `127.0.0.1:3000`), then `mcp tools call http://127.0.0.1:3000/mcp delete_note --interactive`.

use mcp::prelude::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The application's state: one note, shared by every request.
type Note = Arc<Mutex<String>>;

/// The current note.
#[resource("note://current", mime_type = "text/plain")]
async fn current_note(State(note): State<Note>) -> String {
    note.lock().expect("note lock").clone()
}

/// Summarize the note.
#[prompt]
async fn summarize(State(note): State<Note>) -> String {
    format!("Summarize: {}", note.lock().expect("note lock"))
}

/// Replaces the note, reporting progress while it "saves".
#[tool]
async fn write_note(ctx: Context, State(note): State<Note>, text: String) -> &'static str {
    for step in 1..=3 {
        ctx.progress(f64::from(step), Some(3.0), Some("saving"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    *note.lock().expect("note lock") = text;
    ctx.server().notify_resource_updated("note://current");
    "saved"
}

/// The confirmation form of `delete_note`.
#[schema]
struct Confirm {
    /// Delete it?
    yes: bool,
}

/// Deletes the note after asking the user.
#[tool(destructive)]
async fn delete_note(ctx: Context, State(note): State<Note>) -> Result<&'static str, HandlerError> {
    // The handler runs again from the top once the user answers: no side effects before this.
    let answer = ctx.elicit::<Confirm>("Really delete the note?")?;
    if let Elicitation::Accept(Confirm { yes: true }) = answer {
        note.lock().expect("note lock").clear();
        return Ok("deleted");
    }
    Ok("kept")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("notes", "1.0.0")
        .instructions("Keeps a single note.")
        .state(Note::new(Mutex::new("Buy milk".into())))
        .resource(current_note::resource())
        .prompt(summarize::prompt())
        .tools([write_note::tool(), delete_note::tool()])
        .build()?;
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:3000".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("serving on http://{}/mcp", listener.local_addr()?);
    // Ctrl-C or SIGTERM: new connections are refused, requests in flight finish (10 s at most).
    let serving = mcp::http::serve(server, listener, mcp::http::EndpointConfig::default());
    Ok(serving.with_graceful_shutdown(mcp::http::shutdown_signal()).await?)
}
