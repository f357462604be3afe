//! Resources, resource templates, prompts and completions of the `everything` server.

use super::fixtures::{accepted_field, PNG};
use mcp::prelude::*;
use mcp::server::ServerBuilder;
use mcp::types::BlobResourceContents;

/// Resource results of the fixtures may be cached by the client for five minutes.
fn cached(contents: ResourceContents) -> ReadResourceResult {
    ReadResourceResult::new(vec![contents], 300_000, CacheScope::Private)
}

fn text_contents(uri: &str, mime: &str, text: impl Into<String>) -> ReadResourceResult {
    cached(TextResourceContents { mime_type: Some(mime.into()), ..TextResourceContents::new(uri, text) }.into())
}

/// A static text resource for testing
#[resource("test://static-text", name = "static-text", title = "Static Text Resource", mime_type = "text/plain")]
async fn static_text() -> ReadResourceResult {
    text_contents("test://static-text", "text/plain", "This is the content of the static text resource.")
}

/// A static binary resource (image) for testing
#[resource("test://static-binary", name = "static-binary", title = "Static Binary Resource", mime_type = "image/png")]
async fn static_binary() -> ReadResourceResult {
    let blob = BlobResourceContents {
        mime_type: Some("image/png".into()),
        ..BlobResourceContents::new("test://static-binary", PNG)
    };
    cached(blob.into())
}

/// A resource that changes (see the touch_watched_resource tool)
#[resource("test://watched-resource", name = "watched-resource", title = "Watched Resource", mime_type = "text/plain")]
async fn watched_resource() -> ReadResourceResult {
    text_contents("test://watched-resource", "text/plain", "Watched resource content.")
}

/// A resource template with parameter substitution
#[resource("test://template/{id}/data", name = "template", title = "Resource Template", mime_type = "application/json")]
async fn template(id: String, ctx: Context) -> ReadResourceResult {
    let body = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
    let uri = ctx.params().get("uri").and_then(Value::as_str).unwrap_or_default();
    text_contents(uri, "application/json", body.to_string())
}

/// Announces notifications/resources/updated for test://watched-resource.
#[tool]
async fn touch_watched_resource(ctx: Context) -> &'static str {
    ctx.server().notify_resource_updated("test://watched-resource");
    "resource updated"
}

/// Adds resources, templates, prompts and the completion handler.
pub(super) fn register(b: ServerBuilder) -> ServerBuilder {
    b.resources([
        static_text::resource(),
        static_binary::resource(),
        watched_resource::resource(),
        template::resource(),
    ])
    .tool(touch_watched_resource::tool())
    .prompts([
        test_simple_prompt::prompt(),
        test_prompt_with_arguments::prompt(),
        test_prompt_with_embedded_resource::prompt(),
        test_prompt_with_image::prompt(),
        test_input_required_result_prompt::prompt(),
    ])
    .completion(|_ctx: Context, _reference: Value, argument: Value, _context| async move {
        let prefix = argument.get("value").and_then(Value::as_str).unwrap_or_default().to_owned();
        let candidates = ["paris", "park", "party", "test", "testing", "testValue1"];
        let values: Vec<&str> = candidates.iter().copied().filter(|c| c.starts_with(&prefix)).collect();
        Ok(json!({ "values": values, "total": values.len(), "hasMore": false }))
    })
}

fn user(content: impl Into<ContentBlock>) -> PromptMessage {
    PromptMessage::new(Role::User, content)
}

/// A simple prompt without arguments
#[prompt]
async fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with two required arguments
#[prompt]
async fn test_prompt_with_arguments(
    #[arg(description = "First test argument")] arg1: String,
    #[arg(description = "Second test argument")] arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt that embeds a resource
#[prompt]
async fn test_prompt_with_embedded_resource(
    #[arg(rename = "resourceUri", description = "URI of the resource to embed")] resource_uri: String,
) -> Vec<PromptMessage> {
    let contents = TextResourceContents {
        mime_type: Some("text/plain".into()),
        ..TextResourceContents::new(resource_uri, "Embedded resource content for testing.")
    };
    vec![user(EmbeddedResource::new(contents)), user(ContentBlock::text("Please process the embedded resource above."))]
}

/// A prompt that includes an image
#[prompt]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![user(ContentBlock::image(PNG, "image/png")), user(ContentBlock::text("Please analyze the image above."))]
}

/// A prompt that first asks the user for context (MRTR)
#[prompt]
async fn test_input_required_result_prompt(ctx: Context) -> Result<String, HandlerError> {
    let mut inputs = ctx.inputs();
    let answer = inputs.elicit(
        "user_context",
        "What context should the prompt use?",
        json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}),
    )?;
    inputs.finish()?;
    let context = accepted_field(&answer.unwrap_or_default(), "context")?.unwrap_or_else(|| "none".into());
    Ok(format!("Prompt with context: {context}"))
}
