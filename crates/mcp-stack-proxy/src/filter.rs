//! `ProxyConfig::tools` (globs) and `ProxyConfig::prefix`: which upstream tools are exposed, and
//! under what names.
//!
//! Every policy glob (`ProxyConfig::tools`, `ProxyConfig::tool_access`) matches the name
//! clients see, prefix included (a gateway's `NAME_tool`), as the front's rate limits do: one
//! naming for every flag. A glob that matches no listed tool is reported once in the log
//! ([`GlobCheck`]), after every upstream listed its tools once (at start when it can).

use parking_lot::Mutex;

/// The name filter and prefix.
#[derive(Debug, Default)]
pub(crate) struct Names {
    /// Tool name globs (`*` any run, `?` one character); empty means every tool.
    pub(crate) tools: Vec<String>,
    /// Prepended to every tool and prompt name downstream.
    pub(crate) prefix: String,
    /// Who may see which tools (`ProxyConfig::tool_access`): the first matching glob decides.
    pub(crate) access: Vec<(String, mcp::server::Access)>,
    /// The authority `ui://` URIs are served under (`ProxyConfig::view_authority`, encoded).
    pub(crate) views: Option<String>,
    /// Where this upstream reports which globs matched (shared by a gateway's upstreams).
    pub(crate) check: std::sync::Arc<GlobCheck>,
    /// Whether this upstream reported its tools to `check` already.
    pub(crate) checked: std::sync::atomic::AtomicBool,
}

/// Which policy globs matched a listed tool, across every upstream that uses them: once each
/// upstream reported its first tool list, each glob that matched none is logged once (a
/// misspelt or unprefixed name protects nothing, and would otherwise say nothing).
#[derive(Debug, Default)]
pub(crate) struct GlobCheck {
    state: Mutex<GlobState>,
}

#[derive(Debug, Default)]
struct GlobState {
    /// Each glob, whether it matched, and what it is for (`tools` or `tool_access`).
    globs: Vec<(String, bool, &'static str)>,
    /// Upstreams that have not reported yet.
    waiting: usize,
    /// Whether the report was made.
    done: bool,
}

impl GlobCheck {
    /// Counts one more upstream, whose globs are these.
    pub(crate) fn register(&self, names: &Names) {
        let mut s = self.state.lock();
        s.waiting += 1;
        let globs =
            names.tools.iter().map(|g| (g, "tools")).chain(names.access.iter().map(|(g, _)| (g, "tool_access")));
        for (g, what) in globs {
            if !s.globs.iter().any(|(have, _, w)| have == g && *w == what) {
                s.globs.push((g.clone(), false, what));
            }
        }
    }

    /// Whether no upstream has a glob to check.
    pub(crate) fn is_empty(&self) -> bool {
        self.state.lock().globs.is_empty()
    }

    /// One upstream's tools, by the names clients see; the globs that matched none, once every
    /// upstream reported (else empty).
    fn report<'a>(&self, outward: impl Iterator<Item = &'a str> + Clone) -> Vec<(String, &'static str)> {
        let mut s = self.state.lock();
        for (g, matched, _) in s.globs.iter_mut().filter(|(_, m, _)| !*m) {
            *matched = outward.clone().any(|n| glob(g.as_bytes(), n.as_bytes()));
        }
        s.waiting = s.waiting.saturating_sub(1);
        if s.waiting > 0 || s.done {
            return Vec::new();
        }
        s.done = true;
        s.globs.iter().filter(|(_, m, _)| !*m).map(|(g, _, w)| (g.clone(), *w)).collect()
    }
}

/// `name` as a URI authority: unreserved characters kept, anything else percent-encoded.
pub(crate) fn view_authority(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() {
        out.push_str("upstream");
    }
    out
}

const UI: &str = "ui://";

impl Names {
    /// Whether `pattern` matches the upstream tool `name` as clients see it (prefixed).
    fn matches(&self, pattern: &str, name: &str) -> bool {
        let p = pattern.as_bytes();
        match p.strip_prefix(self.prefix.as_bytes()) {
            // The common case: the glob spells the prefix out; match the rest on the name.
            Some(rest) if !self.prefix.contains(['*', '?']) => glob(rest, name.as_bytes()),
            _ if self.prefix.is_empty() => glob(p, name.as_bytes()),
            _ => glob(p, self.outward(name).as_bytes()),
        }
    }

    /// Whether the upstream tool `name` is exposed.
    pub(crate) fn tool_allowed(&self, name: &str) -> bool {
        self.tools.is_empty() || self.tools.iter().any(|g| self.matches(g, name))
    }

    /// Whether `caller` may see and call the exposed upstream tool `name`.
    pub(crate) fn tool_visible(&self, name: &str, caller: &mcp::server::Caller<'_>) -> bool {
        self.tool_allowed(name)
            && self.access.iter().find(|(g, _)| self.matches(g, name)).is_none_or(|(_, a)| a.allows(caller))
    }

    /// Reports this upstream's first tool list (upstream names) to the [`GlobCheck`]; logs
    /// the globs that matched no tool of any upstream, once all have reported.
    pub(crate) fn check_listed<'a>(&self, upstream_names: impl Iterator<Item = &'a str> + Clone) {
        use std::sync::atomic::Ordering;
        if self.checked.swap(true, Ordering::AcqRel) {
            return;
        }
        let outward: Vec<String> = upstream_names.map(|n| self.outward(n)).collect();
        for (g, what) in self.check.report(outward.iter().map(String::as_str)) {
            let g = mcp::server::mcp_protocol::text::escape_line(&g);
            tracing::warn!(
                "{what} glob {g:?} matches no tool: globs match the names clients see (with a gateway's \
                 NAME_ prefix), and none is listed"
            );
        }
    }

    /// The downstream name of an upstream tool or prompt.
    pub(crate) fn outward(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The upstream name of a downstream tool or prompt name (`None`: not ours).
    pub(crate) fn inward<'a>(&self, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(self.prefix.as_str())
    }

    /// The downstream form of an upstream URI: `ui://x` becomes `ui://AUTHORITY/x` when views
    /// are rewritten; anything else is left alone.
    pub(crate) fn outward_uri(&self, uri: &str) -> Option<String> {
        let authority = self.views.as_deref()?;
        let rest = uri.strip_prefix(UI)?;
        Some(format!("{UI}{authority}/{rest}"))
    }

    /// The upstream form of a downstream URI: `Err(())` for a `ui://` URI that is not under
    /// this upstream's authority (when views are rewritten); other URIs pass as they are.
    #[allow(clippy::result_unit_err)]
    pub(crate) fn inward_uri(&self, uri: &str) -> Result<String, ()> {
        let Some(authority) = self.views.as_deref() else { return Ok(uri.to_owned()) };
        let Some(rest) = uri.strip_prefix(UI) else { return Ok(uri.to_owned()) };
        match rest.strip_prefix(authority).and_then(|r| r.strip_prefix('/')) {
            Some(inner) => Ok(format!("{UI}{inner}")),
            None => Err(()),
        }
    }

    /// Rewrites the view links of a listed item (`key` names the list) to their downstream
    /// form: a tool's `_meta.ui.resourceUri` (and the older `_meta["ui/resourceUri"]`), a
    /// resource's `uri`, a template's `uriTemplate`.
    pub(crate) fn outward_item(&self, key: &str, item: &mut serde_json::Value) {
        use serde_json::Value;
        if self.views.is_none() {
            return;
        }
        let rewrite = |slot: Option<&mut Value>| {
            if let Some(v) = slot {
                if let Some(out) = v.as_str().and_then(|u| self.outward_uri(u)) {
                    *v = Value::String(out);
                }
            }
        };
        match key {
            "tools" => {
                let meta = item.get_mut("_meta").and_then(Value::as_object_mut);
                if let Some(meta) = meta {
                    rewrite(meta.get_mut("ui/resourceUri"));
                    rewrite(meta.get_mut("ui").and_then(|ui| ui.get_mut("resourceUri")));
                }
            }
            "resources" => rewrite(item.get_mut("uri")),
            "resourceTemplates" => rewrite(item.get_mut("uriTemplate")),
            _ => {}
        }
    }

    /// The upstream name of a downstream tool name, if it names a tool `caller` may call.
    pub(crate) fn inward_tool<'a>(&self, name: &'a str, caller: &mcp::server::Caller<'_>) -> Option<&'a str> {
        self.inward(name).filter(|n| self.tool_visible(n, caller))
    }
}

/// Glob match on bytes: `*` matches any run (also empty), `?` one byte. Iterative, with one
/// backtrack point, so linear in practice and never recursive.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob(b"*", b""));
        assert!(glob(b"echo", b"echo"));
        assert!(!glob(b"echo", b"echo2"));
        assert!(glob(b"e*o", b"echo"));
        assert!(glob(b"get_*", b"get_weather"));
        assert!(!glob(b"get_*", b"set_weather"));
        assert!(glob(b"?cho", b"echo"));
        assert!(glob(b"*a*b*", b"xxaxxbxx"));
        assert!(!glob(b"*a*b", b"xxaxxbxx"));
    }

    #[test]
    fn prefix_and_filter() {
        let n = Names { tools: vec!["up_e*".into()], prefix: "up_".into(), ..Names::default() };
        let anyone = mcp::server::Caller::new(None, &[]);
        assert_eq!(n.outward("echo"), "up_echo");
        assert_eq!(n.inward_tool("up_echo", &anyone), Some("echo"));
        assert_eq!(n.inward_tool("up_add", &anyone), None);
        assert_eq!(n.inward_tool("echo", &anyone), None);
        assert!(Names::default().tool_allowed("anything"));
    }

    #[test]
    fn views_are_served_under_the_upstreams_authority() {
        let n = Names { views: Some(view_authority("docs")), ..Names::default() };
        assert_eq!(n.outward_uri("ui://everything/dashboard").as_deref(), Some("ui://docs/everything/dashboard"));
        assert_eq!(n.outward_uri("file:///x"), None);
        assert_eq!(n.inward_uri("ui://docs/everything/dashboard"), Ok("ui://everything/dashboard".to_owned()));
        assert_eq!(n.inward_uri("ui://other/everything/dashboard"), Err(()));
        assert_eq!(n.inward_uri("ui://docsX/a"), Err(()), "the authority is matched whole");
        assert_eq!(n.inward_uri("file:///x"), Ok("file:///x".to_owned()));
        let mut tool =
            serde_json::json!({"name": "t", "_meta": {"ui": {"resourceUri": "ui://a/v", "visibility": ["app"]}}});
        n.outward_item("tools", &mut tool);
        assert_eq!(tool["_meta"]["ui"]["resourceUri"], "ui://docs/a/v");
        assert_eq!(view_authority("my server/1"), "my%20server%2F1");
        assert_eq!(Names::default().inward_uri("ui://any/x"), Ok("ui://any/x".to_owned()));
    }

    #[test]
    fn globs_match_the_names_clients_see() {
        use mcp::server::{Access, Caller};
        let admin_only = |g: &str| vec![(g.to_owned(), Access::scopes(["mcp:admin"]))];
        let (scopes, user) = (["mcp:admin".to_owned()], Caller::new(Some("u"), &[]));
        let admin = Caller::new(Some("a"), &scopes);
        // A gateway's upstream `ev`: its `echo` is `ev_echo` to clients and to every glob.
        let ev = |access| Names { prefix: "ev_".into(), access, ..Names::default() };
        for rule in ["ev_echo", "ev_*", "*_echo", "e*o", "ev_ech?"] {
            let n = ev(admin_only(rule));
            assert!(!n.tool_visible("echo", &user) && n.tool_visible("echo", &admin), "{rule}");
        }
        // The upstream-internal name matches nothing: `add` does not hide `ev_add`.
        assert!(ev(admin_only("add")).tool_visible("add", &user));
        assert!(ev(admin_only("echo")).tool_visible("echo", &user));
        let shown = Names { prefix: "ev_".into(), tools: vec!["ev_e*".into()], ..Names::default() };
        assert!(shown.tool_allowed("echo") && !shown.tool_allowed("add"));
        // Without a prefix the names are the upstream's own.
        assert!(!Names { access: admin_only("echo"), ..Names::default() }.tool_visible("echo", &user));
    }

    #[test]
    fn a_glob_matching_no_upstreams_tool_is_reported_once_all_listed() {
        use mcp::server::Access;
        let check = std::sync::Arc::new(GlobCheck::default());
        let access = || vec![("ev_echo".into(), Access::authenticated()), ("add".into(), Access::authenticated())];
        let upstream = |prefix: &str| Names {
            prefix: prefix.into(),
            access: access(),
            tools: vec!["*".into(), "nope_*".into()],
            check: check.clone(),
            ..Names::default()
        };
        let (ev, lg) = (upstream("ev_"), upstream("lg_"));
        check.register(&ev);
        check.register(&lg);
        assert!(check.report(["ev_echo", "ev_add"].into_iter()).is_empty(), "lg has not listed yet");
        let unmatched = check.report(["lg_echo"].into_iter());
        assert_eq!(unmatched, [("nope_*".to_owned(), "tools"), ("add".to_owned(), "tool_access")]);
        assert!(check.report(["lg_echo"].into_iter()).is_empty(), "reported once");
    }

    #[test]
    fn the_first_matching_rule_decides_who_sees_a_tool() {
        use mcp::server::{Access, Caller};
        let access = vec![("admin_*".into(), Access::scopes(["mcp:admin"])), ("*".into(), Access::authenticated())];
        let n = Names { access, ..Names::default() };
        let scopes = ["mcp:admin".to_owned()];
        let (admin, user, anyone) =
            (Caller::new(Some("a"), &scopes), Caller::new(Some("u"), &[]), Caller::new(None, &[]));
        assert!(n.tool_visible("admin_report", &admin) && !n.tool_visible("admin_report", &user));
        assert!(n.tool_visible("echo", &user) && !n.tool_visible("echo", &anyone));
        assert_eq!(n.inward_tool("admin_report", &user), None);
    }
}
