//! Showing a URL without the secrets it may carry.

/// `url` with its userinfo (`user:pass@`), query (`?...`) and fragment replaced by
/// `<redacted>`, for display; works on unexpanded templates too (`https://${HOST}/?k=${KEY}`).
pub fn redact_url(url: &str) -> String {
    let (head, tail) = match url.find(['?', '#']) {
        Some(i) => (&url[..i], Some(&url[i..i + 1])),
        None => (url, None),
    };
    let mut out = match head.find("://") {
        Some(i) => {
            let after = &head[i + 3..];
            let auth_end = after.find('/').unwrap_or(after.len());
            match after[..auth_end].rfind('@') {
                Some(at) => format!("{}://<redacted>@{}", &head[..i], &after[at + 1..]),
                None => head.to_owned(),
            }
        }
        None => head.to_owned(),
    };
    if let Some(sep) = tail {
        out.push_str(sep);
        out.push_str("<redacted>");
    }
    out
}
