//! Discovery: protected-resource metadata (RFC 9728) and authorization-server metadata
//! (RFC 8414 / OpenID Connect Discovery), in the order the MCP specification requires.

use crate::error::OAuthError;
use crate::http::Http;
use crate::safety::{check_endpoint, redact};
use mcp_protocol::auth::ProtectedResourceMetadata;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

/// Authorization-server metadata (RFC 8414 §2), the fields a client uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)] // the RFC 8414 / RFC 9207 / RFC 9449 / CIMD field names
pub struct ServerMetadata {
    pub issuer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// Whether PKCE with `S256` is advertised (absent means no PKCE: refuse).
    pub fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported.as_ref().is_some_and(|m| m.iter().any(|x| x == "S256"))
    }

    /// Whether `scope` is listed in `scopes_supported`.
    pub fn lists_scope(&self, scope: &str) -> bool {
        self.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|x| x == scope))
    }

    /// Whether the token endpoint accepts `method` (RFC 8414: absent means `client_secret_basic`).
    pub fn accepts_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }

    /// A checked endpoint URL.
    pub fn endpoint(&self, which: &str) -> Result<Url, OAuthError> {
        let raw = match which {
            "authorization_endpoint" => &self.authorization_endpoint,
            "token_endpoint" => &self.token_endpoint,
            "registration_endpoint" => &self.registration_endpoint,
            _ => &None,
        };
        let raw = raw
            .as_deref()
            .ok_or_else(|| OAuthError::discovery(format!("the authorization server metadata has no {which}")))?;
        check_endpoint(raw, which)
    }
}

/// Whether a PRM `resource` identifies the MCP server at `server`: same scheme, host and port
/// (scheme and host case-insensitively), and the server's path is the resource path or below
/// it. Query and fragment are not allowed in the resource.
pub fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else { return false };
    if r.fragment().is_some() || r.query().is_some() {
        return false;
    }
    if r.scheme() != server.scheme()
        || r.host_str().map(str::to_ascii_lowercase) != server.host_str().map(str::to_ascii_lowercase)
        || r.port_or_known_default() != server.port_or_known_default()
    {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = server.path();
    rp.is_empty() || sp == rp || sp.strip_prefix(rp).is_some_and(|rest| rest.starts_with('/'))
}

/// The well-known PRM URLs of `server`: path-aware first (when the server has a path), then the
/// root.
pub fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    let mut out = Vec::new();
    let path = server.path().trim_end_matches('/');
    let mut base = server.clone();
    base.set_query(None);
    base.set_fragment(None);
    if !path.is_empty() {
        let mut u = base.clone();
        u.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
        out.push(u);
    }
    let mut root = base;
    root.set_path("/.well-known/oauth-protected-resource");
    out.push(root);
    out
}

/// The metadata URLs of `issuer`, in the MCP order: RFC 8414 path insertion, OIDC path
/// insertion, OIDC path appending (issuers with a path); RFC 8414 then OIDC (without).
pub fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let mut base = issuer.clone();
    base.set_query(None);
    base.set_fragment(None);
    let at = |p: String| {
        let mut u = base.clone();
        u.set_path(&p);
        u
    };
    if path.is_empty() {
        vec![at("/.well-known/oauth-authorization-server".into()), at("/.well-known/openid-configuration".into())]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// Fetches the protected-resource metadata of `server`: from `hint` (the challenge's
/// `resource_metadata`) when given and on the server's own origin (scheme, host, port; a hint
/// elsewhere is ignored with a warning), else (or if that fails) from the well-known URLs. The
/// document's `resource` must identify `server`.
pub(crate) async fn fetch_resource_metadata(
    http: &Http,
    server: &Url,
    hint: Option<&str>,
) -> Result<ProtectedResourceMetadata, OAuthError> {
    let mut candidates = Vec::new();
    if let Some(h) = hint {
        match check_endpoint(h, "resource_metadata") {
            Ok(u) if u.origin() == server.origin() => candidates.push(u),
            Ok(u) => tracing::warn!(
                hint = %redact(&u),
                server = %redact(server),
                "ignoring a resource_metadata hint on another origin than the MCP server; using well-known discovery"
            ),
            Err(e) => tracing::warn!(error = %e, "ignoring an unusable resource_metadata hint"),
        }
    }
    for u in resource_metadata_urls(server) {
        if !candidates.contains(&u) {
            candidates.push(u);
        }
    }
    let mut tried = Vec::new();
    for url in candidates {
        let reply = match http.get_json(&url, "protected resource metadata").await {
            Ok(r) => r,
            Err(e) => {
                tried.push(format!("{}: {e}", redact(&url)));
                continue;
            }
        };
        let doc = match (reply.ok(), reply.json) {
            (true, Some(v)) => v,
            _ => {
                tried.push(format!("{}: HTTP {}", redact(&url), reply.status));
                continue;
            }
        };
        let prm: ProtectedResourceMetadata = serde_json::from_value(doc)
            .map_err(|e| OAuthError::discovery(format!("invalid protected resource metadata: {e}")).caused_by(e))?;
        if !resource_matches(&prm.resource, server) {
            return Err(OAuthError::ResourceMismatch { resource: prm.resource.clone(), server: redact(server) });
        }
        if prm.authorization_servers.is_empty() {
            return Err(OAuthError::discovery("the protected resource metadata lists no authorization server"));
        }
        return Ok(prm);
    }
    Err(OAuthError::discovery(format!("no protected resource metadata found ({})", tried.join("; "))))
}

/// Fetches the metadata of the authorization server `issuer`; its `issuer` must be identical
/// (plain string comparison) to `issuer`.
pub(crate) async fn fetch_server_metadata(http: &Http, issuer: &str) -> Result<ServerMetadata, OAuthError> {
    let issuer_url = check_endpoint(issuer, "authorization server issuer")?;
    if issuer_url.query().is_some() {
        return Err(OAuthError::insecure_url("authorization server issuer: query in the issuer"));
    }
    let mut tried = Vec::new();
    for url in server_metadata_urls(&issuer_url) {
        let reply = match http.get_json(&url, "authorization server metadata").await {
            Ok(r) => r,
            Err(e) => {
                tried.push(format!("{}: {e}", redact(&url)));
                continue;
            }
        };
        let doc: Value = match (reply.ok(), reply.json) {
            (true, Some(v)) => v,
            _ => {
                tried.push(format!("{}: HTTP {}", redact(&url), reply.status));
                continue;
            }
        };
        let meta: ServerMetadata = serde_json::from_value(doc)
            .map_err(|e| OAuthError::discovery(format!("invalid authorization server metadata: {e}")).caused_by(e))?;
        if meta.issuer != issuer {
            return Err(OAuthError::IssuerMismatch { expected: issuer.to_owned(), found: meta.issuer });
        }
        return Ok(meta);
    }
    Err(OAuthError::discovery(format!("no authorization server metadata for {issuer} ({})", tried.join("; "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn resource_matching() {
        let server = u("http://localhost:3000/mcp");
        assert!(resource_matches("http://localhost:3000/mcp", &server));
        assert!(resource_matches("http://localhost:3000", &server));
        assert!(resource_matches("http://localhost:3000/", &server));
        assert!(resource_matches("HTTP://LOCALHOST:3000/mcp", &server));
        assert!(!resource_matches("https://evil.example.com/mcp", &server));
        assert!(!resource_matches("http://localhost:3001/mcp", &server));
        assert!(!resource_matches("http://localhost:3000/mc", &server));
        assert!(!resource_matches("http://localhost:3000/mcp/other", &server));
        assert!(!resource_matches("http://localhost:3000/mcp#x", &server));
    }

    #[test]
    fn well_known_orders() {
        let prm: Vec<String> =
            resource_metadata_urls(&u("https://ex.com/public/mcp")).iter().map(Url::to_string).collect();
        assert_eq!(
            prm,
            [
                "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
                "https://ex.com/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(resource_metadata_urls(&u("https://ex.com")).len(), 1);
        let with_path: Vec<String> =
            server_metadata_urls(&u("https://auth.ex.com/tenant1")).iter().map(Url::to_string).collect();
        assert_eq!(
            with_path,
            [
                "https://auth.ex.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.ex.com/.well-known/openid-configuration/tenant1",
                "https://auth.ex.com/tenant1/.well-known/openid-configuration"
            ]
        );
        let root: Vec<String> = server_metadata_urls(&u("https://auth.ex.com")).iter().map(Url::to_string).collect();
        assert_eq!(
            root,
            [
                "https://auth.ex.com/.well-known/oauth-authorization-server",
                "https://auth.ex.com/.well-known/openid-configuration"
            ]
        );
    }
}
