//! The client against real server processes, over stdio and Streamable HTTP: this test binary
//! starts itself again as the everything server (`mcp_test_support::child`), so the client's
//! transports meet a real child process (pipes, process groups, a server killed mid-call)
//! without another crate's binary. A `harness = false` test: `mcp_test_support::harness` runs
//! the async tests below.
//! - `stdio`: the stdio transport, modern and legacy servers, timeouts, a killed server.
//! - `http`: the Streamable HTTP transport, a killed server.
//! - `https`: TLS (trusted, untrusted, a plain port), and a `CONNECT` proxy.
//! - `tasks`: the tasks and skills extensions over both transports.
//! - `legacy_listen`: `subscriptions/listen` fed by a legacy session.
//! - `logs`: log messages in both eras over stdio.
//! - `apps`: MCP Apps (the extension declared, app-only tools, views) in both eras.

mod apps;
mod http;
mod https;
mod in_flight;
mod legacy_listen;
mod logs;
mod stdio;
mod tasks;

fn main() -> std::process::ExitCode {
    mcp_test_support::child::serve_if_asked();
    mcp_test_support::harness::run(mcp_test_support::tests![
        stdio::modern_server_over_stdio,
        stdio::progress_and_logs_reach_callbacks,
        stdio::undeclared_capabilities_give_a_clear_error,
        stdio::listen_gets_tagged_notifications_and_invalidates_cache,
        stdio::timeout_cancels_the_request_and_the_server_keeps_serving,
        stdio::legacy_server_over_stdio,
        stdio::killed_server_fails_pending_calls_promptly_and_leaves_no_process,
        logs::log_messages_reach_the_call_in_both_eras,
        logs::log_messages_no_call_takes_reach_the_client_handler,
        logs::log_attribution_off_sends_logs_to_the_client_handler,
        logs::the_log_level_is_sent_to_a_legacy_server,
        logs::no_set_level_without_the_logging_capability,
        http::modern_server_over_http,
        http::killed_http_server_fails_pending_calls_promptly,
        https::a_modern_server_over_https,
        https::an_untrusted_certificate_is_refused_before_any_request,
        https::https_to_a_plain_http_port_says_so,
        https::https_goes_through_the_proxy_in_the_environment,
        tasks::tasks_and_skills_over_stdio,
        tasks::tasks_and_skills_over_http,
        legacy_listen::a_legacy_stdio_session_feeds_listen,
        legacy_listen::a_legacy_subscription_ends_with_the_session,
        apps::apps_in_both_eras_over_stdio,
        apps::the_traffic_tap_sees_requests_and_responses,
    ])
}
