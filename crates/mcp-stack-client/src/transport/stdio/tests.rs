//! Tests of `stdio`.

use super::*;
use serde_json::json;

#[test]
fn only_responses_are_read_for_their_id() {
    assert_eq!(response_id(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#), Some(RequestId::Integer(7)));
    assert_eq!(
        response_id(br#"{"id":"a\"b","error":{"code":1,"message":"x"}}"#),
        Some(RequestId::String("a\"b".into()))
    );
    // A server-to-client request, a notification, a float id, a null id, and not JSON.
    assert_eq!(response_id(br#"{"id":1,"method":"roots/list"}"#), None);
    assert_eq!(response_id(br#"{"method":"notifications/progress","params":{}}"#), None);
    assert_eq!(response_id(br#"{"id":1.5,"result":{}}"#), None);
    assert_eq!(response_id(br#"{"id":null,"error":{}}"#), None);
    assert_eq!(response_id(br#"{"id":1,"result":{}"#), None);
    assert_eq!(response_id(br#"{"id":1,"result":{}} trailing"#), None);
}

#[test]
fn lines_reach_their_request_or_the_unsolicited_channel() {
    let (tx, mut other) = mpsc::channel(crate::transport::UNSOLICITED_CAP);
    let shared = Shared { unsolicited: Unsolicited::new(), ..Shared::default() };
    shared.unsolicited.route(Some(tx));
    let (once_tx, mut once_rx) = oneshot::channel();
    shared.pending.insert(RequestId::Integer(1), Route::Once(once_tx));
    let (stream_tx, mut stream_rx) = Exchange::split();
    shared.pending.insert(RequestId::String("s".into()), Route::Stream { tx: stream_tx, listen: false, logs: true });

    route_line(&shared, br#"{"method":"notifications/progress","params":{"progressToken":"s"}}"#.to_vec());
    route_line(&shared, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}\n".to_vec());
    route_line(&shared, br#"{"id":"s","result":{}}"#.to_vec());
    route_line(&shared, br#"{"id":9,"result":{}}"#.to_vec());
    route_line(&shared, b"not json".to_vec());

    // The plain request gets the text as it came, and parses it when it takes it.
    let text = once_rx.try_recv().unwrap().unwrap();
    let v: Value = serde_json::from_slice(&text).unwrap();
    assert_eq!(v["result"]["ok"], true);
    // The streaming one gets its notification, then its response, parsed.
    let mut next = || futures::FutureExt::now_or_never(stream_rx.next()).flatten().unwrap().unwrap();
    assert_eq!(next()["method"], "notifications/progress");
    assert_eq!(next()["id"], "s");
    // Nobody waits for id 9; the non-JSON line is dropped.
    assert_eq!(other.try_recv().unwrap()["id"], 9);
    assert!(other.try_recv().is_err());
    assert!(shared.pending.drain().is_empty());
}

/// A stream route for request `id` (a listen stream if `listen`), and its exchange.
fn stream(shared: &Shared, id: i64, listen: bool) -> Exchange {
    let (tx, exchange) = Exchange::split();
    shared.pending.insert(RequestId::Integer(id), Route::Stream { tx, listen, logs: true });
    exchange
}

/// The next message already delivered to `ex`, if any.
fn ready(ex: &mut Exchange) -> Option<Value> {
    futures::FutureExt::now_or_never(ex.next()).flatten().map(Result::unwrap)
}

#[test]
fn a_log_message_goes_to_the_one_call_in_flight_or_else_to_the_client() {
    const LOG: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    let (tx, mut other) = mpsc::channel(crate::transport::UNSOLICITED_CAP);
    let shared = Shared { unsolicited: Unsolicited::new(), ..Shared::default() };
    shared.unsolicited.route(Some(tx));
    // One call in flight (a listen stream aside, which never carries log messages): its log.
    let mut listen = stream(&shared, 1, true);
    let mut call = stream(&shared, 2, false);
    route_line(&shared, LOG.to_vec());
    assert_eq!(ready(&mut call).unwrap()["params"]["data"], "x");
    assert!(ready(&mut listen).is_none() && other.try_recv().is_err());
    // Two calls in flight: nothing says whose it is, so it goes to the client's handler.
    let mut second = stream(&shared, 3, false);
    route_line(&shared, LOG.to_vec());
    assert_eq!(other.try_recv().unwrap()["method"], "notifications/message");
    assert!(ready(&mut call).is_none() && ready(&mut second).is_none());
    // One call in flight that reads no notifications (a one-shot): to the client as well.
    drop(shared.pending.remove(&RequestId::Integer(2)));
    drop(shared.pending.remove(&RequestId::Integer(3)));
    let (once, _rx) = oneshot::channel();
    shared.pending.insert(RequestId::Integer(4), Route::Once(once));
    route_line(&shared, LOG.to_vec());
    assert_eq!(other.try_recv().unwrap()["method"], "notifications/message");
    // A log sink (the client's log handler) takes them rather than the unsolicited consumer;
    // it is bounded: past its capacity they are dropped and counted.
    let (logs_tx, mut logs) = mpsc::channel(2);
    shared.unsolicited.route_logs(Some(logs_tx));
    for _ in 0..3 {
        route_line(&shared, LOG.to_vec());
    }
    assert!(logs.try_recv().is_ok() && logs.try_recv().is_ok() && logs.try_recv().is_err());
    assert!(other.try_recv().is_err());
    assert_eq!(shared.unsolicited.stats().dropped, 1);
}

#[tokio::test]
async fn the_writer_sends_queued_lines_in_order_then_closes() {
    let outbox = Arc::new(Outbox::default());
    let (near, far) = tokio::io::duplex(1 << 16);
    let writer = tokio::spawn({
        let outbox = outbox.clone();
        async move { outbox.run(near).await }
    });
    for i in 0..100 {
        outbox.push(&json!({"id": i})).unwrap();
    }
    outbox.close();
    writer.await.unwrap();
    assert!(outbox.push(&json!({"id": "late"})).is_err(), "nothing is queued after close");
    let mut lines = BufReader::new(far).lines();
    for i in 0..100 {
        let line = lines.next_line().await.unwrap().unwrap();
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap()["id"], i);
    }
    assert!(lines.next_line().await.unwrap().is_none(), "stdin is closed after the queue");
}

#[tokio::test]
async fn a_broken_pipe_refuses_further_lines() {
    let outbox = Arc::new(Outbox::default());
    let (near, far) = tokio::io::duplex(64);
    drop(far);
    let writer = tokio::spawn({
        let outbox = outbox.clone();
        async move { outbox.run(near).await }
    });
    outbox.push(&json!({"id": 1})).unwrap();
    writer.await.unwrap();
    assert!(matches!(outbox.push(&json!({"id": 2})), Err(TransportError::Closed(_))));
}
