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
    shared.pending.insert(RequestId::String("s".into()), Route::Stream(stream_tx));

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
