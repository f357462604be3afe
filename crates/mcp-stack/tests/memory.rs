//! Client and server in one process (`mcp::memory`): the typed client surface against the
//! typed server API, MRTR driven by the client's handler, listen streams as `Stream`s.

use futures::StreamExt;
use mcp::client::types::{ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue};
use mcp::client::{ClientBuilder, ElicitationModes, ListenEvent};
use mcp::prelude::*;

/// The sum.
#[schema]
#[derive(Debug, PartialEq)]
struct Sum {
    sum: i64,
}

/// Adds.
#[tool]
async fn add(a: i64, b: i64) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

/// The answer `ask` needs.
#[schema]
struct Name {
    name: String,
}

/// Asks for a name.
#[tool]
async fn ask(ctx: Context) -> Result<String, HandlerError> {
    Ok(match ctx.elicit::<Name>("Name?")? {
        Elicitation::Accept(n) => format!("hi {}", n.name),
        _ => "no name".into(),
    })
}

/// Reports progress.
#[tool]
async fn steps(ctx: Context) -> &'static str {
    for i in 1..=3 {
        ctx.progress(f64::from(i), Some(3.0), None);
    }
    "done"
}

/// Announces a tool list change.
#[tool]
async fn touch(ctx: Context) -> &'static str {
    ctx.server().notify(ChangeEvent::ToolsListChanged);
    "touched"
}

fn server() -> Server {
    Server::builder("mem", "1").tools([add::tool(), ask::tool(), steps::tool(), touch::tool()]).build().unwrap()
}

#[tokio::test]
async fn typed_results_round_trip_in_memory() {
    let client = mcp::memory::connect(server(), ClientBuilder::new("t", "1")).await.unwrap();
    assert!(client.is_modern());
    let r = client.call_tool("add", json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(r.structured::<Sum>().unwrap(), Sum { sum: 42 });
    assert_eq!(r.text(), r#"{"sum":42}"#);
    assert!(!r.is_error());
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let s = seen.clone();
    let r = client
        .call_tool("steps", json!({}))
        .on_progress(move |_| {
            s.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
        .await
        .unwrap();
    assert_eq!(r.text(), "done");
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[tokio::test]
async fn the_client_answers_typed_elicitation_through_mrtr() {
    let builder = ClientBuilder::new("t", "1").on_elicitation(ElicitationModes::FORM, |params| async move {
        let ElicitRequestParams::Form(form) = params else { panic!("a form") };
        assert_eq!(form.requested_schema.required, Some(vec!["name".to_owned()]));
        let content = [("name".to_owned(), ElicitValue::String("Ada".into()))].into();
        Ok(ElicitResult { content: Some(content), ..ElicitResult::new(ElicitAction::Accept) })
    });
    let client = mcp::memory::connect(server(), builder).await.unwrap();
    assert_eq!(client.call_tool("ask", json!({})).await.unwrap().text(), "hi Ada");
    let without = mcp::memory::connect(server(), ClientBuilder::new("t", "1")).await.unwrap();
    assert!(without.call_tool("ask", json!({})).await.is_err(), "no elicitation capability declared");
}

#[tokio::test]
async fn subscriptions_are_streams() {
    let client = mcp::memory::connect(server(), ClientBuilder::new("t", "1")).await.unwrap();
    let asked = mcp::client::types::SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(asked.clone()).await.unwrap();
    assert_eq!(sub.acknowledged, asked);
    client.call_tool("touch", json!({})).await.unwrap();
    let event = tokio::time::timeout(std::time::Duration::from_secs(5), StreamExt::next(&mut sub)).await.unwrap();
    assert!(
        matches!(event, Some(Ok(ListenEvent::Notification { ref method, .. })) if method == "notifications/tools/list_changed"),
        "{event:?}"
    );
}
