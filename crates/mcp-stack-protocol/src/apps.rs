//! MCP Apps (extension `io.modelcontextprotocol/ui`, SEP-1865, stable 2026-01-26): interactive
//! HTML views a host renders in a sandboxed frame.
//!
//! A tool points at a `ui://` resource with `_meta.ui.resourceUri` ([`ToolUi`]); the resource
//! is an HTML document of MIME type [`HTML_MIME_TYPE`] whose `_meta.ui` ([`ResourceUi`]) says
//! which origins the view may reach ([`Csp`]), which browser features it asks for
//! ([`Permissions`]), and how to frame it. A client that renders apps declares the extension
//! ([`client_capability`]); a server checks it per request ([`renders_apps`]).
//!
//! ```
//! use mcp_protocol::apps::{Csp, ResourceUi, ToolUi, Visibility};
//!
//! let ui = ToolUi::linked("ui://weather/dashboard").visibility([Visibility::App]);
//! assert!(!ui.model_visible() && ui.app_visible());
//!
//! let resource = ResourceUi {
//!     csp: Some(Csp { connect_domains: vec!["https://api.example.com".into()], ..Csp::default() }),
//!     ..ResourceUi::default()
//! };
//! assert!(resource.content_security_policy().contains("connect-src https://api.example.com;"));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The extension's identifier, in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an HTML view.
pub const HTML_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme of UI resources.
pub const URI_SCHEME: &str = "ui://";

/// The version of the host-view protocol (`ui/initialize`'s `protocolVersion`).
pub const PROTOCOL_VERSION: &str = "2026-01-26";

/// The `_meta` key naming an upstream: a gateway (`mcp proxy` with several upstreams) puts it
/// on every tool, resource and resource template it lists (the upstream that owns it), and a
/// host puts it on the `tools/call` and `resources/read` a view sends through its bridge (the
/// upstream of the view), so a view reaches its own upstream only: the host refuses another
/// upstream's item, and the gateway refuses a request naming another upstream than the
/// target's owner. A plain server marks nothing, and nothing changes there.
pub const UPSTREAM_META: &str = "dev.mcp-stack/upstream";

/// What a client declares under `capabilities.extensions["io.modelcontextprotocol/ui"]` to
/// say it renders HTML views: `{"mimeTypes": ["text/html;profile=mcp-app"]}`.
pub fn client_capability() -> Value {
    serde_json::json!({ "mimeTypes": [HTML_MIME_TYPE] })
}

/// Whether `capabilities` (a request's client capabilities) declares the extension with the
/// HTML profile among its `mimeTypes`.
pub fn renders_apps(capabilities: &Map<String, Value>) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(HTML_MIME_TYPE)))
}

/// Who may call a tool linked to a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Visibility {
    /// The model (the agent) sees and calls it.
    Model,
    /// Views from the same server call it.
    App,
}

/// A tool's `_meta.ui`: the view that renders its results, and who may call it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUi {
    /// The `ui://` resource that renders the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool (`["model", "app"]` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
    /// Fields newer than this type, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolUi {
    /// A link to the view at `resource_uri`, visible to model and app.
    pub fn linked(resource_uri: impl Into<String>) -> Self {
        Self { resource_uri: Some(resource_uri.into()), ..Self::default() }
    }

    /// Sets who may call the tool.
    pub fn visibility(mut self, visibility: impl IntoIterator<Item = Visibility>) -> Self {
        self.visibility = Some(visibility.into_iter().collect());
        self
    }

    /// The `_meta.ui` of a tool definition (or the deprecated flat `_meta["ui/resourceUri"]`),
    /// if it has one that parses.
    pub fn of(meta: Option<&Map<String, Value>>) -> Option<Self> {
        let meta = meta?;
        match meta.get("ui") {
            Some(ui) => serde_json::from_value(ui.clone()).ok(),
            None => meta.get("ui/resourceUri").and_then(Value::as_str).map(Self::linked),
        }
    }

    /// Whether the model may see and call the tool.
    pub fn model_visible(&self) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&Visibility::Model))
    }

    /// Whether views may call the tool.
    pub fn app_visible(&self) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&Visibility::App))
    }
}

/// Origins a view may reach; each list maps to CSP directives (see
/// [`ResourceUi::content_security_policy`]). Empty lists allow nothing beyond the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Csp {
    /// Origins for `fetch`, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins for scripts, styles, images, fonts and media.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins for nested frames (`frame-src`; `'none'` when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Allowed base URIs (`base-uri`; `'self'` when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

/// Browser features a view asks for (a host may grant them through the frame's `allow`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Permissions {
    /// Camera access.
    #[serde(default, with = "present", skip_serializing_if = "is_false")]
    pub camera: bool,
    /// Microphone access.
    #[serde(default, with = "present", skip_serializing_if = "is_false")]
    pub microphone: bool,
    /// Geolocation.
    #[serde(default, with = "present", skip_serializing_if = "is_false")]
    pub geolocation: bool,
    /// Writing to the clipboard.
    #[serde(default, with = "present", skip_serializing_if = "is_false")]
    pub clipboard_write: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Permissions {
    /// The value of the frame's `allow` attribute granting these features.
    pub fn allow_attribute(&self) -> String {
        let features = [
            (self.camera, "camera"),
            (self.microphone, "microphone"),
            (self.geolocation, "geolocation"),
            (self.clipboard_write, "clipboard-write"),
        ];
        features.iter().filter(|(on, _)| *on).map(|(_, f)| *f).collect::<Vec<_>>().join("; ")
    }
}

/// A feature asked for is written `{}`; any value but `null` or `false` reads as asked.
mod present {
    use serde::{Deserialize, Deserializer, Serializer};
    use serde_json::Value;

    pub(super) fn serialize<S: Serializer>(on: &bool, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        debug_assert!(*on, "skipped when false");
        s.serialize_map(Some(0))?.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        Ok(!matches!(Value::deserialize(d)?, Value::Null | Value::Bool(false)))
    }
}

/// A UI resource's `_meta.ui` (on its `resources/list` entry and on its `resources/read`
/// contents).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUi {
    /// Origins the view may reach (the restrictive default when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<Csp>,
    /// Browser features the view asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// A dedicated origin for the view (format decided by each host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host should draw a border and background around the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
    /// Fields newer than this type, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResourceUi {
    /// The `_meta.ui` of a resource or of read contents, if it has one that parses.
    pub fn of(meta: Option<&Map<String, Value>>) -> Option<Self> {
        serde_json::from_value(meta?.get("ui")?.clone()).ok()
    }

    /// The Content-Security-Policy a host serves the view with: the spec's restrictive default
    /// (no network access, inline and same-origin scripts and styles, `data:` images and media,
    /// no frames, no plugins) widened by the declared origins only. An origin that is not a plain source expression
    /// (a scheme, host or `*.` wildcard host, and port; no quotes, `;`, `,` or spaces) is left
    /// out, so a server cannot inject directives.
    pub fn content_security_policy(&self) -> String {
        let csp = self.csp.clone().unwrap_or_default();
        let list = |v: &[String]| v.iter().filter(|s| is_source(s)).map(String::as_str).collect::<Vec<_>>().join(" ");
        let with =
            |base: &str, extra: String| if extra.is_empty() { base.to_owned() } else { format!("{base} {extra}") };
        let resources = list(&csp.resource_domains);
        let frames = list(&csp.frame_domains);
        let bases = list(&csp.base_uri_domains);
        format!(
            "default-src 'none'; script-src {}; style-src {}; connect-src {}; img-src {}; font-src {}; \
             media-src {}; frame-src {}; object-src 'none'; base-uri {}",
            with("'self' 'unsafe-inline'", resources.clone()),
            with("'self' 'unsafe-inline'", resources.clone()),
            {
                let connect = list(&csp.connect_domains);
                if connect.is_empty() {
                    "'none'".to_owned()
                } else {
                    connect
                }
            },
            with("'self' data:", resources.clone()),
            with("'self'", resources.clone()),
            with("'self' data:", resources),
            if frames.is_empty() { "'none'".to_owned() } else { frames },
            if bases.is_empty() { "'self'".to_owned() } else { bases },
        )
    }
}

impl crate::types::Tool {
    /// The tool's MCP Apps link (`_meta.ui`), if it has one.
    pub fn ui(&self) -> Option<ToolUi> {
        ToolUi::of(self.meta.as_ref())
    }
}

impl crate::types::Resource {
    /// The resource's MCP Apps settings (`_meta.ui`), if it has them.
    pub fn ui(&self) -> Option<ResourceUi> {
        ResourceUi::of(self.meta.as_ref())
    }
}

impl crate::types::ResourceContents {
    /// The MCP Apps settings of read contents (`_meta.ui`), if they have them.
    pub fn ui(&self) -> Option<ResourceUi> {
        match self {
            Self::Text(t) => ResourceUi::of(t.meta.as_ref()),
            Self::Blob(b) => ResourceUi::of(b.meta.as_ref()),
        }
    }

    /// Whether these contents are an MCP Apps HTML view.
    pub fn is_app_view(&self) -> bool {
        let mime = match self {
            Self::Text(t) => t.mime_type.as_deref(),
            Self::Blob(b) => b.mime_type.as_deref(),
        };
        mime.is_some_and(|m| m.replace(' ', "").eq_ignore_ascii_case(HTML_MIME_TYPE))
    }
}

/// A CSP host source such as `https://api.example.com`, `https://*.example.com:8443` or
/// `wss://rt.example.com`.
fn is_source(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else { return false };
    let scheme_ok = !scheme.is_empty()
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        && scheme.as_bytes()[0].is_ascii_alphabetic();
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (rest, None),
    };
    let host = host.strip_prefix("*.").unwrap_or(host);
    let host_ok = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    let port_ok =
        port.is_none_or(|p| p == "*" || (!p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())));
    scheme_ok && host_ok && port_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_ui_reads_nested_and_deprecated_forms() {
        let nested = json!({"ui": {"resourceUri": "ui://a", "visibility": ["app"]}});
        let ui = ToolUi::of(nested.as_object()).unwrap();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://a"));
        assert!(ui.app_visible() && !ui.model_visible());
        let flat = json!({"ui/resourceUri": "ui://b"});
        let ui = ToolUi::of(flat.as_object()).unwrap();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://b"));
        assert!(ui.app_visible() && ui.model_visible());
        assert!(ToolUi::of(json!({"other": 1}).as_object()).is_none());
        assert_eq!(serde_json::to_value(ToolUi::linked("ui://c")).unwrap(), json!({"resourceUri": "ui://c"}));
    }

    #[test]
    fn permissions_are_empty_objects_on_the_wire() {
        let p = Permissions { camera: true, clipboard_write: true, ..Permissions::default() };
        assert_eq!(serde_json::to_value(p).unwrap(), json!({"camera": {}, "clipboardWrite": {}}));
        let back: Permissions = serde_json::from_value(json!({"camera": {}, "microphone": null})).unwrap();
        assert!(back.camera && !back.microphone);
        assert_eq!(p.allow_attribute(), "camera; clipboard-write");
    }

    #[test]
    fn the_default_policy_is_the_restrictive_one() {
        let csp = ResourceUi::default().content_security_policy();
        assert!(csp.starts_with("default-src 'none'; script-src 'self' 'unsafe-inline';"), "{csp}");
        assert!(csp.contains("connect-src 'none';") && csp.contains("frame-src 'none';"), "{csp}");
        assert!(csp.contains("object-src 'none'") && csp.ends_with("base-uri 'self'"), "{csp}");
    }

    #[test]
    fn declared_origins_widen_only_their_directives_and_bad_ones_are_dropped() {
        let ui: ResourceUi = serde_json::from_value(json!({"csp": {
            "connectDomains": ["https://api.example.com", "https://x.com; script-src *", "'unsafe-eval'"],
            "resourceDomains": ["https://*.cdn.example.com:8443"],
            "frameDomains": ["https://www.youtube.com"],
        }}))
        .unwrap();
        let csp = ui.content_security_policy();
        assert!(csp.contains("connect-src https://api.example.com;"), "{csp}");
        assert!(csp.contains("script-src 'self' 'unsafe-inline' https://*.cdn.example.com:8443;"), "{csp}");
        assert!(csp.contains("frame-src https://www.youtube.com;"), "{csp}");
        assert!(!csp.contains("unsafe-eval") && !csp.contains("x.com"), "{csp}");
    }

    #[test]
    fn the_capability_is_recognised_only_with_the_html_profile() {
        let with = json!({"extensions": {EXTENSION: client_capability()}});
        assert!(renders_apps(with.as_object().unwrap()));
        let other = json!({"extensions": {EXTENSION: {"mimeTypes": ["text/uri-list"]}}});
        assert!(!renders_apps(other.as_object().unwrap()));
        assert!(!renders_apps(json!({"extensions": {}}).as_object().unwrap()));
    }
}
