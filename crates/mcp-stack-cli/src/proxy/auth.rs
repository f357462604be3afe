//! The proxy's own credentials for an HTTP upstream (never the downstream client's token).
//!
//! In order: an `Authorization` given with `--header` (sent as is); the tokens `mcp auth login
//! URL` stored (refreshed when they expire or the upstream answers 401), or the client
//! credentials grant when `MCP_OAUTH_CLIENT_CREDENTIALS=1`; else, with `--login` (the default
//! when stderr is a terminal), the browser flow on the first 401, with a loopback redirect,
//! its tokens stored like `mcp auth login`'s. Nothing is ever written to stdout, which is the
//! protocol channel of `--stdio`.

use mcp_oauth::{FileStore, LoopbackBrowser, OAuthProvider};
use std::sync::Arc;

/// The provider to authorize upstream requests with, if any.
pub async fn provider(
    url: &str,
    headers: &[(String, String)],
    login: bool,
) -> std::io::Result<Option<Arc<OAuthProvider>>> {
    if headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization")) {
        return Ok(None);
    }
    if let Some(p) = crate::client::auth::provider_for(url) {
        return Ok(Some(p));
    }
    if !login {
        return Ok(None);
    }
    let err = |e: String| std::io::Error::other(format!("OAuth for {url}: {e}"));
    let store = Arc::new(FileStore::new(crate::client::auth::store_path().map_err(err)?));
    let browser = LoopbackBrowser::bind(0).await.map_err(|e| err(e.to_string()))?;
    let browser = browser.opener(Arc::new(|u: &str| {
        eprintln!(
            "mcp proxy: the upstream needs authorization. Opening the browser; if it does not open, visit:\n  {u}"
        );
        if let Err(e) = webbrowser::open(u) {
            eprintln!("mcp proxy: (could not open a browser: {e})");
        }
        Ok(())
    }));
    let provider = OAuthProvider::builder(url)
        .client_name("mcp proxy")
        .store(store)
        .user_agent(Arc::new(browser))
        .build()
        .map_err(|e| err(e.to_string()))?;
    Ok(Some(Arc::new(provider)))
}
