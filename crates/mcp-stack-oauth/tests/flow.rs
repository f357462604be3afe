//! The OAuth client against a small authorization + resource server on 127.0.0.1.

mod support;

use mcp_client::transport::http::HttpTransport;
use mcp_client::{Client, ClientBuilder, ClientError, TransportError};
use mcp_oauth::{FileStore, HeadlessRedirect, OAuthError, OAuthProvider, TokenStore};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::{Cfg, Mock};

const REDIRECT: &str = "http://127.0.0.1:1/callback";

fn provider(mock: &Mock) -> mcp_oauth::OAuthBuilder {
    OAuthProvider::builder(&mock.url())
        .client_name("test")
        .user_agent(Arc::new(HeadlessRedirect::new(REDIRECT).unwrap()))
}

async fn connect(mock: &Mock, p: Arc<OAuthProvider>) -> Result<Client, ClientError> {
    let transport = HttpTransport::builder(&mock.url()).auth(p).build()?;
    let c = ClientBuilder::new("t", "1").allow_legacy(false).connect(transport);
    tokio::time::timeout(Duration::from_secs(20), c).await.expect("bounded")
}

fn auth_error(r: Result<Client, ClientError>) -> String {
    match r {
        Err(ClientError::Transport(TransportError::Auth(m, _))) => m,
        other => panic!("expected an authorization failure, got {other:?}"),
    }
}

#[tokio::test]
async fn full_login_flow_stores_tokens_privately() {
    let mock = Mock::start(Cfg::default()).await;
    let dir = std::env::temp_dir().join(format!("mcp-oauth-flow-{}", std::process::id()));
    let store = Arc::new(FileStore::new(dir.join("tokens.json")));
    let p = Arc::new(provider(&mock).store(store.clone()).build().unwrap());
    let client = connect(&mock, p.clone()).await.unwrap();
    client.list_tools().await.unwrap();
    client.call_tool("t", json!({})).await.unwrap();

    let reg = &mock.requests("/register")[0].json();
    assert_eq!(reg["application_type"], "native");
    assert_eq!(reg["redirect_uris"], json!([REDIRECT]));
    assert!(reg["grant_types"].as_array().unwrap().contains(&json!("refresh_token")));
    let authz = &mock.requests("/authorize")[0].query;
    assert_eq!(authz["code_challenge_method"], "S256");
    assert_eq!(authz["resource"], mock.url());
    assert_eq!(authz["scope"], "read offline_access"); // challenge scope + offline_access (advertised)
    assert_eq!(authz["client_id"], "client-1");
    let token = mock.requests("/token")[0].form();
    assert_eq!(token["grant_type"], "authorization_code");
    assert_eq!(token["resource"], mock.url());
    assert_eq!(token["redirect_uri"], REDIRECT);
    assert_eq!(mcp_oauth_sha(&token["code_verifier"]), authz["code_challenge"]);
    // Tokens travel in the Authorization header only.
    let mcp = mock.requests("/mcp");
    assert!(mcp.iter().skip(1).all(|r| r.headers["authorization"].starts_with("Bearer at-")));
    assert!(mock.requests("/authorize").iter().all(|r| !r.query.values().any(|v| v.starts_with("at-"))));
    // Stored per issuer, file mode 0600.
    let data = store.load().unwrap();
    assert_eq!(data.clients[&mock.base].client_id, "client-1");
    assert_eq!(data.session(&mock.url()).unwrap().issuer, mock.base);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(store.path()).unwrap().permissions().mode() & 0o777, 0o600);
    }
    // A second provider on the same store reuses the tokens: no new authorization.
    let p2 = Arc::new(provider(&mock).store(store.clone()).build().unwrap());
    connect(&mock, p2).await.unwrap().list_tools().await.unwrap();
    assert_eq!(mock.requests("/authorize").len(), 1);
    let _ = std::fs::remove_dir_all(dir);
}

fn mcp_oauth_sha(v: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(v.as_bytes()))
}

#[tokio::test]
async fn refreshes_before_expiry() {
    let mock = Mock::start(Cfg { expires_in: 5, ..Cfg::default() }).await;
    let p = Arc::new(provider(&mock).build().unwrap());
    let client = connect(&mock, p.clone()).await.unwrap();
    client.list_tools().await.unwrap();
    let grants: Vec<String> = mock.requests("/token").iter().map(|r| r.form()["grant_type"].clone()).collect();
    assert_eq!(grants[0], "authorization_code");
    assert!(grants[1..].iter().all(|g| g == "refresh_token") && grants.len() >= 2, "{grants:?}");
    assert_eq!(mock.requests("/authorize").len(), 1);
    assert_eq!(mock.requests("/token").last().unwrap().form()["resource"], mock.url());
}

#[tokio::test]
async fn refreshes_after_401() {
    let mock = Mock::start(Cfg::default()).await;
    let p = Arc::new(provider(&mock).build().unwrap());
    let client = connect(&mock, p.clone()).await.unwrap();
    mock.revoke_all();
    client.list_tools().await.unwrap();
    let grants: Vec<String> = mock.requests("/token").iter().map(|r| r.form()["grant_type"].clone()).collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(mock.requests("/authorize").len(), 1);
}

#[tokio::test]
async fn steps_up_with_the_union_of_scopes_and_stops() {
    let mock = Mock::start(Cfg { call_scope: "write".into(), ..Cfg::default() }).await;
    let p = Arc::new(provider(&mock).build().unwrap());
    let client = connect(&mock, p.clone()).await.unwrap();
    client.call_tool("t", json!({})).await.unwrap();
    let scopes: Vec<String> = mock.requests("/authorize").iter().map(|r| r.query["scope"].clone()).collect();
    assert_eq!(scopes, ["read offline_access", "read offline_access write"]);

    // A scope the AS never grants: one step-up, then the 403 reaches the caller.
    let mock = Mock::start(Cfg { call_scope: "admin".into(), ..Cfg::default() }).await;
    let p = Arc::new(provider(&mock).build().unwrap());
    let client = connect(&mock, p).await.unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(err, ClientError::AuthRequired { status: 403, .. }), "{err:?}");
    assert_eq!(mock.requests("/authorize").len(), 2);
}

#[tokio::test]
async fn rejects_metadata_with_another_issuer() {
    let mock =
        Mock::start(Cfg { metadata_issuer: Some("https://attacker.example.com".into()), ..Cfg::default() }).await;
    let msg = auth_error(connect(&mock, Arc::new(provider(&mock).build().unwrap())).await);
    assert!(msg.contains("issuer"), "{msg}");
    assert!(mock.requests("/register").is_empty() && mock.requests("/authorize").is_empty());
}

#[tokio::test]
async fn rejects_resource_metadata_for_another_resource() {
    let mock = Mock::start(Cfg { prm_resource: Some("https://evil.example.com/mcp".into()), ..Cfg::default() }).await;
    let msg = auth_error(connect(&mock, Arc::new(provider(&mock).build().unwrap())).await);
    assert!(msg.contains("resource"), "{msg}");
    assert!(mock.requests("/.well-known/oauth-authorization-server").is_empty());
    assert!(mock.requests("/authorize").is_empty());
}

#[tokio::test]
async fn rejects_wrong_or_missing_iss_before_redeeming_the_code() {
    // A foreign issuer, none although advertised, and the issuer with a trailing slash.
    for iss in ["https://evil.example.com", "", "SLASH"] {
        let mock = Mock::start(Cfg { iss: Some(iss.to_owned()), ..Cfg::default() }).await;
        let msg = auth_error(connect(&mock, Arc::new(provider(&mock).build().unwrap())).await);
        assert!(msg.contains("iss"), "{iss}: {msg}");
        assert_eq!(mock.requests("/authorize").len(), 1);
        assert!(mock.requests("/token").is_empty(), "{iss}: the code was redeemed");
    }
}

#[tokio::test]
async fn rejects_a_redirect_to_a_non_loopback_http_url() {
    let mock =
        Mock::start(Cfg { redirect_to: Some("http://evil.example.com/callback".into()), ..Cfg::default() }).await;
    let msg = auth_error(connect(&mock, Arc::new(provider(&mock).build().unwrap())).await);
    assert!(msg.contains("plain http"), "{msg}");
    assert!(mock.requests("/token").is_empty());
    // Nor may the client itself use such a redirect URI.
    let ua = Arc::new(HeadlessRedirect::new("http://evil.example.com/callback").unwrap());
    let err = OAuthProvider::builder(&mock.url()).user_agent(ua).build().unwrap_err();
    assert!(matches!(err, OAuthError::InsecureUrl { .. }), "{err:?}");
}

#[tokio::test]
async fn refuses_an_authorization_server_without_s256() {
    let mock = Mock::start(Cfg { pkce_methods: vec!["plain".into()], ..Cfg::default() }).await;
    let msg = auth_error(connect(&mock, Arc::new(provider(&mock).build().unwrap())).await);
    assert!(msg.contains("S256"), "{msg}");
    assert!(mock.requests("/authorize").is_empty() && mock.requests("/register").is_empty());
}

#[tokio::test]
async fn a_resource_metadata_hint_on_another_origin_is_not_fetched() {
    // Another port on the same host is another origin: it gets no request at all, and the
    // client finds the metadata at the MCP server's own well-known URL instead.
    let elsewhere = Mock::start(Cfg::default()).await;
    for hint in [
        format!("{}/.well-known/oauth-protected-resource/mcp", elsewhere.base),
        format!("{}/internal/admin", elsewhere.base),
    ] {
        let mock = Mock::start(Cfg { hint: Some(hint), ..Cfg::default() }).await;
        let p = Arc::new(provider(&mock).build().unwrap());
        connect(&mock, p).await.unwrap().list_tools().await.unwrap();
        assert_eq!(mock.requests("/.well-known/oauth-protected-resource/mcp").len(), 1);
    }
    assert!(elsewhere.all_requests().is_empty(), "{:?}", elsewhere.all_requests());
    // (The default mock's hint, on its own origin, is followed: see the other tests.)
}

#[tokio::test]
async fn pre_registered_credentials_of_another_issuer_are_not_sent() {
    let mock = Mock::start(Cfg::default()).await;
    let creds = mcp_oauth::StaticClient::for_issuer("http://127.0.0.1:1", "cid", Some("s3cret"));
    let p = Arc::new(
        OAuthProvider::builder(&mock.url())
            .grant(mcp_oauth::Grant::ClientCredentials)
            .static_client(creds)
            .build()
            .unwrap(),
    );
    let msg = auth_error(connect(&mock, p).await);
    assert!(msg.contains("http://127.0.0.1:1") && msg.contains(&mock.base), "{msg}");
    assert!(mock.requests("/token").is_empty());
    // Without an issuer: bound to the first one (here the mock), refused elsewhere.
    let store = Arc::new(mcp_oauth::MemoryStore::default());
    let other = Mock::start(Cfg::default()).await;
    let mut data = mcp_oauth::StoreData::default();
    data.client_issuers.insert("cid".into(), other.base.clone());
    store.save(&data).unwrap();
    let p = Arc::new(
        OAuthProvider::builder(&mock.url())
            .grant(mcp_oauth::Grant::ClientCredentials)
            .static_client(mcp_oauth::StaticClient::new("cid", Some("s3cret")))
            .store(store)
            .build()
            .unwrap(),
    );
    let msg = auth_error(connect(&mock, p).await);
    assert!(msg.contains(&other.base) && msg.contains(&mock.base), "{msg}");
    assert!(mock.requests("/token").is_empty());
}
