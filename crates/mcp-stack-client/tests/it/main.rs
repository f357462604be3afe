//! The client library's integration tests, as one test binary (the client against real servers
//! over processes is `tests/e2e`):
//! - `http_transport`, `http_client`, `http_auth`: the Streamable HTTP transport against small
//!   scripted servers on 127.0.0.1 (`http_support`), and authorization.
//! - `hostile`: servers that misbehave (huge, slow, endless, malformed answers).
//! - `icons` (feature `icons`), `multi` (feature `multi`): the host-application features.

mod http_support;

mod hostile;
mod http_auth;
mod http_client;
mod http_transport;
#[cfg(feature = "icons")]
mod icons;
#[cfg(feature = "multi")]
mod multi;
