//! `mcp_doctor::diagnose` as a library user calls it: against a real Streamable HTTP server on
//! 127.0.0.1, and against a stdio command that does not exist.

use mcp_doctor::{diagnose, Options, Status, Target};
use std::future::IntoFuture;
use std::time::Duration;

fn options() -> Options {
    Options::default().step_timeout(Duration::from_secs(5))
}

fn step<'a>(report: &'a mcp_doctor::Report, name: &str) -> &'a mcp_doctor::Step {
    report.steps.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no step {name}: {report:#?}"))
}

#[tokio::test]
async fn a_healthy_modern_server_passes_every_step_it_needs() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let serving = mcp::http::serve(mcp_everything::server(), listener, mcp::http::EndpointConfig::default());
    let task = tokio::spawn(serving.into_future());
    let report = diagnose(&Target::Http { url: url.clone(), headers: vec![] }, &options()).await;
    assert_eq!(report.failed(), 0, "{report:#?}");
    assert_eq!(report.transport, "http");
    assert_eq!(report.era.as_ref().map(|e| e.0), Some("modern"), "{report:#?}");
    for name in ["url", "dns", "tcp", "discover", "connect"] {
        assert_eq!(step(&report, name).status, Status::Pass, "{name}: {report:#?}");
    }
    // Without a token store the token step says so instead of guessing.
    assert_eq!(step(&report, "token").status, Status::Skip);
    assert_eq!(step(&report, "initialize").status, Status::Skip, "not needed for a modern server");
    let json = report.to_json();
    assert_eq!(json["ok"], true);
    assert_eq!(json["steps"].as_array().map(Vec::len), Some(report.steps.len()));
    task.abort();
}

#[tokio::test]
async fn a_missing_command_fails_with_a_fix_and_skips_the_rest() {
    let target = Target::Stdio {
        program: "mcp-doctor-no-such-program".into(),
        args: vec!["--stdio".into()],
        env: vec![],
        cwd: None,
    };
    let report = diagnose(&target, &options()).await;
    assert_eq!(report.failed(), 1, "{report:#?}");
    let command = step(&report, "command");
    assert_eq!(command.status, Status::Fail);
    assert!(command.detail.contains("command not found: mcp-doctor-no-such-program"), "{command:?}");
    assert!(!command.hints.is_empty(), "a failure carries a fix");
    for name in ["spawn", "discover", "initialize", "connect"] {
        assert_eq!(step(&report, name).status, Status::Skip, "{name}");
    }
    assert_eq!(report.target, "mcp-doctor-no-such-program --stdio");
}

#[tokio::test]
async fn a_url_with_a_secret_never_shows_it() {
    // Nothing listens on port 9 of loopback: the walk stops at tcp, and no step repeats the
    // query string.
    let url = "http://user:pw@127.0.0.1:9/mcp?api_key=SECRET".to_owned();
    let report = diagnose(&Target::Http { url, headers: vec![] }, &options()).await;
    assert_eq!(step(&report, "tcp").status, Status::Fail, "{report:#?}");
    let text = format!("{} {:?}", report.target, report.steps);
    assert!(!text.contains("pw@") && !text.contains("SECRET"), "{text}");
}
