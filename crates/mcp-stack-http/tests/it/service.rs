//! The endpoint as a `tower::Service` over an in-memory body: no sockets. Mounted in an axum
//! `Router` at any path (`route_service`, `nest_service`, `mcp::http::router`), with and
//! without auth, and with CORS for browser clients.

use axum::body::Body;
use http::{header, Method, Request, StatusCode};
use http_body_util::BodyExt;
use mcp::http::{CorsConfig, EndpointConfig, McpService};
use mcp::prelude::*;
use tower::ServiceExt;

/// Says hello.
#[tool]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn service(config: EndpointConfig) -> McpService {
    McpService::new(Server::builder("t", "1").tool(hello::tool()).build().unwrap(), config)
}

fn call_hello(uri: &str) -> Request<Body> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hello",
        "arguments": {"name": "Ada"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    Request::post(uri)
        .header(header::HOST, "127.0.0.1")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "hello")
        .body(Body::from(body.to_string()))
        .unwrap()
}

async fn json_body(r: http::Response<impl http_body::Body<Error = impl std::fmt::Debug>>) -> Value {
    serde_json::from_slice(&r.into_body().collect().await.unwrap().to_bytes()).unwrap()
}

#[tokio::test]
async fn the_service_answers_any_body_type() {
    let r = service(EndpointConfig::default()).oneshot(call_hello("/mcp")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(json_body(r).await["result"]["content"][0]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn it_mounts_in_an_axum_router_next_to_other_routes() {
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/mcp", service(EndpointConfig::default()));
    let r = app.clone().oneshot(call_hello("/mcp")).await.unwrap();
    assert_eq!(json_body(r).await["result"]["content"][0]["text"], "Hello, Ada!");
    let health = Request::get("/health").body(Body::empty()).unwrap();
    let r = app.oneshot(health).await.unwrap();
    assert_eq!(r.into_body().collect().await.unwrap().to_bytes(), "ok");
}

fn preflight(origin: &str) -> Request<Body> {
    Request::builder()
        .method(Method::OPTIONS)
        .uri("/mcp")
        .header(header::HOST, "127.0.0.1")
        .header(header::ORIGIN, origin)
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
        .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "content-type, mcp-protocol-version, mcp-method, mcp-name")
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn cors_is_opt_in_and_limited_to_the_allowed_origins() {
    let r = service(EndpointConfig::default()).oneshot(preflight("http://127.0.0.1:8080")).await.unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED, "no CORS configured");

    let config = EndpointConfig { cors: Some(CorsConfig::new(["https://app.example"])), ..EndpointConfig::default() };
    let svc = service(config);
    let r = svc.clone().oneshot(preflight("https://app.example")).await.unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let h = r.headers();
    assert_eq!(h[header::ACCESS_CONTROL_ALLOW_ORIGIN], "https://app.example");
    assert_eq!(h[header::ACCESS_CONTROL_ALLOW_HEADERS], "content-type, mcp-protocol-version, mcp-method, mcp-name");
    assert!(h[header::ACCESS_CONTROL_ALLOW_METHODS].to_str().unwrap().contains("POST"));

    let mut call = call_hello("/mcp");
    call.headers_mut().insert(header::ORIGIN, "https://app.example".parse().unwrap());
    let r = svc.clone().oneshot(call).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "https://app.example");
    assert!(r.headers()[header::ACCESS_CONTROL_EXPOSE_HEADERS].to_str().unwrap().contains("Mcp-Session-Id"));

    let r = svc.oneshot(preflight("https://evil.example")).await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "other origins are refused by the Origin check");
    assert!(r.headers().get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
}

mod auth_layer {
    use super::*;
    use mcp::http::auth::{AuthConfig, AuthError, Principal, TokenValidator, ValidateFuture};
    use mcp::http::AuthLayer;
    use std::sync::Arc;
    use tower::Layer;

    /// Accepts `good` (scopes `mcp`) and `admin` (scopes `mcp admin`) as tokens of subject `ada`.
    pub(crate) struct Tokens;

    impl TokenValidator for Tokens {
        fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a, Result<Principal, AuthError>> {
            let scopes: &[&str] = match token {
                "good" => &["mcp"],
                "admin" => &["mcp", "admin"],
                _ => &[],
            };
            let r = if scopes.is_empty() {
                Err(AuthError::Inactive)
            } else {
                Ok(Principal {
                    subject: "ada".into(),
                    scopes: scopes.iter().map(|s| s.to_string()).collect(),
                    client_id: None,
                    claims: Default::default(),
                })
            };
            Box::pin(async move { r })
        }
    }

    fn protected() -> axum::Router {
        let auth = AuthConfig::builder("http://127.0.0.1/mcp", Arc::new(Tokens))
            .authorization_server("https://as.example")
            .required_scopes(["mcp"])
            .tool_scopes("hello", ["admin"])
            .build()
            .unwrap();
        let svc = AuthLayer::new(Arc::new(auth), "/mcp").layer(service(EndpointConfig::default()));
        axum::Router::new()
            .route_service("/mcp", svc.clone())
            .route_service("/.well-known/oauth-protected-resource/mcp", svc)
    }

    pub(crate) fn with_token(token: &str) -> Request<Body> {
        with_token_at("/mcp", token)
    }

    pub(crate) fn with_token_at(uri: &str, token: &str) -> Request<Body> {
        let mut r = call_hello(uri);
        r.headers_mut().insert(header::AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
        r
    }

    #[tokio::test]
    async fn the_layer_authenticates_and_the_service_checks_tool_scopes() {
        let r = protected().oneshot(call_hello("/mcp")).await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert!(r.headers()[header::WWW_AUTHENTICATE].to_str().unwrap().contains("resource_metadata="));
        let r = protected().oneshot(with_token("bad")).await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        let r = protected().oneshot(with_token("good")).await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "`hello` needs the admin scope");
        let r = protected().oneshot(with_token("admin")).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(json_body(r).await["result"]["content"][0]["text"], "Hello, Ada!");
    }

    #[tokio::test]
    async fn the_layer_serves_the_protected_resource_metadata_without_a_token() {
        let get = Request::get("/.well-known/oauth-protected-resource/mcp").body(Body::empty()).unwrap();
        let r = protected().oneshot(get).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let doc = json_body(r).await;
        assert_eq!(doc["resource"], "http://127.0.0.1/mcp");
        assert_eq!(doc["authorization_servers"], json!(["https://as.example"]));
    }
}

/// The endpoint mounted at `/mcp`, at `/api/mcp` and under `nest_service`, by hand and with
/// `mcp::http::router`, each open and protected: the MCP call is answered where it is mounted,
/// other paths get the router's 404, and with auth the RFC 9728 metadata is at the well-known
/// path of the endpoint's own path.
mod mounting {
    use super::auth_layer::{with_token_at, Tokens};
    use super::*;
    use mcp::http::auth::AuthConfig;
    use mcp::http::AuthLayer;
    use std::convert::Infallible;
    use std::sync::Arc;
    use tower::Layer;

    fn server() -> Server {
        Server::builder("t", "1").tool(hello::tool()).build().unwrap()
    }

    /// Protection for the endpoint at `path` of `http://127.0.0.1`.
    fn auth(path: &str) -> Arc<AuthConfig> {
        let auth = AuthConfig::builder(format!("http://127.0.0.1{path}"), Arc::new(Tokens))
            .authorization_server("https://as.example")
            .required_scopes(["mcp"])
            .build()
            .unwrap();
        Arc::new(auth)
    }

    /// The call to `hello` at `path` is answered, and a path beside it gets 404.
    async fn serves_at<S, B>(app: S, path: &str)
    where
        S: tower::Service<Request<Body>, Response = http::Response<B>, Error = Infallible> + Clone,
        B: http_body::Body<Error: std::fmt::Debug>,
    {
        let r = app.clone().oneshot(call_hello(path)).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "at {path}");
        assert_eq!(json_body(r).await["result"]["content"][0]["text"], "Hello, Ada!", "at {path}");
        let r = app.oneshot(call_hello(&format!("{path}-not"))).await.unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "beside {path}");
    }

    /// At `path` a call needs a token (401 with the challenge naming the metadata URL), is
    /// answered with one, and the metadata document is served without one at its path-aware
    /// well-known path.
    async fn protects_at<S, B>(app: S, path: &str)
    where
        S: tower::Service<Request<Body>, Response = http::Response<B>, Error = Infallible> + Clone,
        B: http_body::Body<Error: std::fmt::Debug>,
    {
        let well_known = format!("/.well-known/oauth-protected-resource{path}");
        let r = app.clone().oneshot(call_hello(path)).await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "at {path}");
        let challenge = r.headers()[header::WWW_AUTHENTICATE].to_str().unwrap().to_owned();
        assert!(challenge.contains(&format!("resource_metadata=\"http://127.0.0.1{well_known}\"")), "{challenge}");
        let r = app.clone().oneshot(with_token_at(path, "good")).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "at {path} with a token");
        assert_eq!(json_body(r).await["result"]["content"][0]["text"], "Hello, Ada!");
        let get = Request::get(&well_known).body(Body::empty()).unwrap();
        let r = app.clone().oneshot(get).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "metadata at {well_known}");
        assert_eq!(json_body(r).await["resource"], format!("http://127.0.0.1{path}"));
        let r = app.oneshot(with_token_at(&format!("{path}-not"), "good")).await.unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "beside {path}");
    }

    #[tokio::test]
    async fn route_service_at_mcp() {
        let svc = McpService::new(server(), EndpointConfig::default());
        serves_at(axum::Router::new().route_service("/mcp", svc), "/mcp").await;
        // Protected: the auth layer in front of the whole router (any inner body type).
        let svc = McpService::new(server(), EndpointConfig::default());
        let app = AuthLayer::new(auth("/mcp"), "/mcp").layer(axum::Router::new().route_service("/mcp", svc));
        protects_at(app, "/mcp").await;
    }

    #[tokio::test]
    async fn route_service_at_another_path() {
        let svc = McpService::new(server(), EndpointConfig::default());
        serves_at(axum::Router::new().route_service("/api/mcp", svc), "/api/mcp").await;
        let svc = McpService::new(server(), EndpointConfig::default());
        let app =
            AuthLayer::new(auth("/api/mcp"), "/api/mcp").layer(axum::Router::new().route_service("/api/mcp", svc));
        protects_at(app, "/api/mcp").await;
    }

    #[tokio::test]
    async fn nest_service_strips_the_prefix() {
        let svc = McpService::new(server(), EndpointConfig::default());
        serves_at(axum::Router::new().nest_service("/mcp", svc), "/mcp").await;
        // The endpoint with its own `EndpointConfig::auth` (authoritative: it checks the token
        // itself); the layer in front serves the metadata at the un-nested well-known path.
        let svc = McpService::new(server(), EndpointConfig::default().auth(auth("/mcp")));
        let app = AuthLayer::new(auth("/mcp"), "/mcp").layer(axum::Router::new().nest_service("/mcp", svc));
        protects_at(app, "/mcp").await;
    }

    #[tokio::test]
    async fn router_wires_the_endpoint_metadata_and_auth_from_one_path() {
        for path in ["/mcp", "/api/mcp"] {
            serves_at(mcp::http::router(server(), path, EndpointConfig::default()), path).await;
            let app = mcp::http::router(server(), path, EndpointConfig::default().auth(auth(path)));
            protects_at(app.clone(), path).await;
            // The root well-known document too.
            let get = Request::get("/.well-known/oauth-protected-resource").body(Body::empty()).unwrap();
            assert_eq!(app.oneshot(get).await.unwrap().status(), StatusCode::OK);
        }
        // Next to the application's own routes.
        let app = axum::Router::new().route("/health", axum::routing::get(|| async { "ok" })).merge(mcp::http::router(
            server(),
            "/api/mcp",
            EndpointConfig::default(),
        ));
        serves_at(app.clone(), "/api/mcp").await;
        let r = app.oneshot(Request::get("/health").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    }
}

/// A handler that logs in a loop until it has sent `n` messages or is cancelled; counts what
/// it sent and whether it saw the cancellation.
mod flood {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    #[derive(Default)]
    pub(crate) struct Seen {
        pub(crate) sent: AtomicUsize,
        pub(crate) cancelled: AtomicBool,
        pub(crate) done: tokio::sync::Notify,
    }

    /// Logs `n` messages.
    #[tool]
    async fn chatty(ctx: Context, State(seen): State<Arc<Seen>>, n: u64) -> String {
        for i in 0..n {
            if ctx.is_cancelled() {
                seen.cancelled.store(true, Ordering::SeqCst);
                break;
            }
            ctx.log(mcp::protocol::types::LoggingLevel::Info, None, json!(i));
            seen.sent.fetch_add(1, Ordering::SeqCst);
            if i % 1000 == 0 {
                tokio::task::yield_now().await;
            }
        }
        seen.done.notify_one();
        "done".into()
    }

    fn call_chatty(n: u64) -> Request<Body> {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "chatty",
            "arguments": {"n": n}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "debug"}}});
        let mut r = call_hello("/mcp");
        r.headers_mut().insert("mcp-name", "chatty".parse().unwrap());
        *r.body_mut() = Body::from(body.to_string());
        r
    }

    #[tokio::test]
    async fn a_client_that_does_not_read_its_notifications_gets_the_call_cancelled() {
        let seen = Arc::new(Seen::default());
        let server = Server::builder("t", "1").state(seen.clone()).tool(chatty::tool()).tool(hello::tool()).build();
        let svc = McpService::new(server.unwrap(), EndpointConfig::default());
        let done = seen.done.notified();
        // The response head comes at the first notification; its body is left unread.
        let r = svc.clone().oneshot(call_chatty(200_000)).await.unwrap();
        assert_eq!(r.headers()[header::CONTENT_TYPE], "text/event-stream");
        tokio::time::timeout(std::time::Duration::from_secs(60), done).await.expect("the handler ends");
        assert!(seen.cancelled.load(Ordering::SeqCst), "the handler saw its call cancelled");
        assert!(seen.sent.load(Ordering::SeqCst) < 200_000);
        // Others are still served meanwhile.
        let other = svc.clone().oneshot(call_hello("/mcp")).await.unwrap();
        assert_eq!(json_body(other).await["result"]["content"][0]["text"], "Hello, Ada!");
        // What was held for the client is bounded (the SSE buffer, not 200 000 messages), and
        // the stream ends with the error.
        let body = r.into_body().collect().await.unwrap().to_bytes();
        let events: Vec<Value> = String::from_utf8_lossy(&body)
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| serde_json::from_str(d.trim()).unwrap())
            .collect();
        assert!(events.len() <= 64 + 1, "{} events were held", events.len());
        let last = events.last().unwrap();
        assert_eq!(last["error"]["code"], -32603, "{last}");
        assert_eq!(last["id"], 7);
    }
}
