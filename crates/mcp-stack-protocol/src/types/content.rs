//! Content blocks exchanged with the model: text, images, audio, resource
//! links and embedded resources.

use serde::{Deserialize, Serialize};

use super::macros::has_field;
use super::{Annotations, Icon, MetaObject};

const_str! {
    /// Marker for `"type": "text"`.
    TextType = "text"
}
const_str! {
    /// Marker for `"type": "image"`.
    ImageType = "image"
}
const_str! {
    /// Marker for `"type": "audio"`.
    AudioType = "audio"
}
const_str! {
    /// Marker for `"type": "resource_link"`.
    ResourceLinkType = "resource_link"
}
const_str! {
    /// Marker for `"type": "resource"`.
    EmbeddedResourceType = "resource"
}

/// Text provided to or from an LLM.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// Always `"text"`.
    pub r#type: TextType,
    /// The text.
    pub text: String,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl TextContent {
    /// Text content without annotations or metadata.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }
}

/// An image provided to or from an LLM.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Always `"image"`.
    pub r#type: ImageType,
    /// The base64-encoded image data.
    pub data: String,
    /// The MIME type of the image.
    pub mime_type: String,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl ImageContent {
    /// Image content from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self { data: data.into(), mime_type: mime_type.into(), ..Self::default() }
    }
}

/// Audio provided to or from an LLM.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Always `"audio"`.
    pub r#type: AudioType,
    /// The base64-encoded audio data.
    pub data: String,
    /// The MIME type of the audio.
    pub mime_type: String,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl AudioContent {
    /// Audio content from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self { data: data.into(), mime_type: mime_type.into(), ..Self::default() }
    }
}

/// A link to a resource the server can read, included in a prompt or tool
/// result. It need not appear in `resources/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// Always `"resource_link"`.
    pub r#type: ResourceLinkType,
    /// The URI of the resource.
    pub uri: String,
    /// Identifier for programmatic use; the display fallback when `title` is absent.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource represents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of the resource, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size of the raw content in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Sized icons a client can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl ResourceLink {
    /// A link with only a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self { uri: uri.into(), name: name.into(), ..Self::default() }
    }
}

/// The contents of a resource, embedded into a prompt or tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// Always `"resource"`.
    pub r#type: EmbeddedResourceType,
    /// The embedded contents (text or blob).
    pub resource: ResourceContents,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl EmbeddedResource {
    /// Embeds the given contents.
    pub fn new(resource: impl Into<ResourceContents>) -> Self {
        Self { r#type: EmbeddedResourceType, resource: resource.into(), annotations: None, meta: None }
    }
}

tagged_union! {
    /// A content block in a tool result or prompt message, tagged by `type`.
    pub enum ContentBlock by "type" {
        /// `"text"`
        Text(TextContent) = "text",
        /// `"image"`
        Image(ImageContent) = "image",
        /// `"audio"`
        Audio(AudioContent) = "audio",
        /// `"resource_link"`
        ResourceLink(ResourceLink) = "resource_link",
        /// `"resource"`
        Resource(EmbeddedResource) = "resource",
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// An image block from base64 data and a MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(ImageContent::new(data, mime_type))
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// Text contents of a resource or sub-resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The URI of the resource.
    pub uri: String,
    /// The MIME type of the resource, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text; only for content representable as text.
    pub text: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl TextResourceContents {
    /// Text contents for `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self { uri: uri.into(), text: text.into(), ..Self::default() }
    }
}

/// Binary contents of a resource or sub-resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The URI of the resource.
    pub uri: String,
    /// The MIME type of the resource, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The base64-encoded binary data.
    pub blob: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl BlobResourceContents {
    /// Binary contents for `uri` from base64 data.
    pub fn new(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        Self { uri: uri.into(), blob: blob.into(), ..Self::default() }
    }
}

union_enum! {
    /// The contents of a resource: text or binary (chosen by the presence of
    /// `blob`, otherwise `text`).
    pub enum ResourceContents {
        /// Text contents.
        Text(TextResourceContents),
        /// Binary contents.
        Blob(BlobResourceContents),
    }
    select |v| {
        if has_field(v, "blob") {
            Ok(Kind::Blob)
        } else if has_field(v, "text") {
            Ok(Kind::Text)
        } else {
            Err("resource contents need `text` or `blob`".to_owned())
        }
    }
}

impl ResourceContents {
    /// The URI of the resource.
    pub fn uri(&self) -> &str {
        match self {
            Self::Text(t) => &t.uri,
            Self::Blob(b) => &b.uri,
        }
    }
}
