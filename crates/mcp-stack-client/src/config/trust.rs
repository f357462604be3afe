//! Remembered approvals of project configuration files: a JSON file in the user's config
//! folder (`trusted-projects.json` in [`default_user_dir`](super::default_user_dir)) holding,
//! per project file, the [`ProjectFile::digest`] of the canonical path and contents that were
//! approved. A file whose contents (or place) changed has another digest: it needs a new
//! approval.
//!
//! The store is written atomically (a temporary file in the same folder, then renamed over the
//! old one) with mode 0600 on Unix. It keeps at most [`MAX_ENTRIES`] files (one entry per
//! canonical path, the oldest approval dropped first past the bound).

use super::ProjectFile;
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The most project files remembered; approving one more forgets the oldest approval.
pub const MAX_ENTRIES: usize = 1024;

/// The largest store file read (1 MiB); a larger one is an error.
const MAX_STORE_BYTES: u64 = 1024 * 1024;

/// One remembered approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustEntry {
    /// The project file's canonical path.
    pub path: PathBuf,
    /// SHA-256 (hex) of the canonical path and the approved contents.
    pub digest: String,
}

#[derive(Serialize, Deserialize, Default)]
struct StoreFile {
    version: u32,
    #[serde(default)]
    trusted: Vec<TrustEntry>,
}

/// The approvals, loaded from (and saved to) one file.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
    entries: Vec<TrustEntry>,
}

impl TrustStore {
    /// `trusted-projects.json` in the user's config folder, from the process environment.
    pub fn default_path() -> Option<PathBuf> {
        super::default_user_dir().map(|d| d.join("trusted-projects.json"))
    }

    /// Loads the store at `path` (a missing file is an empty store).
    pub fn open(path: impl Into<PathBuf>) -> std::io::Result<Self> {
        use std::io::Read as _;
        let path = path.into();
        let mut text = String::new();
        match std::fs::File::open(&path) {
            Ok(f) => {
                f.take(MAX_STORE_BYTES + 1).read_to_string(&mut text)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self { path, entries: Vec::new() }),
            Err(e) => return Err(e),
        }
        if text.len() as u64 > MAX_STORE_BYTES {
            return Err(std::io::Error::other(format!("{} is larger than {MAX_STORE_BYTES} bytes", path.display())));
        }
        let file: StoreFile = serde_json::from_str(&text)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", path.display())))?;
        Ok(Self { path, entries: file.trusted })
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The remembered approvals, oldest first.
    pub fn entries(&self) -> &[TrustEntry] {
        &self.entries
    }

    /// Whether `file`, with the contents that were read, was approved.
    pub fn is_trusted(&self, file: &ProjectFile) -> bool {
        self.entries.iter().any(|e| e.digest == file.digest())
    }

    /// Remembers `file` (replacing an older approval of the same path) and saves the store.
    pub fn trust(&mut self, file: &ProjectFile) -> std::io::Result<()> {
        self.entries.retain(|e| e.path != file.canonical());
        self.entries.push(TrustEntry { path: file.canonical().to_path_buf(), digest: file.digest().to_owned() });
        if self.entries.len() > MAX_ENTRIES {
            let extra = self.entries.len() - MAX_ENTRIES;
            self.entries.drain(..extra);
        }
        self.save()
    }

    /// Writes the store atomically, mode 0600.
    pub fn save(&self) -> std::io::Result<()> {
        let dir = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let doc = StoreFile { version: 1, trusted: self.entries.clone() };
        let text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
        let name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let r = (|| {
            let mut f = opts.open(&tmp)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            }
            f.write_all(text.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if r.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        r
    }
}
