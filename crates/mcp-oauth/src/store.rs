//! Token stores: where client registrations (per issuer) and tokens (per issuer and resource)
//! are kept. [`MemoryStore`] by default; [`FileStore`] writes one JSON file with mode 0600.

use crate::error::OAuthError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
pub struct Session {
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
    pub sessions: Vec<Session>,
}

impl StoreData {
    /// The session of `server_url`, if any.
    pub fn session(&self, server_url: &str) -> Option<&Session> {
        self.sessions.iter().find(|s| s.server_url == server_url)
    }

    /// Replaces (or, with `None`, removes) the session of `server_url`.
    pub fn set_session(&mut self, server_url: &str, session: Option<Session>) {
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
}

/// A store that lives as long as the process.
#[derive(Debug, Default)]
pub struct MemoryStore(Mutex<StoreData>);

impl TokenStore for MemoryStore {
    fn load(&self) -> Result<StoreData, OAuthError> {
        Ok(self.0.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    fn save(&self, data: &StoreData) -> Result<(), OAuthError> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = data.clone();
        Ok(())
    }
}

/// A JSON file readable by its owner only (0600; its directory is created 0700).
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// A store at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn store_err(path: &Path, e: std::io::Error) -> OAuthError {
    OAuthError::Store(format!("{}: {e}", path.display()), Some(mcp_client::ErrorSource::new(e)))
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
        use std::io::Write;
        let dir = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        create_private_dir(dir).map_err(|e| store_err(dir, e))?;
        let tmp = self.path.with_extension(format!("tmp{}", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let json = serde_json::to_vec_pretty(data)
            .map_err(|e| OAuthError::Store(e.to_string(), Some(mcp_client::ErrorSource::new(e))))?;
        let mut f = opts.open(&tmp).map_err(|e| store_err(&tmp, e))?;
        set_private(&tmp, 0o600).map_err(|e| store_err(&tmp, e))?;
        f.write_all(&json).and_then(|()| f.sync_all()).map_err(|e| store_err(&tmp, e))?;
        drop(f);
        std::fs::rename(&tmp, &self.path).map_err(|e| store_err(&self.path, e))
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
            Some(Session {
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
}
