//! How a [`crate::Gateway`] keeps its upstreams apart: provenance on everything it lists,
//! checked on every request it routes; names that only one upstream can own; resource
//! templates routed to the upstream that lists them.

use mcp::server::mcp_protocol::ProtocolError;
use mcp::server::UriTemplate;
use serde_json::{json, Map, Value};

/// The `_meta` key naming an item's upstream, and a request's.
///
/// A [`crate::Gateway`] sets it on every tool, prompt, resource and resource template it lists
/// (`_meta["dev.mcp-stack/upstream"] = "NAME"`, the upstream's name in the gateway's
/// configuration; the upstream's own value of the key, if any, is replaced, and its other
/// `_meta` keys are kept). A host that forwards the requests of an MCP Apps view sets it in the
/// request's `params._meta` to the upstream of the tool whose view it is; the gateway then
/// refuses (`-32602`, naming both upstreams) a `tools/call`, `prompts/get`, `resources/read`,
/// `completion/complete` or `tasks/*` request whose target belongs to another upstream, before
/// anything is forwarded. The key is never forwarded upstream. One key for hosts and gateways:
/// the constant is [`mcp::server::mcp_protocol::apps::UPSTREAM_META`].
pub use mcp::server::mcp_protocol::apps::UPSTREAM_META;

/// The `_meta` key of a merged list naming the upstreams left out of it (an error, or no
/// answer within [`crate::GatewayConfig::list_timeout`]), as an array of names.
pub const MISSING_META: &str = "dev.mcp-stack/missingUpstreams";

/// Marks `item` as served by `upstream` (see [`UPSTREAM_META`]).
pub(crate) fn tag(item: &mut Value, upstream: &str) {
    let Value::Object(o) = item else { return };
    let meta = o.entry("_meta").or_insert_with(|| json!({}));
    if !meta.is_object() {
        // Not a valid `_meta`: ours replaces it rather than leave the item unmarked.
        *meta = json!({});
    }
    if let Value::Object(m) = meta {
        m.insert(UPSTREAM_META.into(), json!(upstream));
    }
}

/// The upstream a request says it acts for (`params._meta[UPSTREAM_META]`), if it names one.
pub(crate) fn claimed(params: &Map<String, Value>) -> Result<Option<&str>, ProtocolError> {
    match params.get("_meta").and_then(|m| m.get(UPSTREAM_META)) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ProtocolError::invalid_params(format!("_meta[{UPSTREAM_META:?}] must be an upstream's name"))),
    }
}

/// Refuses a request that acts for an upstream other than `owner`, the upstream of `target`.
pub(crate) fn check(params: &Map<String, Value>, owner: &str, target: &str) -> Result<(), ProtocolError> {
    match claimed(params)? {
        Some(from) if from != owner => Err(ProtocolError::InvalidParams {
            message: format!(
                "{target} belongs to upstream {owner:?}, but the request acts for upstream {from:?} \
                 (_meta {UPSTREAM_META:?}): a view reaches only its own upstream"
            ),
            data: Some(json!({ "upstream": from, "owner": owner })),
        }),
        _ => Ok(()),
    }
}

/// Refuses prefixes of which one starts another (`a_` and `a_b_`: `a_b_x` could be `a`'s
/// `b_x` or `a_b`'s `x`). `prefixes` are (upstream name, prefix).
pub(crate) fn check_prefixes(prefixes: &[(String, String)]) -> Result<(), String> {
    for (i, (a, pa)) in prefixes.iter().enumerate() {
        for (b, pb) in prefixes.iter().skip(i + 1) {
            let (short, long) = if pa.len() <= pb.len() { ((a, pa), (b, pb)) } else { ((b, pb), (a, pa)) };
            if long.1.starts_with(short.1.as_str()) {
                return Err(format!(
                    "upstreams {:?} and {:?}: every name of {:?} (prefixed {:?}) also starts with {:?}'s \
                     prefix {:?}, so the gateway could not tell whose a name is; rename one of them",
                    short.0, long.0, long.0, long.1, short.0, short.1
                ));
            }
        }
    }
    Ok(())
}

/// The resource templates of the last merged `resources/templates/list`, with their upstreams.
#[derive(Debug, Default)]
pub(crate) struct Templates(Vec<(String, Option<UriTemplate>, usize)>);

impl Templates {
    /// The templates listed (as served: `uriTemplate`, upstream index).
    pub(crate) fn new(listed: Vec<(String, usize)>) -> Self {
        Self(
            listed
                .into_iter()
                .map(|(text, i)| {
                    let parsed = UriTemplate::parse(&text).ok();
                    (text, parsed, i)
                })
                .collect(),
        )
    }

    /// The templates (as served) and their upstreams.
    pub(crate) fn listed(&self) -> impl Iterator<Item = (String, usize)> + '_ {
        self.0.iter().map(|(text, _, i)| (text.clone(), *i))
    }

    /// The upstreams (indices, ascending) whose templates are exactly the text `template`
    /// (what a completion's reference names).
    pub(crate) fn named(&self, template: &str) -> Vec<usize> {
        let mut out: Vec<usize> = self.0.iter().filter(|(text, _, _)| text == template).map(|(_, _, i)| *i).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The upstreams (indices, ascending) whose templates are `uri` itself or match it.
    pub(crate) fn owners(&self, uri: &str) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .0
            .iter()
            .filter(|(text, t, _)| text == uri || t.as_ref().is_some_and(|t| t.matches(uri).is_some()))
            .map(|(_, _, i)| *i)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The error of a URI that several upstreams claim (by their templates, or one by listing it
/// and another by a template that matches it).
pub(crate) fn ambiguous(uri: &str, names: &[&str]) -> ProtocolError {
    ProtocolError::InvalidParams {
        message: format!(
            "{uri:?} is claimed by several upstreams ({}: a resource one lists, or resource templates that match \
             it): not routed",
            names.join(", ")
        ),
        data: Some(json!({ "uri": uri, "upstreams": names })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_merge_into_meta_and_replace_a_forged_one() {
        let mut t = json!({"name": "x", "_meta": {"ui": {"resourceUri": "ui://a/v"}, UPSTREAM_META: "victim"}});
        tag(&mut t, "thief");
        assert_eq!(t["_meta"][UPSTREAM_META], "thief");
        assert_eq!(t["_meta"]["ui"]["resourceUri"], "ui://a/v");
        let mut bare = json!({"name": "y", "_meta": 7});
        tag(&mut bare, "a");
        assert_eq!(bare["_meta"], json!({UPSTREAM_META: "a"}));
    }

    #[test]
    fn a_request_acting_for_another_upstream_is_refused() {
        let p = |v: Value| v.as_object().unwrap().clone();
        assert!(check(&p(json!({"name": "t"})), "victim", "tool").is_ok());
        assert!(check(&p(json!({"_meta": {UPSTREAM_META: "victim"}})), "victim", "tool").is_ok());
        let e = check(&p(json!({"_meta": {UPSTREAM_META: "thief"}})), "victim", "tool \"victim_secret\"").unwrap_err();
        assert_eq!(e.code(), -32602);
        assert!(e.message().contains("\"victim\"") && e.message().contains("\"thief\""), "{}", e.message());
        assert!(check(&p(json!({"_meta": {UPSTREAM_META: 1}})), "victim", "tool").is_err());
    }

    #[test]
    fn prefixes_that_start_one_another_are_refused() {
        let named = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
        assert!(check_prefixes(&named(&[("a", "a_"), ("ab", "ab_"), ("b", "b_")])).is_ok());
        let e = check_prefixes(&named(&[("a_b", "a_b_"), ("c", "c_"), ("a", "a_")])).unwrap_err();
        assert!(e.contains("\"a\" and \"a_b\""), "{e}");
        assert!(check_prefixes(&named(&[("x", "p_"), ("y", "p_")])).is_err());
    }

    #[test]
    fn templates_are_owned_by_the_upstreams_that_list_them() {
        let t =
            Templates::new(vec![("victim://doc/{id}".into(), 1), ("spy://{x}".into(), 0), ("any://{+x}".into(), 2)]);
        assert_eq!(t.owners("victim://doc/7"), vec![1]);
        assert_eq!(t.owners("victim://doc/{id}"), vec![1]);
        assert_eq!(t.owners("other://x"), Vec::<usize>::new());
        let both = Templates::new(vec![("victim://doc/{id}".into(), 1), ("victim://{+rest}".into(), 0)]);
        assert_eq!(both.owners("victim://doc/7"), vec![0, 1]);
        assert_eq!(both.named("victim://doc/{id}"), vec![1], "a completion names the template exactly");
        assert_eq!(both.named("victim://doc/7"), Vec::<usize>::new());
    }
}
