//! [`SkillSet`]: a folder of skills, read and validated once, then served from memory (so no
//! request ever touches the file system, and no URI can name a path outside the folder).

use crate::{
    digest, invalid, is_valid_skill_name, parse_frontmatter, SkillEntry, SkillError, SkillResource, SkillResources,
    DIRECTORY_MIME, MAX_BYTES_PER_SKILL, MAX_DESCRIPTION_CHARS, MAX_FILES_PER_SKILL, SCHEME,
};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most bytes a whole skills folder may hold (reading stops with an error past it).
const MAX_FOLDER_BYTES: u64 = 256 * 1024 * 1024;
/// The deepest folder nesting read.
const MAX_DEPTH: usize = 32;

/// One file of a served skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// Its `skill://` URI.
    pub uri: String,
    /// Its `mimeType`.
    pub mime_type: String,
    /// The exact bytes served (what `digest` and `size` describe).
    pub bytes: Arc<[u8]>,
    /// Served as `text` (UTF-8) rather than a base64 `blob`.
    pub is_text: bool,
    /// The `Resource` metadata (`uri`, `name`, `mimeType`, `size`, and for SKILL.md the
    /// skill's `description`) for `resources/list` and directory listings.
    pub resource: Value,
}

/// A validated set of skills with their files and directory listings.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    entries: Vec<SkillEntry>,
    files: BTreeMap<String, SkillFile>,
    dirs: BTreeMap<String, Vec<Value>>,
}

fn mime_for(path: &str, bytes: &[u8]) -> (&'static str, bool) {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    let utf8 = std::str::from_utf8(bytes).is_ok();
    let text = |m| (m, utf8);
    match ext.as_str() {
        "md" | "markdown" => text("text/markdown"),
        "txt" => text("text/plain"),
        "json" => text("application/json"),
        "yaml" | "yml" => text("application/yaml"),
        "py" => text("text/x-python"),
        "sh" => text("text/x-shellscript"),
        "js" | "mjs" => text("text/javascript"),
        "ts" => text("text/typescript"),
        "html" | "htm" => text("text/html"),
        "css" => text("text/css"),
        "csv" => text("text/csv"),
        "xml" => text("application/xml"),
        "svg" => text("image/svg+xml"),
        "png" => ("image/png", false),
        "jpg" | "jpeg" => ("image/jpeg", false),
        "gif" => ("image/gif", false),
        "pdf" => ("application/pdf", false),
        _ if utf8 => ("text/plain", true),
        _ => ("application/octet-stream", false),
    }
}

/// Whether a path segment can go into a URI as it is (and is not `.`, `..` or hidden).
fn is_uri_safe(segment: &str) -> bool {
    !segment.is_empty()
        && !segment.starts_with('.')
        && segment.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'~' | b'+' | b'@'))
}

impl SkillSet {
    /// Reads every skill under `root`: each folder holding a `SKILL.md` is a skill, named by
    /// its path below `root` (`root/acme/pdf-processing/SKILL.md` is
    /// `skill://acme/pdf-processing/SKILL.md`). Hidden entries (`.git`, `.DS_Store`) are
    /// skipped. Symbolic links are followed only to targets inside `root`; one leading out is
    /// an error naming it. Everything the format forbids is an error naming the file.
    pub fn from_dir(root: impl AsRef<Path>) -> Result<Self, SkillError> {
        let root = root.as_ref();
        let io = |p: &Path, e: std::io::Error| SkillError::Io { path: p.display().to_string(), reason: e.to_string() };
        let canon = root.canonicalize().map_err(|e| io(root, e))?;
        let mut files = Vec::new();
        let mut budget = MAX_FOLDER_BYTES;
        let mut visited = BTreeSet::from([canon.clone()]);
        walk(&canon, &canon, "", 0, &mut files, &mut budget, &mut visited)?;
        Self::from_files(files)
    }

    /// Builds a set from `(path, bytes)` pairs, paths relative to the skills folder with `/`
    /// separators (for skills embedded in a binary). Same rules as [`SkillSet::from_dir`].
    pub fn from_files(files: impl IntoIterator<Item = (String, Vec<u8>)>) -> Result<Self, SkillError> {
        let mut all: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (path, bytes) in files {
            if !path.split('/').all(is_uri_safe) {
                return Err(invalid(
                    path,
                    "skill file paths may use only letters, digits and - _ . ~ + @, no hidden or empty segments",
                ));
            }
            all.insert(path, bytes);
        }
        let roots: Vec<String> = all
            .keys()
            .filter_map(|p| {
                p.strip_suffix("/SKILL.md").map(str::to_owned).or_else(|| (p == "SKILL.md").then(String::new))
            })
            .collect();
        let mut set = SkillSet::default();
        for root in roots {
            if root.is_empty() {
                return Err(invalid(
                    "SKILL.md",
                    "a skill needs its own folder (the folder's name is the skill's name)",
                ));
            }
            set.add_skill(&root, &all)?;
        }
        Ok(set)
    }

    fn add_skill(&mut self, root: &str, all: &BTreeMap<String, Vec<u8>>) -> Result<(), SkillError> {
        let skill_md_path = format!("{root}/SKILL.md");
        let text =
            std::str::from_utf8(&all[&skill_md_path]).map_err(|_| invalid(&skill_md_path, "SKILL.md is not UTF-8"))?;
        let frontmatter = parse_frontmatter(text).map_err(|e| match e {
            SkillError::Invalid { reason, .. } => invalid(&skill_md_path, reason),
            other => other,
        })?;
        let name = frontmatter["name"].as_str().unwrap_or_default().to_owned();
        let folder = root.rsplit('/').next().unwrap_or(root);
        if !is_valid_skill_name(&name) {
            return Err(invalid(
                &skill_md_path,
                format!("name {name:?}: 1-64 of a-z, 0-9 and -, no leading, trailing or double -"),
            ));
        }
        if folder != name {
            return Err(invalid(&skill_md_path, format!("name {name:?} must equal its folder's name {folder:?}")));
        }
        let description = frontmatter["description"].as_str().unwrap_or_default();
        if description.chars().count() > MAX_DESCRIPTION_CHARS {
            return Err(invalid(&skill_md_path, format!("description longer than {MAX_DESCRIPTION_CHARS} characters")));
        }
        if let Some(meta) = frontmatter.get("metadata").and_then(Value::as_object) {
            if let Some(k) = meta.keys().find(|k| k.starts_with("io.modelcontextprotocol/")) {
                return Err(invalid(
                    &skill_md_path,
                    format!("metadata key {k:?} uses the reserved io.modelcontextprotocol/ prefix"),
                ));
            }
        }
        let prefix = format!("{root}/");
        let members: Vec<(&String, &Vec<u8>)> = all.iter().filter(|(p, _)| p.starts_with(&prefix)).collect();
        if members.len() > MAX_FILES_PER_SKILL {
            return Err(invalid(&skill_md_path, format!("{} files, more than {MAX_FILES_PER_SKILL}", members.len())));
        }
        let total: u64 = members.iter().map(|(_, b)| b.len() as u64).sum();
        if total > MAX_BYTES_PER_SKILL {
            return Err(invalid(&skill_md_path, format!("{total} bytes in all, more than {MAX_BYTES_PER_SKILL}")));
        }
        let uri_of = |p: &str| format!("{SCHEME}{p}");
        let mut resources = Vec::new();
        for (path, bytes) in &members {
            let uri = uri_of(path);
            let is_skill_md = **path == skill_md_path;
            let (mime, is_text) = mime_for(path, bytes);
            let file_name = path.rsplit('/').next().unwrap_or(path);
            let mut resource = json!({ "uri": uri, "name": file_name, "mimeType": mime, "size": bytes.len() });
            if is_skill_md {
                resource["name"] = json!(name);
                resource["description"] = json!(description);
            }
            resources.push(SkillResource { uri: uri.clone(), digest: digest(bytes), size: bytes.len() as u64 });
            if !self.files.contains_key(&uri) {
                self.index_directories(root, path, &resource);
                let file = SkillFile {
                    uri: uri.clone(),
                    mime_type: mime.into(),
                    bytes: Arc::from(bytes.as_slice()),
                    is_text: is_text || is_skill_md,
                    resource,
                };
                self.files.insert(uri, file);
            }
        }
        let entry =
            SkillEntry { uri: uri_of(&skill_md_path), frontmatter, resources: SkillResources::Files(resources) };
        entry.check()?;
        self.entries.push(entry);
        Ok(())
    }

    /// Records `path` (a file of the skill at `root`) in the listings of its directories.
    fn index_directories(&mut self, root: &str, path: &str, resource: &Value) {
        let rel = &path[root.len() + 1..];
        let mut dir = format!("{SCHEME}{root}");
        self.dirs.entry(dir.clone()).or_default();
        let segments: Vec<&str> = rel.split('/').collect();
        for (i, seg) in segments.iter().enumerate() {
            let child_uri = format!("{dir}/{seg}");
            let children = self.dirs.entry(dir.clone()).or_default();
            if i + 1 == segments.len() {
                children.push(resource.clone());
            } else if !children.iter().any(|c| c["uri"] == child_uri) {
                children.push(json!({ "uri": child_uri, "name": seg, "mimeType": DIRECTORY_MIME }));
            }
            dir = child_uri;
        }
    }

    /// The skills, in path order.
    pub fn entries(&self) -> &[SkillEntry] {
        &self.entries
    }

    /// The skill whose `SKILL.md` URI is `uri`.
    pub fn entry(&self, uri: &str) -> Option<&SkillEntry> {
        self.entries.iter().find(|e| e.uri == uri)
    }

    /// Every file of every skill, by URI.
    pub fn files(&self) -> impl Iterator<Item = &SkillFile> {
        self.files.values()
    }

    /// The file `uri`.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.files.get(uri)
    }

    /// The direct children of directory `uri` (files and `inode/directory` entries), if it is one.
    pub fn directory(&self, uri: &str) -> Option<&[Value]> {
        self.dirs.get(uri.trim_end_matches('/')).map(Vec::as_slice)
    }

    /// Whether the set holds no skill.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn walk(
    root: &Path,
    dir: &Path,
    rel: &str,
    depth: usize,
    out: &mut Vec<(String, Vec<u8>)>,
    budget: &mut u64,
    visited: &mut BTreeSet<PathBuf>,
) -> Result<(), SkillError> {
    let io = |p: &Path, e: std::io::Error| SkillError::Io { path: p.display().to_string(), reason: e.to_string() };
    if depth > MAX_DEPTH {
        return Err(invalid(dir.display().to_string(), format!("nested deeper than {MAX_DEPTH} folders")));
    }
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).map_err(|e| io(dir, e))?.collect::<Result<_, _>>().map_err(|e| io(dir, e))?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = e.path();
        let child = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        // Names are checked once, with every other path rule, in `SkillSet::from_files`.
        // Resolve links and refuse any target outside the folder.
        let target = path.canonicalize().map_err(|e| io(&path, e))?;
        if !target.starts_with(root) {
            return Err(invalid(path.display().to_string(), "a symbolic link leads outside the skills folder"));
        }
        let meta = std::fs::metadata(&target).map_err(|e| io(&path, e))?;
        if meta.is_dir() {
            if !visited.insert(target.clone()) {
                return Err(invalid(path.display().to_string(), "a symbolic link loops back into the skills folder"));
            }
            walk(root, &target, &child, depth + 1, out, budget, visited)?;
        } else if meta.is_file() {
            if meta.len() > *budget || meta.len() > MAX_BYTES_PER_SKILL {
                return Err(invalid(path.display().to_string(), "too large for a skill"));
            }
            let bytes = std::fs::read(&target).map_err(|e| io(&path, e))?;
            *budget = budget.saturating_sub(bytes.len() as u64);
            out.push((child, bytes));
        }
    }
    Ok(())
}
