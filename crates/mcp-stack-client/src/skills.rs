//! The skills extension on the client: list a server's skills, and load one on demand with
//! every byte checked against its listing (size, `sha256:` digest, frontmatter). Nothing is
//! read ahead of need: listing reads no file, loading reads `SKILL.md` only, and each further
//! file is read (and verified) when asked for.

use crate::client::{CallOptions, Client};
use crate::error::ClientError;
use crate::typed::Typed;
use mcp_protocol::types::{JsonObject, Resource, ResourceContents};
use mcp_skills::{SkillEntry, SkillError, SKILLS_EXTENSION};
use serde_json::{Map, Value};

fn refused(e: SkillError) -> ClientError {
    ClientError::SkillVerification { message: e.to_string(), source: Some(crate::ErrorSource::new(e)) }
}

/// A skill loaded after verification: its listing and its `SKILL.md`.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    client: Client,
    entry: SkillEntry,
    skill_md: String,
}

impl LoadedSkill {
    /// The listing the skill was verified against.
    pub fn entry(&self) -> &SkillEntry {
        &self.entry
    }

    /// The verified `SKILL.md`.
    pub fn skill_md(&self) -> &str {
        &self.skill_md
    }

    /// Reads one of the skill's files (a path relative to the skill's folder, or its URI) and
    /// verifies it; a file the listing does not name is refused without being read.
    pub async fn read(&self, path: &str) -> Result<Vec<u8>, ClientError> {
        let uri = self.entry.resolve(path);
        if matches!(self.entry.resources, mcp_skills::SkillResources::Files(_)) && self.entry.file(&uri).is_none() {
            return Err(refused(SkillError::Verification {
                uri,
                reason: "not listed in the skill's resources".into(),
            }));
        }
        let bytes = self.client.resource_bytes(&uri).await?;
        self.entry.verify(&uri, &bytes).map_err(refused)?;
        Ok(bytes)
    }
}

impl Client {
    /// The server's skills extension settings (`{"directoryRead": ...}`), if it offers skills.
    pub fn skills_capability(&self) -> Option<JsonObject> {
        self.server_capabilities().extensions?.remove(SKILLS_EXTENSION)
    }

    /// `skills/list`, all pages. Entries that are not valid skill entries are left out (with a
    /// warning): a host must not load them.
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, ClientError> {
        let raw = self.pages("skills/list", "skills", Map::new(), true).await?;
        Ok(raw
            .into_iter()
            .filter_map(|v| match serde_json::from_value::<SkillEntry>(v) {
                Ok(e) => Some(e),
                Err(e) => {
                    tracing::warn!(error = %e, "skipping an invalid skills/list entry");
                    None
                }
            })
            .collect())
    }

    /// `skills/get`: the current listing of the skill whose `SKILL.md` is `uri`.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        let r = self.request("skills/get", params, &CallOptions::default()).await?;
        serde_json::from_value(r.get("skill").cloned().unwrap_or_default())
            .map_err(|e| ClientError::invalid_response(format!("skills/get: {e}")).caused_by(e))
    }

    /// `resources/directory/read`, all pages (only when the server declares `directoryRead`).
    pub async fn read_directory(&self, uri: &str) -> Result<Vec<Typed<Resource>>, ClientError> {
        let declared = self.skills_capability().and_then(|c| c.get("directoryRead").and_then(Value::as_bool));
        if declared != Some(true) {
            return Err(ClientError::unsupported(
                "resources/directory/read (the server does not declare directoryRead)",
            ));
        }
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        let items = self.pages("resources/directory/read", "resources", params, false).await?;
        let what = |i| format!("resources/directory/read: resources[{i}]");
        items.into_iter().enumerate().map(|(i, v)| Typed::parse(v, &what(i))).collect()
    }

    /// Loads a listed skill: checks the entry (name, completeness, limits), reads `SKILL.md`
    /// and verifies its size, digest and frontmatter. Unverified content is never returned.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, ClientError> {
        entry.check().map_err(refused)?;
        let bytes = self.resource_bytes(&entry.uri).await?;
        entry.verify(&entry.uri, &bytes).map_err(refused)?;
        let skill_md = String::from_utf8(bytes).map_err(|e| ClientError::SkillVerification {
            message: "SKILL.md is not UTF-8".into(),
            source: Some(crate::ErrorSource::new(e)),
        })?;
        Ok(LoadedSkill { client: self.clone(), entry: entry.clone(), skill_md })
    }

    /// The raw bytes `resources/read` serves for `uri` (text as UTF-8, blobs decoded).
    pub(crate) async fn resource_bytes(&self, uri: &str) -> Result<Vec<u8>, ClientError> {
        let r = self.read_resource(uri).await?;
        let content = r
            .contents
            .iter()
            .find(|c| c.uri() == uri)
            .ok_or_else(|| ClientError::invalid_response(format!("resources/read {uri}: no contents")))?;
        let blob = match content {
            ResourceContents::Text(t) => return Ok(t.text.as_bytes().to_vec()),
            ResourceContents::Blob(b) => &b.blob,
        };
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.decode(blob).map_err(|e| {
            ClientError::invalid_response(format!("resources/read {uri}: bad base64 blob: {e}")).caused_by(e)
        })
    }
}
