//! Token stores: where client registrations (per issuer) and tokens (per issuer and resource)
//! are kept. [`MemoryStore`] by default; [`FileStore`] writes one JSON file with mode 0600.

use crate::error::OAuthError;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A client registration at one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRegistration {
    /// The client id (a URL for Client ID Metadata Documents).
    pub client_id: String,
    /// The client secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post`, `private_key_jwt` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The redirect URIs it was registered with.
    #[serde(default)]
    pub redirect_uris: Vec<String>,
}

impl std::fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("token_endpoint_auth_method", &self.token_endpoint_auth_method)
            .field("redirect_uris", &self.redirect_uris)
            .finish()
    }
}

/// Tokens issued by one authorization server for one resource.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// `Bearer` or `DPoP`.
    pub token_type: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Expiry (seconds since the Unix epoch), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes requested for it.
    #[serde(default)]
    pub requested_scopes: Vec<String>,
    /// The scopes granted (the response's `scope`, else the requested ones).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// For DPoP-bound tokens, the thumbprint of the key they are bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSet")
            .field("token_type", &self.token_type)
            .field("refresh_token", &self.refresh_token.is_some())
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl TokenSet {
    /// Whether the access token expires within `margin_secs` of `now`.
    pub fn expires_within(&self, now: u64, margin_secs: u64) -> bool {
        self.expires_at.is_some_and(|t| t <= now + margin_secs)
    }
}

/// The tokens of one MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredAuthorization {
    /// The MCP server URL the tokens were obtained for.
    pub server_url: String,
    /// The protected resource (`resource` of its metadata).
    pub resource: String,
    /// The issuer of the tokens.
    pub issuer: String,
    /// The tokens.
    pub tokens: TokenSet,
}

/// Everything a store keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreData {
    /// Client registrations, keyed by issuer.
    #[serde(default)]
    pub clients: BTreeMap<String, ClientRegistration>,
    /// Tokens per MCP server.
    #[serde(default)]
    pub sessions: Vec<StoredAuthorization>,
    /// The issuer pre-registered credentials without a named issuer were first used with,
    /// keyed by client id: they are refused for any other issuer.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub client_issuers: BTreeMap<String, String>,
}

impl StoreData {
    /// The session of `server_url`, if any.
    pub fn session(&self, server_url: &str) -> Option<&StoredAuthorization> {
        self.sessions.iter().find(|s| s.server_url == server_url)
    }

    /// Replaces (or, with `None`, removes) the session of `server_url`.
    pub fn set_session(&mut self, server_url: &str, session: Option<StoredAuthorization>) {
        self.sessions.retain(|s| s.server_url != server_url);
        if let Some(s) = session {
            self.sessions.push(s);
        }
    }
}

/// Persistence for registrations and tokens (load, modify, save).
pub trait TokenStore: Send + Sync + std::fmt::Debug + 'static {
    /// Everything stored (empty when nothing was saved yet).
    fn load(&self) -> Result<StoreData, OAuthError>;
    /// Replaces what is stored.
    fn save(&self, data: &StoreData) -> Result<(), OAuthError>;
    /// Read-modify-write: loads, applies `f`, saves, and returns what was saved. Stores shared
    /// between processes hold a lock throughout, so concurrent updates are not lost; the
    /// default implementation (load then save) does not.
    fn update(&self, f: &mut dyn FnMut(&mut StoreData)) -> Result<StoreData, OAuthError> {
        let mut data = self.load()?;
        f(&mut data);
        self.save(&data)?;
        Ok(data)
    }
}

/// A store that lives as long as the process.
#[derive(Debug, Default)]
pub struct MemoryStore(Mutex<StoreData>);

impl TokenStore for MemoryStore {
    fn load(&self) -> Result<StoreData, OAuthError> {
        Ok(self.0.lock().clone())
    }

    fn save(&self, data: &StoreData) -> Result<(), OAuthError> {
        *self.0.lock() = data.clone();
        Ok(())
    }

    fn update(&self, f: &mut dyn FnMut(&mut StoreData)) -> Result<StoreData, OAuthError> {
        let mut data = self.0.lock();
        f(&mut data);
        Ok(data.clone())
    }
}

/// A JSON file readable by its owner only (0600; its directory is created 0700).
///
/// Writes go to a temporary file with a random name next to it, created exclusively
/// (`O_CREAT|O_EXCL`, and `O_NOFOLLOW` on Unix: a planted file or symlink makes the write fail
/// instead of being followed), mode 0600, synced, then renamed over the store. Updates
/// ([`TokenStore::update`]) and saves hold an exclusive lock on `<file>.lock` (`flock` on Unix;
/// elsewhere the lock file itself, created exclusively and taken over when older than
/// [`FileStore::STALE_LOCK`]), waiting at most [`FileStore::lock_timeout`] (default 10 s) for
/// another process before failing with a store error.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
    lock_timeout: Duration,
}

impl FileStore {
    /// Default of [`FileStore::lock_timeout`].
    pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);
    /// Age after which a lock file left by a crashed process is taken over (non-Unix only).
    pub const STALE_LOCK: Duration = Duration::from_secs(30);

    /// A store at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into(), lock_timeout: Self::DEFAULT_LOCK_TIMEOUT }
    }

    /// How long to wait for another process's lock before failing (default 10 s).
    pub fn lock_timeout(mut self, t: Duration) -> Self {
        self.lock_timeout = t;
        self
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn dir(&self) -> &Path {
        self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
    }

    fn lock_path(&self) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        self.path.with_file_name(name)
    }

    fn lock(&self) -> Result<StoreLock, OAuthError> {
        let dir = self.dir();
        create_private_dir(dir).map_err(|e| store_err(dir, e))?;
        let path = self.lock_path();
        StoreLock::acquire(&path, self.lock_timeout).map_err(|e| store_err(&path, e))
    }

    fn write(&self, data: &StoreData) -> Result<(), OAuthError> {
        use std::io::Write;
        let json = serde_json::to_vec_pretty(data)
            .map_err(|e| OAuthError::Store(e.to_string(), Some(mcp_client::ErrorSource::new(e))))?;
        let name = self.path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let tmp = self.dir().join(format!(".{name}.{:016x}.tmp", rand::random::<u64>()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600).custom_flags(nofollow());
        }
        let mut f = opts.open(&tmp).map_err(|e| store_err(&tmp, e))?;
        let written =
            set_private(&tmp, 0o600).and_then(|()| f.write_all(&json)).and_then(|()| f.sync_all()).and_then(|()| {
                drop(f);
                std::fs::rename(&tmp, &self.path)
            });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(store_err(&self.path, e));
        }
        Ok(())
    }
}

#[cfg(unix)]
fn nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

fn store_err(path: &Path, e: std::io::Error) -> OAuthError {
    OAuthError::Store(format!("{}: {e}", path.display()), Some(mcp_client::ErrorSource::new(e)))
}

/// An exclusive lock between processes on a store's lock file, released on drop.
struct StoreLock {
    #[cfg(unix)]
    _file: std::fs::File,
    #[cfg(not(unix))]
    path: PathBuf,
}

impl StoreLock {
    #[cfg(unix)]
    fn acquire(path: &Path, timeout: Duration) -> std::io::Result<Self> {
        use rustix::fs::{flock, FlockOperation};
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(nofollow())
            .open(path)?;
        poll_lock(timeout, || match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(true),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK || e == rustix::io::Errno::INTR => Ok(false),
            Err(e) => Err(e.into()),
        })?;
        Ok(Self { _file: file })
    }

    #[cfg(not(unix))]
    fn acquire(path: &Path, timeout: Duration) -> std::io::Result<Self> {
        poll_lock(timeout, || match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let stale = std::fs::metadata(path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > FileStore::STALE_LOCK);
                if stale {
                    tracing::warn!(path = %path.display(), "taking over a stale token store lock");
                    let _ = std::fs::remove_file(path);
                }
                Ok(false)
            }
            Err(e) => Err(e),
        })?;
        Ok(Self { path: path.to_owned() })
    }
}

/// Calls `attempt` every 10 ms until it takes the lock (`true`), fails, or `timeout` passes.
/// The store's API is synchronous, so this blocks the calling thread; only while another
/// process holds the lock.
fn poll_lock(timeout: Duration, mut attempt: impl FnMut() -> std::io::Result<bool>) -> std::io::Result<()> {
    let start = Instant::now();
    while !attempt()? {
        if start.elapsed() >= timeout {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("locked by another process for more than {timeout:?}"),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

#[cfg(not(unix))]
impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl TokenStore for FileStore {
    fn load(&self) -> Result<StoreData, OAuthError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                let what = format!("{}: invalid contents: {e}", self.path.display());
                OAuthError::Store(what, Some(mcp_client::ErrorSource::new(e)))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(StoreData::default()),
            Err(e) => Err(store_err(&self.path, e)),
        }
    }

    fn save(&self, data: &StoreData) -> Result<(), OAuthError> {
        let _lock = self.lock()?;
        self.write(data)
    }

    fn update(&self, f: &mut dyn FnMut(&mut StoreData)) -> Result<StoreData, OAuthError> {
        let _lock = self.lock()?;
        let mut data = self.load()?;
        f(&mut data);
        self.write(&data)?;
        Ok(data)
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

#[cfg(unix)]
fn set_private(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_private(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_store_round_trip_with_private_mode() {
        let dir = std::env::temp_dir().join(format!("mcp-oauth-store-{}", std::process::id()));
        let store = FileStore::new(dir.join("sub/tokens.json"));
        assert_eq!(store.load().unwrap(), StoreData::default());
        let mut data = StoreData::default();
        data.clients.insert(
            "https://as".into(),
            ClientRegistration {
                client_id: "c".into(),
                client_secret: Some("s".into()),
                token_endpoint_auth_method: None,
                redirect_uris: vec![],
            },
        );
        data.set_session(
            "https://rs/mcp",
            Some(StoredAuthorization {
                server_url: "https://rs/mcp".into(),
                resource: "https://rs/mcp".into(),
                issuer: "https://as".into(),
                tokens: TokenSet {
                    access_token: "at".into(),
                    token_type: "Bearer".into(),
                    refresh_token: None,
                    expires_at: Some(5),
                    requested_scopes: vec![],
                    scopes: vec![],
                    dpop_jkt: None,
                },
            }),
        );
        store.save(&data).unwrap();
        assert_eq!(store.load().unwrap(), data);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(!format!("{data:?}").contains("\"at\""));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn concurrent_updates_are_not_lost() {
        let dir = std::env::temp_dir().join(format!("mcp-oauth-store-race-{}", std::process::id()));
        let path = dir.join("tokens.json");
        let threads: Vec<_> = (0..4)
            .map(|t| {
                // One store value per thread: like separate processes, they share only the file.
                let store = FileStore::new(&path);
                std::thread::spawn(move || {
                    for i in 0..25 {
                        let reg = ClientRegistration {
                            client_id: format!("c{t}-{i}"),
                            client_secret: None,
                            token_endpoint_auth_method: None,
                            redirect_uris: vec![],
                        };
                        store
                            .update(&mut |d| {
                                d.clients.insert(format!("https://as{t}-{i}"), reg.clone());
                            })
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(FileStore::new(&path).load().unwrap().clients.len(), 100);
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[test]
    fn planted_symlinks_are_not_followed() {
        let dir = std::env::temp_dir().join(format!("mcp-oauth-store-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        // The old temporary name was predictable: tokens.tmp<pid>. A symlink planted there (or
        // at the lock file) must not make the store write through it.
        std::os::unix::fs::symlink(&victim, dir.join(format!("tokens.tmp{}", std::process::id()))).unwrap();
        let store = FileStore::new(dir.join("tokens.json"));
        store.save(&StoreData::default()).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        std::fs::remove_file(dir.join("tokens.json.lock")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("tokens.json.lock")).unwrap();
        assert!(store.save(&StoreData::default()).is_err(), "the lock file is opened with O_NOFOLLOW");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        let _ = std::fs::remove_dir_all(dir);
    }
}
