//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on the server: a
//! [`SkillSet`] served through `skills/list`, `skills/get`, `resources/directory/read`, and
//! its files as ordinary `skill://` resources (from memory: no request reaches the disk).

use crate::builder::ServerBuilder;
use crate::error::BuildError;
use crate::registry::{ResourceEntry, ResourceFn};
use crate::server::Server;
use mcp_protocol::{Params, ProtocolError};
pub use mcp_skills::{SkillEntry, SkillSet, SKILLS_EXTENSION};
use serde_json::{json, Map, Value};
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
            let handler: ResourceFn = Arc::new(move |_, _, _| {
                let mut content = json!({ "uri": f.uri, "mimeType": f.mime_type });
                if f.is_text {
                    content["text"] = json!(String::from_utf8_lossy(&f.bytes));
                } else {
                    use base64::Engine as _;
                    content["blob"] = json!(base64::engine::general_purpose::STANDARD.encode(&f.bytes));
                }
                Box::pin(std::future::ready(Ok(json!({ "contents": [content] }))))
            });
            self.catalog.resources.push(ResourceEntry { uri: file.uri.clone(), def: file.resource.clone(), handler });
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

    /// `skills/list`, `skills/get`, `resources/directory/read`.
    pub(crate) fn serve_skills(&self, params: Params<'_>) -> Result<Value, ProtocolError> {
        let Some(set) = self.skill_set() else {
            return Err(ProtocolError::MethodNotFound("skills (this server serves none)".into()));
        };
        match params {
            Params::List { cursor } => {
                let entries = set.entries().iter().map(|e| serde_json::to_value(e).expect("entries serialize"));
                self.list_page(entries, "skills", cursor)
            }
            Params::SkillsGet { uri } => {
                let entry = set
                    .entry(uri)
                    .ok_or_else(|| ProtocolError::invalid_params(format!("No skill is served at {uri}")))?;
                let mut out = Map::new();
                out.insert("skill".into(), json!(entry));
                self.cache_hints(&mut out, self.inner.config.list_ttl_ms, self.inner.config.list_public);
                Ok(Value::Object(out))
            }
            Params::DirectoryRead { uri, cursor } => {
                let children = set.directory(uri).ok_or_else(|| not_a_directory(uri))?;
                self.list_page(children.iter().cloned(), "resources", cursor)
            }
            _ => Err(ProtocolError::MethodNotFound("skills".into())),
        }
    }
}
