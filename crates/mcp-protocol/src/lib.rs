//! Sans-IO core of the Model Context Protocol, revision 2026-07-28.
//!
//! No I/O, no async runtime: only types, parsing and the protocol rules that
//! transports and the server/client frameworks share.

pub mod types;
