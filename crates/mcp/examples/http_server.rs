//! An MCP server on Streamable HTTP (127.0.0.1:3000/mcp) with a resource, a prompt and a tool
//! that asks the user a question through MRTR elicitation.

use mcp::prelude::*;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = Server::builder("notes", "1.0.0")
        .instructions("Keeps a single note.")
        .resource(
            json!({"uri": "note://current", "name": "current-note", "mimeType": "text/plain"}),
            |_ctx: Context, uri: String| async move {
                Ok::<_, HandlerError>(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "Buy milk"}]}))
            },
        )
        .prompt(json!({"name": "summarize", "description": "Summarize the note"}), |_ctx: Context, _args| async move {
            Ok::<_, HandlerError>(
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Summarize: Buy milk"}}]}),
            )
        })
        .tool_raw(
            json!({"name": "confirm_delete", "description": "Deletes the note after asking the user",
                   "inputSchema": {"type": "object", "properties": {}}}),
            |ctx: Context, _args| async move {
                let mut inputs = ctx.inputs();
                let answer = inputs.elicit(
                    "sure",
                    "Really delete the note?",
                    json!({"type": "object", "properties": {"yes": {"type": "boolean"}}, "required": ["yes"]}),
                )?;
                inputs.finish()?;
                let yes = answer.and_then(|a| a.pointer("/content/yes").and_then(Value::as_bool)).unwrap_or(false);
                Ok::<_, HandlerError>(CallToolResult::text(if yes { "deleted" } else { "kept" }))
            },
        )
        .build()
        .expect("valid definitions");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    mcp::http::serve(server, listener, mcp::http::HttpConfig::default()).await
}
