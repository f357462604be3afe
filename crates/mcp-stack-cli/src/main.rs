//! `mcp`: the Model Context Protocol command-line tool.
//!
//! `args` holds the command line (clap derive), `run` one function per command; `main` sets up
//! logging and the runtime, then matches the command once.

mod args;
mod malloc;
mod run;

use args::{Command, Global, ServeArgs};
use clap::Parser;

const TARGET_HELP: &str =
    "TARGET is an http(s):// URL or a configured server NAME (see `mcp servers list`) given first,\n\
    or a stdio server command given last after `--`:\n  \
    mcp tools list NAME --config .mcp.json\n  \
    mcp tools list http://127.0.0.1:3000/mcp\n  \
    mcp tools call echo '{\"text\":\"hi\"}' -- mcp serve everything --stdio";

#[derive(Parser)]
#[command(
    name = "mcp",
    version,
    about = "Model Context Protocol (2026-07-28) command-line tool",
    after_help = TARGET_HELP
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// `mcp serve` parsed on its own, so that its help lists the server's flags and none of the
/// client options (which are global on [`Cli`]).
#[derive(Parser)]
#[command(name = "mcp serve", bin_name = "mcp serve", version, about = "Run a built-in MCP server.")]
struct ServeCli {
    #[command(flatten)]
    args: ServeArgs,
}

/// Whether log lines on stderr may carry ANSI colours: only on a terminal, and not when
/// `NO_COLOR` is set to anything non-empty (<https://no-color.org>).
fn stderr_colors() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Parses the command line. `mcp serve ...` and `mcp help serve` go to [`ServeCli`]: the
/// client options are `global` on [`Cli`], so clap would list them under `serve` too.
fn parse_cli() -> Cli {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let word = |i: usize, w: &str| argv.get(i).is_some_and(|a| a == w);
    let skip = if word(1, "serve") {
        2
    } else if word(1, "help") && word(2, "serve") {
        3
    } else {
        return Cli::parse();
    };
    let mut args: Vec<std::ffi::OsString> = vec!["mcp serve".into()];
    args.extend(argv.into_iter().skip(skip));
    if skip == 3 {
        args.push("--help".into());
    }
    Cli { global: Global::default(), command: Command::Serve(Box::new(ServeCli::parse_from(args).args)) }
}

fn main() -> std::process::ExitCode {
    let cli = parse_cli();
    // Log lines on stderr, plus OTLP export with --otlp-endpoint; flushed when dropped at the
    // end of main (after the runtime).
    let telemetry = match &cli.command {
        Command::Serve(args) => &args.telemetry,
        _ => &cli.global.telemetry,
    };
    // Servers log like servers; a client command's warnings, and the proxy's notices about its
    // upstream, read like the CLI's other messages (`mcp: note: ...`).
    let style = match &cli.command {
        Command::Serve(_) => mcp_cli::telemetry::LogStyle::Server,
        _ => mcp_cli::telemetry::LogStyle::Command,
    };
    let _telemetry = mcp_cli::telemetry::init(telemetry, stderr_colors(), style);
    if matches!(cli.command, Command::Serve(_) | Command::Proxy(_)) {
        // A long-running server gives memory back after bursts, and a panicking handler logs
        // one line (no backtrace unless MCP_PANIC_BACKTRACE=1).
        malloc::tune_allocator();
        mcp::server::panic::install_hook();
    }
    // A stdio server has one client and one pipe each way: on one thread, reading a request,
    // running its handler and writing the answer involve no cross-thread wake-ups (and start
    // no worker threads). HTTP serves many connections: one worker per core.
    let stdio_server = matches!(&cli.command, Command::Serve(a) if a.stdio && a.http.is_none())
        && std::env::var("MCP_STDIO_THREADS").map_or(true, |v| v == "1");
    let rt = if stdio_server {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    }
    .expect("tokio runtime");
    match cli.command {
        Command::Serve(args) => run::serve(&rt, *args),
        Command::Proxy(args) => run::proxy(&rt, *args, cli.global),
        Command::Auth(cmd) => rt.block_on(mcp_cli::client::auth::run(cmd, cli.global.json)),
        Command::Servers(cmd) => run::servers(cmd, cli.global),
        Command::Inspect(args) => run::inspect(&rt, cli.global, args),
        Command::Dev(args) => run::dev(&rt, cli.global, args),
        Command::Install(args) => run::install(args, &cli.global.headers),
        Command::Doctor(args) => run::doctor(rt, cli.global, args.target()),
        Command::Discover(args) => run::client(rt, cli.global, Ok(args.discover())),
        Command::Tools(cmd) => run::client(rt, cli.global, Ok(cmd.call())),
        Command::Resources(cmd) => run::client(rt, cli.global, Ok(cmd.call())),
        Command::Prompts(cmd) => run::client(rt, cli.global, Ok(cmd.call())),
        Command::Tasks(cmd) => run::client(rt, cli.global, Ok(cmd.call())),
        Command::Skills(cmd) => run::client(rt, cli.global, Ok(cmd.call())),
        Command::Complete(args) => run::client(rt, cli.global, args.call()),
        Command::Listen(args) => run::client(rt, cli.global, Ok(args.call())),
    }
}
