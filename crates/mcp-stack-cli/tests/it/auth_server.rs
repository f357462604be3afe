//! OAuth resource-server integration: a small authorization server written here (127.0.0.1,
//! RFC 8414 / OpenID metadata + JWKS; RS256 keys generated with the `openssl` tool, ES256 keys
//! with ring) protects an MCP server; every refusal is checked for its exact status and
//! `WWW-Authenticate`, and for no handler having run. Also the metadata endpoints, scopes,
//! principal propagation, MRTR state bound to the user, and `mcp serve everything --auth-*`.

use crate::common::*;
use crate::oauth_issuer::{b64url, es256_key, mint, rsa, AuthServer};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use mcp::http::EndpointConfig;
use mcp::server::{Context as McpContext, HandlerError, Server};
use mcp_auth::{now_secs, AuthConfig, JwksOptions, JwtConfig, JwtValidator};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

// ------------------------------------------------------------------------------------------
// The protected MCP server
// ------------------------------------------------------------------------------------------

struct Rs {
    s: TestServer,
    /// Handler invocations, over all tools.
    calls: Arc<AtomicUsize>,
    resource: String,
    metadata_url: String,
    auth: AuthServer,
}

fn counted<F>(calls: &Arc<AtomicUsize>, f: F) -> impl Fn(McpContext, Map<String, Value>) -> BoxedResult
where
    F: Fn(McpContext) -> Result<Value, HandlerError> + Send + Sync + Clone + 'static,
{
    let calls = calls.clone();
    move |ctx, _args| {
        calls.fetch_add(1, SeqCst);
        let f = f.clone();
        Box::pin(async move { f(ctx) })
    }
}

type BoxedResult = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, HandlerError>> + Send>>;

fn ask(ctx: McpContext) -> Result<Value, HandlerError> {
    let mut inputs = ctx.inputs();
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let answer = inputs.elicit("q", "Your name?", schema)?;
    inputs.finish()?;
    let name = answer.and_then(|a| a["content"]["name"].as_str().map(str::to_owned)).unwrap_or_default();
    Ok(text(format!("{}:{name}", ctx.principal().unwrap_or("-"))))
}

/// Starts the MCP server protected by `auth` (JWKS URL discovered from its metadata): every
/// request needs scope `mcp`; tool `admin_op` also needs `admin`.
async fn protected(auth: AuthServer) -> Rs {
    let calls = Arc::new(AtomicUsize::new(0));
    let object = json!({"type": "object"});
    let whoami = |ctx: McpContext| Ok(text(ctx.principal().unwrap_or("-")));
    let server = Server::builder("protected", "1.0.0")
        .tool(raw_tool("whoami", object.clone(), counted(&calls, whoami)))
        .tool(raw_tool("admin_op", object.clone(), counted(&calls, |_| Ok(text("done")))))
        .tool(raw_tool("ask", object, counted(&calls, ask)))
        .tool(mcp::server::Tool::new("slow_task").task_support(mcp::server::TaskSupport::Optional).handler(|| async {
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            "done"
        }))
        .build()
        .expect("server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let jwt = JwtConfig::new(&auth.issuer, &resource);
    let validator = JwtValidator::discover(jwt, JwksOptions::default()).await.expect("discovery");
    let config = AuthConfig::builder(resource.as_str(), Arc::new(validator))
        .authorization_server(auth.issuer.as_str())
        .required_scopes(["mcp"])
        .tool_scopes("admin_op", ["admin"])
        .build()
        .expect("auth config");
    let metadata_url = config.metadata_url().to_owned();
    assert_eq!(metadata_url, format!("http://{addr}/.well-known/oauth-protected-resource/mcp"));
    let http = EndpointConfig { auth: Some(Arc::new(config)), ..EndpointConfig::default() };
    let task = tokio::spawn(mcp::http::serve(server.clone(), listener, http));
    Rs { s: TestServer { addr, server, task }, calls, resource, metadata_url, auth }
}

impl Rs {
    fn claims(&self, sub: &str, scope: &str) -> Value {
        let now = now_secs();
        json!({"iss": self.auth.issuer, "aud": self.resource, "sub": sub, "exp": now + 300, "iat": now,
            "scope": scope, "client_id": "test-client"})
    }

    /// A valid RS256 token for `sub` with `scope`.
    fn token(&self, sub: &str, scope: &str) -> String {
        mint(rsa(0), &self.claims(sub, scope))
    }

    async fn call_with(&self, token: &str, id: i64, tool: &str, params: Value) -> Resp {
        let bearer = format!("Bearer {token}");
        let body = req(id, "tools/call", merged(call(tool, json!({})), params));
        self.s.post(&body, &[("authorization", bearer.as_str())]).await
    }

    fn challenge(&self, scope: &str, error: Option<(&str, &str)>) -> String {
        let mut c = format!("Bearer resource_metadata=\"{}\", scope=\"{scope}\"", self.metadata_url);
        if let Some((code, description)) = error {
            c.push_str(&format!(", error=\"{code}\", error_description=\"{description}\""));
        }
        c
    }

    fn calls(&self) -> usize {
        self.calls.load(SeqCst)
    }
}

/// Asserts a refusal: status, exact challenge, an OAuth-style JSON body, and no handler run.
#[track_caller]
fn refused(rs: &Rs, what: &str, r: &Resp, status: u16, challenge: &str) {
    refused_after(rs, what, r, status, challenge, 0);
}

// ------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------

#[tokio::test]
async fn protected_resource_metadata_is_served_without_a_token() {
    let rs = protected(AuthServer::start(&[rsa(0)], true).await).await;
    let expected = json!({
        "resource": rs.resource,
        "authorization_servers": [rs.auth.issuer],
        "scopes_supported": ["mcp"],
        "bearer_methods_supported": ["header"],
    });
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let r = send(rs.s.addr, "GET", path, &[], full(Vec::new())).await;
        assert_eq!((r.status, r.content_type()), (200, "application/json"), "{path}");
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v, expected, "{path}");
        // Public: even a foreign origin may read it.
        let h = vec![("origin".to_owned(), "https://elsewhere.example".to_owned())];
        let r = send(rs.s.addr, "GET", path, &h, full(Vec::new())).await;
        assert_eq!((r.status, r.header("access-control-allow-origin")), (200, "*"));
        let r = send(rs.s.addr, "POST", path, &[], full("{}")).await;
        assert_eq!((r.status, r.header("allow")), (405, "GET, HEAD, OPTIONS"), "{path}");
    }
    let r = send(rs.s.addr, "GET", "/.well-known/oauth-protected-resource/other", &[], full(Vec::new())).await;
    assert_eq!(r.status, 404);
    // The challenge's resource_metadata URL is the one that serves it.
    let r = rs.s.post(&req(1, "tools/list", json!({})), &[]).await;
    let url = r.header("www-authenticate").split('"').nth(1).unwrap().to_owned();
    let path = url.strip_prefix(&format!("http://{}", rs.s.addr)).unwrap();
    let r = send(rs.s.addr, "GET", path, &[], full(Vec::new())).await;
    assert_eq!(serde_json::from_slice::<Value>(&r.body).unwrap(), expected);
    // Without auth there is no metadata endpoint.
    let open = TestServer::everything().await;
    let r = send(open.addr, "GET", "/.well-known/oauth-protected-resource", &[], full(Vec::new())).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn missing_malformed_and_misplaced_tokens_are_refused_before_any_handler() {
    let rs = protected(AuthServer::start(&[rsa(0)], true).await).await;
    let body = tcall(1, "whoami", json!({}));
    let plain = rs.challenge("mcp", None);
    refused(&rs, "no token", &rs.s.post(&body, &[]).await, 401, &plain);
    refused(&rs, "other scheme", &rs.s.post(&body, &[("authorization", "Basic dXNlcjpwYXNz")]).await, 401, &plain);
    refused(&rs, "empty bearer", &rs.s.post(&body, &[("authorization", "Bearer ")]).await, 401, &plain);
    let bad = rs.challenge(
        "mcp",
        Some(("invalid_request", "malformed Authorization header: bearer credentials are not a b64token")),
    );
    refused(&rs, "two tokens", &rs.s.post(&body, &[("authorization", "Bearer a b")]).await, 400, &bad);
    let listen = listen(2, json!({"toolsListChanged": true}));
    refused(&rs, "listen without token", &rs.s.post(&listen, &[]).await, 401, &plain);
    let r = rs.s.post(&req(3, "no/such/method", json!({})), &[]).await;
    refused(&rs, "unknown method", &r, 401, &plain);

    // A valid token in the query string is never accepted, alone or next to a valid header.
    let token = rs.token("alice", "mcp");
    let in_query = rs.challenge(
        "mcp",
        Some((
            "invalid_request",
            "access tokens are accepted in the Authorization header only, not in the query string",
        )),
    );
    let path = format!("/mcp?access_token={token}");
    let r = send(rs.s.addr, "POST", &path, &std_headers(&body), full(body.to_string())).await;
    refused(&rs, "query token", &r, 401, &in_query);
    let h = set_header(std_headers(&body), "authorization", Some(&format!("Bearer {token}")));
    let r = send(rs.s.addr, "POST", &path, &h, full(body.to_string())).await;
    refused(&rs, "query and header", &r, 401, &in_query);
    // A token in a form body is not looked for: the request is unauthenticated.
    let h = set_header(std_headers(&body), "content-type", Some("application/x-www-form-urlencoded"));
    let r = send(rs.s.addr, "POST", "/mcp", &h, full(format!("access_token={token}"))).await;
    refused(&rs, "form token", &r, 401, &plain);

    // The same token in the header works.
    let r = rs.call_with(&token, 4, "whoami", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(first_text(&result_of(&r.json(), &json!(4))), "alice");
}

#[tokio::test]
async fn invalid_tokens_are_401_invalid_token() {
    let rs = protected(AuthServer::start(&[rsa(0)], true).await).await;
    let invalid = |d: &str| rs.challenge("mcp", Some(("invalid_token", d)));
    let now = now_secs();
    let with = |k: &str, v: Value| {
        let mut c = rs.claims("alice", "mcp");
        c[k] = v;
        c
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "wrong audience",
            mint(rsa(0), &with("aud", json!("http://127.0.0.1:1/mcp"))),
            "token audience does not include this resource",
        ),
        ("no audience", mint(rsa(0), &with("aud", json!(null))), "token audience does not include this resource"),
        ("wrong issuer", mint(rsa(0), &with("iss", json!("http://127.0.0.1:1"))), "token issuer is not accepted"),
        ("expired", mint(rsa(0), &with("exp", json!(now - 120))), "token expired"),
        ("not yet valid", mint(rsa(0), &with("nbf", json!(now + 600))), "token is not valid yet"),
        ("unknown signer", mint(rsa(1), &rs.claims("alice", "mcp")), "no known signing key matches the token"),
        ("garbage", "abc.def.ghi".to_owned(), "malformed token: header is not a JSON object"),
    ];
    for (i, (what, token, description)) in cases.into_iter().enumerate() {
        let r = rs.call_with(&token, i as i64, "whoami", json!({})).await;
        refused(&rs, what, &r, 401, &invalid(description));
    }
    // alg: none, signed-looking or not.
    let header = b64url(br#"{"alg":"none","typ":"JWT","kid":"rsa-1"}"#);
    let payload = b64url(rs.claims("alice", "mcp").to_string().as_bytes());
    for token in [format!("{header}.{payload}."), format!("{header}.{payload}.c2ln")] {
        let r = rs.call_with(&token, 10, "whoami", json!({})).await;
        refused(&rs, "alg none", &r, 401, &invalid("token algorithm none is not accepted"));
    }
    // Algorithm confusion: HS256 keyed with the server's own RSA public key.
    let mut h = Header::new(Algorithm::HS256);
    h.kid = Some("rsa-1".into());
    let forged = encode(&h, &rs.claims("alice", "mcp"), &EncodingKey::from_secret(&rsa(0).public_pem)).unwrap();
    let r = rs.call_with(&forged, 11, "whoami", json!({})).await;
    refused(&rs, "HS256 with the public key", &r, 401, &invalid("token algorithm HS256 is not accepted"));

    // Expired, but within the 60 s leeway: accepted.
    let r = rs.call_with(&mint(rsa(0), &with("exp", json!(now - 20))), 12, "whoami", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(rs.calls(), 1);
}

#[tokio::test]
async fn an_unreachable_key_set_is_503_with_a_fixed_text_and_a_reference() {
    // The key set lives at a loopback port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let jwks_url = format!("http://127.0.0.1:{port}/internal-jwks");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let issuer = "http://127.0.0.1:1";
    let jwt = JwtConfig::new(issuer, &resource);
    let validator = JwtValidator::with_jwks_url(jwt, &jwks_url, JwksOptions::default()).expect("validator");
    let config =
        AuthConfig::builder(resource.as_str(), Arc::new(validator)).authorization_server(issuer).build().unwrap();
    let server = Server::builder("protected", "1.0.0").build().expect("server");
    let http = EndpointConfig { auth: Some(Arc::new(config)), ..EndpointConfig::default() };
    let task = tokio::spawn(mcp::http::serve(server.clone(), listener, http));
    let s = TestServer { addr, server, task };
    let now = now_secs();
    let token = mint(&es256_key("k"), &json!({"iss": issuer, "aud": resource, "sub": "a", "exp": now + 300}));
    let bearer = format!("Bearer {token}");
    let r = s.post(&req(1, "tools/list", json!({})), &[("authorization", bearer.as_str())]).await;
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.header("www-authenticate"), "");
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body["error"], "temporarily_unavailable");
    let d = body["error_description"].as_str().unwrap();
    assert!(d.starts_with("authorization temporarily unavailable (ref ") && d.ends_with(')'), "{d}");
    assert!(!r.text().contains("internal-jwks") && !r.text().contains(&port.to_string()), "{}", r.text());
}

#[tokio::test]
async fn rotated_key_is_fetched_on_unknown_kid_and_refetches_are_rate_limited() {
    let rs = protected(AuthServer::start(&[rsa(0)], true).await).await;
    assert_eq!(rs.auth.hits("/.well-known/oauth-authorization-server"), 1, "RFC 8414 metadata first");
    assert_eq!(rs.auth.hits("/.well-known/openid-configuration"), 0);
    let r = rs.call_with(&rs.token("alice", "mcp"), 1, "whoami", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(rs.auth.hits("/jwks"), 1);
    // The authorization server rotates to a new ES256 key.
    let new = es256_key("es-2");
    rs.auth.set_keys(&[rsa(0), &new]);
    let r = rs.call_with(&mint(&new, &rs.claims("bob", "mcp")), 2, "whoami", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(first_text(&result_of(&r.json(), &json!(2))), "bob");
    assert_eq!(rs.auth.hits("/jwks"), 2, "one refetch for the unknown kid");
    // More unknown kids right away: refused without another fetch.
    let stranger = es256_key("es-3");
    rs.auth.set_keys(&[rsa(0), &new, &stranger]);
    let before = rs.calls();
    for i in 0..3 {
        let r = rs.call_with(&mint(&stranger, &rs.claims("eve", "mcp")), 3 + i, "whoami", json!({})).await;
        let challenge = rs.challenge("mcp", Some(("invalid_token", "no known signing key matches the token")));
        assert_eq!((r.status, r.header("www-authenticate")), (401, challenge.as_str()));
    }
    assert_eq!(rs.auth.hits("/jwks"), 2, "rate-limited");
    assert_eq!(rs.calls(), before);
}

#[tokio::test]
async fn scopes_are_enforced_with_403_insufficient_scope() {
    let rs = protected(AuthServer::start(&[rsa(0)], true).await).await;
    // Lacking the scope every request needs.
    let r = rs.call_with(&rs.token("alice", "other"), 1, "whoami", json!({})).await;
    let c = rs.challenge("mcp", Some(("insufficient_scope", "insufficient scope: requires mcp")));
    refused(&rs, "no mcp scope", &r, 403, &c);
    // A scoped tool without its scope: the challenge names every scope the call needs.
    let r = rs.call_with(&rs.token("alice", "mcp"), 2, "admin_op", json!({})).await;
    let c = rs.challenge("mcp admin", Some(("insufficient_scope", "insufficient scope: requires mcp admin")));
    refused(&rs, "admin tool", &r, 403, &c);
    // Other tools are fine with `mcp`; the scoped tool with `admin` too.
    let r = rs.call_with(&rs.token("alice", "mcp"), 3, "whoami", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = rs.call_with(&rs.token("alice", "mcp admin"), 4, "admin_op", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(first_text(&result_of(&r.json(), &json!(4))), "done");
    assert_eq!(rs.calls(), 2);
}

#[tokio::test]
async fn principal_reaches_handlers_and_binds_mrtr_state() {
    let rs = protected(AuthServer::start(&[rsa(0)], true).await).await;
    let (alice, bob) = (rs.token("alice", "mcp"), rs.token("bob", "mcp"));
    let r = rs.call_with(&alice, 1, "whoami", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(first_text(&result_of(&r.json(), &json!(1))), "alice");

    let elicit = json!({"_meta": {K_CAPS: {"elicitation": {}}}});
    let r = rs.call_with(&alice, 2, "ask", elicit.clone()).await;
    let first = result_of(&r.json(), &json!(2));
    assert_eq!(first["resultType"], "input_required", "{first}");
    let state = first["requestState"].as_str().expect("requestState").to_owned();
    let retry = merged(
        elicit,
        json!({"requestState": state, "inputResponses": {"q": {"action": "accept", "content": {"name": "Al"}}}}),
    );
    assert_eq!(rs.calls(), 2);
    // Bob replays Alice's state: refused before the handler runs.
    let r = rs.call_with(&bob, 3, "ask", retry.clone()).await;
    expect_err("state of another user", &r, 400, -32602, Some(&json!(3)));
    assert_eq!(rs.calls(), 2, "the handler ran for bob");
    // Alice's own retry completes.
    let r = rs.call_with(&alice, 4, "ask", retry).await;
    let done = result_of(&r.json(), &json!(4));
    assert_eq!(first_text(&done), "alice:Al", "{done}");
    assert_eq!(rs.calls(), 3);
}

#[tokio::test]
async fn tasks_belong_to_their_subject_and_nobody_else_can_tell_they_exist() {
    let rs = protected(AuthServer::start(&[rsa(0)], true).await).await;
    let (alice, bob) = (rs.token("alice", "mcp"), rs.token("bob", "mcp"));
    let ext = json!({"_meta": {K_CAPS: {"extensions": {"io.modelcontextprotocol/tasks": {}}}}});
    let r = rs.call_with(&alice, 1, "slow_task", ext.clone()).await;
    let created = result_of(&r.json(), &json!(1));
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let rs = &rs;
    let (ext, id) = (&ext, &id);
    let send = move |who: &str, n: i64, method: &str, extra: Value| {
        let params = merged(merged(ext.clone(), json!({"taskId": id})), extra);
        let bearer = format!("Bearer {who}");
        let body = req(n, method, params);
        async move { rs.s.post(&body, &[("authorization", bearer.as_str())]).await }
    };
    let mine = send(&alice, 2, "tasks/get", json!({})).await;
    assert_eq!(result_of(&mine.json(), &json!(2))["status"], "working");
    // Bob gets exactly what an unknown id gets, for every method, and changes nothing.
    let unknown = {
        let params = merged(ext.clone(), json!({"taskId": "no-such-task"}));
        let bearer = format!("Bearer {bob}");
        rs.s.post(&req(3, "tasks/get", params), &[("authorization", bearer.as_str())]).await
    };
    let unknown = expect_err("unknown task", &unknown, 400, -32602, Some(&json!(3)));
    for (n, method, extra) in [
        (4, "tasks/get", json!({})),
        (5, "tasks/cancel", json!({})),
        (6, "tasks/update", json!({"inputResponses": {"k": 1}})),
    ] {
        let r = send(&bob, n, method, extra).await;
        let e = expect_err(method, &r, 400, -32602, Some(&json!(n)));
        assert_eq!(e["error"]["message"], unknown["error"]["message"], "{method}");
    }
    let still = send(&alice, 7, "tasks/get", json!({})).await;
    assert_eq!(result_of(&still.json(), &json!(7))["status"], "working", "bob's cancel did nothing");
    let ack = send(&alice, 8, "tasks/cancel", json!({})).await;
    assert_eq!(result_of(&ack.json(), &json!(8))["resultType"], "complete");
}

#[tokio::test]
async fn cli_serve_everything_with_auth_flags() {
    // Only OpenID discovery is served: the CLI falls back to it after RFC 8414.
    let auth = AuthServer::start(&[rsa(0)], false).await;
    // The canonical URI is the audience whatever port the server binds; it binds port 0 and
    // announces its address (its readiness signal).
    let resource = "http://127.0.0.1/mcp".to_owned();
    let args = ["--auth-issuer", &auth.issuer, "--auth-audience", &resource, "--auth-scopes", "mcp,tools"];
    let (_child, addr) = spawn_http_everything(&args).await;
    assert_eq!(auth.hits("/.well-known/oauth-authorization-server"), 1);
    assert_eq!(auth.hits("/.well-known/openid-configuration"), 1);

    let body = tcall(1, "echo", json!({"text": "hi"}));
    let r = post(addr, &std_headers(&body), body.to_string()).await;
    let metadata_url = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp";
    let challenge = format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"mcp tools\"");
    assert_eq!((r.status, r.header("www-authenticate")), (401, challenge.as_str()), "{}", r.text());
    let r = send(addr, "GET", "/.well-known/oauth-protected-resource/mcp", &[], full(Vec::new())).await;
    let prm: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(prm["resource"], resource);
    assert_eq!(prm["authorization_servers"], json!([auth.issuer]));
    assert_eq!(prm["scopes_supported"], json!(["mcp", "tools"]));

    let now = now_secs();
    let claims = json!({"iss": auth.issuer, "aud": resource, "sub": "cli-user", "exp": now + 60, "scope": "mcp tools"});
    let bearer = format!("Bearer {}", mint(rsa(0), &claims));
    let h = set_header(std_headers(&body), "authorization", Some(&bearer));
    let r = post(addr, &h, body.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(first_text(&result_of(&r.json(), &json!(1))), "hi");
    // Missing one of the required scopes.
    let claims = json!({"iss": auth.issuer, "aud": resource, "sub": "cli-user", "exp": now + 60, "scope": "mcp"});
    let bearer = format!("Bearer {}", mint(rsa(0), &claims));
    let h = set_header(std_headers(&body), "authorization", Some(&bearer));
    let r = post(addr, &h, body.to_string()).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(r.header("www-authenticate").contains("error=\"insufficient_scope\""));
}

#[tokio::test]
async fn legacy_sessions_belong_to_their_subject_and_keep_tool_scopes() {
    let rs = protected(AuthServer::start(&[rsa(0)], true).await).await;
    let (alice, bob) = (format!("Bearer {}", rs.token("alice", "mcp")), format!("Bearer {}", rs.token("bob", "mcp")));
    let legacy = |bearer: &str, session: Option<&str>| {
        let mut h = legacy_headers(session);
        h.push(("authorization".into(), bearer.to_owned()));
        h
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": LEGACY_PV, "capabilities": {}}});
    let r = post(rs.s.addr, &legacy(&alice, None), init.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let sid = r.header("mcp-session-id").to_owned();
    let whoami = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami"}});
    // Alice's session serves Alice, with her identity.
    let r = post(rs.s.addr, &legacy(&alice, Some(&sid)), whoami.to_string()).await;
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["result"]["content"][0]["text"], "alice", "{v}");
    // To Bob the session does not exist; no handler runs for him.
    let r = post(rs.s.addr, &legacy(&bob, Some(&sid)), whoami.to_string()).await;
    assert_eq!(r.status, 404, "{}", r.text());
    assert_eq!(rs.calls(), 1);
    // Per-tool scopes hold inside a session too.
    let admin = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "admin_op"}});
    let r = post(rs.s.addr, &legacy(&alice, Some(&sid)), admin.to_string()).await;
    let c = rs.challenge("mcp admin", Some(("insufficient_scope", "insufficient scope: requires mcp admin")));
    refused_after(&rs, "admin tool in a session", &r, 403, &c, 1);
}

/// Like [`refused`], when `calls` handlers ran before.
#[track_caller]
fn refused_after(rs: &Rs, what: &str, r: &Resp, status: u16, challenge: &str, calls: usize) {
    assert_eq!(r.status, status, "{what}: {}", r.text());
    assert_eq!(r.header("www-authenticate"), challenge, "{what}");
    assert_eq!(r.content_type(), "application/json", "{what}");
    let v: Value = serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{what}: {e}: {}", r.text()));
    assert!(v["error"].is_string() && v["error_description"].is_string(), "{what}: {v}");
    assert_eq!(rs.calls(), calls, "{what}: a handler ran");
}
