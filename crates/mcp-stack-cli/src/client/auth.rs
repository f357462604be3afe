//! `mcp auth login|logout|status URL`: OAuth 2.1 for HTTP servers.
//!
//! Registrations (keyed by issuer) and tokens (per server, with their issuer) are kept in one
//! JSON file, mode 0600, under the user's config directory: `$MCP_CONFIG_DIR/oauth.json`, else
//! `$XDG_CONFIG_HOME/mcp/oauth.json`, else `~/.config/mcp/oauth.json`. The other client
//! commands use the stored tokens of an HTTP target (refreshing them as needed) but never start
//! a new authorization; with `MCP_OAUTH_CLIENT_CREDENTIALS=1` they obtain tokens with the
//! client credentials grant instead. Client credentials come from flags or from
//! `MCP_OAUTH_CLIENT_ID`, `MCP_OAUTH_CLIENT_SECRET` and `MCP_OAUTH_CLIENT_KEY` (a PEM file).
//! They are sent only to the authorization server that issued them: the one named with
//! `--client-issuer` / `MCP_OAUTH_CLIENT_ISSUER`, else the first one they are used with (the
//! binding is kept in the store, `client_issuers`); another issuer is refused with an error
//! naming both. Tokens are never printed.

use clap::{Args, Subcommand};
use mcp_client::transport::http::HttpTransport;
use mcp_client::{ClientBuilder, ClientError};
use mcp_oauth::{
    FileStore, Grant, LoopbackBrowser, OAuthProvider, SigningKey, StaticClient, StoredAuthorization, TokenStore,
};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// `mcp auth ...`.
#[derive(Debug, Subcommand)]
pub enum AuthCmd {
    /// Authorize at an OAuth-protected HTTP server: in the browser (loopback redirect), or with
    /// the client credentials grant.
    Login {
        /// The server's MCP endpoint URL.
        url: String,
        /// Pre-registered client credentials.
        #[command(flatten)]
        credentials: Credentials,
        /// Scope to request (repeatable; default: what the server asks for).
        #[arg(long = "scope", value_name = "SCOPE")]
        scopes: Vec<String>,
        /// Loopback port for the redirect (default: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Print the authorization URL instead of opening the browser.
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget the tokens of a server (its client registration is kept).
    Logout {
        /// The server's MCP endpoint URL.
        url: String,
    },
    /// Show the stored authorization of a server, or of every server (tokens are not shown).
    Status {
        /// The server's MCP endpoint URL (default: all).
        url: Option<String>,
    },
}

/// Pre-registered client credentials.
#[derive(Debug, Clone, Default, Args)]
pub struct Credentials {
    /// Pre-registered client id (or MCP_OAUTH_CLIENT_ID).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// Client secret (or MCP_OAUTH_CLIENT_SECRET, which keeps it out of the process list).
    #[arg(long, value_name = "SECRET")]
    pub client_secret: Option<String>,
    /// PEM file with the client's P-256 private key, for private_key_jwt (or MCP_OAUTH_CLIENT_KEY).
    #[arg(long, value_name = "FILE")]
    pub client_key: Option<PathBuf>,
    /// Issuer of the client credentials: they are sent to no other authorization server (or
    /// MCP_OAUTH_CLIENT_ISSUER; default: bound to the first one they are used with).
    #[arg(long, value_name = "URL")]
    pub client_issuer: Option<String>,
    /// Use the client credentials grant (a machine client, no browser).
    #[arg(long)]
    pub client_credentials: bool,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Credentials {
    /// Flags, completed from the environment.
    fn with_env(mut self) -> Self {
        self.client_id = self.client_id.or_else(|| env("MCP_OAUTH_CLIENT_ID"));
        self.client_secret = self.client_secret.or_else(|| env("MCP_OAUTH_CLIENT_SECRET"));
        self.client_key = self.client_key.or_else(|| env("MCP_OAUTH_CLIENT_KEY").map(PathBuf::from));
        self.client_issuer = self.client_issuer.or_else(|| env("MCP_OAUTH_CLIENT_ISSUER"));
        self.client_credentials |= env("MCP_OAUTH_CLIENT_CREDENTIALS").is_some_and(|v| v == "1" || v == "true");
        self
    }

    fn static_client(&self) -> Result<Option<StaticClient>, String> {
        let Some(id) = &self.client_id else {
            if self.client_credentials {
                return Err("the client credentials grant needs --client-id (or MCP_OAUTH_CLIENT_ID)".into());
            }
            return Ok(None);
        };
        let mut c = match &self.client_issuer {
            Some(issuer) => StaticClient::for_issuer(issuer, id, self.client_secret.as_deref()),
            None => StaticClient::new(id, self.client_secret.as_deref()),
        };
        if let Some(path) = &self.client_key {
            let pem = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            c = c.private_key(SigningKey::from_pem(&pem).map_err(|e| format!("{}: {e}", path.display()))?);
        }
        Ok(Some(c))
    }
}

/// The file the tokens are kept in.
pub fn store_path() -> Result<PathBuf, String> {
    let dir = env("MCP_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| env("XDG_CONFIG_HOME").map(|d| PathBuf::from(d).join("mcp")))
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config").join("mcp")))
        .ok_or("cannot find a config directory: set MCP_CONFIG_DIR or HOME")?;
    Ok(dir.join("oauth.json"))
}

/// The provider the other client commands attach to an HTTP target: stored tokens only (or
/// the client credentials grant when configured through the environment). `None` when there
/// is nothing to authorize with.
pub fn provider_for(url: &str) -> Option<Arc<OAuthProvider>> {
    let creds = Credentials::default().with_env();
    let store = Arc::new(FileStore::new(store_path().ok()?));
    let stored = store.load().ok()?.session(url).is_some();
    if !stored && !creds.client_credentials {
        return None;
    }
    let mut b = OAuthProvider::builder(url).client_name("mcp (command-line)").store(store);
    match creds.static_client() {
        Ok(Some(c)) => b = b.static_client(c),
        Ok(None) => {}
        Err(e) => {
            tracing::warn!("{e}");
            return None;
        }
    }
    b = b.grant(if creds.client_credentials { Grant::ClientCredentials } else { Grant::StoredOnly });
    b.build().map_err(|e| tracing::warn!(error = %e, "ignoring the stored authorization")).ok().map(Arc::new)
}

/// Runs `mcp auth ...`.
pub async fn run(cmd: AuthCmd, json: bool) -> ExitCode {
    let result = match cmd {
        AuthCmd::Login { url, credentials, scopes, port, no_browser } => {
            login(&url, credentials.with_env(), scopes, port, no_browser, json).await
        }
        AuthCmd::Logout { url } => logout(&url, json).await,
        AuthCmd::Status { url } => status(url.as_deref(), json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp: {}", super::terminal::err(&e));
            if json {
                println!("{}", json!({ "error": { "message": e } }));
            }
            ExitCode::FAILURE
        }
    }
}

/// The server's challenge to an unauthenticated request (`None` if it asked for nothing).
async fn challenge(url: &str) -> Result<Option<String>, String> {
    let transport = HttpTransport::new(url).map_err(|e| format!("{url}: {e}"))?;
    match ClientBuilder::new("mcp-cli", env!("CARGO_PKG_VERSION")).connect(transport).await {
        Ok(client) => {
            client.close().await;
            eprintln!("note: {url} answered without authorization; looking for its authorization server anyway");
            Ok(None)
        }
        Err(ClientError::AuthRequired { www_authenticate, .. }) => Ok(www_authenticate),
        Err(e) => Err(format!("{url}: {e}")),
    }
}

async fn login(
    url: &str,
    creds: Credentials,
    scopes: Vec<String>,
    port: u16,
    no_browser: bool,
    json: bool,
) -> Result<(), String> {
    let opener: Option<Opener> = (!no_browser).then(|| {
        Arc::new(|u: &str| {
            eprintln!("Opening the browser to authorize. If it does not open, visit:\n  {}", super::terminal::err(u));
            if let Err(e) = webbrowser::open(u) {
                eprintln!("(could not open a browser: {e})");
            }
        }) as Opener
    });
    let session = authorize(url, creds, scopes, port, opener).await?;
    if json {
        println!("{}", describe(&session));
    } else {
        println!("Logged in to {url} (authorization server {}).", out(&session.issuer));
        print_session(&session);
    }
    Ok(())
}

/// What shows the user the authorization page (without it the URL is printed).
pub type Opener = Arc<dyn Fn(&str) + Send + Sync>;

/// Logs in to `url` in the browser (authorization code with PKCE, a loopback redirect on any
/// free port) with the credentials of the environment, storing the tokens where `mcp auth`
/// keeps them: what `mcp inspect` runs for its Log in button. `open` shows the authorization
/// page.
pub async fn browser_login(url: &str, open: Opener) -> Result<(), String> {
    authorize(url, Credentials::default().with_env(), Vec::new(), 0, Some(open)).await.map(drop)
}

async fn authorize(
    url: &str,
    creds: Credentials,
    scopes: Vec<String>,
    port: u16,
    opener: Option<Opener>,
) -> Result<StoredAuthorization, String> {
    let store = Arc::new(FileStore::new(store_path()?));
    let www = challenge(url).await?;
    let mut b = OAuthProvider::builder(url).client_name("mcp (command-line)").store(store.clone());
    if let Some(c) = creds.static_client()? {
        b = b.static_client(c);
    }
    if !scopes.is_empty() {
        b = b.scopes(scopes);
    }
    b = if creds.client_credentials {
        b.grant(Grant::ClientCredentials)
    } else {
        let mut browser = LoopbackBrowser::bind(port).await.map_err(|e| e.to_string())?;
        if let Some(open) = opener {
            browser = browser.opener(Arc::new(move |u: &str| {
                open(u);
                Ok(())
            }));
        }
        b.user_agent(Arc::new(browser))
    };
    let provider = b.build().map_err(|e| e.to_string())?;
    provider.authorize(www.as_deref()).await.map_err(|e| format!("login to {url} failed: {e}"))?;
    let data = store.load().map_err(|e| e.to_string())?;
    data.session(url).cloned().ok_or_else(|| "the tokens were not stored".to_owned())
}

async fn logout(url: &str, json: bool) -> Result<(), String> {
    let store = FileStore::new(store_path()?);
    let mut had = false;
    store
        .update(&mut |data| {
            had = data.session(url).is_some();
            data.set_session(url, None);
        })
        .map_err(|e| e.to_string())?;
    if json {
        println!("{}", json!({ "server_url": url, "logged_out": had }));
    } else if had {
        println!("Logged out of {url}.");
    } else {
        println!("No stored authorization for {url}.");
    }
    Ok(())
}

fn status(url: Option<&str>, json: bool) -> Result<(), String> {
    let data = FileStore::new(store_path()?).load().map_err(|e| e.to_string())?;
    let sessions: Vec<&StoredAuthorization> =
        data.sessions.iter().filter(|s| url.is_none_or(|u| s.server_url == u)).collect();
    if json {
        println!("{}", Value::Array(sessions.iter().map(|s| describe(s)).collect()));
    } else if sessions.is_empty() {
        println!("No stored authorization{}.", url.map(|u| format!(" for {u}")).unwrap_or_default());
    } else {
        for s in &sessions {
            println!("{}", out(&s.server_url));
            println!("  authorization server: {}", out(&s.issuer));
            print_session(s);
        }
    }
    match (url, sessions.is_empty()) {
        (Some(u), true) => Err(format!("not logged in to {u}")),
        _ => Ok(()),
    }
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A session as JSON, without any token.
fn describe(s: &StoredAuthorization) -> Value {
    json!({
        "server_url": s.server_url,
        "resource": s.resource,
        "issuer": s.issuer,
        "token_type": s.tokens.token_type,
        "expires_at": s.tokens.expires_at,
        "expired": s.tokens.expires_at.is_some_and(|t| t <= now()),
        "scopes": s.tokens.scopes,
        "refresh_token": s.tokens.refresh_token.is_some(),
    })
}

/// Text an authorization server chose (issuer, token type, scopes), for stdout: escaped on a
/// terminal like every other server-supplied string.
fn out(s: &str) -> std::borrow::Cow<'_, str> {
    super::terminal::clean(s, super::terminal::stdout_escapes())
}

fn print_session(s: &StoredAuthorization) {
    let t = &s.tokens;
    let expiry = match t.expires_at {
        None => "no expiry given".to_owned(),
        Some(e) if e <= now() => "expired".to_owned(),
        Some(e) => format!("expires in {} min", (e - now()).div_ceil(60)),
    };
    println!(
        "  token: {}, {expiry}{}",
        out(&t.token_type),
        if t.refresh_token.is_some() { ", refreshable" } else { "" }
    );
    if !t.scopes.is_empty() {
        println!("  scopes: {}", out(&t.scopes.join(" ")));
    }
}
