//! `mcp`: the Model Context Protocol command-line tool.

use clap::{Parser, Subcommand};
use std::net::SocketAddr;

#[derive(Parser)]
#[command(
    name = "mcp",
    version,
    about = "Model Context Protocol (2026-07-28) command-line tool"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a built-in MCP server.
    Serve {
        /// Which server (`everything`: every conformance fixture plus demo tools).
        #[arg(value_parser = ["everything"])]
        name: String,
        /// Serve Streamable HTTP on this address (path /mcp), e.g. 127.0.0.1:3000.
        #[arg(long, conflicts_with = "stdio")]
        http: Option<SocketAddr>,
        /// Serve on stdin/stdout.
        #[arg(long)]
        stdio: bool,
        /// Extra Host names to accept (DNS-rebinding protection allows loopback names only by default).
        #[arg(long = "allow-host")]
        allow_hosts: Vec<String>,
    },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MCP_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result = rt.block_on(async move {
        match cli.command {
            Command::Serve {
                name: _,
                http,
                stdio,
                allow_hosts,
            } => {
                let server = mcp_cli::everything::server();
                match (http, stdio) {
                    (Some(addr), _) => mcp_cli::serve_http(server, addr, allow_hosts).await,
                    (None, true) => mcp::stdio::serve_stdio(server).await,
                    (None, false) => Err(std::io::Error::other(
                        "choose a transport: --http ADDR or --stdio",
                    )),
                }
            }
        }
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
