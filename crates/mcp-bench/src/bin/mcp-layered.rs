//! `mcp-layered`: the everything server over Streamable HTTP with a chosen operation-layer
//! stack, so `scripts/bench.sh` can measure what layers cost side by side:
//! - `none`: no layer (the server as `mcp serve everything` builds it);
//! - `noop`: one layer that only passes the operation on (the cost of the chain itself);
//! - `policy`: the access log (`mcp_server::access_log::AccessLog`, one line per request with
//!   its time, era, method, target, caller, outcome and duration, written to a sink, so the
//!   formatting is paid and the disk is not), per-caller rate limits with a quota never reached
//!   (every request is counted), and the everything server's access rules (`admin_report`);
//! - `policy-tracing`: the same with the access log written through `tracing` instead (one
//!   event per request formatted by `tracing-subscriber`'s compact format into a sink, other
//!   targets at `warn`, as `mcp serve` logs);
//! - `log`, `tracing` and `limits`: the access log alone, the `tracing` log alone, the rate
//!   limits alone (where the stacks' cost goes).
//!
//! Prints `mcp-layered: serving on http://ADDR/mcp` on stderr once it listens.

use clap::Parser;
use mcp::server::access_log::AccessLog;
use mcp::server::layers::from_fn;
use mcp::server::rate_limit::{Quota, RateLimits};
use std::time::{Duration, Instant};
use tracing_subscriber::Layer as _;

#[derive(Parser)]
#[command(name = "mcp-layered", about = "The everything server with a chosen layer stack, for benchmarks")]
struct Cli {
    /// The layer stack: none, noop, log, tracing, limits, policy or policy-tracing.
    #[arg(long, default_value = "none")]
    layers: String,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: std::net::SocketAddr,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let builder = mcp_everything::builder().skills(mcp_everything::skills::demo());
    let tracing_log = || {
        // The access log on, the libraries' own spans and events off (as `mcp serve` runs by
        // default). A static per-target filter: an access log needs no span-field directives,
        // and `Targets` decides per call site once instead of per event.
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        let filter = tracing_subscriber::filter::Targets::new()
            .with_default(tracing::Level::WARN)
            .with_target("mcp_layered", tracing::Level::INFO);
        let format = tracing_subscriber::fmt::layer().with_writer(std::io::sink).with_ansi(false).compact();
        tracing_subscriber::registry().with(format.with_filter(filter)).init();
        from_fn(|op, next| async move {
            // The method by its static name (no copy); the target and principal are copied
            // only when there is one.
            let method = mcp::protocol::Method::parse(op.method()).map_or("other", |m| m.as_str());
            let target = op.target().map(str::to_owned);
            let principal = op.principal().map(str::to_owned);
            let started = Instant::now();
            let reply = next.run(op).await;
            tracing::info!(
                method,
                target = target.as_deref().unwrap_or("-"),
                principal = principal.as_deref().unwrap_or("-"),
                ok = reply.is_ok(),
                micros = started.elapsed().as_micros() as u64,
            );
            reply
        })
    };
    let limits = || RateLimits::new().per_caller(Quota::new(u32::MAX, Duration::from_secs(1)));
    let builder = match cli.layers.as_str() {
        "none" => builder,
        "noop" => builder.layer(from_fn(|op, next| next.run(op))),
        "log" => builder.layer(AccessLog::new(std::io::sink())),
        "tracing" => builder.layer(tracing_log()),
        "limits" => builder.rate_limits(limits()),
        "policy" => builder.layer(AccessLog::new(std::io::sink())).rate_limits(limits()),
        "policy-tracing" => builder.layer(tracing_log()).rate_limits(limits()),
        other => {
            return Err(std::io::Error::other(format!(
                "--layers none, noop, log, tracing, limits, policy or policy-tracing, not {other:?}"
            )))
        }
    };
    let server = builder.build().map_err(std::io::Error::other)?;
    let listener = tokio::net::TcpListener::bind(cli.addr).await?;
    eprintln!("mcp-layered: serving on http://{}/mcp", listener.local_addr()?);
    mcp::http::serve(server, listener, mcp::http::EndpointConfig::default()).await
}
