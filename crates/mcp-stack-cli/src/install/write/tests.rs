use super::*;

/// A fresh folder, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("mcp-install-write-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Self(d)
    }

    /// The names in the folder, sorted.
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_replace_that_fails_at_the_last_step_keeps_the_old_backup() {
    let d = Dir::new("last-step");
    let file = d.0.join("host.json");
    let bak = d.0.join("host.json.bak");
    std::fs::write(&file, "current").unwrap();
    std::fs::write(&bak, "older").unwrap();
    let host = HostFile::open(&file, None).unwrap();
    // The file turns into a folder before the write: renaming the new file over it fails,
    // after the backup has been written.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let err = host.replace("new", false).unwrap_err();
    assert!(err.contains("host.json"), "{err}");
    assert_eq!(std::fs::read_to_string(&bak).unwrap(), "older", "the old backup was replaced");
    assert!(std::fs::metadata(&file).unwrap().is_dir());
    assert_eq!(d.names(), ["host.json", "host.json.bak"], "temporary files left behind");
}

#[test]
fn a_replace_that_fails_without_an_old_backup_leaves_none() {
    let d = Dir::new("no-backup");
    let file = d.0.join("host.json");
    std::fs::write(&file, "current").unwrap();
    let host = HostFile::open(&file, None).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    host.replace("new", false).unwrap_err();
    assert_eq!(d.names(), ["host.json"]);
}

#[test]
fn a_replace_swaps_in_the_new_file_and_the_new_backup() {
    let d = Dir::new("ok");
    let file = d.0.join("host.json");
    std::fs::write(&file, "current").unwrap();
    std::fs::write(d.0.join("host.json.bak"), "older").unwrap();
    let host = HostFile::open(&file, None).unwrap();
    let saved = host.replace("new", false).unwrap();
    assert_eq!(saved.as_deref(), Some(d.0.join("host.json.bak").as_path()));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
    assert_eq!(std::fs::read_to_string(d.0.join("host.json.bak")).unwrap(), "current");
    assert_eq!(d.names(), ["host.json", "host.json.bak"]);
}
