//! The README's echo tool on rmcp (crates.io), served the way rmcp's examples serve it, so that
//! `scripts/bench.sh` measures both SDKs under the same load.
//!
//! - `rmcp-server --stdio`: `Echo.serve(rmcp::transport::stdio())`;
//! - `rmcp-server --http 127.0.0.1:0`: `StreamableHttpService` in an axum `Router` at `/mcp`
//!   (rmcp's defaults, plus JSON answers like mcp-stack's); prints
//!   `rmcp-server: serving on http://ADDR/mcp` on stderr;
//! - `--jwks URL --issuer ISS --audience AUD` (HTTP only): the production shape. rmcp has no
//!   resource-server support, so this is what a user writes: the JWKS fetched once at start,
//!   an axum middleware that validates the bearer JWT (`jsonwebtoken`), and one pass-through
//!   middleware.
use axum::extract::Request;
use axum::middleware::{from_fn, Next};
use axum::response::{IntoResponse, Response};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_router, ServiceExt};
use std::sync::Arc;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The echo tool's arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text to send back.
    text: String,
}

/// The server: one tool.
#[derive(Debug, Clone)]
struct Echo;

#[tool_router(server_handler)]
impl Echo {
    /// Echoes the text back.
    #[tool(description = "Echoes the text back.")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

/// A JWKS and what tokens must carry.
struct Verifier {
    keys: jsonwebtoken::jwk::JwkSet,
    validation: jsonwebtoken::Validation,
}

impl Verifier {
    fn check(&self, token: &str) -> bool {
        let Ok(header) = jsonwebtoken::decode_header(token) else { return false };
        let Some(jwk) = header.kid.as_deref().and_then(|kid| self.keys.find(kid)) else { return false };
        let Ok(key) = jsonwebtoken::DecodingKey::from_jwk(jwk) else { return false };
        jsonwebtoken::decode::<serde_json::Value>(token, &key, &self.validation).is_ok()
    }
}

/// GET `url` (http://, loopback) once, as a user's start-up code would with any HTTP client.
async fn fetch(url: &str) -> Result<Vec<u8>, BoxError> {
    use http_body_util::BodyExt as _;
    let uri: hyper::Uri = url.parse()?;
    let authority = uri.authority().ok_or("no host in the JWKS URL")?.clone();
    let stream = tokio::net::TcpStream::connect(authority.as_str()).await?;
    let (mut send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let empty = http_body_util::Empty::<hyper::body::Bytes>::new();
    let req = hyper::Request::get(uri.path()).header("host", authority.as_str()).body(empty)?;
    let resp = send.send_request(req).await?;
    Ok(resp.into_body().collect().await?.to_bytes().to_vec())
}

async fn bearer(verifier: Arc<Verifier>, req: Request, next: Next) -> Response {
    let token =
        req.headers().get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    match token {
        Some(t) if verifier.check(t) => next.run(req).await,
        _ => (axum::http::StatusCode::UNAUTHORIZED, [("www-authenticate", "Bearer")]).into_response(),
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let (mut http, mut jwks, mut issuer, mut audience) = (None, None, None, None);
    while let Some(arg) = args.next() {
        let slot = match arg.as_str() {
            "--stdio" => continue,
            "--http" => &mut http,
            "--jwks" => &mut jwks,
            "--issuer" => &mut issuer,
            "--audience" => &mut audience,
            other => return Err(format!("unknown argument {other:?}").into()),
        };
        *slot = Some(args.next().ok_or(format!("{arg} needs a value"))?);
    }
    let Some(addr) = http else {
        Echo.serve(rmcp::transport::stdio()).await?.waiting().await?;
        return Ok(());
    };
    let config = StreamableHttpServerConfig::default().with_json_response(true);
    let service = StreamableHttpService::new(|| Ok(Echo), LocalSessionManager::default().into(), config);
    let mut router = axum::Router::new().nest_service("/mcp", service);
    match (jwks, issuer, audience) {
        (Some(jwks), Some(issuer), Some(audience)) => {
            let keys: jsonwebtoken::jwk::JwkSet = serde_json::from_slice(&fetch(&jwks).await?)?;
            let alg = match keys.keys.first().map(|k| &k.algorithm) {
                Some(jsonwebtoken::jwk::AlgorithmParameters::RSA(_)) => jsonwebtoken::Algorithm::RS256,
                _ => jsonwebtoken::Algorithm::ES256,
            };
            let mut validation = jsonwebtoken::Validation::new(alg);
            validation.set_issuer(&[issuer]);
            validation.set_audience(&[audience]);
            let verifier = Arc::new(Verifier { keys, validation });
            router = router
                .layer(from_fn(|req: Request, next: Next| next.run(req)))
                .layer(from_fn(move |req: Request, next: Next| bearer(verifier.clone(), req, next)));
        }
        (None, None, None) => {}
        _ => return Err("--jwks, --issuer and --audience go together".into()),
    }
    let listener = tokio::net::TcpListener::bind(addr.parse::<std::net::SocketAddr>()?).await?;
    eprintln!("rmcp-server: serving on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}
