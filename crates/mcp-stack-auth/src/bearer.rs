//! Bearer token extraction (RFC 6750 §2.1): from the `Authorization` header only.
//!
//! Tokens in the query string (§2.3) are refused outright ([`AuthError::TokenInQuery`]); tokens
//! in a form body (§2.2) are never looked for, so a request carrying one is unauthenticated.

use crate::AuthError;
use http::header::AUTHORIZATION;
use http::HeaderMap;

/// The bearer token of a request with headers `headers` and query string `query` (without `?`).
///
/// Fails with [`AuthError::TokenInQuery`] when the query has an `access_token` parameter (even if
/// the header is fine: a request may use one method only), [`AuthError::MissingToken`] without a
/// `Bearer` header (or with an empty one), and [`AuthError::MalformedHeader`] when the header is
/// repeated or its credentials are not a `b64token`.
pub fn extract_bearer<'h>(headers: &'h HeaderMap, query: Option<&str>) -> Result<&'h str, AuthError> {
    if query.is_some_and(query_has_token) {
        return Err(AuthError::TokenInQuery);
    }
    let mut all = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = all.next() else {
        return Err(AuthError::MissingToken);
    };
    if all.next().is_some() {
        return Err(AuthError::MalformedHeader("the Authorization header appears more than once"));
    }
    let value = value.to_str().map_err(|_| AuthError::MalformedHeader("non-ASCII Authorization header"))?;
    parse_bearer(value)
}

/// The token of an `Authorization` header value `Bearer <b64token>` (scheme case-insensitive).
pub fn parse_bearer(value: &str) -> Result<&str, AuthError> {
    let value = value.trim_matches(|c| c == ' ' || c == '\t');
    let (scheme, rest) = value.split_once([' ', '\t']).unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::MissingToken); // another scheme: no bearer credentials
    }
    let token = rest.trim_start_matches([' ', '\t']);
    if token.is_empty() {
        return Err(AuthError::MissingToken);
    }
    if !is_b64token(token) {
        return Err(AuthError::MalformedHeader("bearer credentials are not a b64token"));
    }
    Ok(token)
}

/// `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`
fn is_b64token(t: &str) -> bool {
    let body = t.trim_end_matches('=');
    !body.is_empty() && body.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// Whether a query string carries an `access_token` parameter (name compared after
/// percent-decoding, so `access%5Ftoken` counts too).
pub fn query_has_token(query: &str) -> bool {
    query.split('&').any(|pair| {
        let name = pair.split('=').next().unwrap_or("");
        name == "access_token" || (name.contains('%') && percent_decode(name) == "access_token")
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(hi), Some(lo)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(hi << 4 | lo);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(values: &[&str]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for v in values {
            m.append(AUTHORIZATION, v.parse().unwrap());
        }
        m
    }

    #[test]
    fn header_forms() {
        assert_eq!(extract_bearer(&h(&["Bearer abc.def-_~+/=="]), None), Ok("abc.def-_~+/=="));
        assert_eq!(extract_bearer(&h(&["bearer   tok"]), None), Ok("tok"));
        assert_eq!(extract_bearer(&h(&["BEARER tok "]), None), Ok("tok"));
        assert_eq!(extract_bearer(&h(&[]), None), Err(AuthError::MissingToken));
        assert_eq!(extract_bearer(&h(&["Basic dXNlcjpwYXNz"]), None), Err(AuthError::MissingToken));
        assert_eq!(extract_bearer(&h(&["Bearer"]), None), Err(AuthError::MissingToken));
        assert_eq!(extract_bearer(&h(&["Bearertok"]), None), Err(AuthError::MissingToken));
        for bad in ["Bearer a b", "Bearer a,b", "Bearer ===", "Bearer a=b", "Bearer \"tok\""] {
            assert!(matches!(extract_bearer(&h(&[bad]), None), Err(AuthError::MalformedHeader(_))), "{bad}");
        }
        let twice = h(&["Bearer a", "Bearer b"]);
        assert!(matches!(extract_bearer(&twice, None), Err(AuthError::MalformedHeader(_))));
    }

    #[test]
    fn query_tokens_are_refused() {
        for q in ["access_token=abc", "a=1&access_token=abc", "access%5Ftoken=x", "access_token"] {
            assert_eq!(extract_bearer(&h(&["Bearer ok"]), Some(q)), Err(AuthError::TokenInQuery), "{q}");
            assert_eq!(extract_bearer(&h(&[]), Some(q)), Err(AuthError::TokenInQuery), "{q}");
        }
        for q in ["", "x=access_token", "access_tokens=1", "%zz=1", "%"] {
            assert_eq!(extract_bearer(&h(&["Bearer ok"]), Some(q)), Ok("ok"), "{q}");
        }
    }
}
