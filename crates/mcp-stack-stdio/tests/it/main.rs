//! The integration tests of mcp-stack-stdio, as one test binary:
//! - `serve`: the everything server over in-memory pipes, every message schema-checked.
//! - `legacy`: a 2025-11-25 (initialize-based) client on the same transport.
//! - `duplex`: a small server of its own, limits and back-pressure.
//! - `layers`: one operation layer, both eras.
//!
//! The `mcp serve --stdio` binary itself (exit codes, SIGTERM) is tested in mcp-stack-cli.

mod duplex;
mod layers;
mod legacy;
mod serve;

use tokio::io::{AsyncBufReadExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

/// `mcp::stdio::serve` of the everything server with the default limits, over two in-memory
/// pipes: the serving task, the server's input and its output as lines.
fn serve_everything() -> (JoinHandle<std::io::Result<()>>, DuplexStream, Lines<BufReader<DuplexStream>>) {
    let (client_in, server_out) = tokio::io::duplex(1 << 16);
    let (server_in, client_out) = tokio::io::duplex(1 << 16);
    let config = mcp::stdio::StdioConfig::default();
    let served = tokio::spawn(mcp::stdio::serve(mcp_everything::server(), server_in, server_out, config));
    (served, client_out, BufReader::new(client_in).lines())
}
