//! A long call that is known to be running on the server (shared by the client tests).

use mcp_client::{Client, ClientError, ToolResult};
use serde_json::json;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Starts `count_with_progress` (50 slow steps) on `client` in a task and returns once its first
/// progress notification proves the call is in flight on the server.
pub(crate) async fn slow_call_in_flight(client: &Client) -> JoinHandle<Result<ToolResult, ClientError>> {
    let (started, in_flight) = tokio::sync::oneshot::channel::<()>();
    let started = std::sync::Mutex::new(Some(started));
    let c = client.clone();
    let pending = tokio::spawn(async move {
        c.call_tool("count_with_progress", json!({"steps": 50, "delay_ms": 200}))
            .on_progress(move |_| {
                if let Some(tx) = started.lock().unwrap().take() {
                    let _ = tx.send(());
                }
            })
            .await
    });
    tokio::time::timeout(Duration::from_secs(20), in_flight).await.expect("the call starts").unwrap();
    pending
}
