//! Helpers some of the CLI tests share: the `mcp` binary and other programs as child
//! processes, bounded waits, raw HTTP.
#![allow(dead_code)] // each test module uses a different subset

pub(crate) mod bounded;
#[cfg(unix)]
pub(crate) mod browser;
pub(crate) mod http_server;
pub(crate) mod nginx;
pub(crate) mod proxy;
pub(crate) mod raw_http;
pub(crate) mod token_issuer;
