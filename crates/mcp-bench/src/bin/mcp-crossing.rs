//! `mcp-crossing --a URL --b URL --c URL [--samples N]`: what crossing instances costs, measured
//! with the client library against three instances sharing Redis (see `scripts/bench.sh`):
//! - change notification latency: listen on B, trigger a change on A (and, as the baseline,
//!   listen and trigger on A): from sending the trigger to the notification's arrival;
//! - task create-to-visible: a task created on A, then `tasks/get` on B (and how many `get`s
//!   it took: 1 means visible before the create result was returned);
//! - task update-to-visible: `tasks/update` on B, then `tasks/get` on C until the answer shows.
//!
//! Prints one JSON line. Every loop is bounded by `--samples` and a 60 s deadline.

use hdrhistogram::Histogram;
use mcp_client::transport::http::HttpTransport;
use mcp_client::{Client, ClientBuilder, ElicitationModes, ListenEvent, Started};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

async fn client(url: &str) -> Result<Client, BoxError> {
    let transport = HttpTransport::builder(url).build()?;
    let b = ClientBuilder::new("mcp-crossing", "1")
        .tasks(true)
        .on_elicitation_raw(ElicitationModes::FORM, |_p: Value| async {
            Ok(json!({"action": "accept", "content": {"confirm": true}}))
        });
    Ok(b.connect(transport).await?)
}

fn summary(h: &Histogram<u64>) -> Value {
    json!({"samples": h.len(), "p50_us": h.value_at_quantile(0.5), "p99_us": h.value_at_quantile(0.99), "max_us": h.max()})
}

/// Trigger on `from`, listen on `to`: latency from sending the trigger to the notification.
async fn notification_latency(from: &Client, to: &Client, samples: u64, deadline: Instant) -> Result<Value, BoxError> {
    let mut sub = to
        .listen(mcp_client::types::SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() })
        .await?;
    let mut h = Histogram::<u64>::new(3)?;
    for _ in 0..samples {
        if Instant::now() > deadline {
            break;
        }
        let t0 = Instant::now();
        let trigger = from.call_tool("test_trigger_tool_change", json!({}));
        let wait = async {
            while let Some(e) = sub.next().await {
                if let Ok(ListenEvent::Notification { method, .. }) = e {
                    if method == "notifications/tools/list_changed" {
                        return Some(t0.elapsed());
                    }
                }
            }
            None
        };
        let (r, heard) = tokio::join!(trigger, tokio::time::timeout(Duration::from_secs(5), wait));
        r?;
        let heard = heard.map_err(|_| "no notification within 5 s")?.ok_or("the listen stream ended")?;
        h.record(heard.as_micros() as u64)?;
    }
    Ok(summary(&h))
}

async fn task_id(c: &Client, tool: &str, args: Value) -> Result<String, BoxError> {
    match c.call_tool(tool, args).start().await? {
        Started::Task(t) => Ok(t.id().to_owned()),
        Started::Done(_) => Err("the server did not create a task".into()),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let (mut urls, mut samples) = (Vec::new(), 200u64);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--a" | "--b" | "--c" => urls.push(args.next().ok_or("a URL")?),
            "--samples" => samples = args.next().ok_or("a number")?.parse()?,
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    let [a, b, c] = urls.as_slice() else { return Err("usage: mcp-crossing --a URL --b URL --c URL".into()) };
    let (a, b, c) = (client(a).await?, client(b).await?, client(c).await?);
    let deadline = Instant::now() + Duration::from_secs(60);
    let local = notification_latency(&a, &a, samples, deadline).await?;
    let crossing = notification_latency(&a, &b, samples, deadline).await?;

    let (mut create, mut update) = (Histogram::<u64>::new(3)?, Histogram::<u64>::new(3)?);
    let mut extra_gets = 0u64;
    for _ in 0..samples.min(100) {
        if Instant::now() > deadline {
            break;
        }
        // Create on A, visible on B.
        let id = task_id(&a, "slow_compute", json!({"seconds": 30})).await?;
        let t0 = Instant::now();
        let mut gets = 0;
        while b.task(&id).get().await.is_err() {
            gets += 1;
            if t0.elapsed() > Duration::from_secs(5) {
                return Err("a created task never became visible".into());
            }
        }
        create.record(t0.elapsed().as_micros() as u64)?;
        extra_gets += gets;
        c.task(&id).cancel().await?;
        // Update on B, visible on C.
        let id = task_id(&a, "confirm_delete", json!({"filename": "f"})).await?;
        let t_park = Instant::now();
        loop {
            let task = b.task(&id).get().await?;
            if task["status"] == "input_required" {
                break;
            }
            if t_park.elapsed() > Duration::from_secs(5) {
                return Err(format!("task {id} never asked for input within 5 s: {task}").into());
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let t0 = Instant::now();
        let mut answer = serde_json::Map::new();
        answer.insert("confirm".into(), json!({"action": "accept", "content": {"confirm": true}}));
        b.task(&id).update(answer).await?;
        while c.task(&id).get().await?["status"] == "input_required" {
            if t0.elapsed() > Duration::from_secs(5) {
                return Err("an update never became visible".into());
            }
        }
        update.record(t0.elapsed().as_micros() as u64)?;
    }
    let out = json!({
        "notification_local": local,
        "notification_crossing": crossing,
        "task_create_to_visible": summary(&create),
        "task_create_extra_gets": extra_gets,
        "task_update_to_visible": summary(&update),
    });
    println!("{out}");
    Ok(())
}
