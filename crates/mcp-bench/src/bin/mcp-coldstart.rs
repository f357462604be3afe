//! `mcp-coldstart`: how long a stdio server takes from being spawned to its first answer.
//!
//! Spawns `sh -c "exec COMMAND"` RUNS times (one at a time), writes one `tools/call echo`
//! request at once, and measures until the response line arrives; then closes stdin and waits
//! for the exit. Prints one JSON line: median, minimum and 90th percentile in milliseconds.
//! Bounded by `--runs` (and a 10 s limit per run).

use clap::Parser;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Command-line interface.
#[derive(Parser)]
#[command(name = "mcp-coldstart", about = "Spawn-to-first-answer time of a stdio MCP server")]
struct Cli {
    /// The server command line (run as `sh -c "exec COMMAND"`).
    #[arg(long)]
    command: String,
    /// How many times to start it.
    #[arg(long, default_value_t = 30)]
    runs: usize,
    /// Label of this run in the report.
    #[arg(long, default_value = "")]
    label: String,
}

fn one(command: &str) -> std::io::Result<Duration> {
    let start = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec {command}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(format!("{}\n", mcp_bench::echo_request(1, "\"cold\"")).as_bytes())?;
    stdin.flush()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped stdout")).read_line(&mut line)?;
    let took = start.elapsed();
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait()?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = child.wait();
    if !line.contains("\"cold\"") {
        return Err(std::io::Error::other(format!("unexpected first answer: {line}")));
    }
    Ok(took)
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let mut ms = Vec::with_capacity(cli.runs);
    for _ in 0..cli.runs.max(1) {
        match one(&cli.command) {
            Ok(d) => ms.push(d.as_secs_f64() * 1000.0),
            Err(e) => {
                eprintln!("mcp-coldstart: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    println!(
        "{}",
        serde_json::json!({"label": cli.label, "runs": ms.len(), "p50_ms": at(0.5), "min_ms": ms[0], "p90_ms": at(0.9)})
    );
    std::process::ExitCode::SUCCESS
}
