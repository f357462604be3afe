//! The client under hostile or broken servers: redirects to other origins, servers that accept
//! and never answer (HTTP on 127.0.0.1, stdio child processes). Every wait is bounded.

use crate::http_support::*;
use mcp_client::transport::http::HttpTransport;
use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
use mcp_client::transport::Transport;
use mcp_client::{ClientBuilder, ClientError, TransportError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

const SECRET: &str = "k-5ecret";

/// A second origin that records every connection and request it gets, and answers them.
async fn recorder() -> (String, Log, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (seen, connections) = (log(), Arc::new(AtomicUsize::new(0)));
    let (s2, c2) = (seen.clone(), connections.clone());
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            c2.fetch_add(1, Ordering::SeqCst);
            let seen = s2.clone();
            tokio::spawn(async move {
                if let Some(req) = read_request(&mut s).await {
                    let id = req.json()["id"].as_i64().unwrap_or(0);
                    seen.lock().unwrap().push(req);
                    respond_json(s, "200 OK", &[], &response(id)).await;
                }
            });
        }
    });
    (format!("http://{addr}/mcp"), seen, connections)
}

/// A server that answers every request with `status` pointing at `location`.
async fn redirector(status: &'static str, location: String) -> String {
    serve(move |_req, s| {
        let location = location.clone();
        async move { respond(s, status, &[("Location", &location)], b"").await }
    })
    .await
}

fn with_user_headers(url: &str) -> mcp_client::transport::http::HttpTransportBuilder {
    HttpTransport::builder(url).header("X-Api-Key", SECRET).header("Cookie", "sid=1").bearer_token(SECRET)
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_names_the_location() {
    bounded(async {
        let (other, seen, connections) = recorder().await;
        for status in ["307 Temporary Redirect", "308 Permanent Redirect"] {
            let url = redirector(status, other.clone()).await;
            let t = with_user_headers(&url).build().unwrap();
            match t.request(request(1, "tools/list")).await {
                Err(TransportError::Connect(msg, _)) => {
                    assert!(msg.contains(&other) && msg.contains("another origin"), "{msg}");
                    assert!(!msg.contains(SECRET), "{msg}");
                }
                Err(e) => panic!("{status}: {e:?}"),
                Ok(_) => panic!("{status}: followed the redirect"),
            }
            // Through the client core, the connect fails with the same cause.
            let t = with_user_headers(&url).build().unwrap();
            let b =
                ClientBuilder::new("t", "1").timeout(Duration::from_secs(5)).connect_timeout(Duration::from_secs(5));
            match b.connect(t).await {
                Err(ClientError::Transport(TransportError::Connect(msg, _))) => {
                    assert!(msg.contains(&other), "{msg}")
                }
                Err(e) => panic!("{status}: {e:?}"),
                Ok(_) => panic!("{status}: connected through a cross-origin redirect"),
            }
        }
        // Another port on the same host is another origin.
        assert_eq!(connections.load(Ordering::SeqCst), 0, "the other origin was contacted");
        assert!(seen.lock().unwrap().is_empty());
    })
    .await;
}

#[tokio::test]
async fn an_allowed_cross_origin_redirect_carries_no_user_headers() {
    bounded(async {
        let (other, seen, _) = recorder().await;
        let url = redirector("307 Temporary Redirect", other).await;
        let t = with_user_headers(&url).follow_cross_origin_redirects(true).build().unwrap();
        let mut ex = t.request(request(7, "tools/list")).await.unwrap();
        assert_eq!(ex.next().await.unwrap().unwrap(), response(7));
        let reqs = seen.lock().unwrap().clone();
        assert_eq!(reqs.len(), 1);
        let r = &reqs[0];
        for name in ["x-api-key", "authorization", "cookie"] {
            assert_eq!(r.header(name), None, "{name} crossed origins");
        }
        assert!(!format!("{:?}", r.headers).contains(SECRET), "{:?}", r.headers);
        // The protocol's own headers and the body do go along.
        assert_eq!(r.header("mcp-method"), Some("tools/list"));
        assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.json()["id"], 7);
    })
    .await;
}

#[tokio::test]
async fn a_same_origin_redirect_is_followed_with_every_header_and_loops_are_bounded() {
    bounded(async {
        let seen = log();
        let s2 = seen.clone();
        let url = serve(move |req, s| {
            s2.lock().unwrap().push(req.clone());
            async move {
                match req.path.as_str() {
                    "/mcp" => respond(s, "307 Temporary Redirect", &[("Location", "/v2/mcp")], b"").await,
                    "/v2/mcp" => respond_json(s, "200 OK", &[], &response(req.json()["id"].as_i64().unwrap())).await,
                    _ => respond(s, "308 Permanent Redirect", &[("Location", "/loop")], b"").await,
                }
            }
        })
        .await;
        let t = with_user_headers(&url).build().unwrap();
        let mut ex = t.request(request(3, "tools/list")).await.unwrap();
        assert_eq!(ex.next().await.unwrap().unwrap(), response(3));
        let reqs = seen.lock().unwrap().clone();
        assert_eq!(reqs.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(), ["/mcp", "/v2/mcp"]);
        assert_eq!(reqs[1].method, "POST");
        assert_eq!(reqs[1].header("x-api-key"), Some(SECRET));
        assert_eq!(reqs[1].header("authorization"), Some(format!("Bearer {SECRET}").as_str()));
        assert_eq!(reqs[1].json()["id"], 3);

        seen.lock().unwrap().clear();
        let t = HttpTransport::new(&url.replace("/mcp", "/loop")).unwrap();
        match t.request(request(4, "x")).await {
            Err(TransportError::Connect(msg, _)) => assert!(msg.contains("redirected more than"), "{msg}"),
            other => panic!("{:?}", other.map(|_| ())),
        }
        assert!(seen.lock().unwrap().len() <= 6, "{} requests", seen.lock().unwrap().len());
    })
    .await;
}

/// Accepts connections, reads what comes and never answers (for at most 30 s).
async fn silent_http() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held: Vec<TcpStream> = Vec::new();
        let until = tokio::time::Instant::now() + Duration::from_secs(30);
        while let Ok(Ok((s, _))) = tokio::time::timeout_at(until, listener.accept()).await {
            if held.len() < 64 {
                held.push(s);
            }
        }
    });
    format!("http://{addr}/mcp")
}

fn one_second() -> ClientBuilder {
    let t = Duration::from_secs(1);
    ClientBuilder::new("t", "1").timeout(t).probe_timeout(t).connect_timeout(t)
}

/// The connect fails with a timeout naming one second, well before two.
async fn assert_times_out_in_one_second(t: impl Transport) {
    let started = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(10), one_second().connect(t)).await.expect("connect is bounded");
    let took = started.elapsed();
    match r {
        Err(e @ ClientError::Timeout(d)) => {
            assert_eq!(d, Duration::from_secs(1));
            assert!(e.to_string().contains("1s"), "{e}");
        }
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("connected to a silent server"),
    }
    assert!(took >= Duration::from_millis(900), "gave up early: {took:?}");
    assert!(took < Duration::from_millis(1800), "the connect took {took:?} with a 1 s bound");
}

#[tokio::test]
async fn a_silent_http_server_fails_the_connect_within_its_timeout() {
    bounded(async {
        let url = silent_http().await;
        assert_times_out_in_one_second(HttpTransport::new(&url).unwrap()).await;
        // Without the legacy fallback, silence is a timeout too, in the same bound.
        let t = HttpTransport::new(&url).unwrap();
        let started = Instant::now();
        let r = one_second().allow_legacy(false).connect(t).await;
        assert!(matches!(r, Err(ClientError::Timeout(d)) if d == Duration::from_secs(1)), "{r:?}");
        assert!(started.elapsed() < Duration::from_millis(1800), "{:?}", started.elapsed());
    })
    .await;
}

#[tokio::test]
async fn a_silent_stdio_server_fails_the_connect_within_its_timeout() {
    bounded(async {
        let sink = StdioCommand::new("sh").args(["-c", "cat >/dev/null"]);
        assert_times_out_in_one_second(StdioTransport::spawn(sink).unwrap()).await;
        let sleeper = StdioCommand::new("sleep").args(["30"]);
        let t = StdioTransport::spawn(sleeper).unwrap();
        let pid = t.pid().expect("a pid");
        assert_times_out_in_one_second(t).await;
        // The failed connect leaves no server behind (bounded wait for the kill to land).
        let gone = async {
            while std::path::Path::new(&format!("/proc/{pid}")).exists() && !is_zombie(pid) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(5), gone).await.expect("the server process was not killed");
    })
    .await;
}

/// `cat` as a "server" sends every request back: the first one fails the connect at once with
/// a message saying so, not after the whole connect timeout.
#[tokio::test]
async fn a_program_that_echoes_its_input_is_named_as_such() {
    bounded(async {
        let t = StdioTransport::spawn(StdioCommand::new("cat")).unwrap();
        let b = ClientBuilder::new("t", "1").connect_timeout(Duration::from_secs(60));
        let e = tokio::time::timeout(Duration::from_secs(10), b.connect(t))
            .await
            .expect("failed at once, not after the 60 s connect timeout")
            .expect_err("cat is no MCP server");
        let text = e.to_string();
        assert!(text.contains("our own `server/discover` request back"), "{text}");
        assert!(text.contains("echoes its input"), "{text}");
    })
    .await;
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
        .unwrap_or(true)
}

#[tokio::test]
async fn a_slow_legacy_stdio_server_still_connects_within_the_budget() {
    bounded(async {
        // Ignores everything but `initialize` (like servers that drop requests before it).
        let script = r#"while IFS= read -r line; do
  case "$line" in
    *'"initialize"'*)
      id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}\n' "$id";;
  esac
done"#;
        let t = StdioTransport::spawn(StdioCommand::new("sh").args(["-c", script])).unwrap();
        let b = ClientBuilder::new("t", "1").connect_timeout(Duration::from_secs(4));
        let started = Instant::now();
        let c = tokio::time::timeout(Duration::from_secs(10), b.connect(t)).await.unwrap().unwrap();
        assert!(!c.is_modern());
        assert_eq!(c.protocol_version(), "2025-11-25");
        // The probe took at most half the budget; the handshake the rest.
        assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
        c.close().await;
    })
    .await;
}

/// A stdio server that answers `server/discover` (the client's first request, id 1) if
/// `modern`, then writes `flood` unsolicited notifications and five server requests (ids 0-4)
/// and copies the first five lines it reads next into `out`.
fn flooding_server(modern: bool, flood: u32, out: &std::path::Path) -> StdioCommand {
    let discover = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}"#;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    let answer = if modern { format!("read line; echo '{discover}';") } else { String::new() };
    let script = format!(
        "{answer} yes '{note}' | head -n {flood}; \
         for i in 0 1 2 3 4; do echo '{{\"jsonrpc\":\"2.0\",\"id\":'$i',\"method\":\"roots/list\"}}'; done; \
         head -n 5 > '{}'; sleep 60",
        out.display()
    );
    StdioCommand::new("sh").args(["-c", &script])
}

/// Waits (bounded) until `out` holds five lines, and returns them parsed.
async fn five_answers(out: &std::path::Path) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let text = std::fs::read_to_string(out).unwrap_or_default();
        if text.lines().count() >= 5 {
            return text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        }
        assert!(Instant::now() < deadline, "the server got no answers to its requests: {text:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("mcp-client-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

#[tokio::test]
async fn unread_unsolicited_messages_stay_bounded_and_requests_are_refused() {
    let out = scratch("unread");
    let t = StdioTransport::spawn(flooding_server(false, 1_000_000, &out)).unwrap();
    // Nobody takes the unsolicited queue: it fills, then everything is dropped.
    let answers = five_answers(&out).await;
    let stats = t.unsolicited_stats();
    assert!(stats.queued <= mcp_client::transport::UNSOLICITED_CAP, "{stats:?}");
    assert_eq!(stats.queued as u64 + stats.dropped, 1_000_005, "{stats:?}");
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["id"], i, "{a}");
        assert_eq!(a["error"]["code"], -32603, "{a}");
    }
    t.close().await;
    let _ = std::fs::remove_file(&out);
}

#[tokio::test]
async fn a_modern_client_queues_no_unsolicited_messages() {
    let out = scratch("modern");
    let client = ClientBuilder::new("t", "1")
        .connect_timeout(Duration::from_secs(20))
        .connect(StdioTransport::spawn(flooding_server(true, 1_000_000, &out)).unwrap())
        .await
        .unwrap();
    assert!(client.is_modern());
    let answers = five_answers(&out).await;
    let stats = client.unsolicited_stats();
    // Nothing is held; all but what came before the session turned out modern was dropped at once.
    assert_eq!(stats.queued, 0, "{stats:?}");
    assert!(stats.dropped > 1_000_005 - mcp_client::transport::UNSOLICITED_CAP as u64, "{stats:?}");
    for (i, a) in answers.iter().enumerate() {
        assert_eq!((a["id"].as_u64(), a["error"]["code"].as_i64()), (Some(i as u64), Some(-32603)), "{a}");
    }
    client.close().await;
    let _ = std::fs::remove_file(&out);
}
