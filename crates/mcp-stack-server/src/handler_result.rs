//! What handlers may return: [`IntoToolResult`], [`IntoPromptResult`], [`IntoReadResult`].
//!
//! A tool handler returns a `String`, a content block, a [`CallToolResult`], [`Json<T>`]
//! (structured content, with the tool's `outputSchema` derived from `T`), `()` or a
//! `Result<T, E>` of any of those where `E: Display`: an `Err` becomes an `isError` result the
//! model can read (a [`HandlerError`] keeps its meaning: a protocol error stays a JSON-RPC error,
//! an input request becomes an `input_required` result).

use crate::error::HandlerError;
use crate::handler::schema_of;
use mcp_protocol::types::{
    AudioContent, BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource, GetPromptResult, ImageContent,
    PromptMessage, ReadResourceResult, ResourceContents, ResourceLink, Role, TextContent, TextResourceContents,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt::Display;

/// Structured content: `T` is sent as `structuredContent` (and as JSON text for clients that do
/// not read structured content), and a tool returning it advertises `T`'s JSON Schema as its
/// `outputSchema`. `T` must serialize to a JSON object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// Binary resource contents, sent base64-encoded as `blob`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

/// Turns a handler's return value into a `tools/call` result.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool result",
    label = "return a String, Json<T>, content blocks, CallToolResult, or a Result of one of them",
    note = "an `Err` whose type is `Display` becomes an `isError` result"
)]
pub trait IntoToolResult {
    /// The result, or the error it stands for.
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError>;

    /// The `outputSchema` this kind of result implies (`Some` only for structured results).
    fn output_schema() -> Option<Value> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::new(Vec::new()))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::new(self))
    }
}

macro_rules! content_results {
    ($($ty:ty),*) => {$(
        impl IntoToolResult for $ty {
            fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
                Ok(CallToolResult::new(vec![self.into()]))
            }
        }
    )*};
}
content_results!(ContentBlock, TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource);

/// A result that does not fit its shape.
#[cold]
fn invalid_result(message: String) -> HandlerError {
    mcp_protocol::ProtocolError::InvalidResult { message }.into()
}

/// The JSON object `value` serializes to, or the internal error it is not one.
fn to_object<T: Serialize>(value: &T) -> Result<Map<String, Value>, HandlerError> {
    match serde_json::to_value(value) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(invalid_result("structured content must be a JSON object".into())),
        Err(e) => Err(invalid_result(format!("structured content: {e}"))),
    }
}

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::structured(Value::Object(to_object(&self.0)?)))
    }

    fn output_schema() -> Option<Value> {
        Some(schema_of::<T>())
    }
}

impl<T: IntoToolResult, E: Display + 'static> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        self.map_err(HandlerError::from_display)?.into_tool_result()
    }

    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
}

/// Turns a handler's return value into a `prompts/get` result.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt result",
    label = "return a String, PromptMessage(s), GetPromptResult, or a Result of one of them"
)]
pub trait IntoPromptResult {
    /// The result, or the error it stands for.
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        Ok(self)
    }
}

/// One user message with this text.
impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        PromptMessage::new(Role::User, ContentBlock::text(self)).into_prompt_result()
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        self.to_owned().into_prompt_result()
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        vec![self].into_prompt_result()
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        Ok(GetPromptResult { messages: self, ..GetPromptResult::default() })
    }
}

impl<T: IntoPromptResult, E: Display + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        self.map_err(HandlerError::from_display)?.into_prompt_result()
    }
}

/// What a resource is being read as: its URI and the MIME type its definition declares.
#[derive(Debug, Clone, Copy)]
pub struct ReadTarget<'a> {
    /// The URI the client asked for.
    pub uri: &'a str,
    /// The definition's `mimeType`, used for returned text and bytes.
    pub mime_type: Option<&'a str>,
}

/// Turns a handler's return value into a `resources/read` result. Without explicit caching
/// hints, the server's `read_cache` defaults are added.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource result",
    label = "return a String, Blob, Json<T>, ResourceContents, ReadResourceResult, or a Result of one of them"
)]
pub trait IntoReadResult {
    /// The result, or the error it stands for.
    fn into_read_result(self, target: ReadTarget<'_>) -> Result<ReadResourceResult, HandlerError>;
}

pub(crate) fn contents_result(contents: Vec<ResourceContents>) -> ReadResourceResult {
    ReadResourceResult {
        meta: None,
        result_type: Default::default(),
        contents,
        ttl_ms: None,
        cache_scope: None,
        extra: Default::default(),
    }
}

impl IntoReadResult for ReadResourceResult {
    fn into_read_result(self, _: ReadTarget<'_>) -> Result<ReadResourceResult, HandlerError> {
        Ok(self)
    }
}

impl IntoReadResult for Vec<ResourceContents> {
    fn into_read_result(self, _: ReadTarget<'_>) -> Result<ReadResourceResult, HandlerError> {
        Ok(contents_result(self))
    }
}

impl IntoReadResult for ResourceContents {
    fn into_read_result(self, _: ReadTarget<'_>) -> Result<ReadResourceResult, HandlerError> {
        Ok(contents_result(vec![self]))
    }
}

/// Text contents with the definition's MIME type.
impl IntoReadResult for String {
    fn into_read_result(self, t: ReadTarget<'_>) -> Result<ReadResourceResult, HandlerError> {
        let text = TextResourceContents {
            mime_type: t.mime_type.map(str::to_owned),
            ..TextResourceContents::new(t.uri, self)
        };
        Ok(contents_result(vec![text.into()]))
    }
}

impl IntoReadResult for &'static str {
    fn into_read_result(self, t: ReadTarget<'_>) -> Result<ReadResourceResult, HandlerError> {
        self.to_owned().into_read_result(t)
    }
}

/// Binary contents with the definition's MIME type.
impl IntoReadResult for Blob {
    fn into_read_result(self, t: ReadTarget<'_>) -> Result<ReadResourceResult, HandlerError> {
        use base64::Engine as _;
        let data = base64::engine::general_purpose::STANDARD.encode(self.0);
        let blob = BlobResourceContents {
            mime_type: t.mime_type.map(str::to_owned),
            ..BlobResourceContents::new(t.uri, data)
        };
        Ok(contents_result(vec![blob.into()]))
    }
}

/// JSON text (`application/json` unless the definition says otherwise).
impl<T: Serialize> IntoReadResult for Json<T> {
    fn into_read_result(self, t: ReadTarget<'_>) -> Result<ReadResourceResult, HandlerError> {
        let text = serde_json::to_string(&self.0).map_err(|e| invalid_result(format!("resource contents: {e}")))?;
        let mime_type = Some(t.mime_type.unwrap_or("application/json").to_owned());
        Ok(contents_result(vec![TextResourceContents { mime_type, ..TextResourceContents::new(t.uri, text) }.into()]))
    }
}

impl<T: IntoReadResult, E: Display + 'static> IntoReadResult for Result<T, E> {
    fn into_read_result(self, t: ReadTarget<'_>) -> Result<ReadResourceResult, HandlerError> {
        self.map_err(HandlerError::from_display)?.into_read_result(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, JsonSchema)]
    struct Sum {
        sum: i64,
    }

    #[test]
    fn tool_results_from_plain_values() {
        let r = "hi".into_tool_result().unwrap();
        assert_eq!(r.content[0].as_text(), Some("hi"));
        let r = Json(Sum { sum: 3 }).into_tool_result().unwrap();
        assert_eq!(r.structured_content, Some(serde_json::json!({"sum": 3})));
        assert_eq!(r.content[0].as_text(), Some(r#"{"sum":3}"#));
        assert!(<Result<Json<Sum>, String>>::output_schema().unwrap()["properties"]["sum"].is_object());
        assert!(<String as IntoToolResult>::output_schema().is_none());
    }

    #[test]
    fn errors_become_tool_errors_and_framework_errors_keep_their_meaning() {
        let e = Err::<String, _>("disk full").into_tool_result().unwrap_err();
        assert!(matches!(e, HandlerError::Tool { message, .. } if message == "disk full"));
        let e = Err::<String, _>(HandlerError::invalid_params("no")).into_tool_result().unwrap_err();
        assert!(matches!(e, HandlerError::Protocol(_)));
        let e = Json(3).into_tool_result().unwrap_err();
        assert!(matches!(e, HandlerError::Protocol(_)), "structured content must be an object");
    }

    #[test]
    fn read_results_use_the_definition_mime_type() {
        let t = ReadTarget { uri: "a://b", mime_type: Some("text/markdown") };
        let r = String::from("# hi").into_read_result(t).unwrap();
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["contents"][0], serde_json::json!({"uri": "a://b", "mimeType": "text/markdown", "text": "# hi"}));
        assert!(v.get("ttlMs").is_none(), "server defaults are added later");
        let v = serde_json::to_value(Blob(vec![1, 2]).into_read_result(t).unwrap()).unwrap();
        assert_eq!(v["contents"][0]["blob"], "AQI=");
    }
}
