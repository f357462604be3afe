//! What an MCP Apps view may reach through the page's bridge. Behind a gateway (`mcp proxy`
//! with several upstreams) every listed tool, resource and template names its upstream in
//! `_meta` ([`UPSTREAM_META`]), and the page is one host for all of them: a view of one upstream
//! must not call another upstream's tools or read its resources. So the view's own upstream is
//! taken from the tool that opened it (else from its `ui://` resource), a `tools/call` or
//! `resources/read` whose listed target names another upstream (or none, when the view has one)
//! is refused here, and what is forwarded carries the view's upstream in its `_meta`, for the
//! gateway to refuse an unlisted target of another upstream. Items of a plain server name no
//! upstream, and nothing changes there.

use mcp::protocol::apps::UPSTREAM_META;
use mcp::server::UriTemplate;
use mcp_client::{Client, ClientError};
use serde_json::{json, Map, Value};

/// The upstream an item's `_meta` names, if any.
fn owner(item: &Value) -> Option<String> {
    item.get("_meta")?.get(UPSTREAM_META)?.as_str().map(str::to_owned)
}

/// What the host knows of a request's target.
#[derive(Debug, PartialEq)]
pub(crate) enum Target {
    /// Listed by the server, owned by this upstream (or none).
    Listed(Option<String>),
    /// Not in any list: the gateway decides from the request's `_meta`.
    Unlisted,
}

/// The upstream of the view opened by `view.tool`, else the one of its resource `view.uri`.
pub(crate) async fn upstream_of(client: &Client, view: &Map<String, Value>) -> Result<Option<String>, ClientError> {
    if let Some(tool) = view.get("tool").and_then(Value::as_str) {
        if let Target::Listed(Some(u)) = tool_target(client, tool).await? {
            return Ok(Some(u));
        }
    }
    match view.get("uri").and_then(Value::as_str) {
        Some(uri) => Ok(match resource_target(client, uri).await? {
            Target::Listed(u) => u,
            Target::Unlisted => None,
        }),
        None => Ok(None),
    }
}

/// Whose tool `name` is.
pub(crate) async fn tool_target(client: &Client, name: &str) -> Result<Target, ClientError> {
    let tools = client.list_tools().await?;
    Ok(tools.iter().find(|t| t.name == name).map_or(Target::Unlisted, |t| Target::Listed(owner(t.raw()))))
}

/// Whose resource `uri` is: a listed resource's, else the first matching template's.
pub(crate) async fn resource_target(client: &Client, uri: &str) -> Result<Target, ClientError> {
    let resources = client.list_resources().await?;
    if let Some(r) = resources.iter().find(|r| r.raw().get("uri").and_then(Value::as_str) == Some(uri)) {
        return Ok(Target::Listed(owner(r.raw())));
    }
    let templates = client.list_resource_templates().await?;
    let matching = templates.iter().find(|t| {
        let template = t.raw().get("uriTemplate").and_then(Value::as_str).unwrap_or_default();
        UriTemplate::parse(template).is_ok_and(|tt| tt.matches(uri).is_some())
    });
    Ok(matching.map_or(Target::Unlisted, |t| Target::Listed(owner(t.raw()))))
}

/// Admits a view's request for `target` (`what`: how to name it) or says why not (a JSON-RPC
/// error for the view); an admitted request's `params` get the view's upstream in `_meta`.
pub(crate) fn admit(
    view: Option<&str>,
    target: &Target,
    what: &str,
    params: &mut Map<String, Value>,
) -> Result<(), Value> {
    if let Target::Listed(owner) = target {
        if owner.as_deref() != view {
            let of = |u: Option<&str>| u.map_or("no upstream".to_owned(), |u| format!("upstream {u:?}"));
            let message = format!("a view of {} may not reach {what}, of {}", of(view), of(owner.as_deref()));
            return Err(json!({"code": -32602, "message": message}));
        }
    }
    if let Some(u) = view {
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert(UPSTREAM_META.to_owned(), json!(u));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_reaches_its_own_upstream_only() {
        let mut p = Map::new();
        let theirs = Target::Listed(Some("victim".into()));
        let err = admit(Some("thief"), &theirs, "tool \"victim_secret\"", &mut p).unwrap_err();
        assert_eq!(err["code"], -32602);
        assert!(err["message"].as_str().unwrap().contains("upstream \"victim\""), "{err}");
        assert!(p.is_empty(), "nothing is marked on a refusal");
        assert!(admit(Some("thief"), &Target::Listed(None), "x", &mut p).is_err(), "an unowned item is not the view's");
        assert!(admit(None, &theirs, "x", &mut p).is_err(), "a view of no upstream reaches no upstream's item");
        admit(Some("thief"), &Target::Listed(Some("thief".into())), "x", &mut p).unwrap();
        assert_eq!(p["_meta"][UPSTREAM_META], "thief");
        let mut q = Map::new();
        admit(Some("thief"), &Target::Unlisted, "x", &mut q).unwrap();
        assert_eq!(q["_meta"][UPSTREAM_META], "thief", "an unlisted target: the gateway decides");
        let mut plain = Map::new();
        admit(None, &Target::Listed(None), "x", &mut plain).unwrap();
        assert!(plain.is_empty(), "a plain server's view: as before");
        assert_eq!(owner(&json!({"_meta": {UPSTREAM_META: "a"}})), Some("a".into()));
    }
}
