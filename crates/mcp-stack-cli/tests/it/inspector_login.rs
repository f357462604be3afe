//! The inspector's Log in button, end to end in a real browser: `mcp serve everything` requires
//! a token from a small authorization server (dynamic registration, the authorization code
//! grant with PKCE, approving at once); the page shows the authorization link, a browser tab
//! follows it to the inspector's loopback redirect, the tokens are stored (in a folder of the
//! test's), and the inspector connects again with them: `admin_report`, listed only for the
//! token's `mcp:admin` scope, shows.

use crate::common::*;
use crate::inspector::Inspect;
use crate::oauth_issuer::{b64url, mint, rsa};
use crate::support::browser::{self, Browser};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

/// Codes handed out by `/authorize`, with the PKCE challenge each must be redeemed with.
type Codes = Arc<Mutex<HashMap<String, String>>>;

fn query(q: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

/// An authorization server approving every authorization request at once, its tokens for
/// `audience`.
async fn approving_issuer(audience: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let codes: Codes = Arc::default();
    let me = issuer.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let (codes, issuer, audience) = (codes.clone(), me.clone(), audience.clone());
            let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                let (codes, issuer, audience) = (codes.clone(), issuer.clone(), audience.clone());
                async move { Ok::<_, Infallible>(answer(req, &issuer, &audience, &codes).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            tokio::spawn(hyper::server::conn::http1::Builder::new().serve_connection(io, svc));
        }
    });
    issuer
}

async fn answer(
    req: http::Request<hyper::body::Incoming>,
    issuer: &str,
    audience: &str,
    codes: &Codes,
) -> http::Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let form = query(&String::from_utf8_lossy(&body.collect().await.map(|b| b.to_bytes()).unwrap_or_default()));
    let json_answer = |status: u16, v: Value| {
        let mut r = http::Response::new(Full::new(Bytes::from(v.to_string())));
        *r.status_mut() = http::StatusCode::from_u16(status).unwrap();
        r.headers_mut().insert("content-type", "application/json".parse().unwrap());
        r
    };
    match (parts.method.as_str(), parts.uri.path()) {
        (_, "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration") => json_answer(
            200,
            json!({
                "issuer": issuer, "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"), "registration_endpoint": format!("{issuer}/register"),
                "jwks_uri": format!("{issuer}/jwks"), "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
            }),
        ),
        (_, "/jwks") => json_answer(200, json!({"keys": [rsa(0).jwk.clone()]})),
        ("POST", "/register") => {
            json_answer(201, json!({"client_id": "inspector-test", "token_endpoint_auth_method": "none"}))
        }
        ("GET", "/authorize") => {
            let q = query(parts.uri.query().unwrap_or_default());
            let code = format!("code-{}", codes.lock().unwrap().len());
            codes.lock().unwrap().insert(code.clone(), q.get("code_challenge").cloned().unwrap_or_default());
            let redirect = q.get("redirect_uri").cloned().unwrap_or_default();
            let state = q.get("state").cloned().unwrap_or_default();
            let mut to = url::Url::parse(&redirect).unwrap();
            to.query_pairs_mut().append_pair("code", &code).append_pair("state", &state).append_pair("iss", issuer);
            let mut r = http::Response::new(Full::new(Bytes::new()));
            *r.status_mut() = http::StatusCode::FOUND;
            r.headers_mut().insert("location", to.as_str().parse().unwrap());
            r
        }
        ("POST", "/token") => {
            let challenge = form.get("code").and_then(|c| codes.lock().unwrap().remove(c));
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let proof = b64url(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref());
            if form.get("grant_type").map(String::as_str) != Some("authorization_code") || challenge != Some(proof) {
                return json_answer(400, json!({"error": "invalid_grant"}));
            }
            let claims = json!({"iss": issuer, "aud": audience, "sub": "ada", "scope": "mcp:admin",
                "exp": mcp_auth::now_secs() + 600});
            json_answer(
                200,
                json!({"access_token": mint(rsa(0), &claims), "token_type": "Bearer", "expires_in": 600, "scope": "mcp:admin"}),
            )
        }
        _ => json_answer(404, json!({"error": "not_found"})),
    }
}

#[test]
fn logging_in_from_the_page_connects_with_the_new_token() {
    let Some(program) = browser::program() else {
        assert!(
            std::env::var_os("MCP_TEST_SKIP_MISSING").is_some(),
            "chromium is not installed (scripts/test-deps.sh)"
        );
        eprintln!("SKIPPED: chromium is not installed");
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The server's URL is its token audience and protected-resource identifier: a port chosen
    // first (bound, then freed for the server).
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let issuer = rt.block_on(approving_issuer(resource.clone()));
    let _server = rt.block_on(async {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["serve", "everything", "--http", &format!("127.0.0.1:{port}"), "--auth-issuer", &issuer])
            .args(["--auth-audience", &resource])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        announced_addr(child.stderr.take().unwrap()).await;
        child
    });
    let store = std::env::temp_dir().join(format!("mcp-inspector-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&store);
    let i =
        Inspect::spawn_with_env(&["inspect", "--no-open", &resource], &[("MCP_CONFIG_DIR", store.to_str().unwrap())]);
    let mut b = Browser::start(&program);
    b.open(&i.url());
    b.wait_for("the refusal shown", "document.getElementById('conn').textContent.startsWith('not connected')");
    b.eval("document.getElementById('login').click()");
    let link = b.wait_for("the authorization link", "(document.querySelector('#login-card a.authorize') || {}).href");
    let link = link.as_str().unwrap().to_owned();
    assert!(link.starts_with(&format!("{issuer}/authorize?")), "{link}");
    // The user follows the link: a new tab, redirected to the inspector's loopback listener.
    b.send(None, "Target.createTarget", json!({"url": link}));

    b.wait_for("connected with the token", "document.getElementById('conn').textContent === 'connected'");
    b.eval("MI.show('tools')");
    b.wait_for(
        "the admin-only tool listed",
        "[...document.querySelectorAll('#tool-list li')].some(li => li.firstChild.textContent === 'admin_report')",
    );
    assert!(
        std::fs::read_dir(&store).is_ok_and(|mut d| d.next().is_some()),
        "the tokens are stored where mcp auth keeps them"
    );
    drop(i);
    let _ = std::fs::remove_dir_all(&store);
}
