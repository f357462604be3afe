//! The OAuth 2.1 client side of MCP authorization (revision 2026-07-28).
//!
//! [`OAuthProvider`] plugs into the HTTP transport of `mcp-client` as its
//! [`AuthProvider`](mcp_client::AuthProvider): on a `401` it discovers the authorization server
//! (RFC 9728 protected-resource metadata, then RFC 8414 / OpenID Connect metadata), registers
//! (pre-registered credentials, Client ID Metadata Documents, or dynamic registration with
//! `application_type`), and obtains a token with the authorization code flow (PKCE S256,
//! `state`, RFC 8707 `resource`, RFC 9207 `iss` checks) through a [`UserAgent`], or with an
//! extension grant (client credentials, enterprise-managed ID-JAG, JWT bearer). Tokens are
//! refreshed before they expire and after a `401`, and re-requested with the union of scopes
//! on `403 insufficient_scope` (bounded). With [`OAuthBuilder::dpop`] tokens are DPoP-bound.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcp_client::{ClientBuilder, transport::http::HttpTransport};
//! use mcp_oauth::{LoopbackBrowser, OAuthProvider};
//! let url = "https://mcp.example.com/mcp";
//! let browser = LoopbackBrowser::bind(0).await?;
//! let oauth = Arc::new(OAuthProvider::builder(url).client_name("my-app").user_agent(Arc::new(browser)).build()?);
//! let transport = HttpTransport::builder(url).auth(oauth).build()?;
//! let client = ClientBuilder::new("my-app", "1.0.0").connect(transport).await?;
//! # Ok(()) }
//! ```
//!
//! Security rules: every endpoint must be `https` (or `http` on a loopback host); redirects are
//! not followed; tokens never go into URLs or logs; credentials are bound to the issuer that
//! issued them (pre-registered ones to their named issuer, or to the first one they are used
//! with); a `resource_metadata` hint is followed only on the MCP server's own origin; and
//! authorization-server endpoints on loopback, private or link-local addresses
//! ([`is_internal_ip`]) are refused unless the MCP server is on such an address too (every
//! resolved address is checked, and connections go to the checked addresses).

mod config;
mod crypto;
mod discovery;
mod dpop;
mod error;
mod flow;
mod http;
mod provider;
mod safety;
mod store;
mod token;
mod user_agent;

pub use config::{EnterpriseGrant, Grant, StaticClient};
pub use crypto::SigningKey;
pub use discovery::{resource_matches, resource_metadata_urls, server_metadata_urls, ServerMetadata};
pub use error::OAuthError;
pub use mcp_protocol::auth::{parse_www_authenticate, BearerChallenge, ProtectedResourceMetadata, RawChallenge};
pub use provider::{OAuthBuilder, OAuthProvider};
pub use safety::{check_endpoint, is_internal_ip, is_loopback};
pub use store::{ClientRegistration, FileStore, MemoryStore, StoreData, StoredAuthorization, TokenSet, TokenStore};
pub use user_agent::{HeadlessRedirect, LoopbackBrowser, Opener, UserAgent};
