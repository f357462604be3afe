//! Per-caller policy on the real `mcp serve everything` with real JWT access tokens: the
//! `admin_report` fixture exists only for tokens with scope `mcp:admin`, lists that depend on
//! the caller are private, and `limited_echo` answers HTTP 429 with `Retry-After` and -32029
//! past 5 calls per caller per 10 s (counted apart for each caller). The `--rate-limit` flag
//! limits anonymous callers by peer address.

use crate::common::*;
use crate::oauth_issuer::{mint, rsa, AuthServer};
use mcp_auth::now_secs;
use serde_json::{json, Value};
use std::net::SocketAddr;

const RESOURCE: &str = "http://127.0.0.1/mcp";

struct Served {
    auth: AuthServer,
    addr: SocketAddr,
    /// The server child process (none when the test serves through its own).
    _child: Option<tokio::process::Child>,
}

impl Served {
    async fn start() -> Self {
        let auth = AuthServer::start(&[rsa(0)], true).await;
        let (child, addr) = spawn_http_everything(&["--auth-issuer", &auth.issuer, "--auth-audience", RESOURCE]).await;
        Self { auth, addr, _child: Some(child) }
    }

    fn bearer(&self, sub: &str, scope: &str) -> String {
        let claims =
            json!({"iss": self.auth.issuer, "aud": RESOURCE, "sub": sub, "exp": now_secs() + 300, "scope": scope});
        format!("Bearer {}", mint(rsa(0), &claims))
    }

    async fn send(&self, bearer: &str, body: &Value) -> Resp {
        post(self.addr, &set_header(std_headers(body), "authorization", Some(bearer)), body.to_string()).await
    }
}

fn tool_names(r: &Value) -> Vec<String> {
    r["tools"].as_array().expect("tools").iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn admin_report_exists_only_for_the_admin_scope() {
    let s = Served::start().await;
    let (admin, user) = (s.bearer("ann", "mcp:admin"), s.bearer("bob", "mcp:read"));
    let list = req(1, "tools/list", json!({}));
    let as_admin = result_of(&s.send(&admin, &list).await.json(), &json!(1));
    let as_user = result_of(&s.send(&user, &list).await.json(), &json!(1));
    assert!(tool_names(&as_admin).contains(&"admin_report".to_owned()));
    assert!(!tool_names(&as_user).contains(&"admin_report".to_owned()));
    assert_eq!((as_admin["cacheScope"].as_str(), as_user["cacheScope"].as_str()), (Some("private"), Some("private")));
    assert_eq!(tool_names(&as_admin).len(), tool_names(&as_user).len() + 1, "one tool apart");

    let r = s.send(&admin, &tcall(2, "admin_report", json!({}))).await;
    assert_eq!(first_text(&result_of(&r.json(), &json!(2))), "report for ann: all systems nominal");
    // To Bob the tool is unknown: the same status and error as a name that never existed.
    let hidden = s.send(&user, &tcall(3, "admin_report", json!({}))).await;
    let unknown = s.send(&user, &tcall(3, "no_such_tool", json!({}))).await;
    assert_eq!(hidden.status, unknown.status);
    let (h, u) = (hidden.json()["error"].clone(), unknown.json()["error"].clone());
    assert_eq!(h["code"], u["code"]);
    assert_eq!(
        h["message"].as_str().unwrap().replace("admin_report", "X"),
        u["message"].as_str().unwrap().replace("no_such_tool", "X")
    );
}

#[tokio::test]
async fn limited_echo_answers_429_with_retry_after_per_caller() {
    let s = Served::start().await;
    let (ann, bob) = (s.bearer("ann", "mcp"), s.bearer("bob", "mcp"));
    for i in 0..5 {
        let r = s.send(&ann, &tcall(i, "limited_echo", json!({"text": "hi"}))).await;
        assert_eq!(first_text(&result_of(&r.json(), &json!(i))), "hi");
    }
    let r = s.send(&ann, &tcall(9, "limited_echo", json!({"text": "hi"}))).await;
    assert_eq!(r.status, 429, "{}", r.text());
    assert_eq!(r.header("retry-after"), "2", "one call comes back every 2 s");
    let v = r.json();
    assert_eq!((v["id"].clone(), v["error"]["code"].clone()), (json!(9), json!(-32029)));
    let wait = v["error"]["data"]["retryAfterMs"].as_u64().expect("retryAfterMs");
    assert!((1_000..=2_000).contains(&wait), "{wait}");
    // Bob has his own budget, and Ann's other tools are not limited.
    let r = s.send(&bob, &tcall(10, "limited_echo", json!({"text": "bob"}))).await;
    assert_eq!(first_text(&result_of(&r.json(), &json!(10))), "bob");
    let r = s.send(&ann, &tcall(11, "echo", json!({"text": "free"}))).await;
    assert_eq!(first_text(&result_of(&r.json(), &json!(11))), "free");
}

#[tokio::test]
async fn the_rate_limit_flag_counts_anonymous_callers_by_address() {
    let log = std::env::temp_dir().join(format!("mcp-access-log-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let (_child, addr) = spawn_http_everything(&["--rate-limit", "3/m", "--access-log", log.to_str().unwrap()]).await;
    let body = tcall(1, "echo", json!({"text": "x"}));
    for _ in 0..3 {
        assert_eq!(post(addr, &std_headers(&body), body.to_string()).await.status, 200);
    }
    let r = post(addr, &std_headers(&body), body.to_string()).await;
    assert_eq!((r.status, r.header("retry-after")), (429, "20"), "{}", r.text());
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("3/60s (per caller)"));
    // Another address (127.0.0.2 is loopback too) has its own budget.
    assert!(post_from("127.0.0.2", addr, &body).await.starts_with("HTTP/1.1 200"));
    // `--access-log`: one line per request, the refusal with its code (written by the log's
    // own thread, so maybe a moment after the answer).
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    eventually("five access-log lines", || read().lines().count() >= 5).await;
    let text = read();
    let outcomes: Vec<&str> = text.lines().map(|l| l.split(' ').find(|f| f.starts_with("outcome=")).unwrap()).collect();
    assert_eq!(outcomes, ["outcome=ok", "outcome=ok", "outcome=ok", "outcome=-32029", "outcome=ok"], "{text}");
    assert!(text.lines().all(|l| l.contains(" era=modern method=tools/call target=echo caller=- ")), "{text}");
    let _ = std::fs::remove_file(&log);
}

/// POSTs `body` to `addr` from the local address `from`; the status line and the rest.
async fn post_from(from: &str, addr: SocketAddr, body: &Value) -> String {
    post_from_with(from, addr, body, &[]).await
}

/// [`post_from`] with `extra` header lines.
async fn post_from_with(from: &str, addr: SocketAddr, body: &Value, extra: &[(&str, &str)]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let text = body.to_string();
    let mut head =
        format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-length: {}\r\n", text.len());
    for (k, v) in std_headers(body) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    stream.write_all(format!("{head}\r\n{text}").as_bytes()).await.unwrap();
    let mut out = String::new();
    within("the answer", stream.read_to_string(&mut out)).await.unwrap();
    out
}

/// `mcp proxy` applies policy at its front: `--tool-scopes` hides upstream tools from callers
/// without the scopes (listed and called as unknown), `--rate-limit-tool` limits one tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_front_hides_tools_by_scope_and_limits_them() {
    let auth = AuthServer::start(&[rsa(0)], true).await;
    let iss = auth.issuer.clone();
    let front = tokio::task::spawn_blocking(move || {
        let flags = ["--auth-issuer", &iss, "--auth-audience", RESOURCE, "--tool-scopes", "ec*=mcp:admin"];
        let upstream =
            ["--".to_owned(), env!("CARGO_BIN_EXE_mcp").into(), "serve".into(), "everything".into(), "--stdio".into()];
        crate::support::proxy::Proxy::http(&[&flags[..], &["--rate-limit-tool", "add=2/m"]].concat(), &upstream)
    })
    .await
    .unwrap();
    let s = Served { auth, addr: front.addr(), _child: None };
    let (admin, user) = (s.bearer("ann", "mcp:admin"), s.bearer("bob", ""));
    let list = req(1, "tools/list", json!({}));
    let as_admin = tool_names(&result_of(&s.send(&admin, &list).await.json(), &json!(1)));
    let as_user = tool_names(&result_of(&s.send(&user, &list).await.json(), &json!(1)));
    assert!(as_admin.contains(&"echo".to_owned()) && !as_user.contains(&"echo".to_owned()));
    assert_eq!(as_admin.len(), as_user.len() + 1);
    let r = s.send(&admin, &tcall(2, "echo", json!({"text": "hi"}))).await;
    assert_eq!(first_text(&result_of(&r.json(), &json!(2))), "hi");
    let hidden = s.send(&user, &tcall(3, "echo", json!({"text": "hi"}))).await.json();
    assert_eq!(
        (hidden["error"]["code"].clone(), hidden["error"]["message"].clone()),
        (json!(-32602), json!("Unknown tool: echo"))
    );
    for i in 0..2 {
        let r = s.send(&user, &tcall(10 + i, "add", json!({"a": 1, "b": 2}))).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let r = s.send(&admin, &tcall(12, "add", json!({"a": 1, "b": 2}))).await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (429, json!(-32029)), "one budget for the tool");
}

/// The HTTP status of a raw answer.
fn status_of(raw: &str) -> u16 {
    raw.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status line: {raw}"))
}

/// Behind a real nginx (`proxy_add_x_forwarded_for`), `--rate-limit-key-header X-Forwarded-For`
/// keys a caller by the address nginx saw (the last entry), not by the entries it sent: rotating
/// a forged first entry does not reset the budget, and naming a victim's address spends the
/// sender's budget, not the victim's. (127.0.0.2 and 127.0.0.3 are two loopback clients.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_nginx_a_forged_forwarded_for_neither_escapes_nor_locks_out() {
    let (_child, addr) =
        spawn_http_everything(&["--rate-limit", "5/h", "--rate-limit-key-header", "X-Forwarded-For"]).await;
    let Some(nginx) = crate::support::nginx::Nginx::in_front_of(addr) else { return };
    let body = tcall(1, "echo", json!({"text": "x"}));
    let mut statuses = Vec::new();
    for i in 0..12 {
        let forged = format!("10.0.0.{i}");
        statuses
            .push(status_of(&post_from_with("127.0.0.2", nginx.addr, &body, &[("x-forwarded-for", &forged)]).await));
    }
    assert_eq!(statuses, [[200; 5].as_slice(), [429; 7].as_slice()].concat(), "one budget whatever the header says");
    for _ in 0..5 {
        let r = post_from_with("127.0.0.2", nginx.addr, &body, &[("x-forwarded-for", "127.0.0.3")]).await;
        assert_eq!(status_of(&r), 429, "{r}");
    }
    for i in 0..5 {
        let r = post_from("127.0.0.3", nginx.addr, &body).await;
        assert_eq!(status_of(&r), 200, "the victim's call {i}: {r}");
    }
}

/// `--rate-limit-key-header` without any quota flag still keys the tools' own per-caller
/// quotas (`limited_echo`: 5 per caller per 10 s): two clients behind nginx are two callers,
/// not one (nginx's address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_header_alone_keys_a_tools_own_quota() {
    let (_child, addr) = spawn_http_everything(&["--rate-limit-key-header", "X-Forwarded-For"]).await;
    let Some(nginx) = crate::support::nginx::Nginx::in_front_of(addr) else { return };
    let body = tcall(1, "limited_echo", json!({"text": "x"}));
    for from in ["127.0.0.2", "127.0.0.3"] {
        for i in 0..5 {
            let r = post_from(from, nginx.addr, &body).await;
            assert_eq!(status_of(&r), 200, "{from} call {i}: {r}");
        }
    }
}

/// `--trusted-proxy-hops 2` (a CDN, then nginx): the caller is the CDN's entry, second from the
/// right, whichever address reached nginx; 0 hops is refused at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_trusted_hop_keys_by_the_outer_proxys_entry() {
    let flags = ["--rate-limit", "5/h", "--rate-limit-key-header", "X-Forwarded-For", "--trusted-proxy-hops", "2"];
    let (_child, addr) = spawn_http_everything(&flags).await;
    let Some(nginx) = crate::support::nginx::Nginx::in_front_of(addr) else { return };
    let body = tcall(1, "echo", json!({"text": "x"}));
    let cdn = [("x-forwarded-for", "198.51.100.7")];
    let mut statuses = Vec::new();
    for from in ["127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.3"] {
        statuses.push(status_of(&post_from_with(from, nginx.addr, &body, &cdn).await));
    }
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429], "one caller: the CDN's client 198.51.100.7");
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "everything", "--http", "127.0.0.1:0", "--rate-limit-key-header", "X-Forwarded-For"])
        .args(["--trusted-proxy-hops", "0"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--trusted-proxy-hops"), "{refused:?}");
}
