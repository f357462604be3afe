//! `mcp-cluster --mcp PATH [--instances N]`: starts the harness (see the library docs), prints
//! `url=...` (the proxy), `instance<i>=...` and `redis=...` lines on stdout, then runs until
//! SIGINT or SIGTERM and stops everything.

use mcp_cluster::{Cluster, ClusterOptions};

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut mcp, mut instances) = (None, 3);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--mcp" => mcp = args.next(),
            "--instances" => instances = args.next().and_then(|n| n.parse().ok()).unwrap_or(0),
            _ => {
                eprintln!("usage: mcp-cluster --mcp PATH [--instances N]");
                return std::process::ExitCode::from(2);
            }
        }
    }
    let Some(mcp) = mcp.filter(|_| instances > 0) else {
        eprintln!("usage: mcp-cluster --mcp PATH [--instances N]");
        return std::process::ExitCode::from(2);
    };
    let cluster = match Cluster::start(ClusterOptions::new(mcp, instances)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mcp-cluster: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    println!("url={}", cluster.url());
    for i in 0..cluster.len() {
        println!("instance{i}={}", cluster.instance_url(i));
    }
    println!("redis={}", cluster.redis_url());
    println!("dir={}", cluster.dir().display());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    });
    drop(cluster);
    std::process::ExitCode::SUCCESS
}
