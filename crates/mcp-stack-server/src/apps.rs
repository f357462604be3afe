//! MCP Apps on the server: tools that render their results in an HTML view, the views as `ui://`
//! resources, and app-only tools the views call (extension `io.modelcontextprotocol/ui`; the
//! wire types are in [`mcp_protocol::apps`]).
//!
//! ```
//! use mcp_server::apps::{Csp, UiResource, Visibility};
//! use mcp_server::{Server, Tool};
//!
//! const VIEW: &str = "<!DOCTYPE html><html><body><p id=out></p><script>/* ... */</script></body></html>";
//!
//! let server = Server::builder("weather", "1")
//!     .ui_resource(
//!         UiResource::new("ui://weather/dashboard", "Weather dashboard", VIEW)
//!             .csp(Csp { connect_domains: vec!["https://api.example.com".into()], ..Csp::default() })
//!             .prefers_border(true),
//!     )
//!     // Shown in the view by hosts that render apps; the text is what other hosts show.
//!     .tool(Tool::new("forecast").ui("ui://weather/dashboard").handler(|| async { "Sunny, 21 °C" }))
//!     // Called by the view only: listed and callable only for clients that render apps.
//!     .tool(
//!         Tool::new("refresh")
//!             .ui("ui://weather/dashboard")
//!             .ui_visibility([Visibility::App])
//!             .handler(|| async { "refreshed" }),
//!     )
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```
//!
//! What the server enforces:
//! - a tool's `_meta.ui.resourceUri` must be a `ui://` URI served by this server (a static
//!   resource or a template matching it), or `build()` fails naming the tool;
//! - an app-only tool (`visibility` without `"model"`) exists only for requests whose client
//!   declared the extension with the HTML profile ([`mcp_protocol::apps::renders_apps`]; per
//!   request in 2026-07-28, from `initialize` in a legacy session): other callers do not see it
//!   in `tools/list` and calling it gets the unknown tool's error;
//! - a tool linked to a view must answer with text content too (the fallback for hosts without
//!   apps): a successful result with empty `content` is a server error (`-32603`).
//!
//! Keeping app-only tools away from the model once a host renders apps is the host's part (the
//! spec's "Host MUST NOT include tools in the agent's tool list" when `"model"` is missing).

use crate::definitions::Resource;
use crate::definitions::Tool;
use crate::error::BuildError;
pub use mcp_protocol::apps::{Csp, Permissions, ResourceUi, ToolUi, Visibility, EXTENSION, HTML_MIME_TYPE};
use mcp_protocol::types::{ResourceContents, TextResourceContents};
use serde_json::Map;

impl<H> Tool<H> {
    /// Renders the tool's results in the view at `resource_uri` (a `ui://` resource of this
    /// server), keeping any visibility set before.
    pub fn ui(self, resource_uri: impl Into<String>) -> Self {
        let mut ui = self.current_ui();
        ui.resource_uri = Some(resource_uri.into());
        self.set_ui(ui)
    }

    /// Who may call the tool: `[Visibility::App]` makes it app-only (see the [module docs](self)).
    pub fn ui_visibility(self, visibility: impl IntoIterator<Item = Visibility>) -> Self {
        let ui = self.current_ui().visibility(visibility);
        self.set_ui(ui)
    }

    fn current_ui(&self) -> ToolUi {
        ToolUi::of(self.def.meta.as_ref()).unwrap_or_default()
    }

    fn set_ui(mut self, ui: ToolUi) -> Self {
        let value = serde_json::to_value(ui).expect("ToolUi serializes");
        self.def.meta.get_or_insert_with(Map::new).insert("ui".into(), value);
        self
    }
}

/// An HTML view: a `ui://` resource of MIME type [`HTML_MIME_TYPE`] with its `_meta.ui`
/// (security and framing), on its list entry and on the contents `resources/read` returns.
#[derive(Debug, Clone)]
pub struct UiResource {
    uri: String,
    name: String,
    html: std::sync::Arc<str>,
    description: Option<String>,
    title: Option<String>,
    meta: ResourceUi,
    access: Option<crate::access::Access>,
}

impl UiResource {
    /// The view at `uri` (it must start with `ui://`), listed as `name`, serving `html`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<std::sync::Arc<str>>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            html: html.into(),
            description: None,
            title: None,
            meta: ResourceUi::default(),
            access: None,
        }
    }

    /// What the view shows.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Human-readable display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The origins the view may reach (without it, hosts apply the restrictive default).
    pub fn csp(mut self, csp: Csp) -> Self {
        self.meta.csp = Some(csp);
        self
    }

    /// Browser features the view asks for.
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.meta.permissions = Some(permissions);
        self
    }

    /// A dedicated origin for the view (its format is up to each host).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.meta.domain = Some(domain.into());
        self
    }

    /// Whether hosts should draw a border and background around the view.
    pub fn prefers_border(mut self, on: bool) -> Self {
        self.meta.prefers_border = Some(on);
        self
    }

    /// Serves the view only to callers `access` allows (see [`Access`](crate::Access)).
    pub fn access(mut self, access: crate::access::Access) -> Self {
        self.access = Some(access);
        self
    }

    /// The resource it becomes.
    pub fn into_resource(self) -> Resource {
        // `_meta.ui`, when anything is set: on the list entry and on the contents alike.
        let ui = Some(serde_json::to_value(&self.meta).expect("ResourceUi serializes"))
            .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()));
        let (uri, html) = (self.uri.clone(), self.html);
        let mut r = Resource::new(self.uri, self.name).mime_type(HTML_MIME_TYPE);
        if let Some(d) = self.description {
            r = r.description(d);
        }
        if let Some(t) = self.title {
            r = r.title(t);
        }
        if let Some(ui) = &ui {
            r = r.meta("ui", ui.clone());
        }
        if let Some(a) = self.access {
            r = r.access(a);
        }
        if !uri.starts_with(mcp_protocol::apps::URI_SCHEME) {
            r.errors.push(BuildError::InvalidApp {
                item: format!("UI resource {uri:?}"),
                reason: "a view's URI must start with ui://".into(),
            });
        }
        let contents_meta = ui.map(|ui| Map::from_iter([("ui".to_owned(), ui)]));
        r.handler(move || {
            let contents = TextResourceContents {
                mime_type: Some(HTML_MIME_TYPE.to_owned()),
                meta: contents_meta.clone(),
                ..TextResourceContents::new(uri.clone(), &*html)
            };
            std::future::ready(ResourceContents::from(contents))
        })
    }
}

/// The `_meta.ui` of a tool definition, when it links a view.
pub(crate) fn tool_ui(def: &mcp_protocol::types::Tool) -> Option<ToolUi> {
    ToolUi::of(def.meta.as_ref())
}

/// Checks every view link of `catalog` (after mounting): a `ui://` URI this server serves.
pub(crate) fn check_links(catalog: &crate::catalog::Catalog) -> Result<(), BuildError> {
    for t in &catalog.tools {
        let Some(uri) = tool_ui(&t.def).and_then(|ui| ui.resource_uri) else { continue };
        let item = format!("tool {:?}", t.name);
        if !uri.starts_with(mcp_protocol::apps::URI_SCHEME) {
            return Err(BuildError::InvalidApp {
                item,
                reason: format!("_meta.ui.resourceUri {uri:?} is not a ui:// URI"),
            });
        }
        if !catalog.serves(&uri) {
            return Err(BuildError::InvalidApp {
                item,
                reason: format!("_meta.ui.resourceUri {uri:?} names no resource of this server"),
            });
        }
    }
    Ok(())
}

/// Whether a successful result of a view-linked tool lacks the text fallback.
pub(crate) fn lacks_fallback(result: &mcp_protocol::types::CallToolResult) -> bool {
    result.is_error != Some(true) && result.content.is_empty()
}
