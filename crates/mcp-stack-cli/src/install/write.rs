//! Reading and replacing a host file in a folder that may be hostile.
//!
//! A project folder is untrusted, as the project config files in it already are: a cloned
//! repository can ship symbolic links where `mcp install` writes (the file, its `.bak`, a
//! parent folder). So in a project no path component from the project folder down may be a
//! symbolic link leading outside it; the target is only replaced by renaming a new file over
//! it, never written through; the new file and the backup are each written to a fresh
//! randomly named file created exclusively (`O_CREAT|O_EXCL`, and `O_NOFOLLOW`) in the same
//! folder, with their mode set on the open handle, synced, then renamed into place (both are
//! written before either is renamed, and an old backup is set aside until the new file is in
//! place, so a write that fails leaves the file and its old backup as they were); a backup
//! path that exists and is not a regular file is refused; missing folders are made one at a
//! time, never through a link. Everything is checked before anything is written, so a refusal
//! leaves every file as it was.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// The largest host file read (Claude Code's own file grows with its history).
pub(super) const MAX_FILE_BYTES: u64 = 64 << 20;

/// A host file, checked and read, ready to be replaced.
#[derive(Debug)]
pub(super) struct HostFile {
    /// The file as named (for messages).
    shown: PathBuf,
    /// The file to replace: `shown` itself, or where a symbolic link at `shown` leads.
    real: PathBuf,
    /// Folders to make first, outermost first.
    missing: Vec<PathBuf>,
    /// The current text and permissions, if the file exists.
    current: Option<(String, std::fs::Permissions)>,
}

/// A path component that is a symbolic link, checked against the project folder.
fn check_link(path: &Path, root: Option<&Path>) -> Result<PathBuf, String> {
    let to = std::fs::canonicalize(path)
        .map_err(|e| format!("{} is a symbolic link that leads nowhere ({e}); left as it is", path.display()))?;
    match root {
        Some(root) if !to.starts_with(root) => Err(format!(
            "{} is a symbolic link to {}, outside the project folder {}: refusing to write there \
             (a cloned repository can ship such links; remove it if you did not make it)",
            path.display(),
            to.display(),
            root.display()
        )),
        _ => Ok(to),
    }
}

impl HostFile {
    /// Checks `file` and reads it. With `root` (the project folder), `file` is under it (as
    /// `root.join(relative)`), and every folder between them is a real folder or a link that
    /// stays inside.
    pub(super) fn open(file: &Path, root: Option<&Path>) -> Result<Self, String> {
        let name = file.file_name().ok_or_else(|| format!("{}: not a file name", file.display()))?;
        let mut missing = Vec::new();
        let (named, root) = match root {
            Some(given) => {
                let rel = file
                    .parent()
                    .and_then(|p| p.strip_prefix(given).ok())
                    .ok_or_else(|| format!("{} is outside the project folder {}", file.display(), given.display()))?;
                let root = std::fs::canonicalize(given).map_err(|e| format!("{}: {e}", given.display()))?;
                let mut at = root.clone();
                for c in rel.components() {
                    let Component::Normal(c) = c else {
                        return Err(format!("{}: the path leaves the project folder", file.display()));
                    };
                    at.push(c);
                    if !missing.is_empty() {
                        missing.push(at.clone());
                        continue;
                    }
                    match std::fs::symlink_metadata(&at) {
                        Ok(m) if m.file_type().is_symlink() => at = check_link(&at, Some(&root))?,
                        Ok(m) if m.is_dir() => {}
                        Ok(_) => return Err(format!("{} is not a folder", at.display())),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing.push(at.clone()),
                        Err(e) => return Err(format!("{}: {e}", at.display())),
                    }
                }
                (at.join(name), Some(root))
            }
            None => {
                let mut at = file.parent().unwrap_or(Path::new("")).to_path_buf();
                while !at.as_os_str().is_empty() && std::fs::symlink_metadata(&at).is_err() {
                    missing.push(at.clone());
                    at = at.parent().map(Path::to_path_buf).unwrap_or_default();
                }
                missing.reverse();
                (file.to_path_buf(), None)
            }
        };
        let real = match std::fs::symlink_metadata(&named) {
            Ok(m) if m.file_type().is_symlink() => check_link(&named, root.as_deref())?,
            Ok(_) => named.clone(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => named.clone(),
            Err(e) => return Err(format!("{}: {e}", named.display())),
        };
        let current = read(&real)?;
        if current.is_some() {
            let bak = backup_path(&real);
            match std::fs::symlink_metadata(&bak) {
                Ok(m) if m.file_type().is_file() => {}
                Ok(_) => {
                    return Err(format!(
                        "{} exists and is not a regular file (a symbolic link?): nothing written; \
                         remove it so the old file can be saved there",
                        bak.display()
                    ))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: {e}", bak.display())),
            }
        }
        Ok(Self { shown: file.to_path_buf(), real, missing, current })
    }

    /// The current text (empty for a new file).
    pub(super) fn text(&self) -> &str {
        self.current.as_ref().map_or("", |(t, _)| t.as_str())
    }

    /// Saves the old file as `FILE.bak` (where it is) and puts `text` in its place. A new file
    /// holding `secrets` is made readable by its owner only; an existing file keeps its mode.
    pub(super) fn replace(&self, text: &str, secrets: bool) -> Result<Option<PathBuf>, String> {
        for dir in &self.missing {
            match std::fs::create_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let real_dir = std::fs::symlink_metadata(dir).map(|m| m.is_dir()).unwrap_or(false);
                    if !real_dir {
                        return Err(format!("{} appeared meanwhile and is not a folder", dir.display()));
                    }
                }
                Err(e) => return Err(format!("{}: {e}", dir.display())),
            }
        }
        let mode = match &self.current {
            Some((_, perms)) => Mode::Keep(perms),
            None if secrets => Mode::Private,
            None => Mode::Default,
        };
        // Both new files are written in full before anything is renamed, so a failed write
        // (a full disk) leaves the old file and the old backup as they were.
        let main =
            Temp::write(&self.real, text.as_bytes(), mode).map_err(|e| format!("{}: {e}", self.shown.display()))?;
        let Some((old, perms)) = &self.current else {
            main.rename_over(&self.real).map_err(|e| format!("{}: {e}", self.shown.display()))?;
            sync_dir(&self.real);
            return Ok(None);
        };
        let bak = backup_path(&self.real);
        let backup = Temp::write(&bak, old.as_bytes(), Mode::Keep(perms))
            .map_err(|e| format!("backup {}: {e}", bak.display()))?;
        // The old backup is set aside (not deleted) until the new file is in place, and put
        // back if the last rename fails.
        let held = Temp::hold(&bak).map_err(|e| format!("backup {}: {e}", bak.display()))?;
        if let Err(e) = backup.rename_over(&bak) {
            restore(held.as_ref(), &bak);
            return Err(format!("backup {}: {e}", bak.display()));
        }
        if let Err(e) = main.rename_over(&self.real) {
            match &held {
                Some(h) => restore(Some(h), &bak),
                None => {
                    let _ = std::fs::remove_file(&bak);
                }
            }
            return Err(format!("{}: {e}; the file and its backup are as they were", self.shown.display()));
        }
        if let Some(h) = held {
            let _ = std::fs::remove_file(h);
        }
        sync_dir(&self.real);
        Ok(Some(bak))
    }
}

/// Puts a backup set aside by [`Temp::hold`] back in place (best effort: this runs when a
/// rename has just failed; if it fails too, the old backup stays under its held name).
fn restore(held: Option<&PathBuf>, bak: &Path) {
    if let Some(h) = held {
        let _ = std::fs::rename(h, bak);
    }
}

fn backup_path(real: &Path) -> PathBuf {
    let mut name = real.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    real.with_file_name(name)
}

/// Reads `path` if it is there: a regular file (no link followed) of at most
/// [`MAX_FILE_BYTES`].
fn read(path: &Path) -> Result<Option<(String, std::fs::Permissions)>, String> {
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking: a FIFO planted in its place must not hang the open.
        opts.custom_flags(nofollow() | rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let f = match opts.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
    };
    let meta = f.metadata().map_err(err)?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file; left as it is", path.display()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("{} is larger than {} MiB; left as it is", path.display(), MAX_FILE_BYTES >> 20));
    }
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(err)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("{} is larger than {} MiB; left as it is", path.display(), MAX_FILE_BYTES >> 20));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text; left as it is", path.display()))?;
    Ok(Some((text, meta.permissions())))
}

#[cfg(unix)]
fn nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// The mode of a file written by [`Temp::write`].
#[derive(Debug, Clone, Copy)]
enum Mode<'a> {
    /// As the file it replaces.
    Keep(&'a std::fs::Permissions),
    /// Owner only (0600).
    Private,
    /// As any new file (0666 less the umask).
    Default,
}

/// A randomly named file next to the one it stands for, removed on drop unless renamed
/// into place.
#[derive(Debug)]
struct Temp(PathBuf);

impl Temp {
    /// A fresh name next to `path` (same folder, so a rename is atomic).
    fn name(path: &Path, what: &str) -> PathBuf {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        dir.join(format!(".{name}.{:016x}.mcp-install.{what}", rand::random::<u64>()))
    }

    /// Writes `bytes` to a new file next to `path`, created exclusively without following
    /// links, its mode set on the handle, synced.
    fn write(path: &Path, bytes: &[u8], mode: Mode<'_>) -> std::io::Result<Self> {
        let tmp = Self::name(path, "tmp");
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.custom_flags(nofollow()).mode(if matches!(mode, Mode::Default) { 0o666 } else { 0o600 });
        }
        let mut f = opts.open(&tmp)?;
        // Ours from here on: removed again if anything below fails.
        let tmp = Self(tmp);
        if let Mode::Keep(perms) = mode {
            #[cfg(unix)]
            f.set_permissions(perms.clone())?;
            #[cfg(not(unix))]
            let _ = perms;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        // Closed (at return) before any rename: Windows renames open files less willingly.
        Ok(tmp)
    }

    /// Moves whatever is at `path` (a regular file, checked when the host file was opened)
    /// to a fresh name next to it, kept until the new file is in place (or put back by
    /// [`restore`]); `None` when nothing is there.
    fn hold(path: &Path) -> std::io::Result<Option<PathBuf>> {
        let to = Self::name(path, "old");
        match std::fs::rename(path, &to) {
            Ok(()) => Ok(Some(to)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Renames this file over `path` (a link there is replaced, never followed).
    fn rename_over(mut self, path: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.0, path)?;
        // Renamed: nothing left to remove.
        self.0 = PathBuf::new();
        Ok(())
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.0.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

/// Syncs the folder of `path`, so renames in it reach the disk.
fn sync_dir(path: &Path) {
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests;
