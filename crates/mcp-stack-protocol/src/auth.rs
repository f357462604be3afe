//! Authorization on the wire (MCP authorization, OAuth 2.1): the documents and headers that a
//! resource server (`mcp-auth`) writes and a client (`mcp-oauth`) reads, one type each.
//!
//! - [`ProtectedResourceMetadata`]: the RFC 9728 document;
//! - [`BearerChallenge`]: a `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1), built and
//!   rendered by a server, read from a header by a client;
//! - [`parse_www_authenticate`]: every challenge of a header as [`RawChallenge`]s (RFC 9110
//!   §11.6.1).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// An RFC 9728 protected-resource metadata document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The resource identifier: this server's canonical URI (RFC 8707).
    pub resource: String,
    /// Issuer identifiers of the authorization servers whose tokens this resource accepts
    /// (MCP requires at least one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// The resource's own JWK set URL (for signed responses; rarely used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Scopes a client should request for basic access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How tokens may be presented: `["header"]` only (no query, no form body).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bearer_methods_supported: Vec<String>,
    /// JWS algorithms the resource signs responses with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_signing_alg_values_supported: Option<Vec<String>>,
    /// Human-readable name of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// URL of developer documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_documentation: Option<String>,
    /// URL of the data-usage policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_policy_uri: Option<String>,
    /// URL of the terms of service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_tos_uri: Option<String>,
    /// Whether tokens must be mutual-TLS certificate-bound (RFC 8705).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_client_certificate_bound_access_tokens: Option<bool>,
    /// Supported RFC 9396 authorization details types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_details_types_supported: Option<Vec<String>>,
    /// DPoP proof algorithms accepted (RFC 9449).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Whether DPoP-bound tokens are required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_bound_access_tokens_required: Option<bool>,
    /// Any other members, published as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ProtectedResourceMetadata {
    /// A document for `resource` protected by `authorization_servers`, header bearer tokens only.
    pub fn new(resource: &str, authorization_servers: Vec<String>) -> Self {
        Self {
            resource: resource.to_owned(),
            authorization_servers,
            jwks_uri: None,
            scopes_supported: None,
            bearer_methods_supported: vec!["header".to_owned()],
            resource_signing_alg_values_supported: None,
            resource_name: None,
            resource_documentation: None,
            resource_policy_uri: None,
            resource_tos_uri: None,
            tls_client_certificate_bound_access_tokens: None,
            authorization_details_types_supported: None,
            dpop_signing_alg_values_supported: None,
            dpop_bound_access_tokens_required: None,
            extra: Map::new(),
        }
    }

    /// The document as JSON bytes.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("metadata serializes")
    }
}

/// A `WWW-Authenticate` challenge as MCP uses it. A server builds one with the setters and
/// renders it with [`BearerChallenge::to_header_value`]; a client reads one from a header with
/// [`BearerChallenge::from_header`].
///
/// ```
/// use mcp_protocol::auth::BearerChallenge;
/// let c = BearerChallenge::new()
///     .resource_metadata("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
///     .scope(&["files:read".to_owned()]);
/// let header = c.to_header_value();
/// assert_eq!(
///     header,
///     r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read""#
/// );
/// let read = BearerChallenge::from_header(Some(&header));
/// assert_eq!(read.scope, Some(vec!["files:read".to_owned()]));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// The scheme: `Bearer` (rendered when `None`); a client also reads `DPoP` or, failing
    /// both, the first challenge of the header.
    pub scheme: Option<String>,
    /// `resource_metadata`: the URL of the protected-resource metadata document (RFC 9728).
    pub resource_metadata: Option<String>,
    /// `scope`, split on spaces (`None` when absent or empty).
    pub scope: Option<Vec<String>>,
    /// `error` (`invalid_request`, `invalid_token`, `insufficient_scope`, `use_dpop_nonce`...).
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// An empty challenge (`Bearer`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `resource_metadata`: the URL of the protected-resource metadata document.
    pub fn resource_metadata(mut self, url: &str) -> Self {
        self.resource_metadata = Some(url.to_owned());
        self
    }

    /// Sets `scope` to `scopes` (omitted when empty). Characters outside the RFC 6750
    /// `scope-token` syntax are dropped.
    pub fn scope(mut self, scopes: &[String]) -> Self {
        let clean: Vec<String> = scopes
            .iter()
            .map(|s| s.chars().filter(|c| is_scope_char(*c)).collect::<String>())
            .filter(|s| !s.is_empty())
            .collect();
        self.scope = (!clean.is_empty()).then_some(clean);
        self
    }

    /// Sets the RFC 6750 `error` code (`invalid_request`, `invalid_token`, `insufficient_scope`).
    pub fn error(mut self, code: Option<&str>) -> Self {
        self.error = code.map(str::to_owned);
        self
    }

    /// Sets `error_description`; characters RFC 6750 forbids there (`"`, `\`, non-ASCII,
    /// controls) are dropped.
    pub fn error_description(mut self, text: &str) -> Self {
        let clean: String = text.chars().filter(|c| is_description_char(*c)).collect();
        self.error_description = (!clean.is_empty()).then_some(clean);
        self
    }

    /// Renders the header value: `Bearer resource_metadata="...", scope="...", error="...",
    /// error_description="..."` (absent parameters omitted). Always a valid header value.
    pub fn to_header_value(&self) -> String {
        let mut out = String::from(self.scheme.as_deref().unwrap_or("Bearer"));
        let scope = self.scope.as_ref().map(|s| s.join(" "));
        let params = [
            ("resource_metadata", self.resource_metadata.as_deref()),
            ("scope", scope.as_deref()),
            ("error", self.error.as_deref()),
            ("error_description", self.error_description.as_deref()),
        ];
        let mut first = true;
        for (name, value) in params {
            let Some(value) = value else { continue };
            out.push_str(if first { " " } else { ", " });
            first = false;
            out.push_str(name);
            out.push_str("=\"");
            quote_into(&mut out, value);
            out.push('"');
        }
        out
    }

    /// The information of a `WWW-Authenticate` value: the `Bearer` or `DPoP` challenge if there
    /// is one (else the first), with `resource_metadata` taken from any challenge.
    pub fn from_header(header: Option<&str>) -> Self {
        let Some(header) = header else { return Self::default() };
        let all = parse_www_authenticate(header);
        let main = all
            .iter()
            .find(|c| c.scheme.eq_ignore_ascii_case("bearer") || c.scheme.eq_ignore_ascii_case("dpop"))
            .or(all.first());
        let Some(main) = main else { return Self::default() };
        let get = |k: &str| main.params.get(k).cloned();
        let scope =
            get("scope").map(|s| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>()).filter(|v| !v.is_empty());
        Self {
            scheme: Some(main.scheme.clone()),
            resource_metadata: get("resource_metadata")
                .or_else(|| all.iter().find_map(|c| c.params.get("resource_metadata").cloned())),
            scope,
            error: get("error"),
            error_description: get("error_description"),
        }
    }
}

/// `%x21 / %x23-5B / %x5D-7E` (RFC 6750 `scope-token` characters).
fn is_scope_char(c: char) -> bool {
    matches!(c, '\x21' | '\x23'..='\x5B' | '\x5D'..='\x7E')
}

/// `%x20-21 / %x23-5B / %x5D-7E` (RFC 6750 `error_description` characters).
fn is_description_char(c: char) -> bool {
    c == ' ' || is_scope_char(c)
}

/// Appends `v` as the inside of a quoted-string (RFC 9110 §5.6.4), dropping anything that is
/// not visible ASCII or space.
fn quote_into(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => {}
        }
    }
}

/// One challenge of a `WWW-Authenticate` header: a scheme and its auth-params (names
/// lower-cased, values unquoted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawChallenge {
    /// The auth scheme (`Bearer`, `DPoP`...), as sent.
    pub scheme: String,
    /// The parameters.
    pub params: BTreeMap<String, String>,
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Parses every challenge of a `WWW-Authenticate` value. Malformed pieces are skipped.
pub fn parse_www_authenticate(header: &str) -> Vec<RawChallenge> {
    let chars: Vec<char> = header.chars().collect();
    let mut i = 0;
    let mut out: Vec<RawChallenge> = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && (chars[*i] == ' ' || chars[*i] == '\t') {
            *i += 1;
        }
    };
    while i < chars.len() {
        while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t' || chars[i] == ',') {
            i += 1;
        }
        let start = i;
        while i < chars.len() && is_tchar(chars[i]) {
            i += 1;
        }
        if start == i {
            i += 1; // an unexpected character: skip it
            continue;
        }
        let token: String = chars[start..i].iter().collect();
        let mut j = i;
        skip_ws(&mut j);
        if j < chars.len() && chars[j] == '=' && !out.is_empty() {
            // An auth-param of the current challenge (or the padding of a token68).
            j += 1;
            skip_ws(&mut j);
            let value = if j < chars.len() && chars[j] == '"' {
                j += 1;
                let mut v = String::new();
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    v.push(chars[j]);
                    j += 1;
                }
                j += 1; // closing quote
                v
            } else {
                let vs = j;
                while j < chars.len() && chars[j] != ',' && chars[j] != ' ' && chars[j] != '\t' {
                    j += 1;
                }
                chars[vs..j].iter().collect()
            };
            if let Some(last) = out.last_mut() {
                last.params.entry(token.to_ascii_lowercase()).or_insert(value);
            }
            i = j;
        } else {
            out.push(RawChallenge { scheme: token, params: BTreeMap::new() });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_form() {
        assert_eq!(BearerChallenge::new().to_header_value(), "Bearer");
        let c = BearerChallenge::new()
            .resource_metadata("https://rs/.well-known/oauth-protected-resource")
            .scope(&["a".into(), "b:c".into()])
            .error(Some("insufficient_scope"))
            .error_description("need \"b:c\"\n");
        assert_eq!(
            c.to_header_value(),
            "Bearer resource_metadata=\"https://rs/.well-known/oauth-protected-resource\", scope=\"a b:c\", \
             error=\"insufficient_scope\", error_description=\"need b:c\""
        );
        let c = BearerChallenge::new().error(Some("invalid_token")).scope(&[]);
        assert_eq!(c.to_header_value(), "Bearer error=\"invalid_token\"");
        // Quotes in URLs are escaped; the result is always a valid header value.
        let c = BearerChallenge::new().resource_metadata("https://x/\"\\é");
        assert_eq!(c.to_header_value(), "Bearer resource_metadata=\"https://x/\\\"\\\\\"");
        assert!(http::HeaderValue::from_str(&c.to_header_value()).is_ok());
    }

    #[test]
    fn parses_bearer_challenge() {
        let h = r#"Bearer error="invalid_token", error_description="Missing Authorization header", scope="mcp:basic mcp:write", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp""#;
        let info = BearerChallenge::from_header(Some(h));
        assert_eq!(info.scheme.as_deref(), Some("Bearer"));
        assert_eq!(info.error.as_deref(), Some("invalid_token"));
        assert_eq!(info.scope, Some(vec!["mcp:basic".to_owned(), "mcp:write".to_owned()]));
        assert_eq!(
            info.resource_metadata.as_deref(),
            Some("http://localhost:1/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn parses_several_challenges_and_escapes() {
        let all = parse_www_authenticate(r#"Basic realm="a\"b", DPoP error=use_dpop_nonce, algs="ES256 PS256""#);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].params["realm"], "a\"b");
        assert_eq!(all[1].scheme, "DPoP");
        assert_eq!(all[1].params["error"], "use_dpop_nonce");
        let info = BearerChallenge::from_header(Some(r#"Basic realm="x", DPoP resource_metadata="https://r/x""#));
        assert_eq!(info.scheme.as_deref(), Some("DPoP"));
        assert_eq!(info.resource_metadata.as_deref(), Some("https://r/x"));
        assert_eq!(BearerChallenge::from_header(Some("Bearer")).scheme.as_deref(), Some("Bearer"));
        assert_eq!(BearerChallenge::from_header(Some(r#"Bearer scope="""#)).scope, None);
    }
}
