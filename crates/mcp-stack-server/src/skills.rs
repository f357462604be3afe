//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on the server: a
//! [`SkillSet`] served through `skills/list`, `skills/get`, `resources/directory/read`, and
//! its files as ordinary `skill://` resources (from memory: no request reaches the disk).

use crate::catalog::{Catalog, ResourceEntry, ResourceFn};
use crate::error::{BuildError, ItemKind};
use crate::server::Server;
use mcp_protocol::types;
use mcp_protocol::ProtocolError;
pub use mcp_skills::SkillSet;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Registers the files of `set` as `skill://` resources of `catalog`.
pub(crate) fn register(catalog: &mut Catalog, set: &SkillSet) -> Result<(), BuildError> {
    for file in set.files() {
        if catalog.resources.iter().any(|r| r.uri == file.uri) {
            return Err(BuildError::Duplicate { kind: ItemKind::Resource, name: file.uri.clone() });
        }
        let f = file.clone();
        let def: types::Resource = serde_json::from_value(file.resource.clone())
            .map_err(|e| BuildError::Skills(format!("{}: {e}", file.uri)))?;
        let handler: ResourceFn = Arc::new(move |_, _, _| {
            let mime_type = Some(f.mime_type.clone());
            let content = if f.is_text {
                let text = String::from_utf8_lossy(&f.bytes).into_owned();
                types::ResourceContents::Text(types::TextResourceContents {
                    mime_type,
                    ..types::TextResourceContents::new(&f.uri, text)
                })
            } else {
                use base64::Engine as _;
                let blob = base64::engine::general_purpose::STANDARD.encode(&f.bytes);
                types::ResourceContents::Blob(types::BlobResourceContents {
                    mime_type,
                    ..types::BlobResourceContents::new(&f.uri, blob)
                })
            };
            Box::pin(std::future::ready(Ok(crate::handler_result::contents_result(vec![content]))))
        });
        catalog.resources.push(Arc::new(ResourceEntry {
            uri: file.uri.clone(),
            def,
            access: None,
            handler,
            mounted: false,
        }));
    }
    Ok(())
}

fn not_a_directory(uri: &str) -> ProtocolError {
    ProtocolError::invalid_params(format!("{uri} is not a directory resource"))
}

fn served(server: &Server) -> Result<&SkillSet, ProtocolError> {
    server.inner.config.extensions.skills.as_deref().ok_or_else(|| ProtocolError::MethodNotFound {
        method: "skills".into(),
        detail: Some("skills (this server serves none)".into()),
    })
}

/// `skills/list`.
pub(crate) fn list(server: &Server, cursor: Option<&str>) -> Result<Value, ProtocolError> {
    let set = served(server)?;
    let entries = set.entries().iter().map(|e| serde_json::to_value(e).expect("entries serialize"));
    server.inner.config.lists.list_page(entries, "skills", cursor)
}

/// `skills/get`.
pub(crate) fn get(server: &Server, uri: &str) -> Result<Value, ProtocolError> {
    let set = served(server)?;
    let entry = set.entry(uri).ok_or_else(|| ProtocolError::invalid_params(format!("No skill is served at {uri}")))?;
    let mut out = Map::new();
    out.insert("skill".into(), serde_json::to_value(entry).expect("entries serialize"));
    server.inner.config.lists.cache_hints(&mut out);
    Ok(Value::Object(out))
}

/// `resources/directory/read`.
pub(crate) fn directory_read(server: &Server, uri: &str, cursor: Option<&str>) -> Result<Value, ProtocolError> {
    let children = served(server)?.directory(uri).ok_or_else(|| not_a_directory(uri))?;
    server.inner.config.lists.list_page(children.iter().cloned(), "resources", cursor)
}
