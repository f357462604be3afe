//! The OAuth 2.1 resource-server side of MCP authorization (revision 2026-07-28).
//!
//! - [`ProtectedResourceMetadata`] (RFC 9728) and the well-known URL helpers in [`metadata`];
//! - [`extract_bearer`]: bearer tokens from the `Authorization` header only (a token in the query
//!   string is refused, a form body is never read);
//! - [`BearerChallenge`]: `WWW-Authenticate: Bearer resource_metadata="...", scope="..."` with the
//!   `invalid_request` / `invalid_token` / `insufficient_scope` forms;
//! - [`TokenValidator`] returning a [`Principal`], implemented by [`JwtValidator`] (signature
//!   against a JWK set, issuer, audience = this server's canonical URI, `exp`/`nbf` with leeway,
//!   an allow-list of algorithms; a token once verified is answered from a bounded cache while
//!   its time and key set allow, see [`VerifiedCacheOptions`]) and [`IntrospectionValidator`]
//!   (RFC 7662);
//! - [`AuthConfig`]: what a transport needs to protect an endpoint, with the one mapping from
//!   [`AuthError`] to status, challenge and body ([`AuthConfig::refusal`]).
//!
//! Everything but the remote key set, discovery and introspection is sans-IO; those need the
//! `fetch` feature (default; reqwest with rustls).
//!
//! ```
//! use mcp_auth::{AuthConfig, JwtConfig, JwtValidator, KeySet};
//! use std::sync::Arc;
//!
//! let jwt = JwtConfig::new("https://auth.example.com", "https://mcp.example.com/mcp");
//! let keys = KeySet::from_jwks(&serde_json::json!({"keys": []})).unwrap();
//! let validator = JwtValidator::new(jwt, keys).unwrap();
//! let auth = AuthConfig::builder("https://mcp.example.com/mcp", Arc::new(validator))
//!     .authorization_server("https://auth.example.com")
//!     .required_scopes(["mcp"])
//!     .build()
//!     .unwrap();
//! assert_eq!(auth.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
//! ```

mod bearer;
mod error;
#[cfg(feature = "fetch")]
mod fetch;
mod introspection;
#[cfg(feature = "fetch")]
mod jwks;
mod jwt;
mod keyset;
pub mod metadata;
mod principal;
mod resource;
mod verified;

pub use bearer::{extract_bearer, parse_bearer, query_has_token};
pub use error::AuthError;
#[cfg(feature = "fetch")]
pub use fetch::FetchOptions;
#[cfg(feature = "fetch")]
pub use introspection::IntrospectionValidator;
pub use introspection::{
    client_basic_auth, introspection_request_body, principal_from_introspection, IntrospectionConfig,
};
pub use jsonwebtoken::Algorithm;
#[cfg(feature = "fetch")]
pub use jwks::{discover_jwks_uri, JwksOptions};
pub use jwt::{verify_jwt, JwtConfig, JwtValidator};
pub use keyset::KeySet;
pub use mcp_protocol::auth::{BearerChallenge, ProtectedResourceMetadata};
pub use principal::{now_secs, scopes_of, Principal, TokenValidator, ValidateFuture};
pub use resource::{AuthConfig, AuthConfigBuilder, Refusal};
pub use verified::VerifiedCacheOptions;
