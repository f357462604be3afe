//! A test binary that is also the everything server it tests: started again as a child process
//! with [`SERVE`] set, it serves instead of testing. So a crate's tests get a real server
//! process (stdio pipes, a process to kill) without depending on another crate's binary.
//! Call [`serve_if_asked`] first thing in `main` (a `harness = false` test, see
//! [`crate::harness`]).

use std::io::BufRead;
use std::process::{Child, Command, Stdio};

/// The environment variable that makes the test binary serve: `stdio` or `http`.
pub const SERVE: &str = "MCP_TEST_SERVE";

/// When [`SERVE`] is set: serves the everything server (`stdio` on stdin/stdout; `http` on
/// 127.0.0.1, port 0, announcing `serving on URL` on stderr) until the input ends or the
/// process is killed, then exits. Otherwise returns at once.
pub fn serve_if_asked() {
    let Ok(mode) = std::env::var(SERVE) else { return };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let served = rt.block_on(async move {
        match mode.as_str() {
            "stdio" => mcp::stdio::serve_stdio(mcp_everything::server()).await,
            "http" => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                eprintln!("serving on http://{}/mcp", listener.local_addr()?);
                mcp::http::serve(mcp_everything::server(), listener, mcp::http::EndpointConfig::default()).await
            }
            other => panic!("{SERVE}={other}: expected stdio or http"),
        }
    });
    std::process::exit(i32::from(served.is_err()));
}

/// The command that starts this test binary as a stdio server.
pub fn stdio_command() -> mcp::client::transport::stdio::StdioCommand {
    let exe = std::env::current_exe().expect("current_exe");
    mcp::client::transport::stdio::StdioCommand::new(exe.to_string_lossy()).env(SERVE, "stdio")
}

/// This test binary serving Streamable HTTP as a child process; killed on drop.
pub struct HttpChild {
    /// The process.
    pub child: Child,
    /// Its endpoint URL.
    pub url: String,
}

impl HttpChild {
    /// Starts it and waits for its address (bounded by the child's own start-up).
    pub fn start() -> Self {
        let mut child = Command::new(std::env::current_exe().expect("current_exe"))
            .env(SERVE, "http")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the test binary as a server");
        let mut lines = std::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
        let url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("serving on ").map(str::to_owned))
            .expect("the server announces its address");
        std::thread::spawn(move || lines.for_each(drop));
        Self { child, url }
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
