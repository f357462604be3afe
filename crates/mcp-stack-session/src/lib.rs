//! The session machine of MCP servers: what a connection to one client must remember, as a
//! deterministic machine with no IO, no runtime, no clock and no randomness of its own (the
//! quinn-proto shape). The cores ([`Session`], and `LegacySession` with feature `legacy`)
//! import nothing from tokio and hold no `Server`: only what they need of it (how to encode a
//! result, what `initialize` answers). [`Driver`] is the one part of this crate that knows a
//! runtime.
//!
//! [`Session`] is the modern core: the calls in flight, their cancellation by
//! `notifications/cancelled`, unique ids, and encoding. The legacy era (feature `legacy`) adds a
//! type that wraps it, `LegacySession`: a legacy client's `initialize` opens its session;
//! later requests without modern `_meta` are served in it (with the MRTR-to-legacy bridge:
//! `input_required` becomes server-to-client requests), every other request goes on to the
//! modern core. Both implement [`SessionCore`], what the [`Driver`] needs. The feature only
//! adds items (`LegacySession`, `LegacyState`, `legacy_changes`); it changes none.
//!
//! # Method kinds, and their order
//!
//! As quinn-proto's `Connection`, a core is driven from outside and never blocks:
//!
//! - **Getters** read it: [`Session::config`], [`Session::calls_in_flight`].
//! - **`handle_*`** feed it what happened, each with the time now: input from the client
//!   ([`Session::handle_bytes`], or its parsed parts [`Session::handle_request`],
//!   [`Session::handle_notification`]; a legacy core also takes `handle_response`, the answer
//!   to one of its questions), the client's input ending ([`Session::handle_peer_gone`]), and,
//!   through [`SessionCore`], a handler's end ([`SessionCore::handle_outcome`]), a call still
//!   running after its first poll ([`SessionCore::handle_pending`]), a listen stream's end
//!   ([`SessionCore::handle_stream_end`]), a deadline passing ([`SessionCore::handle_timeout`]).
//! - **Commands** ask it to act: [`Session::cancel`], [`Session::close`].
//! - **`poll_*`** drain what it wants done, after every `handle_*` or command:
//!   [`SessionCore::poll_event`] until `None` (run a [`Call`] ([`Event::Call`]), open a listen
//!   stream ([`Event::Listen`]), write a message ([`Event::Transmit`]), ...), then
//!   [`SessionCore::poll_timeout`] for when to call [`SessionCore::handle_timeout`]. When a
//!   handler finishes, the transport hands its result back with
//!   [`SessionCore::handle_outcome`].
//!
//! One [`Driver`] runs a core for its transport: stdio drives one per process, Streamable HTTP
//! one per legacy `Mcp-Session-Id`. A transport with one request per exchange (a modern
//! Streamable HTTP POST: ids cannot collide and cancellation is the connection's) is a
//! one-request session: [`Session::route`] routes its request the way
//! [`Session::handle_request`] does, with nothing to remember, and the transport runs the
//! [`Call`] itself.
//!
//! ```
//! use mcp_server::Server;
//! use mcp_session::{Event, Session, SessionConfig, SessionCore};
//! use serde_json::json;
//! use std::time::Instant;
//!
//! let server = Server::builder("demo", "1").build().unwrap();
//! let mut session = Session::new(server, SessionConfig::default());
//! let now = Instant::now();
//! let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
//! let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{meta}}}}}"#);
//! session.handle_bytes(line.as_bytes(), now);
//! let Some(Event::Call(call)) = session.poll_event() else { panic!() };
//! // The transport runs the handler (here: a made-up result) and hands the result back.
//! session.handle_outcome(call.id(), Ok(json!({"tools": []}).into()), now);
//! let Some(Event::Transmit(t)) = session.poll_event() else { panic!() };
//! assert!(std::str::from_utf8(&t.message).unwrap().contains(r#""resultType":"complete""#));
//! ```

#[cfg(feature = "legacy")]
mod bridge;
mod call;
mod config;
mod driver;
mod event;
mod host;
#[cfg(feature = "legacy")]
mod legacy;
#[cfg(feature = "legacy")]
mod legacy_state;
mod modern;
mod routing;
#[cfg(all(test, feature = "legacy"))]
mod tests;

pub use call::{Call, Outcome};
pub use config::SessionConfig;
#[cfg(feature = "legacy")]
pub use driver::legacy_changes;
pub use driver::{now, pump, Driver, Transport};
pub use event::{Event, SessionCore, Transmit};
#[cfg(feature = "legacy")]
pub use legacy::LegacySession;
#[cfg(feature = "legacy")]
pub use legacy_state::LegacyState;
pub use modern::Session;
pub use routing::{id_in_use, is_modern_request};
