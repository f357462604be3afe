//! A small MCP resource server + OAuth authorization server on 127.0.0.1 for the tests: raw
//! HTTP/1.1, one request per connection, behaviour set through [`Cfg`].

#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request the mock saw.
#[derive(Debug, Clone)]
pub(crate) struct Req {
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Req {
    pub(crate) fn form(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(self.body.as_bytes()).into_owned().collect()
    }
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// What the mock does.
#[derive(Debug, Clone)]
pub(crate) struct Cfg {
    /// Overrides the `issuer` of the AS metadata.
    pub metadata_issuer: Option<String>,
    /// Overrides the PRM `resource`.
    pub prm_resource: Option<String>,
    /// `code_challenge_methods_supported`.
    pub pkce_methods: Vec<String>,
    /// Overrides the `iss` of the authorization response (`Some("")` omits it, `Some("SLASH")`
    /// sends the issuer with a trailing slash).
    pub iss: Option<String>,
    /// Overrides where `/authorize` redirects to (instead of the client's redirect_uri).
    pub redirect_to: Option<String>,
    /// `expires_in` of issued tokens.
    pub expires_in: u64,
    /// Whether refresh tokens are issued.
    pub refresh: bool,
    /// Scopes the AS grants at most (requested ∩ grantable).
    pub grantable: Vec<String>,
    /// Scope in the 401 challenge.
    pub challenge_scope: String,
    /// Scope `tools/call` needs.
    pub call_scope: String,
    /// Overrides the `resource_metadata` of the 401 challenge.
    pub hint: Option<String>,
}

impl Default for Cfg {
    fn default() -> Self {
        Self {
            metadata_issuer: None,
            prm_resource: None,
            pkce_methods: vec!["S256".into()],
            iss: None,
            redirect_to: None,
            expires_in: 3600,
            refresh: true,
            grantable: vec!["read".into(), "write".into(), "offline_access".into()],
            challenge_scope: "read".into(),
            call_scope: "read".into(),
            hint: None,
        }
    }
}

#[derive(Default)]
struct Inner {
    cfg: Cfg,
    log: Vec<Req>,
    /// access token -> scopes
    tokens: HashMap<String, Vec<String>>,
    /// code -> scopes
    codes: HashMap<String, Vec<String>>,
    refresh: HashMap<String, Vec<String>>,
    counter: u64,
}

/// The running mock.
#[derive(Clone)]
pub(crate) struct Mock {
    pub base: String,
    inner: Arc<Mutex<Inner>>,
}

impl Mock {
    pub(crate) async fn start(cfg: Cfg) -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let mock = Mock { base, inner: Arc::new(Mutex::new(Inner { cfg, ..Default::default() })) };
        let m = mock.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let m = m.clone();
                tokio::spawn(async move { m.serve(sock).await });
            }
        });
        mock
    }

    pub(crate) fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub(crate) fn requests(&self, path: &str) -> Vec<Req> {
        self.inner.lock().unwrap().log.iter().filter(|r| r.path == path).cloned().collect()
    }

    pub(crate) fn all_requests(&self) -> Vec<Req> {
        self.inner.lock().unwrap().log.clone()
    }

    pub(crate) fn revoke_all(&self) {
        self.inner.lock().unwrap().tokens.clear();
    }

    async fn serve(&self, mut sock: TcpStream) {
        let Some(req) = read(&mut sock).await else { return };
        self.inner.lock().unwrap().log.push(req.clone());
        let (status, headers, body) = self.handle(&req);
        let mut out = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
        for (k, v) in headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(&body);
        let _ = sock.write_all(out.as_bytes()).await;
    }

    fn handle(&self, r: &Req) -> (u16, Vec<(String, String)>, String) {
        let mut g = self.inner.lock().unwrap();
        let cfg = g.cfg.clone();
        let base = self.base.clone();
        let json_h = vec![("content-type".to_owned(), "application/json".to_owned())];
        let json = |status: u16, v: Value| (status, json_h.clone(), v.to_string());
        match (r.method.as_str(), r.path.as_str()) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => json(
                200,
                json!({"resource": cfg.prm_resource.clone().unwrap_or(format!("{base}/mcp")), "authorization_servers": [base]}),
            ),
            ("GET", "/.well-known/oauth-authorization-server") => json(
                200,
                json!({
                    "issuer": cfg.metadata_issuer.clone().unwrap_or(base.clone()),
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": cfg.pkce_methods,
                    "authorization_response_iss_parameter_supported": true,
                    "token_endpoint_auth_methods_supported": ["none"],
                    "scopes_supported": cfg.grantable,
                }),
            ),
            ("POST", "/register") => {
                json(201, json!({"client_id": "client-1", "redirect_uris": r.json()["redirect_uris"]}))
            }
            ("GET", "/authorize") => {
                g.counter += 1;
                let code = format!("code-{}", g.counter);
                let requested: Vec<String> =
                    r.query.get("scope").map(|s| s.split(' ').map(str::to_owned).collect()).unwrap_or_default();
                let granted = requested.into_iter().filter(|s| cfg.grantable.contains(s)).collect();
                g.codes.insert(code.clone(), granted);
                let mut to = url::Url::parse(cfg.redirect_to.as_deref().unwrap_or(&r.query["redirect_uri"])).unwrap();
                {
                    let mut q = to.query_pairs_mut();
                    q.append_pair("code", &code).append_pair("state", r.query.get("state").map_or("", |s| s));
                    match cfg.iss.as_deref() {
                        Some("") => {}
                        Some("SLASH") => {
                            q.append_pair("iss", &format!("{base}/"));
                        }
                        Some(i) => {
                            q.append_pair("iss", i);
                        }
                        None => {
                            q.append_pair("iss", &base);
                        }
                    }
                }
                (302, vec![("location".to_owned(), to.to_string())], String::new())
            }
            ("POST", "/token") => {
                let f = r.form();
                let scopes = match f.get("grant_type").map(String::as_str) {
                    Some("authorization_code") => g.codes.remove(&f["code"]),
                    Some("refresh_token") => g.refresh.get(&f["refresh_token"]).cloned(),
                    _ => None,
                };
                let Some(scopes) = scopes else { return json(400, json!({"error": "invalid_grant"})) };
                g.counter += 1;
                let at = format!("at-{}", g.counter);
                g.tokens.insert(at.clone(), scopes.clone());
                let mut resp = json!({"access_token": at, "token_type": "Bearer", "expires_in": cfg.expires_in, "scope": scopes.join(" ")});
                if cfg.refresh {
                    let rt = format!("rt-{}", g.counter);
                    g.refresh.insert(rt.clone(), scopes);
                    resp["refresh_token"] = json!(rt);
                }
                json(200, resp)
            }
            ("POST", "/mcp") => {
                let token = r.headers.get("authorization").and_then(|a| a.strip_prefix("Bearer ")).map(str::to_owned);
                let rm = cfg.hint.clone().unwrap_or(format!("{base}/.well-known/oauth-protected-resource/mcp"));
                let Some(scopes) = token.and_then(|t| g.tokens.get(&t).cloned()) else {
                    let h = format!(
                        r#"Bearer error="invalid_token", scope="{}", resource_metadata="{rm}""#,
                        cfg.challenge_scope
                    );
                    return (401, vec![("www-authenticate".to_owned(), h)], String::new());
                };
                let msg = r.json();
                let method = msg["method"].as_str().unwrap_or_default();
                let needed = if method == "tools/call" { &cfg.call_scope } else { &cfg.challenge_scope };
                if !scopes.contains(needed) {
                    let h = format!(r#"Bearer error="insufficient_scope", scope="{needed}", resource_metadata="{rm}""#);
                    return (403, vec![("www-authenticate".to_owned(), h)], String::new());
                }
                let result = match method {
                    "server/discover" => {
                        json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"})
                    }
                    "tools/list" => {
                        json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "resultType": "complete"})
                    }
                    "tools/call" => json!({"content": [{"type": "text", "text": "ok"}], "resultType": "complete"}),
                    _ => {
                        return json(
                            404,
                            json!({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}),
                        )
                    }
                };
                json(200, json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
            }
            _ => (404, vec![], "not found".into()),
        }
    }
}

async fn read(s: &mut TcpStream) -> Option<Req> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = s.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let target = first.next()?.to_owned();
    let mut headers = HashMap::new();
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = buf[end + 4..].to_vec();
    while body.len() < len {
        let n = s.read(&mut tmp).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let query = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    Some(Req { method, path: path.to_owned(), query, headers, body: String::from_utf8_lossy(&body).into_owned() })
}
