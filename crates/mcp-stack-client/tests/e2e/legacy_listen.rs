//! `Client::listen` on a legacy (2025-11-25) session with the real `mcp serve everything
//! --stdio`: the notifications the server writes to stdout feed the subscription, filtered,
//! and `resourceSubscriptions` become `resources/subscribe`.

use mcp_client::transport::stdio::StdioTransport;
use mcp_client::{Client, ClientBuilder, ListenEvent, ServerEra, Subscription};
use serde_json::{json, Value};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

async fn legacy_everything() -> Client {
    let cmd = mcp_test_support::child::stdio_command();
    let b = ClientBuilder::new("legacy-listen-test", "0.0.1").force_legacy("2025-11-25");
    tokio::time::timeout(T, b.connect(StdioTransport::spawn(cmd).unwrap())).await.unwrap().unwrap()
}

async fn next(sub: &mut Subscription) -> (String, Value) {
    match tokio::time::timeout(T, sub.next()).await.expect("a notification within 20 s") {
        Some(Ok(ListenEvent::Notification { method, params })) => (method, params),
        other => panic!("expected a notification, got {other:?}"),
    }
}

fn filter(v: serde_json::Value) -> mcp_client::types::SubscriptionFilter {
    serde_json::from_value(v).unwrap()
}

pub(crate) async fn a_legacy_stdio_session_feeds_listen() {
    let c = legacy_everything().await;
    assert!(matches!(c.era(), Some(ServerEra::Legacy { ref version, .. }) if version == "2025-11-25"));
    let asked = filter(json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched-resource"]}));
    let mut sub = c.listen(asked.clone()).await.unwrap();
    assert_eq!(sub.acknowledged, asked);
    // A prompt list change is not asked for: the tools change is the first event.
    c.call_tool("test_trigger_prompt_change", json!({})).await.unwrap();
    c.call_tool("toggle_extra_tool", json!({})).await.unwrap();
    assert_eq!(next(&mut sub).await.0, "notifications/tools/list_changed");
    c.call_tool("touch_watched_resource", json!({})).await.unwrap();
    let (method, params) = next(&mut sub).await;
    assert_eq!(method, "notifications/resources/updated");
    assert_eq!(params["uri"], "test://watched-resource");
    drop(sub);
    c.close().await;
}

pub(crate) async fn a_legacy_subscription_ends_with_the_session() {
    let c = legacy_everything().await;
    let mut sub = c.listen(filter(json!({"promptsListChanged": true}))).await.unwrap();
    assert_eq!(sub.acknowledged.prompts_list_changed, Some(true));
    c.close().await;
    let end = tokio::time::timeout(T, sub.next()).await.expect("the subscription ends within 20 s");
    assert!(end.is_none(), "{end:?}");
}
