//! [`Endpoint`]: what the endpoint's request paths (the modern POST, legacy sessions) share,
//! borrowed from the service for one request.

use crate::body_read::BodyBudget;
use crate::config::EndpointConfig;
use mcp_server::Server;

/// The server, the settings and the body budget of one endpoint.
#[derive(Clone, Copy)]
pub(crate) struct Endpoint<'a> {
    pub(crate) server: &'a Server,
    pub(crate) config: &'a EndpointConfig,
    pub(crate) budget: &'a BodyBudget,
}
