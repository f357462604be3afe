//! Library half of the `mcp` tool: the client commands, the demo servers and serving helpers
//! (used by tests too).

pub mod client;
pub mod everything;

use mcp::server::Server;
use std::net::SocketAddr;

/// Serves `server` over Streamable HTTP on `addr` (path `/mcp`) until Ctrl-C, then shuts down
/// gracefully (listen streams get their closing response).
pub async fn serve_http(server: Server, addr: SocketAddr, extra_hosts: Vec<String>) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let mut config = mcp::http::HttpConfig::default();
    config.allowed_hosts.extend(extra_hosts.iter().map(|h| h.to_ascii_lowercase()));
    config.allowed_origins.extend(extra_hosts.iter().map(|h| format!("host:{}", h.to_ascii_lowercase())));
    eprintln!("mcp: serving on http://{}{}", listener.local_addr()?, config.path);
    let stopper = server.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stopper.shutdown();
        }
    });
    // Run the accept loop on the runtime's workers, not on the thread blocked in `block_on`.
    tokio::spawn(mcp::http::serve(server, listener, config)).await.map_err(std::io::Error::other)?
}
