//! `ProxyConfig::tools` (globs) and `ProxyConfig::prefix`: which upstream tools are exposed, and
//! under what names.

/// The name filter and prefix.
#[derive(Debug, Clone, Default)]
pub(crate) struct Names {
    /// Tool name globs (`*` any run, `?` one character); empty means every tool.
    pub(crate) tools: Vec<String>,
    /// Prepended to every tool and prompt name downstream.
    pub(crate) prefix: String,
    /// Who may see which tools (`ProxyConfig::tool_access`): the first matching glob decides.
    pub(crate) access: Vec<(String, mcp::server::Access)>,
}

impl Names {
    /// Whether the upstream tool `name` is exposed.
    pub(crate) fn tool_allowed(&self, name: &str) -> bool {
        self.tools.is_empty() || self.tools.iter().any(|g| glob(g.as_bytes(), name.as_bytes()))
    }

    /// Whether `caller` may see and call the exposed upstream tool `name`.
    pub(crate) fn tool_visible(&self, name: &str, caller: &mcp::server::Caller<'_>) -> bool {
        self.tool_allowed(name)
            && self
                .access
                .iter()
                .find(|(g, _)| glob(g.as_bytes(), name.as_bytes()))
                .is_none_or(|(_, a)| a.allows(caller))
    }

    /// The downstream name of an upstream tool or prompt.
    pub(crate) fn outward(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The upstream name of a downstream tool or prompt name (`None`: not ours).
    pub(crate) fn inward<'a>(&self, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(self.prefix.as_str())
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
        let n = Names { tools: vec!["e*".into()], prefix: "up_".into(), access: Vec::new() };
        let anyone = mcp::server::Caller::new(None, &[]);
        assert_eq!(n.outward("echo"), "up_echo");
        assert_eq!(n.inward_tool("up_echo", &anyone), Some("echo"));
        assert_eq!(n.inward_tool("up_add", &anyone), None);
        assert_eq!(n.inward_tool("echo", &anyone), None);
        assert!(Names::default().tool_allowed("anything"));
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
