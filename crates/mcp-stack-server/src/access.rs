//! Access rules on tools, prompts, resources and resource templates; the rules are on
//! [`Access`].

use std::sync::Arc;

/// The caller of one request, as the access rules see it.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    principal: Option<&'a str>,
    scopes: &'a [String],
    apps: bool,
}

impl<'a> Caller<'a> {
    /// A caller with this principal and these granted scopes.
    pub fn new(principal: Option<&'a str>, scopes: &'a [String]) -> Self {
        Self { principal, scopes, apps: false }
    }

    /// This caller, saying whether its client renders MCP Apps (see [`Caller::apps`]).
    pub fn with_apps(mut self, apps: bool) -> Self {
        self.apps = apps;
        self
    }

    /// Whether the request's client declared the MCP Apps extension with the HTML profile
    /// ([`mcp_protocol::apps::renders_apps`]): app-only tools exist only for such callers.
    pub fn apps(&self) -> bool {
        self.apps
    }

    /// The authenticated principal (the token's subject), if any.
    pub fn principal(&self) -> Option<&'a str> {
        self.principal
    }

    /// The scopes the caller's token grants.
    pub fn scopes(&self) -> &'a [String] {
        self.scopes
    }

    /// Whether the caller's token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

type Predicate = Arc<dyn Fn(&Caller<'_>) -> bool + Send + Sync>;

#[derive(Clone)]
enum Rule {
    Authenticated,
    Scopes(Arc<[String]>),
    Custom(Predicate),
    /// Callers whose client renders MCP Apps, and whom the inner rule (if any) allows.
    Apps(Option<Box<Access>>),
}

/// Who may see and use an item.
///
/// Who may see and use what: access rules on tools, prompts, resources and resource templates.
///
/// An item with an [`Access`] rule is served only to callers the rule allows. For any other
/// caller it does not exist: lists leave it out, and calling, getting or reading it gets exactly
/// the error an unknown name or URI gets (no existence oracle). A list that leaves items out for
/// some callers is marked `cacheScope: "private"` for every caller (it depends on the
/// authorization of the request). Listen streams announce a list change only when the caller's
/// view of that list changed, and never an update of a resource the caller cannot read.
///
/// The caller is what the transport authenticated ([`crate::RequestEnv::principal`] and
/// [`crate::RequestEnv::scopes`], from the access token on Streamable HTTP) or what an
/// [operation layer](crate::layers) set ([`crate::layers::Operation::set_caller`]).
///
/// ```
/// use mcp_server::{Access, Server, Tool};
///
/// let server = Server::builder("s", "1")
///     .tool(Tool::new("report").scopes(["mcp:admin"]).handler(|| async { "numbers" }))
///     .tool(Tool::new("whoami").access(Access::authenticated()).handler(|| async { "you" }))
///     .tool(Tool::new("ping").handler(|| async { "pong" }))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct Access(Rule);

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Rule::Authenticated => f.write_str("Access::authenticated()"),
            Rule::Scopes(s) => write!(f, "Access::scopes({s:?})"),
            Rule::Custom(_) => f.write_str("Access::custom(..)"),
            Rule::Apps(inner) => write!(f, "Access::apps({inner:?})"),
        }
    }
}

impl Access {
    /// Any authenticated caller (one with a principal).
    pub fn authenticated() -> Self {
        Self(Rule::Authenticated)
    }

    /// Callers whose token grants every one of `scopes` (an authenticated caller is implied).
    /// Each scope must be a non-empty RFC 6749 scope token (printable ASCII, no space, `"` or
    /// `\`), and at least one is needed: the item's registration fails at `build()` otherwise.
    pub fn scopes<I, S>(scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self(Rule::Scopes(scopes.into_iter().map(Into::into).collect()))
    }

    /// Callers for whom `allow` returns true (called on every list and call: keep it cheap).
    pub fn custom(allow: impl Fn(&Caller<'_>) -> bool + Send + Sync + 'static) -> Self {
        Self(Rule::Custom(Arc::new(allow)))
    }

    /// Whether `caller` may see and use the item.
    pub fn allows(&self, caller: &Caller<'_>) -> bool {
        match &self.0 {
            Rule::Authenticated => caller.principal.is_some(),
            Rule::Scopes(need) => caller.principal.is_some() && need.iter().all(|s| caller.has_scope(s)),
            Rule::Custom(allow) => allow(caller),
            Rule::Apps(inner) => caller.apps && inner.as_ref().is_none_or(|a| a.allows(caller)),
        }
    }

    /// Callers whose client renders MCP Apps and whom `inner` (if any) allows: the rule of an
    /// app-only tool (`_meta.ui.visibility: ["app"]`, see `Tool::ui_visibility`).
    pub(crate) fn apps(inner: Option<Access>) -> Self {
        Self(Rule::Apps(inner.map(Box::new)))
    }

    /// Why the rule cannot work, if it cannot (checked when the item is registered).
    pub(crate) fn problem(&self) -> Option<String> {
        if let Rule::Apps(inner) = &self.0 {
            return inner.as_ref()?.problem();
        }
        let Rule::Scopes(scopes) = &self.0 else { return None };
        if scopes.is_empty() {
            return Some("Access::scopes needs at least one scope".into());
        }
        scopes.iter().find(|s| !is_scope_token(s)).map(|s| format!("{s:?} is not an OAuth scope token"))
    }
}

/// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
fn is_scope_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

/// Whether an item with this rule (none: everyone) is visible to `caller`.
pub(crate) fn visible(rule: Option<&Access>, caller: &Caller<'_>) -> bool {
    rule.is_none_or(|a| a.allows(caller))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_decide_by_principal_and_scopes() {
        let scopes = vec!["mcp:admin".to_owned(), "read".to_owned()];
        let admin = Caller::new(Some("ann"), &scopes);
        let user = Caller::new(Some("bob"), &[]);
        let anonymous = Caller::new(None, &scopes);
        let both = Access::scopes(["mcp:admin", "read"]);
        assert!(both.allows(&admin));
        assert!(!both.allows(&user));
        assert!(!both.allows(&anonymous), "scopes without a principal are not trusted");
        assert!(!Access::scopes(["mcp:admin", "write"]).allows(&admin), "every scope is needed");
        assert!(Access::authenticated().allows(&user) && !Access::authenticated().allows(&anonymous));
        let bob_only = Access::custom(|c| c.principal() == Some("bob"));
        assert!(bob_only.allows(&user) && !bob_only.allows(&admin));
        assert!(visible(None, &anonymous) && !visible(Some(&both), &user));
    }

    #[test]
    fn bad_rules_are_named() {
        assert_eq!(Access::scopes(Vec::<String>::new()).problem().unwrap(), "Access::scopes needs at least one scope");
        assert_eq!(Access::scopes(["a b"]).problem().unwrap(), "\"a b\" is not an OAuth scope token");
        assert!(Access::scopes(["quo\"te"]).problem().is_some() && Access::scopes([""]).problem().is_some());
        assert!(Access::scopes(["mcp:admin", "x.y/z"]).problem().is_none());
        assert!(Access::authenticated().problem().is_none());
    }
}
