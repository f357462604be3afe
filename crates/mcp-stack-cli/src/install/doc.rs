//! Adding one server to a host's JSON file by editing its text: every byte the edit does not
//! need to change stays as it was (key order, spacing, numbers of any size or precision,
//! members of any depth). Only the top-level object and the servers object are read member by
//! member (each value as its raw text); a key found twice in either is refused, since which of
//! the two the host reads is unclear.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashSet;
use std::ops::Range;

/// The members of one JSON object, in the order written: each key and its value's byte span
/// in the text the object was read from.
#[derive(Debug)]
struct Members(Vec<(String, Range<usize>)>);

/// The raw members as the parser hands them out (borrowed from the text).
struct RawMembers<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for RawMembers<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawMembers<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    out.push((k, map.next_value::<&'de RawValue>()?));
                }
                Ok(RawMembers(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Why a file cannot be edited (the caller names the file).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Not JSON at all (comments, trailing commas...): the parser's message.
    NotJson(String),
    /// JSON, but not an object.
    NotObject,
    /// The servers key holds something other than an object.
    ServersNotObject,
    /// A key written twice; `in_servers`: inside the servers object.
    Duplicate { key: String, in_servers: bool },
    /// A server of that name is there (and no `--force`).
    Exists,
    /// The edit would have changed more than the one entry (a bug; nothing is written).
    Bug(&'static str),
}

impl Refusal {
    /// The message, for a file whose servers are under `key`.
    pub(super) fn message(&self, key: &str, name: &str) -> String {
        match self {
            Self::NotJson(e) => format!(
                "not plain JSON ({e}); left as it is (comments or trailing commas would be lost: add the server by hand)"
            ),
            Self::NotObject => "not a JSON object; left as it is".into(),
            Self::ServersNotObject => format!("`{key}` is not an object; left as it is"),
            Self::Duplicate { key: k, in_servers } => {
                let place = if *in_servers { format!("in `{key}`") } else { "at the top level".into() };
                format!(
                    "the key {k:?} is written twice {place}; which one the host reads is unclear, so the file \
                     is left as it is (remove one of them by hand)"
                )
            }
            Self::Exists => format!("a server named {name:?} is there already (--force replaces it)"),
            Self::Bug(what) => format!("internal error: the edit would {what}; left as it is (please report this)"),
        }
    }
}

/// Reads the members of the object that is exactly `text[span]` (whitespace around allowed).
fn members(text: &str, span: Range<usize>, in_servers: bool) -> Result<Members, Refusal> {
    let part = &text[span.clone()];
    let raw: RawMembers<'_> = serde_json::from_str(part).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => {
            if in_servers {
                Refusal::ServersNotObject
            } else {
                Refusal::NotObject
            }
        }
        _ => Refusal::NotJson(e.to_string()),
    })?;
    let base = part.as_ptr() as usize;
    let out: Vec<(String, Range<usize>)> = raw
        .0
        .into_iter()
        .map(|(key, value)| {
            // A borrowed raw value is a slice of `part`: its offset is where it was written.
            let start = span.start + (value.get().as_ptr() as usize - base);
            (key, start..start + value.get().len())
        })
        .collect();
    // One pass with a set: a file of up to 64 MiB can hold millions of keys.
    let mut seen = HashSet::with_capacity(out.len());
    if let Some((key, _)) = out.iter().find(|(k, _)| !seen.insert(k.as_str())) {
        return Err(Refusal::Duplicate { key: key.clone(), in_servers });
    }
    Ok(Members(out))
}

/// How an object's members are laid out.
#[derive(Debug, Clone)]
enum Layout {
    /// One member per line, each indented by this.
    Lines(String),
    /// All on one line.
    Inline,
}

/// The layout of the object at `text[start..]` (an opening brace): from the space between
/// the brace and its first member. `None` for an empty object.
fn layout(text: &str, start: usize, members: &Members) -> Option<Layout> {
    let first = members.0.first()?;
    let between = &text[start + 1..first.1.start];
    // `between` is whitespace, the first key and a colon: the key starts at its first quote.
    let ws = &between[..between.find('"').unwrap_or(0)];
    Some(match ws.rfind('\n') {
        Some(i) => Layout::Lines(ws[i + 1..].to_owned()),
        None => Layout::Inline,
    })
}

/// The leading whitespace of the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let line = &text[text[..at].rfind('\n').map_or(0, |i| i + 1)..at];
    &line[..line.len() - line.trim_start().len()]
}

/// Keys of a host entry in the order hosts document them (the rest after, alphabetically).
const ENTRY_ORDER: [&str; 7] = ["type", "command", "args", "env", "url", "httpUrl", "headers"];

/// `value` as JSON text laid out like its neighbours: on lines indented by `indent` (one
/// level deeper per `unit`), or on one line. An object's own members come in
/// [`ENTRY_ORDER`].
fn render(value: &Value, layout: &Layout, unit: &str) -> String {
    let pretty = |v: &Value, indent: &str| {
        let mut out = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
        serde::Serialize::serialize(v, &mut ser).expect("a JSON value serializes");
        String::from_utf8(out).expect("JSON is UTF-8").replace('\n', &format!("\n{indent}"))
    };
    let Value::Object(map) = value else {
        return match layout {
            Layout::Lines(indent) => pretty(value, indent),
            Layout::Inline => value.to_string(),
        };
    };
    let rank = |k: &str| ENTRY_ORDER.iter().position(|o| *o == k).unwrap_or(ENTRY_ORDER.len());
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by_key(|k| rank(k));
    let key = |k: &str| serde_json::to_string(k).expect("a string serializes");
    if keys.is_empty() {
        return "{}".into();
    }
    match layout {
        Layout::Inline => {
            let parts: Vec<String> =
                keys.iter().map(|k| format!("{}: {}", key(k), render(&map[*k], layout, unit))).collect();
            format!("{{{}}}", parts.join(", "))
        }
        Layout::Lines(indent) => {
            let inner = format!("{indent}{unit}");
            let parts: Vec<String> =
                keys.iter().map(|k| format!("{inner}{}: {}", key(k), pretty(&map[*k], &inner))).collect();
            format!("{{\n{}\n{indent}}}", parts.join(",\n"))
        }
    }
}

/// A new file holding only the servers object with the one entry.
fn fresh(key: &str, name: &str, entry: &Value) -> String {
    let key = serde_json::to_string(key).expect("a string serializes");
    let member = render_member(name, entry, &Layout::Lines("    ".into()), "  ");
    format!("{{\n  {key}: {{\n{member}\n  }}\n}}\n")
}

/// `"name": value` as a member laid out by `layout` (with its indent on lines).
fn render_member(name: &str, value: &Value, layout: &Layout, unit: &str) -> String {
    let key = serde_json::to_string(name).expect("a string serializes");
    match layout {
        Layout::Lines(indent) => format!("{indent}{key}: {}", render(value, layout, unit)),
        Layout::Inline => format!("{key}: {}", render(value, layout, unit)),
    }
}

/// `text` with `entry` added as server `name` under `key` (replacing one of that name when
/// `force`), every other byte kept.
pub(super) fn add_entry(text: &str, key: &str, name: &str, entry: &Value, force: bool) -> Result<String, Refusal> {
    let body = text.trim();
    if body.is_empty() {
        return Ok(fresh(key, name, entry));
    }
    let start = text.len() - text.trim_start().len();
    let top_span = start..start + body.len();
    let top = members(text, top_span.clone(), false)?;
    let top_layout = layout(text, start, &top);
    // One level of indentation, as the file writes it (two spaces when it cannot tell).
    let unit = match &top_layout {
        Some(Layout::Lines(i)) => i.strip_prefix(line_indent(text, start)).filter(|u| !u.is_empty()).unwrap_or("  "),
        _ => "  ",
    }
    .to_owned();
    let mut out = String::with_capacity(text.len() + 256);
    match top.0.iter().find(|(k, _)| k == key) {
        Some((_, span)) => {
            if !text[span.clone()].starts_with('{') {
                return Err(Refusal::ServersNotObject);
            }
            let servers = members(text, span.clone(), true)?;
            let own = layout(text, span.start, &servers);
            if let Some((_, at)) = servers.0.iter().find(|(k, _)| k == name) {
                if !force {
                    return Err(Refusal::Exists);
                }
                let l = match &own {
                    Some(Layout::Lines(_)) => Layout::Lines(line_indent(text, at.start).to_owned()),
                    _ => Layout::Inline,
                };
                out.push_str(&text[..at.start]);
                out.push_str(&render(entry, &l, &unit));
                out.push_str(&text[at.end..]);
            } else if let Some((_, last)) = servers.0.last() {
                let l = own.unwrap_or(Layout::Inline);
                let sep = if matches!(l, Layout::Lines(_)) { ",\n" } else { ", " };
                out.push_str(&text[..last.end]);
                out.push_str(sep);
                out.push_str(&render_member(name, entry, &l, &unit));
                out.push_str(&text[last.end..]);
            } else {
                // An empty object: laid out one level deeper than its own key's line.
                let outer = line_indent(text, span.start).to_owned();
                out.push_str(&text[..span.start]);
                match &top_layout {
                    Some(Layout::Lines(_)) => {
                        let l = Layout::Lines(format!("{outer}{unit}"));
                        out.push_str(&format!("{{\n{}\n{outer}}}", render_member(name, entry, &l, &unit)));
                    }
                    _ => out.push_str(&format!("{{{}}}", render_member(name, entry, &Layout::Inline, &unit))),
                }
                out.push_str(&text[span.end..]);
            }
        }
        None => {
            let Some((_, last)) = top.0.last() else {
                return Ok(fresh(key, name, entry));
            };
            let servers = serde_json::json!({ name: entry });
            let member = match top_layout.unwrap_or(Layout::Inline) {
                Layout::Lines(indent) => {
                    let key_json = serde_json::to_string(key).expect("a string serializes");
                    let inner = Layout::Lines(format!("{indent}{unit}"));
                    format!(",\n{indent}{key_json}: {{\n{}\n{indent}}}", render_member(name, entry, &inner, &unit))
                }
                Layout::Inline => format!(", {}", render_member(key, &servers, &Layout::Inline, &unit)),
            };
            out.push_str(&text[..last.end]);
            out.push_str(&member);
            out.push_str(&text[last.end..]);
        }
    }
    check(text, &out, key, name)?;
    Ok(out)
}

/// Proves the edit kept the rest: the same top-level members in the same order with the same
/// text (the servers key possibly added at the end), and the same servers with the same text
/// apart from `name`. A failure here is a bug; the file is then left alone.
fn check(old: &str, new: &str, key: &str, name: &str) -> Result<(), Refusal> {
    let bug = Refusal::Bug;
    let whole = |t: &str| {
        let s = t.len() - t.trim_start().len();
        s..s + t.trim().len()
    };
    let a = members(old, whole(old), false)?;
    let b = members(new, whole(new), false).map_err(|_| bug("not parse"))?;
    same_but(old, &a, new, &b, key).ok_or_else(|| bug("change other keys"))?;
    let servers = |t: &str, m: &Members| match m.0.iter().find(|(k, _)| k == key) {
        Some((_, s)) => members(t, s.clone(), true),
        None => Ok(Members(Vec::new())),
    };
    let sa = servers(old, &a)?;
    let sb = servers(new, &b).map_err(|_| bug("not parse"))?;
    same_but(old, &sa, new, &sb, name).ok_or_else(|| bug("change other servers"))
}

/// `Some` if `b` has the members of `a` in the same order with the same text, except `changed`
/// (which may differ, or be added at the end).
fn same_but(ta: &str, a: &Members, tb: &str, b: &Members, changed: &str) -> Option<()> {
    let mut bs = b.0.iter();
    for (k, s) in &a.0 {
        let (kb, sb) = bs.next()?;
        if k != kb || (k != changed && ta[s.clone()] != tb[sb.clone()]) {
            return None;
        }
    }
    match bs.next() {
        None => Some(()),
        Some((k, _)) if k == changed && bs.next().is_none() && !a.0.iter().any(|(x, _)| x == changed) => Some(()),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests;
