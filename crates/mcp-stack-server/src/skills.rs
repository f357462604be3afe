//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on the server: a
//! [`SkillSet`] served through `skills/list`, `skills/get`, `resources/directory/read`, and
//! its files as ordinary `skill://` resources (from memory: no request reaches the disk).

use crate::builder::ServerBuilder;
use crate::catalog::{ResourceEntry, ResourceFn};
use crate::error::BuildError;
use crate::server::Server;
use mcp_protocol::types;
use mcp_protocol::ProtocolError;
pub use mcp_skills::{SkillEntry, SkillSet, SKILLS_EXTENSION};
use serde_json::{Map, Value};
use std::sync::Arc;

impl ServerBuilder {
    /// Serves the skills in `set` (see [`ServerBuilder::skills_dir`]).
    pub fn skills(mut self, set: SkillSet) -> Self {
        if self.config.skills.is_some() {
            self.errors.push(BuildError::Skills("skills are given once: one SkillSet or one folder".into()));
            return self;
        }
        for file in set.files() {
            if self.catalog.resources.iter().any(|r| r.uri == file.uri) {
                self.errors.push(BuildError::Duplicate { kind: crate::ItemKind::Resource, name: file.uri.clone() });
                return self;
            }
            let f = file.clone();
            let def: types::Resource = match serde_json::from_value(file.resource.clone()) {
                Ok(d) => d,
                Err(e) => {
                    self.errors.push(BuildError::Skills(format!("{}: {e}", file.uri)));
                    return self;
                }
            };
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
            self.catalog.resources.push(Arc::new(ResourceEntry {
                uri: file.uri.clone(),
                def,
                access: None,
                handler,
                home: None,
            }));
        }
        self.config.skills = Some(Arc::new(set));
        self
    }

    /// Serves every skill in the folder `dir` (each subfolder with a `SKILL.md`). The folder is
    /// read and checked now; what the SEP forbids (bad names, missing frontmatter, over the
    /// limits, symbolic links out of the folder) fails [`ServerBuilder::build`] with an error
    /// naming the file.
    pub fn skills_dir(mut self, dir: impl AsRef<std::path::Path>) -> Self {
        match SkillSet::from_dir(dir) {
            Ok(set) => self.skills(set),
            Err(e) => {
                self.errors.push(BuildError::Skills(e.to_string()));
                self
            }
        }
    }
}

fn not_a_directory(uri: &str) -> ProtocolError {
    ProtocolError::invalid_params(format!("{uri} is not a directory resource"))
}

impl Server {
    /// The skills this server serves, if any.
    pub fn skill_set(&self) -> Option<&SkillSet> {
        self.inner.config.skills.as_deref()
    }

    fn served_skills(&self) -> Result<&SkillSet, ProtocolError> {
        self.skill_set().ok_or_else(|| ProtocolError::MethodNotFound {
            method: "skills".into(),
            detail: Some("skills (this server serves none)".into()),
        })
    }

    /// `skills/list`.
    pub(crate) fn skills_list(&self, cursor: Option<&str>) -> Result<Value, ProtocolError> {
        let set = self.served_skills()?;
        let entries = set.entries().iter().map(|e| serde_json::to_value(e).expect("entries serialize"));
        self.list_page(entries, "skills", cursor)
    }

    /// `skills/get`.
    pub(crate) fn skills_get(&self, uri: &str) -> Result<Value, ProtocolError> {
        let set = self.served_skills()?;
        let entry =
            set.entry(uri).ok_or_else(|| ProtocolError::invalid_params(format!("No skill is served at {uri}")))?;
        let mut out = Map::new();
        out.insert("skill".into(), serde_json::to_value(entry).expect("entries serialize"));
        self.cache_hints(&mut out);
        Ok(Value::Object(out))
    }

    /// `resources/directory/read`.
    pub(crate) fn directory_read(&self, uri: &str, cursor: Option<&str>) -> Result<Value, ProtocolError> {
        let children = self.served_skills()?.directory(uri).ok_or_else(|| not_a_directory(uri))?;
        self.list_page(children.iter().cloned(), "resources", cursor)
    }
}
