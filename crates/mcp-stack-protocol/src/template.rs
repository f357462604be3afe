//! RFC 6570 URI templates for resource templates: expansion-free matching in linear time. The
//! server matches `resources/read` URIs with it; the `#[resource]` macro reads the variables
//! of its `uri` with it.
//!
//! Supported expressions: `{var}`, `{+var}`, `{#var}`, `{/var}`, `{.var}`, `{;var}`, `{?a,b}`,
//! `{&a}`. Matching never backtracks: a variable ends at the first occurrence of the next
//! literal character (or at a character its operator cannot contain), so time is linear in the
//! URI length.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    Expr { op: Option<char>, vars: Vec<String> },
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

/// Why a template failed to parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template: {0}")]
pub struct TemplateError(String);

impl UriTemplate {
    /// Parses a template such as `file:///{path}` or `test://items/{id}{?q}`.
    pub fn parse(s: &str) -> Result<Self, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').ok_or_else(|| TemplateError(format!("unclosed '{{' in {s:?}")))?;
                    let body = &rest[1..end];
                    let (op, names) = match body.chars().next() {
                        Some(c @ ('+' | '#' | '/' | '.' | ';' | '?' | '&')) => (Some(c), &body[1..]),
                        _ => (None, body),
                    };
                    let vars: Vec<String> = names
                        .split(',')
                        .map(|v| v.trim_end_matches('*').split(':').next().unwrap_or("").to_owned())
                        .collect();
                    if vars.iter().any(|v| {
                        v.is_empty() || !v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
                    }) {
                        return Err(TemplateError(format!("bad variable list {body:?}")));
                    }
                    parts.push(Part::Expr { op, vars });
                    rest = &rest[end + 1..];
                }
                Some(i) => {
                    parts.push(Part::Literal(rest[..i].to_owned()));
                    rest = &rest[i..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(TemplateError(format!("stray '}}' in {s:?}")));
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(Self { source: s.to_owned(), parts })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Names of all variables, in order.
    pub fn variables(&self) -> Vec<&str> {
        self.parts
            .iter()
            .flat_map(|p| match p {
                Part::Expr { vars, .. } => vars.iter().map(String::as_str).collect(),
                Part::Literal(_) => Vec::new(),
            })
            .collect()
    }

    /// Matches `uri` and returns the (percent-decoded) variable values, or `None`.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        let mut pos = 0usize;
        let b = uri.as_bytes();
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(l) => {
                    if !uri[pos..].starts_with(l.as_str()) {
                        return None;
                    }
                    pos += l.len();
                }
                Part::Expr { op, vars } => {
                    let stop = match self.parts.get(i + 1) {
                        Some(Part::Literal(l)) => l.as_bytes().first().copied(),
                        _ => None,
                    };
                    // Characters that end this expression's value (besides the next literal's first).
                    let ends: &[u8] = match op {
                        Some('+' | '#') => b"",
                        Some('?' | '&') => b"#",
                        Some('/') => b"?#&",
                        _ => b"/?#&",
                    };
                    let end =
                        b[pos..].iter().position(|c| Some(*c) == stop || ends.contains(c)).map_or(b.len(), |i| pos + i);
                    let segment = &uri[pos..end];
                    pos = end;
                    match op {
                        Some('?' | '&') => {
                            let lead = if *op == Some('?') { '?' } else { '&' };
                            let Some(q) = segment.strip_prefix(lead) else {
                                if segment.is_empty() {
                                    continue;
                                }
                                return None;
                            };
                            for pair in q.split('&') {
                                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                                if vars.iter().any(|x| x == k) {
                                    out.insert(k.to_owned(), percent_decode(v)?);
                                }
                            }
                        }
                        _ => {
                            let seg = match op {
                                Some(p @ ('/' | '.' | '#')) => segment.strip_prefix(*p)?,
                                Some(';') => segment.strip_prefix(';')?,
                                _ => segment,
                            };
                            if vars.len() == 1 {
                                let v = if *op == Some(';') { seg.split_once('=').map_or("", |x| x.1) } else { seg };
                                if v.is_empty() && op.is_none() {
                                    return None;
                                }
                                out.insert(vars[0].clone(), percent_decode(v)?);
                            } else {
                                let sep = match op {
                                    Some('/') => '/',
                                    Some('.') => '.',
                                    Some(';') => ';',
                                    _ => ',',
                                };
                                for (name, v) in vars.iter().zip(seg.split(sep)) {
                                    out.insert(name.clone(), percent_decode(v)?);
                                }
                            }
                        }
                    }
                }
            }
        }
        (pos == uri.len()).then_some(out)
    }
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(t: &str, u: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t).unwrap().matches(u).map(|m| m.into_iter().collect())
    }

    #[test]
    fn simple_variables() {
        assert_eq!(m("test://template/{id}/data", "test://template/123/data"), Some(vec![("id".into(), "123".into())]));
        assert_eq!(m("test://template/{id}/data", "test://template/123/other"), None);
        assert_eq!(m("test://template/{id}/data", "test://template//data"), None);
        assert_eq!(m("users/{a}-{b}", "users/x-y"), Some(vec![("a".into(), "x".into()), ("b".into(), "y".into())]));
        assert_eq!(m("s://{name}", "s://a%20b"), Some(vec![("name".into(), "a b".into())]));
        assert_eq!(m("s://{name}", "s://a/b"), None);
    }

    #[test]
    fn operators() {
        assert_eq!(m("file:///{+path}", "file:///a/b/c.txt"), Some(vec![("path".into(), "a/b/c.txt".into())]));
        assert_eq!(m("s://x{/a,b}", "s://x/1/2"), Some(vec![("a".into(), "1".into()), ("b".into(), "2".into())]));
        assert_eq!(
            m("s://search{?q,lang}", "s://search?q=rust&lang=en"),
            Some(vec![("lang".into(), "en".into()), ("q".into(), "rust".into())])
        );
        assert_eq!(m("s://search{?q}", "s://search"), Some(vec![]));
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(UriTemplate::parse("s://{a").is_err());
        assert!(UriTemplate::parse("s://a}").is_err());
        assert!(UriTemplate::parse("s://{}").is_err());
    }

    #[test]
    fn long_input_is_linear() {
        // A pathological URI for backtracking matchers: many candidate split points.
        let t = UriTemplate::parse("s://{a}-{b}-{c}!").unwrap();
        let uri = format!("s://{}", "-".repeat(200_000));
        assert!(t.matches(&uri).is_none());
    }
}
