//! Metadata documents: OAuth 2.0 Protected Resource Metadata (RFC 9728) that this server
//! publishes, and the authorization-server metadata (RFC 8414 / OpenID Connect Discovery) it
//! reads to find the issuer's key set. Sans-IO: URL construction and validation only.

use crate::AuthError;
use serde_json::Value;

/// The RFC 9728 well-known path prefix.
pub const PRM_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

pub use mcp_protocol::auth::ProtectedResourceMetadata;

/// `uri` split into `(scheme, authority, rest)`; `rest` is the path plus query (no fragment).
/// `None` unless `uri` is an absolute `http`/`https` URI without a fragment.
pub fn split_uri(uri: &str) -> Option<(&str, &str, &str)> {
    let (scheme, after) = uri.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    if uri.contains('#') {
        return None;
    }
    let end = after.find(['/', '?']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    Some((scheme, authority, rest))
}

/// Whether `uri` is a valid canonical server URI: absolute `http(s)`, a host, no fragment.
pub fn is_valid_resource(uri: &str) -> bool {
    split_uri(uri).is_some()
}

/// `uri` with scheme and host lower-cased and a lone trailing `/` removed: the form two resource
/// identifiers are compared in (the spec asks servers to accept upper-case scheme and host).
pub fn normalize_resource(uri: &str) -> String {
    match split_uri(uri) {
        Some((scheme, authority, rest)) => {
            let rest = if rest == "/" { "" } else { rest };
            format!("{}://{}{}", scheme.to_ascii_lowercase(), authority.to_ascii_lowercase(), rest)
        }
        None => uri.to_owned(),
    }
}

/// Whether the resource identifiers `a` and `b` name the same resource (see
/// [`normalize_resource`]).
pub fn same_resource(a: &str, b: &str) -> bool {
    a == b || normalize_resource(a) == normalize_resource(b)
}

/// The RFC 9728 §3.1 metadata URL of `resource`: the well-known prefix inserted between the
/// authority and the path (`https://h/mcp` → `https://h/.well-known/oauth-protected-resource/mcp`).
pub fn metadata_url_for(resource: &str) -> Option<String> {
    let (scheme, authority, rest) = split_uri(resource)?;
    let path = rest.split('?').next().unwrap_or("").trim_end_matches('/');
    Some(format!("{}://{}{PRM_WELL_KNOWN}{path}", scheme.to_ascii_lowercase(), authority.to_ascii_lowercase()))
}

/// The path part of an absolute URL (`/` when empty).
pub fn path_of(url: &str) -> &str {
    match split_uri(url) {
        Some((_, _, rest)) => {
            let p = rest.split('?').next().unwrap_or("");
            if p.is_empty() {
                "/"
            } else {
                p
            }
        }
        None => "/",
    }
}

/// The authorization-server metadata URLs to try for `issuer`, in the MCP priority order:
/// RFC 8414 path insertion, OpenID Connect path insertion, OpenID Connect path appending (the
/// last only for issuers with a path).
pub fn as_metadata_urls(issuer: &str) -> Result<Vec<String>, AuthError> {
    let (scheme, authority, rest) =
        split_uri(issuer).ok_or_else(|| AuthError::Config(format!("issuer {issuer:?} is not an http(s) URL")))?;
    if rest.contains('?') {
        return Err(AuthError::Config(format!("issuer {issuer:?} has a query component")));
    }
    let path = rest.trim_end_matches('/');
    let origin = format!("{scheme}://{authority}");
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    Ok(urls)
}

/// Checks an authorization-server metadata document fetched for `issuer` (RFC 8414 §3.3: its
/// `issuer` must be identical, compared as a plain string) and returns its `jwks_uri`.
pub fn jwks_uri_from_as_metadata(doc: &Value, issuer: &str) -> Result<String, AuthError> {
    match doc.get("issuer").and_then(Value::as_str) {
        Some(i) if i == issuer => {}
        Some(i) => {
            return Err(AuthError::Unavailable(format!("metadata names issuer {i:?}, expected {issuer:?}")));
        }
        None => return Err(AuthError::Unavailable("authorization server metadata has no issuer".into())),
    }
    doc.get("jwks_uri")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| AuthError::Unavailable("authorization server metadata has no jwks_uri".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prm_json() {
        let mut m = ProtectedResourceMetadata::new("https://mcp.example.com/mcp", vec!["https://as.example".into()]);
        m.scopes_supported = Some(vec!["mcp:read".into()]);
        let v: Value = serde_json::from_slice(&m.to_json()).unwrap();
        assert_eq!(
            v,
            json!({
                "resource": "https://mcp.example.com/mcp",
                "authorization_servers": ["https://as.example"],
                "scopes_supported": ["mcp:read"],
                "bearer_methods_supported": ["header"],
            })
        );
        let back: ProtectedResourceMetadata = serde_json::from_value(v).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn urls() {
        let u = metadata_url_for("https://MCP.example.com/mcp").unwrap();
        assert_eq!(u, "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
        let u = metadata_url_for("http://127.0.0.1:3000").unwrap();
        assert_eq!(u, "http://127.0.0.1:3000/.well-known/oauth-protected-resource");
        assert_eq!(metadata_url_for("mcp.example.com"), None);
        assert!(!is_valid_resource("https://mcp.example.com#frag"));
        assert!(!is_valid_resource("ftp://x"));
        assert!(same_resource("HTTPS://MCP.example.com/", "https://mcp.example.com"));
        assert!(!same_resource("https://mcp.example.com/MCP", "https://mcp.example.com/mcp"));
        assert!(!same_resource("https://mcp.example.com.evil", "https://mcp.example.com"));
        assert_eq!(path_of("https://h/.well-known/x/mcp"), "/.well-known/x/mcp");
        assert_eq!(path_of("https://h"), "/");
    }

    #[test]
    fn as_metadata_discovery() {
        assert_eq!(
            as_metadata_urls("https://auth.example.com/tenant1").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            as_metadata_urls("https://auth.example.com").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        let doc = json!({"issuer": "https://honest.example", "jwks_uri": "https://honest.example/jwks"});
        assert_eq!(jwks_uri_from_as_metadata(&doc, "https://honest.example").unwrap(), "https://honest.example/jwks");
        assert!(jwks_uri_from_as_metadata(&doc, "https://attacker.example").is_err());
        assert!(jwks_uri_from_as_metadata(&doc, "https://honest.example/").is_err());
    }
}
