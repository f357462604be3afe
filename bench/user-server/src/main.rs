//! The README's echo server as a user's own crate, served the way the README serves it.
//!
//! - `user-server --stdio`: `mcp::stdio::serve_stdio`, as in the README;
//! - `user-server --http 127.0.0.1:0`: `mcp::http::serve` with the default `EndpointConfig`;
//!   prints `user-server: serving on http://ADDR/mcp` on stderr;
//! - `--jwks URL --issuer ISS --audience AUD` (HTTP only) adds the production shape: every request
//!   needs a bearer JWT validated against the JWKS at URL (fetched on first use, then cached),
//!   and the server runs one pass-through operation layer.
use mcp::prelude::*;
use std::sync::Arc;

/// Echoes the text back.
#[tool(read_only)]
async fn echo(#[arg(description = "Text to send back")] text: String) -> String {
    text
}

/// What the command line asks for.
struct Options {
    http: Option<std::net::SocketAddr>,
    jwks: Option<String>,
    issuer: Option<String>,
    audience: Option<String>,
}

fn options() -> Result<Options, String> {
    let mut o = Options { http: None, jwks: None, issuer: None, audience: None };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--stdio" => {}
            "--http" => o.http = Some(value()?.parse().map_err(|e| format!("--http: {e}"))?),
            "--jwks" => o.jwks = Some(value()?),
            "--issuer" => o.issuer = Some(value()?),
            "--audience" => o.audience = Some(value()?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(o)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = options()?;
    let builder = Server::builder("echo-server", "1.0.0").tool(echo::tool());
    let Some(addr) = o.http else {
        let server = builder.build()?;
        return Ok(mcp::stdio::serve_stdio(server).await?);
    };
    let mut config = mcp::http::EndpointConfig::default();
    let builder = match (o.jwks, o.issuer, o.audience) {
        (Some(jwks), Some(issuer), Some(audience)) => {
            use mcp::auth::{AuthConfig, JwksOptions, JwtConfig, JwtValidator};
            let validator =
                JwtValidator::with_jwks_url(JwtConfig::new(&issuer, &audience), &jwks, JwksOptions::default())?;
            let auth = AuthConfig::builder(audience, Arc::new(validator)).authorization_server(issuer).build()?;
            config = config.auth(Arc::new(auth));
            builder.layer(mcp::server::layers::from_fn(|op, next| next.run(op)))
        }
        (None, None, None) => builder,
        _ => return Err("--jwks, --issuer and --audience go together".into()),
    };
    let server = builder.build()?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("user-server: serving on http://{}/mcp", listener.local_addr()?);
    Ok(mcp::http::serve(server, listener, config).await?)
}
