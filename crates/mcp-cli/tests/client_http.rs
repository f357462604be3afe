//! The client library against our server over real HTTP: a modern session end to end, and a
//! server killed in the middle of a request.

#[path = "support/in_flight.rs"]
mod in_flight;
use mcp_client::transport::http::HttpTransport;
use mcp_client::{CallOptions, ClientBuilder, ClientError, ElicitationModes, ServerEra};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

/// `mcp serve everything --http` on a free loopback port; killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    /// Binds port 0 and waits for the server's "serving on URL" line (its readiness signal).
    fn start() -> Self {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["serve", "everything", "--http", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("mcp: serving on ").map(str::to_owned))
            .expect("the server announces its address");
        // Keep draining stderr so the child never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn modern_server_over_http() {
    let server = Server::start();
    let client = ClientBuilder::new("t", "1")
        .on_elicitation(ElicitationModes::FORM, |_p| async move {
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        })
        .connect(HttpTransport::new(&server.url).unwrap())
        .await
        .unwrap();
    assert!(matches!(client.era(), Some(ServerEra::Modern { .. })));
    // x-mcp-header mirroring: the server checks Mcp-Param-Region against the body.
    let r = client.call_tool("test_x_mcp_header", json!({"region": "Hello, 世界"})).await.unwrap();
    assert_eq!(r.text(), "region=Hello, 世界");
    let r = client.call_tool("greet_user", json!({})).await.unwrap();
    assert_eq!(r.text(), "Hello, Ada!");
    let progress = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let p2 = progress.clone();
    let opts = CallOptions {
        on_progress: Some(std::sync::Arc::new(move |_p: &Value| {
            p2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })),
        ..CallOptions::default()
    };
    client.call_tool("count_with_progress", json!({"steps": 3, "delay_ms": 5})).options(opts.clone()).await.unwrap();
    assert_eq!(progress.load(std::sync::atomic::Ordering::SeqCst), 3);
    assert!(matches!(client.read_resource("test://missing").await, Err(ClientError::ResourceNotFound(_))));
    client.close().await;
}

#[tokio::test]
async fn killed_http_server_fails_pending_calls_promptly() {
    let mut server = Server::start();
    let client = ClientBuilder::new("t", "1").connect(HttpTransport::new(&server.url).unwrap()).await.unwrap();
    let pending = in_flight::slow_call_in_flight(&client).await;
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let r = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("the pending call must fail promptly")
        .unwrap();
    assert!(matches!(r, Err(ClientError::Transport(_))), "{r:?}");
    // Later calls fail with a clear connection error rather than hanging.
    let e = tokio::time::timeout(T, client.call_tool("echo", json!({"text": "x"}))).await.unwrap().unwrap_err();
    assert!(e.to_string().contains("connect") || e.to_string().contains("connection"), "{e}");
}
