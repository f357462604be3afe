//! Resources, resource templates, prompts and completions of the `everything` server.

use super::fixtures::{accepted_field, PNG};
use mcp::prelude::*;
use mcp::server::ServerBuilder;

fn contents(uri: &str, mime: &str, body: Value) -> Value {
    let mut c = json!({ "uri": uri, "mimeType": mime });
    if let Value::Object(b) = body {
        c.as_object_mut().expect("object").extend(b);
    }
    json!({ "contents": [c], "ttlMs": 300_000, "cacheScope": "private" })
}

/// Adds resources, templates, prompts and the completion handler.
pub fn register(b: ServerBuilder) -> ServerBuilder {
    let b = b
        .resource(
            json!({"uri": "test://static-text", "name": "static-text", "title": "Static Text Resource",
                   "description": "A static text resource for testing", "mimeType": "text/plain"}),
            |_ctx: Context, uri: String| async move {
                Ok::<_, HandlerError>(contents(&uri, "text/plain", json!({"text": "This is the content of the static text resource."})))
            },
        )
        .resource(
            json!({"uri": "test://static-binary", "name": "static-binary", "title": "Static Binary Resource",
                   "description": "A static binary resource (image) for testing", "mimeType": "image/png"}),
            |_ctx: Context, uri: String| async move { Ok::<_, HandlerError>(contents(&uri, "image/png", json!({"blob": PNG}))) },
        )
        .resource(
            json!({"uri": "test://watched-resource", "name": "watched-resource", "title": "Watched Resource",
                   "description": "A resource that changes (see the touch_watched_resource tool)", "mimeType": "text/plain"}),
            |_ctx: Context, uri: String| async move {
                Ok::<_, HandlerError>(contents(&uri, "text/plain", json!({"text": "Watched resource content."})))
            },
        )
        .resource_template(
            json!({"uriTemplate": "test://template/{id}/data", "name": "template", "title": "Resource Template",
                   "description": "A resource template with parameter substitution", "mimeType": "application/json"}),
            |_ctx: Context, uri: String, vars| async move {
                let id = vars.get("id").cloned().unwrap_or_default();
                let body = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                Ok::<_, HandlerError>(contents(&uri, "application/json", json!({"text": body.to_string()})))
            },
        )
        .tool_raw(
            json!({"name": "touch_watched_resource", "description": "Announces notifications/resources/updated for test://watched-resource.",
                   "inputSchema": {"type": "object", "properties": {}}}),
            |ctx: Context, _args| async move {
                ctx.server().notify_resource_updated("test://watched-resource");
                Ok::<_, HandlerError>(super::fixtures::text("resource updated"))
            },
        );
    prompts(b).completion(|_ctx: Context, _reference: Value, argument: Value, _context| async move {
        let prefix = argument.get("value").and_then(Value::as_str).unwrap_or_default().to_owned();
        let candidates = ["paris", "park", "party", "test", "testing", "testValue1"];
        let values: Vec<&str> = candidates.iter().copied().filter(|c| c.starts_with(&prefix)).collect();
        Ok(json!({ "values": values, "total": values.len(), "hasMore": false }))
    })
}

fn user_text(t: impl Into<String>) -> Value {
    json!({ "role": "user", "content": { "type": "text", "text": t.into() } })
}

fn prompts(b: ServerBuilder) -> ServerBuilder {
    b.prompt(
        json!({"name": "test_simple_prompt", "description": "A simple prompt without arguments"}),
        |_ctx: Context, _args| async move { Ok::<_, HandlerError>(json!({"messages": [user_text("This is a simple prompt for testing.")]})) },
    )
    .prompt(
        json!({"name": "test_prompt_with_arguments", "description": "A prompt with two required arguments",
               "arguments": [{"name": "arg1", "description": "First test argument", "required": true},
                             {"name": "arg2", "description": "Second test argument", "required": true}]}),
        |_ctx: Context, args| async move {
            let a1 = args.get("arg1").and_then(Value::as_str).unwrap_or_default();
            let a2 = args.get("arg2").and_then(Value::as_str).unwrap_or_default();
            Ok::<_, HandlerError>(json!({"messages": [user_text(format!("Prompt with arguments: arg1='{a1}', arg2='{a2}'"))]}))
        },
    )
    .prompt(
        json!({"name": "test_prompt_with_embedded_resource", "description": "A prompt that embeds a resource",
               "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed", "required": true}]}),
        |_ctx: Context, args| async move {
            let uri = args.get("resourceUri").and_then(Value::as_str).unwrap_or_default();
            Ok::<_, HandlerError>(json!({"messages": [
                {"role": "user", "content": {"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
                user_text("Please process the embedded resource above.")
            ]}))
        },
    )
    .prompt(
        json!({"name": "test_prompt_with_image", "description": "A prompt that includes an image"}),
        |_ctx: Context, _args| async move {
            Ok::<_, HandlerError>(json!({"messages": [
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
                user_text("Please analyze the image above.")
            ]}))
        },
    )
    .prompt(
        json!({"name": "test_input_required_result_prompt", "description": "A prompt that first asks the user for context (MRTR)"}),
        |ctx: Context, _args| async move {
            let mut inputs = ctx.inputs();
            let answer = inputs.elicit(
                "user_context",
                "What context should the prompt use?",
                json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}),
            )?;
            inputs.finish()?;
            let context = accepted_field(&answer.unwrap_or_default(), "context")?.unwrap_or_else(|| "none".into());
            Ok::<_, HandlerError>(json!({"messages": [user_text(format!("Prompt with context: {context}"))]}))
        },
    )
}
