//! The tests of the `mcp` binary, as one test binary (one link of the whole stack): each module
//! runs the built `mcp` as a child process (or its library half, `mcp_cli`) the way a user or a
//! host would. The libraries' own behaviour is tested in their crates.

mod common;
mod support;

mod auth_cli;
mod auth_server;
mod cli;
mod cli_polish;
mod cli_tasks;
mod cluster;
mod config_targets;
mod docs_examples;
mod doctor;
#[cfg(unix)]
mod elicit_order;
mod gateway_trust;
mod hostile_http;
mod hostile_stdio;
mod icons_cli;
#[cfg(unix)]
mod inspector;
#[cfg(unix)]
mod inspector_login;
#[cfg(unix)]
mod inspector_trust;
mod install;
mod oauth_issuer;
mod policy;
mod proxy;
mod proxy_auth;
mod proxy_gateway;
mod proxy_policy;
mod proxy_stdio;
mod proxy_tasks;
mod serve_signals;
#[cfg(feature = "otel")]
mod telemetry;
