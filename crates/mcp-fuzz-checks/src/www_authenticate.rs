//! Parsing a `WWW-Authenticate` value never panics, and what it gives is consistent: every
//! challenge has a token scheme, parameter names are lower-case, and the summary a client
//! acts on comes from one of the challenges parsed.
use mcp_oauth::{parse_www_authenticate, BearerChallenge};

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let Ok(header) = std::str::from_utf8(data) else { return };
    let challenges = parse_www_authenticate(header);
    for c in &challenges {
        assert!(!c.scheme.is_empty() && c.scheme.chars().all(is_tchar), "scheme {:?}", c.scheme);
        for name in c.params.keys() {
            assert_eq!(name, &name.to_ascii_lowercase());
        }
    }
    let info = BearerChallenge::from_header(Some(header));
    match &info.scheme {
        None => assert!(challenges.is_empty()),
        Some(s) => assert!(challenges.iter().any(|c| &c.scheme == s)),
    }
    if let Some(scope) = &info.scope {
        assert!(scope.iter().all(|s| !s.is_empty() && !s.contains(char::is_whitespace)));
    }
    assert_eq!(BearerChallenge::from_header(None), BearerChallenge::default());
}
