//! `WWW-Authenticate: Bearer ...` challenges (RFC 6750 §3, RFC 9728 §5.1).

/// A `Bearer` challenge. Build one with the setters, render with [`Challenge::to_header_value`]:
///
/// ```
/// use mcp_auth::Challenge;
/// let c = Challenge::new()
///     .resource_metadata("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
///     .scope(&["files:read".to_owned()]);
/// assert_eq!(
///     c.to_header_value(),
///     r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read""#
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    resource_metadata: Option<String>,
    scope: Option<String>,
    error: Option<&'static str>,
    error_description: Option<String>,
}

impl Challenge {
    /// An empty challenge (`Bearer`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `resource_metadata`: the URL of the protected-resource metadata document.
    pub fn resource_metadata(mut self, url: &str) -> Self {
        self.resource_metadata = Some(url.to_owned());
        self
    }

    /// Sets `scope` to the space-separated `scopes` (omitted when empty). Characters outside the
    /// RFC 6750 `scope-token` syntax are dropped.
    pub fn scope(mut self, scopes: &[String]) -> Self {
        let joined = scopes
            .iter()
            .map(|s| s.chars().filter(|c| is_scope_char(*c)).collect::<String>())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        self.scope = (!joined.is_empty()).then_some(joined);
        self
    }

    /// Sets the RFC 6750 `error` code (`invalid_request`, `invalid_token`, `insufficient_scope`).
    pub fn error(mut self, code: Option<&'static str>) -> Self {
        self.error = code;
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
        let mut out = String::from("Bearer");
        let params = [
            ("resource_metadata", self.resource_metadata.as_deref()),
            ("scope", self.scope.as_deref()),
            ("error", self.error),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_form() {
        assert_eq!(Challenge::new().to_header_value(), "Bearer");
        let c = Challenge::new()
            .resource_metadata("https://rs/.well-known/oauth-protected-resource")
            .scope(&["a".into(), "b:c".into()])
            .error(Some("insufficient_scope"))
            .error_description("need \"b:c\"\n");
        assert_eq!(
            c.to_header_value(),
            "Bearer resource_metadata=\"https://rs/.well-known/oauth-protected-resource\", scope=\"a b:c\", \
             error=\"insufficient_scope\", error_description=\"need b:c\""
        );
        let c = Challenge::new().error(Some("invalid_token")).scope(&[]);
        assert_eq!(c.to_header_value(), "Bearer error=\"invalid_token\"");
        // Quotes in URLs are escaped; the result is always a valid header value.
        let c = Challenge::new().resource_metadata("https://x/\"\\é");
        assert_eq!(c.to_header_value(), "Bearer resource_metadata=\"https://x/\\\"\\\\\"");
        assert!(http::HeaderValue::from_str(&c.to_header_value()).is_ok());
    }
}
