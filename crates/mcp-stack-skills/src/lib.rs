//! The skills extension of MCP (`io.modelcontextprotocol/skills`, SEP-2640), as a format: no
//! IO beyond reading a skills folder once.
//!
//! A skill is a folder with a `SKILL.md` (YAML frontmatter with `name` and `description`, then
//! markdown) and any files it refers to. A server lists each skill as a [`SkillEntry`]: the
//! `skill://` URI of its `SKILL.md`, the frontmatter as JSON, and every file with its `sha256:`
//! digest and size, so that a host can verify what it loads. This crate holds what both sides
//! need: the naming rules, [`digest`], [`parse_frontmatter`], [`SkillEntry`] and its checks,
//! and [`SkillSet`], a folder of skills read and validated up front.
//!
//! ```
//! let text = "---\nname: pdf-processing\ndescription: Work with PDFs\n---\n\nBody.\n";
//! let fm = mcp_skills::parse_frontmatter(text).unwrap();
//! assert_eq!(fm["name"], "pdf-processing");
//! assert!(mcp_skills::digest(text.as_bytes()).starts_with("sha256:"));
//! ```

mod folder;
mod yaml;

pub use folder::{SkillFile, SkillSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The extension's identifier (capability key under `extensions`).
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";
/// The `mimeType` of a directory resource.
pub const DIRECTORY_MIME: &str = "inode/directory";
/// The URI scheme skills are served under.
pub const SCHEME: &str = "skill://";
/// The most files (SKILL.md included) one skill should have.
pub const MAX_FILES_PER_SKILL: usize = 512;
/// The most bytes one skill's files should add up to (16 MiB).
pub const MAX_BYTES_PER_SKILL: u64 = 16 * 1024 * 1024;
/// The longest `description` the Agent Skills format allows.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Why a skill (or a file of one) is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The file or folder could not be read.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        reason: String,
    },
    /// What the format forbids: a bad name, missing frontmatter, over the limits...
    #[error("{path}: {reason}")]
    Invalid {
        /// The file (or skill URI) at fault.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Content that does not match its listing (size, digest, frontmatter, unlisted file).
    #[error("{uri} failed verification: {reason}")]
    Verification {
        /// The resource.
        uri: String,
        /// What did not match.
        reason: String,
    },
}

fn invalid(path: impl Into<String>, reason: impl Into<String>) -> SkillError {
    SkillError::Invalid { path: path.into(), reason: reason.into() }
}

fn unverified(uri: &str, reason: impl Into<String>) -> SkillError {
    SkillError::Verification { uri: uri.to_owned(), reason: reason.into() }
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 of `a-z`, `0-9` and `-`, no
/// leading, trailing or doubled hyphen.
pub fn is_valid_skill_name(name: &str) -> bool {
    let b = name.as_bytes();
    (1..=64).contains(&b.len())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
        && !name.contains("--")
}

/// The skill name a `SKILL.md` URI ends in (`skill://acme/pdf-processing/SKILL.md` gives
/// `pdf-processing`); `None` if the URI is not a SKILL.md URI.
pub fn skill_name(uri: &str) -> Option<&str> {
    let (_, rest) = uri.split_once("://")?;
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [.., name, "SKILL.md"] => Some(name),
        _ => None,
    }
}

/// The directory URI of a skill: its `SKILL.md` URI without `/SKILL.md`.
pub fn skill_root(uri: &str) -> Option<&str> {
    uri.strip_suffix("/SKILL.md")
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes` (what a listing's `digest` holds).
pub fn digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        use std::fmt::Write as _;
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The YAML frontmatter block of a `SKILL.md` (between the leading `---` lines), if any.
pub fn frontmatter_block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.starts_with("---") && bare[3..].trim_matches([' ', '\t']).is_empty() {
            return Some(rest[..offset].trim_end_matches(['\n', '\r']));
        }
        offset += line.len();
    }
    None
}

/// Parses a `SKILL.md`'s frontmatter into JSON (YAML 1.2 core schema) and checks that `name`
/// and `description` are non-empty strings.
pub fn parse_frontmatter(text: &str) -> Result<Map<String, Value>, SkillError> {
    let block = frontmatter_block(text).ok_or_else(|| invalid("SKILL.md", "no YAML frontmatter (--- ... ---)"))?;
    let fm = yaml::parse_mapping(block).map_err(|e| invalid("SKILL.md", format!("frontmatter: {e}")))?;
    for key in ["name", "description"] {
        match fm.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => {}
            _ => return Err(invalid("SKILL.md", format!("frontmatter needs a non-empty string `{key}`"))),
        }
    }
    Ok(fm)
}

/// One file of a skill as listed: URI, digest and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's URI.
    pub uri: String,
    /// `sha256:` + lowercase hex.
    pub digest: String,
    /// Length in bytes.
    pub size: u64,
}

/// A skill's files: listed with digests, or generated (`"dynamic"`, nothing to verify).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillResources {
    /// Every file, SKILL.md included.
    Files(Vec<SkillResource>),
    /// Generated content without stable digests.
    Dynamic,
}

impl Serialize for SkillResources {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(f) => f.serialize(s),
            SkillResources::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "dynamic" => Ok(SkillResources::Dynamic),
            v @ Value::Array(_) => {
                serde_json::from_value(v).map(SkillResources::Files).map_err(serde::de::Error::custom)
            }
            _ => Err(serde::de::Error::custom("`resources` must be an array or \"dynamic\"")),
        }
    }
}

/// A skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// The `SKILL.md` URI.
    pub uri: String,
    /// The frontmatter, as JSON.
    pub frontmatter: Map<String, Value>,
    /// The files.
    pub resources: SkillResources,
}

impl SkillEntry {
    /// The skill's name (`frontmatter.name`).
    pub fn name(&self) -> &str {
        self.frontmatter.get("name").and_then(Value::as_str).unwrap_or("")
    }

    /// The skill's description (`frontmatter.description`).
    pub fn description(&self) -> &str {
        self.frontmatter.get("description").and_then(Value::as_str).unwrap_or("")
    }

    /// Checks what a host must before loading anything: the URI ends in the frontmatter name,
    /// the name follows the rules, and the listed files are complete, inside the skill, and
    /// within the limits.
    pub fn check(&self) -> Result<(), SkillError> {
        let name = self.name();
        if skill_name(&self.uri) != Some(name) || !is_valid_skill_name(name) {
            return Err(invalid(&self.uri, format!("the URI must end in /{name}/SKILL.md with a valid skill name")));
        }
        if self.description().trim().is_empty() {
            return Err(invalid(&self.uri, "the frontmatter has no description"));
        }
        let SkillResources::Files(files) = &self.resources else { return Ok(()) };
        let root = format!("{}/", skill_root(&self.uri).unwrap_or(&self.uri));
        if !files.iter().any(|f| f.uri == self.uri) {
            return Err(invalid(&self.uri, "the resources do not list SKILL.md itself"));
        }
        if files.len() > MAX_FILES_PER_SKILL {
            return Err(invalid(&self.uri, format!("{} files, more than {MAX_FILES_PER_SKILL}", files.len())));
        }
        let total: u64 = files.iter().map(|f| f.size).sum();
        if total > MAX_BYTES_PER_SKILL {
            return Err(invalid(&self.uri, format!("{total} bytes, more than {MAX_BYTES_PER_SKILL}")));
        }
        for f in files {
            if f.uri != self.uri && !f.uri.starts_with(&root) {
                return Err(invalid(&f.uri, "listed outside its skill"));
            }
            if !is_digest(&f.digest) {
                return Err(invalid(
                    &f.uri,
                    format!("digest {:?} is not sha256: and 64 lowercase hex digits", f.digest),
                ));
            }
        }
        Ok(())
    }

    /// The listed file `uri` (`None` when unlisted or the skill is dynamic).
    pub fn file(&self, uri: &str) -> Option<&SkillResource> {
        match &self.resources {
            SkillResources::Files(f) => f.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic => None,
        }
    }

    /// Resolves `path` (relative to the skill's folder, or a full URI) to a URI.
    pub fn resolve(&self, path: &str) -> String {
        if path.contains("://") {
            return path.to_owned();
        }
        let root = skill_root(&self.uri).unwrap_or(&self.uri);
        format!("{root}/{}", path.trim_start_matches("./"))
    }

    /// Verifies the bytes read for `uri` against the listing: listed, same size, same digest.
    /// For `SKILL.md` also compares the file's frontmatter with the listed one, field by field.
    pub fn verify(&self, uri: &str, bytes: &[u8]) -> Result<(), SkillError> {
        match &self.resources {
            SkillResources::Dynamic => {}
            SkillResources::Files(_) => {
                let listed = self.file(uri).ok_or_else(|| unverified(uri, "not listed in the skill's resources"))?;
                if bytes.len() as u64 != listed.size {
                    return Err(unverified(uri, format!("{} bytes, listed as {}", bytes.len(), listed.size)));
                }
                let actual = digest(bytes);
                if actual != listed.digest {
                    return Err(unverified(uri, format!("digest {actual}, listed as {}", listed.digest)));
                }
            }
        }
        if uri == self.uri {
            let text = std::str::from_utf8(bytes).map_err(|_| unverified(uri, "SKILL.md is not UTF-8"))?;
            let fm = parse_frontmatter(text).map_err(|e| unverified(uri, e.to_string()))?;
            let keys: std::collections::BTreeSet<&String> = fm.keys().chain(self.frontmatter.keys()).collect();
            for k in keys {
                let (file, listed) =
                    (fm.get(k).unwrap_or(&Value::Null), self.frontmatter.get(k).unwrap_or(&Value::Null));
                if file != listed {
                    return Err(unverified(
                        uri,
                        format!("frontmatter `{k}` is {file} in the file but {listed} in the listing"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Whether `d` is `sha256:` and 64 lowercase hex digits.
pub fn is_digest(d: &str) -> bool {
    d.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')))
}

#[cfg(test)]
mod tests;
