//! What `mcp proxy` answers and logs for requests the upstream decides: an unknown tool is the
//! spec's unknown-tool error (not an outage), a list is what a call with the caller's
//! capabilities would see, upstream text reaches the log escaped; and its policy globs name
//! tools as clients see them, also in front of a gateway.

use crate::common::*;
use crate::oauth_issuer::{mint, rsa, AuthServer};
use crate::support::http_server::EverythingHttp;
use crate::support::proxy::{legacy_upstream, Proxy};
use serde_json::{json, Value};

/// The JSON-RPC message answering `body` through `addr`, and the HTTP status.
async fn send(addr: std::net::SocketAddr, body: &Value) -> (u16, Value) {
    let r = within("the answer", post(addr, &std_headers(body), body.to_string())).await;
    (r.status, r.message())
}

/// The tool names of a `tools/list` result.
fn tool_names(result: &Value) -> Vec<String> {
    result["tools"].as_array().expect("tools").iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_through_an_http_upstream_is_not_an_outage() {
    let upstream = EverythingHttp::start();
    let direct = send(upstream.addr(), &tcall(1, "no_such_tool", json!({}))).await;
    let proxy = Proxy::http(&[], std::slice::from_ref(&upstream.url));
    for id in 1..=3 {
        let (status, m) = send(proxy.addr(), &tcall(id, "no_such_tool", json!({}))).await;
        assert_eq!((status, m["error"]["code"].clone()), (direct.0, json!(-32602)), "{m}");
        assert_eq!(m["error"]["message"], "Unknown tool: no_such_tool", "{m}");
        assert_eq!(m["error"]["message"], direct.1["error"]["message"], "as the upstream answers it");
    }
    // The proxy still serves, and said nothing about an outage.
    let (status, m) = send(proxy.addr(), &tcall(9, "echo", json!({"text": "up"}))).await;
    assert_eq!((status, first_text(&result_of(&m, &json!(9)))), (200, "up"));
    let log = proxy.stderr();
    assert!(!log.contains("unavailable") && !log.contains("no_such_tool"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_is_what_a_call_with_the_callers_capabilities_sees() {
    // The fixture lists `interview` only to a client that declared elicitation.
    let proxy = Proxy::http(&[], &legacy_upstream());
    let list = |id: i64, c: Value| req(id, "tools/list", caps(json!({}), c));
    let (status, asking) = send(proxy.addr(), &list(1, json!({"elicitation": {}}))).await;
    assert_eq!(status, 200, "{asking}");
    assert!(tool_names(&result_of(&asking, &json!(1))).contains(&"interview".to_owned()), "{asking}");
    let (_, plain) = send(proxy.addr(), &list(2, json!({}))).await;
    let plain = tool_names(&result_of(&plain, &json!(2)));
    assert!(!plain.contains(&"interview".to_owned()) && plain.contains(&"echo".to_owned()), "{plain:?}");
    // A call waiting for the caller's answer holds its (legacy, exclusive) session: a list of
    // the same capabilities is served alongside it, not after it.
    let ask = req(3, "tools/call", caps(json!({"name": "ask", "arguments": {}}), json!({"elicitation": {}})));
    let (_, waiting) = send(proxy.addr(), &ask).await;
    assert_eq!(result_of(&waiting, &json!(3))["resultType"], "input_required", "{waiting}");
    let (_, again) = send(proxy.addr(), &list(4, json!({"elicitation": {}}))).await;
    assert!(tool_names(&result_of(&again, &json!(4))).contains(&"interview".to_owned()), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_text_reaches_the_proxys_log_escaped() {
    // The upstream names itself with a carriage return (which would overwrite the line on a
    // terminal) and a right-to-left override (which would reorder it).
    let proxy = Proxy::http(&["--env", "PROXY_FIXTURE_NAME=up\r\u{202e}evil\u{2066}"], &legacy_upstream());
    let log = proxy.stderr();
    assert!(log.contains("is up\\r\\u{202e}evil\\u{2066} 1.0.0 (legacy"), "{log:?}");
    assert!(!log.contains('\r') && !log.contains('\u{202e}') && !log.contains('\u{2066}'), "{log:?}");
}

/// `--tool-scopes` in front of a gateway names tools as clients see them (`ev_echo`), as
/// `--rate-limit-tool` does: `ev_echo=mcp:admin` protects `ev_echo`, and `add=mcp:admin`
/// hides nothing (no tool is called `add` here) and is reported at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_scopes_in_front_of_a_gateway_name_the_tools_clients_see() {
    const RESOURCE: &str = "http://127.0.0.1/mcp";
    let auth = AuthServer::start(&[rsa(0)], true).await;
    let legacy = legacy_upstream();
    let servers = json!({"mcpServers": {
        "ev": {"command": env!("CARGO_BIN_EXE_mcp"), "args": ["serve", "everything", "--stdio"]},
        "lg": {"command": legacy[1], "args": [legacy[2]]},
    }});
    let dir = std::env::temp_dir().join(format!("mcp-gateway-scopes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("servers.json");
    std::fs::write(&file, servers.to_string()).unwrap();
    let (iss, f) = (auth.issuer.clone(), file.to_string_lossy().into_owned());
    let gw = tokio::task::spawn_blocking(move || {
        let flags = ["--config", &f, "--auth-issuer", &iss, "--auth-audience", RESOURCE];
        Proxy::http(
            &[&flags[..], &["--tool-scopes", "ev_echo=mcp:admin", "--tool-scopes", "add=mcp:admin"]].concat(),
            &[],
        )
    })
    .await
    .unwrap();
    let bearer = |sub: &str, scope: &str| {
        let claims =
            json!({"iss": auth.issuer, "aud": RESOURCE, "sub": sub, "exp": mcp_auth::now_secs() + 300, "scope": scope});
        format!("Bearer {}", mint(rsa(0), &claims))
    };
    let (admin, user) = (bearer("ann", "mcp:admin"), bearer("bob", "mcp:read"));
    let addr = gw.addr();
    let send = |who: String, body: Value| async move {
        post(addr, &set_header(std_headers(&body), "authorization", Some(&who)), body.to_string()).await.message()
    };
    let list = req(1, "tools/list", json!({}));
    let as_user = tool_names(&result_of(&send(user.clone(), list.clone()).await, &json!(1)));
    let as_admin = tool_names(&result_of(&send(admin.clone(), list).await, &json!(1)));
    assert!(as_admin.contains(&"ev_echo".to_owned()) && !as_user.contains(&"ev_echo".to_owned()), "{as_user:?}");
    for open in ["ev_add", "lg_echo"] {
        assert!(as_user.contains(&open.to_owned()), "{open} hidden from {as_user:?}");
    }
    let hidden = send(user.clone(), tcall(2, "ev_echo", json!({"text": "hi"}))).await;
    assert_eq!(
        (hidden["error"]["code"].clone(), hidden["error"]["message"].clone()),
        (json!(-32602), json!("Unknown tool: ev_echo"))
    );
    let r = send(admin, tcall(3, "ev_echo", json!({"text": "hi"}))).await;
    assert_eq!(first_text(&result_of(&r, &json!(3))), "hi");
    let r = send(user, tcall(4, "ev_add", json!({"a": 1, "b": 2}))).await;
    assert!(r.get("result").is_some(), "{r}");
    // Reported once at start: the glob that matches nothing, not the one that matches.
    let log = gw.stderr();
    assert_eq!(log.matches("glob \"add\" matches no tool").count(), 1, "{log}");
    assert!(!log.contains("\"ev_echo\" matches no tool"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}
