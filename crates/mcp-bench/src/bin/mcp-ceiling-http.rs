//! `mcp-ceiling-http`: the throughput ceiling for the MCP Streamable HTTP transport.
//!
//! A minimal hyper 1 HTTP/1.1 server (keep-alive on, `TCP_NODELAY`) that answers every POST by
//! reading the body, parsing it into a `serde_json::Value`, and replying `200 application/json`
//! with the JSON-RPC response shape the MCP server gives for the `echo` tool:
//! `{"jsonrpc":"2.0","id":<id>,"result":{"content":[{"type":"text","text":<text>}],"resultType":"complete"}}`.
//! It also answers `server/discover` and `tools/list`, so that an MCP client can connect
//! ([`mcp_bench::ceiling_response`]). No header checks, no schema validation, no other
//! dispatch: what is left is the cost of hyper, tokio and serde_json, which the MCP server is
//! built on.
//!
//! The tokio runtime has one worker per CPU this process may use, so `taskset -c 0` pins it to
//! one core with one worker. The server prints `mcp-ceiling-http: serving on http://ADDR/mcp` on
//! stderr (bind port 0 to get a free port) and exits by itself after `--exit-after`.

use bytes::Bytes;
use clap::Parser;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use mcp_bench::{ceiling_response, parse_duration, worker_threads};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;

/// Command-line options.
#[derive(Parser)]
#[command(name = "mcp-ceiling-http", about = "Minimal hyper + serde_json echo server (the HTTP ceiling)")]
struct Args {
    /// Address to listen on (loopback only; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: SocketAddr,
    /// Exit by itself after this long (safety bound for benchmark scripts).
    #[arg(long, default_value = "15m", value_parser = parse_duration)]
    exit_after: Duration,
}

/// Largest accepted body, like the MCP server's default.
const MAX_BODY: usize = 2 << 20;

fn reply(status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// Handles one request: parse, build the echo response, serialize.
async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() != Method::POST {
        let mut r = reply(StatusCode::METHOD_NOT_ALLOWED, Vec::new());
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return Ok(r);
    }
    let bytes = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) => return Ok(reply(StatusCode::BAD_REQUEST, Vec::new())),
    };
    let value: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            let err = serde_json::json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":e.to_string()}});
            return Ok(reply(StatusCode::BAD_REQUEST, serde_json::to_vec(&err).expect("JSON serializes")));
        }
    };
    let body = serde_json::to_vec(&ceiling_response(value)).expect("JSON serializes");
    Ok(reply(StatusCode::OK, body))
}

async fn serve(listener: TcpListener) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                eprintln!("mcp-ceiling-http: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .pipeline_flush(true)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), hyper::service::service_fn(handle));
            let _ = conn.await;
        });
    }
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if !args.addr.ip().is_loopback() {
        eprintln!("mcp-ceiling-http: refusing to listen on non-loopback {}", args.addr);
        return std::process::ExitCode::FAILURE;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads())
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result: std::io::Result<()> = rt.block_on(async move {
        let listener = TcpListener::bind(args.addr).await?;
        eprintln!("mcp-ceiling-http: serving on http://{}/mcp", listener.local_addr()?);
        tokio::select! {
            () = serve(listener) => {}
            () = tokio::time::sleep(args.exit_after) => eprintln!("mcp-ceiling-http: --exit-after reached, exiting"),
            r = tokio::signal::ctrl_c() => { r?; }
        }
        Ok(())
    });
    rt.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-ceiling-http: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
