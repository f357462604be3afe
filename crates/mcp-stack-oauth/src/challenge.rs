//! `WWW-Authenticate` parsing (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1, RFC 9449 §7.1).

use std::collections::BTreeMap;

/// One challenge of a `WWW-Authenticate` header: a scheme and its auth-params (names
/// lower-cased, values unquoted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme (`Bearer`, `DPoP`...), as sent.
    pub scheme: String,
    /// The parameters.
    pub params: BTreeMap<String, String>,
}

/// What a client needs from a challenge: where the resource metadata is, which scopes the
/// operation needs, and the error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthInfo {
    /// The scheme of the challenge used (`Bearer` or `DPoP` preferred).
    pub scheme: Option<String>,
    /// `resource_metadata` (RFC 9728).
    pub resource_metadata: Option<String>,
    /// `scope`, split on spaces.
    pub scope: Option<Vec<String>>,
    /// `error` (`invalid_token`, `insufficient_scope`, `use_dpop_nonce`...).
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Parses every challenge of a `WWW-Authenticate` value. Malformed pieces are skipped.
pub fn parse(header: &str) -> Vec<Challenge> {
    let chars: Vec<char> = header.chars().collect();
    let mut i = 0;
    let mut out: Vec<Challenge> = Vec::new();
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
            out.push(Challenge { scheme: token, params: BTreeMap::new() });
        }
    }
    out
}

impl AuthInfo {
    /// The information of a `WWW-Authenticate` value: the `Bearer` or `DPoP` challenge if there
    /// is one (else the first), with `resource_metadata` taken from any challenge.
    pub fn from_header(header: Option<&str>) -> Self {
        let Some(header) = header else { return Self::default() };
        let all = parse(header);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bearer_challenge() {
        let h = r#"Bearer error="invalid_token", error_description="Missing Authorization header", scope="mcp:basic mcp:write", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp""#;
        let info = AuthInfo::from_header(Some(h));
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
        let all = parse(r#"Basic realm="a\"b", DPoP error=use_dpop_nonce, algs="ES256 PS256""#);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].params["realm"], "a\"b");
        assert_eq!(all[1].scheme, "DPoP");
        assert_eq!(all[1].params["error"], "use_dpop_nonce");
        let info = AuthInfo::from_header(Some(r#"Basic realm="x", DPoP resource_metadata="https://r/x""#));
        assert_eq!(info.scheme.as_deref(), Some("DPoP"));
        assert_eq!(info.resource_metadata.as_deref(), Some("https://r/x"));
        assert_eq!(AuthInfo::from_header(Some("Bearer")).scheme.as_deref(), Some("Bearer"));
        assert_eq!(AuthInfo::from_header(Some(r#"Bearer scope="""#)).scope, None);
    }
}
