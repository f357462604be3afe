//! [`AuthConfig`]: everything a transport needs to protect an MCP endpoint: the validator, the
//! canonical resource URI, the protected-resource metadata, the scopes to require, and the one
//! mapping from [`AuthError`] to a refusal (status, `WWW-Authenticate`, body).

use crate::bearer::extract_bearer;
use crate::metadata::{is_valid_resource, metadata_url_for, path_of, ProtectedResourceMetadata, PRM_WELL_KNOWN};
use crate::{AuthError, BearerChallenge, Principal, TokenValidator};
use bytes::Bytes;
use http::HeaderMap;
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;

/// How to refuse a request: what [`AuthConfig::refusal`] maps an [`AuthError`] to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status (400, 401, 403, 500 or 503).
    pub status: http::StatusCode,
    /// The `WWW-Authenticate` value (every 4xx has one).
    pub www_authenticate: Option<String>,
    /// A JSON body `{"error": ..., "error_description": ...}`.
    pub body: Vec<u8>,
}

/// Resource-server settings of a protected MCP endpoint. Build with [`AuthConfig::builder`].
pub struct AuthConfig {
    validator: Arc<dyn TokenValidator>,
    resource: String,
    metadata: ProtectedResourceMetadata,
    metadata_url: String,
    metadata_json: Bytes,
    required_scopes: Vec<String>,
    tool_scopes: HashMap<String, Vec<String>>,
    implied: HashMap<String, Vec<String>>,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("resource", &self.resource)
            .field("metadata_url", &self.metadata_url)
            .field("required_scopes", &self.required_scopes)
            .field("tool_scopes", &self.tool_scopes)
            .finish_non_exhaustive()
    }
}

type MetadataEdit = Box<dyn FnOnce(&mut ProtectedResourceMetadata)>;

/// Builds an [`AuthConfig`].
pub struct AuthConfigBuilder {
    resource: String,
    validator: Arc<dyn TokenValidator>,
    authorization_servers: Vec<String>,
    required_scopes: Vec<String>,
    scopes_supported: Option<Vec<String>>,
    tool_scopes: HashMap<String, Vec<String>>,
    implied: HashMap<String, Vec<String>>,
    metadata_url: Option<String>,
    edit: Vec<MetadataEdit>,
}

impl std::fmt::Debug for AuthConfigBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfigBuilder").field("resource", &self.resource).finish_non_exhaustive()
    }
}

fn owned(scopes: impl IntoIterator<Item = impl Into<String>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in scopes {
        let s: String = s.into();
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

impl AuthConfigBuilder {
    /// Adds an authorization server (issuer identifier) to the metadata; at least one is needed.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// Scopes every request needs (named in 401 challenges and, by default, `scopes_supported`).
    pub fn required_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.required_scopes = owned(scopes);
        self
    }

    /// Scopes a `tools/call` of `tool` needs besides the required ones (403 `insufficient_scope`
    /// naming them otherwise).
    pub fn tool_scopes(mut self, tool: impl Into<String>, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.tool_scopes.insert(tool.into(), owned(scopes));
        self
    }

    /// Declares that holding `scope` grants each of `implied` too (scope hierarchies, e.g.
    /// `files:write` implies `files:read`). Applied transitively.
    pub fn scope_implies(
        mut self,
        scope: impl Into<String>,
        implied: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.implied.entry(scope.into()).or_default().extend(owned(implied));
        self
    }

    /// `scopes_supported` of the metadata (default: the required scopes, omitted when none).
    pub fn scopes_supported(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes_supported = Some(owned(scopes));
        self
    }

    /// The URL advertised as `resource_metadata` (default: RFC 9728 path insertion on the
    /// resource URI, `https://h/.well-known/oauth-protected-resource/mcp` for `https://h/mcp`).
    pub fn metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// Edits the metadata document before it is frozen (name, documentation, extra members...).
    pub fn metadata(mut self, f: impl FnOnce(&mut ProtectedResourceMetadata) + 'static) -> Self {
        self.edit.push(Box::new(f));
        self
    }

    /// Checks the settings and freezes the metadata document.
    pub fn build(self) -> Result<AuthConfig, AuthError> {
        if !is_valid_resource(&self.resource) {
            return Err(AuthError::Config(format!(
                "resource {:?} must be an absolute http(s) URI without fragment",
                self.resource
            )));
        }
        if self.authorization_servers.is_empty() {
            return Err(AuthError::Config("the metadata must name at least one authorization server".into()));
        }
        let mut metadata = ProtectedResourceMetadata::new(&self.resource, self.authorization_servers);
        let supported = self.scopes_supported.unwrap_or_else(|| self.required_scopes.clone());
        metadata.scopes_supported = (!supported.is_empty()).then_some(supported);
        for f in self.edit {
            f(&mut metadata);
        }
        let metadata_url = match self.metadata_url {
            Some(u) => u,
            None => metadata_url_for(&self.resource).expect("valid resource"),
        };
        let metadata_json = Bytes::from(metadata.to_json());
        Ok(AuthConfig {
            validator: self.validator,
            resource: self.resource,
            metadata,
            metadata_url,
            metadata_json,
            required_scopes: self.required_scopes,
            tool_scopes: self.tool_scopes,
            implied: self.implied,
        })
    }
}

impl AuthConfig {
    /// Starts a config for the endpoint whose canonical URI is `resource`, checking tokens with
    /// `validator` (which must itself check the audience is `resource`).
    pub fn builder(resource: impl Into<String>, validator: Arc<dyn TokenValidator>) -> AuthConfigBuilder {
        AuthConfigBuilder {
            resource: resource.into(),
            validator,
            authorization_servers: Vec::new(),
            required_scopes: Vec::new(),
            scopes_supported: None,
            tool_scopes: HashMap::new(),
            implied: HashMap::new(),
            metadata_url: None,
            edit: Vec::new(),
        }
    }

    /// The canonical resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The protected-resource metadata document.
    pub fn metadata(&self) -> &ProtectedResourceMetadata {
        &self.metadata
    }

    /// The metadata document as served (JSON).
    pub fn metadata_json(&self) -> &Bytes {
        &self.metadata_json
    }

    /// The URL advertised in challenges as `resource_metadata`.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// Scopes every request needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// Extra scopes `tools/call` of `tool` needs, if any are configured.
    pub fn tool_scopes(&self, tool: &str) -> Option<&[String]> {
        self.tool_scopes.get(tool).map(Vec::as_slice)
    }

    /// Whether `path` is where the metadata is served for an endpoint at `endpoint_path`: the
    /// root well-known URI, its path-aware form (`/.well-known/oauth-protected-resource/mcp`),
    /// or the path of the advertised metadata URL.
    pub fn is_metadata_path(&self, path: &str, endpoint_path: &str) -> bool {
        match path.strip_prefix(PRM_WELL_KNOWN) {
            Some("") => true,
            Some(rest) => rest == endpoint_path || path == path_of(&self.metadata_url),
            None => path == path_of(&self.metadata_url),
        }
    }

    /// Authenticates a request from its headers and query string: the bearer token (header
    /// only), the validator, then the required scopes.
    pub async fn authenticate(&self, headers: &HeaderMap, query: Option<&str>) -> Result<Principal, AuthError> {
        let token = extract_bearer(headers, query)?;
        let principal = self.validator.validate(token).await?;
        self.check_scopes(&principal, &self.required_scopes, &[])?;
        Ok(principal)
    }

    /// Checks the extra scopes of `tools/call` of `tool`; the 403 names every scope the call
    /// needs (the required ones and the tool's).
    pub fn check_tool(&self, principal: &Principal, tool: &str) -> Result<(), AuthError> {
        match self.tool_scopes.get(tool) {
            Some(extra) => self.check_scopes(principal, &self.required_scopes, extra),
            None => Ok(()),
        }
    }

    /// Fails with [`AuthError::InsufficientScope`] (naming all of `base` and `extra`) unless
    /// `principal` holds, directly or by implication, every scope of both.
    pub fn check_scopes(&self, principal: &Principal, base: &[String], extra: &[String]) -> Result<(), AuthError> {
        if base.iter().chain(extra).all(|s| self.grants(principal, s)) {
            return Ok(());
        }
        Err(AuthError::InsufficientScope { required: owned(base.iter().chain(extra).cloned()) })
    }

    /// Whether `principal` holds `scope` or a scope implying it.
    pub fn grants(&self, principal: &Principal, scope: &str) -> bool {
        if principal.has_scope(scope) {
            return true;
        }
        if self.implied.is_empty() {
            return false;
        }
        // Breadth-first over the implication graph from the held scopes (bounded by its size).
        let mut seen: Vec<&str> = principal.scopes.iter().map(String::as_str).collect();
        let mut i = 0;
        while i < seen.len() {
            if let Some(next) = self.implied.get(seen[i]) {
                for n in next {
                    if n == scope {
                        return true;
                    }
                    if !seen.contains(&n.as_str()) {
                        seen.push(n);
                    }
                }
            }
            i += 1;
        }
        false
    }

    /// The `WWW-Authenticate` value for `e` (`None` for 5xx): `resource_metadata`, the scopes
    /// (those `e` names, else the required ones), and the error code and description if any.
    pub fn challenge(&self, e: &AuthError) -> Option<String> {
        if !e.has_challenge() {
            return None;
        }
        let scopes = e.required_scopes().unwrap_or(&self.required_scopes);
        let mut c = BearerChallenge::new().resource_metadata(&self.metadata_url).scope(scopes).error(e.error_code());
        if e.error_code().is_some() {
            c = c.error_description(&description(e));
        }
        Some(c.to_header_value())
    }

    /// The whole refusal for `e`: status, challenge and JSON body. The one place transports
    /// should take these from.
    ///
    /// Server-side failures (503 `Unavailable`, 500 `Config`) get a fixed text with a random
    /// correlation id, `"authorization temporarily unavailable (ref 3f2a...)"`; their details
    /// (URLs of the key set or introspection endpoint, error texts) go to the log only, with
    /// the same id (`tracing::warn!`, field `ref`).
    pub fn refusal(&self, e: &AuthError) -> Refusal {
        let status = e.http_status();
        let code = e.error_code().unwrap_or(match status {
            http::StatusCode::INTERNAL_SERVER_ERROR => "server_error",
            http::StatusCode::SERVICE_UNAVAILABLE => "temporarily_unavailable",
            _ => "unauthorized",
        });
        let text = if status.is_server_error() {
            let id = format!("{:016x}", rand::random::<u64>());
            tracing::warn!(r#ref = %id, status = status.as_u16(), error = %e, "request refused: authorization could not be checked");
            if status == http::StatusCode::SERVICE_UNAVAILABLE {
                format!("authorization temporarily unavailable (ref {id})")
            } else {
                format!("authorization is misconfigured on the server (ref {id})")
            }
        } else {
            description(e)
        };
        let body = json!({ "error": code, "error_description": text });
        Refusal { status, www_authenticate: self.challenge(e), body: serde_json::to_vec(&body).expect("JSON") }
    }
}

/// A bounded description of `e` (it may quote attacker-chosen text such as a `kid`).
fn description(e: &AuthError) -> String {
    let mut d = e.to_string();
    if d.len() > 200 {
        let mut end = 200;
        while !d.is_char_boundary(end) {
            end -= 1;
        }
        d.truncate(end);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ValidateFuture;
    use serde_json::Map;

    struct Fixed;
    impl TokenValidator for Fixed {
        fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a, Result<Principal, AuthError>> {
            Box::pin(async move {
                if token == "good" {
                    let scopes = vec!["base".into(), "files:write".into()];
                    Ok(Principal { subject: "u".into(), scopes, client_id: None, claims: Map::new() })
                } else {
                    Err(AuthError::Expired)
                }
            })
        }
    }

    fn config() -> AuthConfig {
        AuthConfig::builder("https://rs.example/mcp", Arc::new(Fixed))
            .authorization_server("https://as.example")
            .required_scopes(["base"])
            .tool_scopes("write", ["files:write"])
            .tool_scopes("admin", ["admin"])
            .scope_implies("files:write", ["files:read"])
            .scope_implies("files:read", ["files:list"])
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn authenticate_and_refuse() {
        let c = config();
        let meta = "https://rs.example/.well-known/oauth-protected-resource/mcp";
        assert_eq!(c.metadata_url(), meta);
        let mut h = HeaderMap::new();
        let e = c.authenticate(&h, None).await.unwrap_err();
        let r = c.refusal(&e);
        assert_eq!(r.status, 401);
        assert_eq!(r.www_authenticate.unwrap(), format!("Bearer resource_metadata=\"{meta}\", scope=\"base\""));
        h.insert("authorization", "Bearer bad".parse().unwrap());
        let r = c.refusal(&c.authenticate(&h, None).await.unwrap_err());
        assert_eq!(
            r.www_authenticate.unwrap(),
            format!("Bearer resource_metadata=\"{meta}\", scope=\"base\", error=\"invalid_token\", error_description=\"token expired\"")
        );
        h.insert("authorization", "Bearer good".parse().unwrap());
        let p = c.authenticate(&h, None).await.unwrap();
        assert!(c.check_tool(&p, "write").is_ok());
        assert!(c.check_tool(&p, "other").is_ok());
        assert!(c.grants(&p, "files:list"), "transitive implication");
        let e = c.check_tool(&p, "admin").unwrap_err();
        let r = c.refusal(&e);
        assert_eq!(r.status, 403);
        assert_eq!(
            r.www_authenticate.unwrap(),
            format!("Bearer resource_metadata=\"{meta}\", scope=\"base admin\", error=\"insufficient_scope\", error_description=\"insufficient scope: requires base admin\"")
        );
        let r = c.refusal(&AuthError::Unavailable("https://as.internal:8443/jwks: connection refused".into()));
        assert_eq!((r.status.as_u16(), r.www_authenticate), (503, None));
        let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["error"], "temporarily_unavailable");
        let d = body["error_description"].as_str().unwrap();
        assert!(d.starts_with("authorization temporarily unavailable (ref ") && d.ends_with(')'), "{d}");
        assert!(!d.contains("as.internal") && !d.contains("refused"), "{d}");
        let again = c.refusal(&AuthError::Unavailable("x".into()));
        assert_ne!(again.body, r.body, "a fresh correlation id each time");
        let r = c.refusal(&AuthError::Config("secret detail".into()));
        assert_eq!(r.status.as_u16(), 500);
        assert!(!String::from_utf8_lossy(&r.body).contains("secret detail"));
    }

    #[test]
    fn metadata_paths_and_checks() {
        let c = config();
        for p in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
            assert!(c.is_metadata_path(p, "/mcp"), "{p}");
        }
        for p in ["/.well-known/oauth-protected-resource/other", "/.well-known/oauth-protected-resourcex", "/mcp"] {
            assert!(!c.is_metadata_path(p, "/mcp"), "{p}");
        }
        let v: serde_json::Value = serde_json::from_slice(c.metadata_json()).unwrap();
        assert_eq!(v["scopes_supported"], json!(["base"]));
        assert_eq!(v["bearer_methods_supported"], json!(["header"]));
        let no_as = AuthConfig::builder("https://rs/mcp", Arc::new(Fixed)).build();
        assert!(matches!(no_as, Err(AuthError::Config(_))));
        let bad = AuthConfig::builder("rs/mcp", Arc::new(Fixed)).authorization_server("https://as").build();
        assert!(matches!(bad, Err(AuthError::Config(_))));
    }
}
