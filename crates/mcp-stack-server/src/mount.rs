//! Composition: one server's items served as part of another; the rules are on
//! [`ServerBuilder::mount`](crate::ServerBuilder::mount).

use crate::catalog::{Catalog, ListKind, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry};
use crate::error::{BuildError, ItemKind};
use crate::server::{ChangeEvent, Server, ServerInner};
use std::sync::{Arc, Weak};

/// A server mounted into another under a prefix.
#[derive(Clone)]
pub(crate) struct Mount {
    pub(crate) prefix: String,
    pub(crate) server: Server,
}

fn tool(e: &ToolEntry, name: String, home: &Server) -> ToolEntry {
    let mut def = e.def.clone();
    def.name.clone_from(&name);
    ToolEntry {
        name,
        def,
        input: e.input.clone(),
        output: e.output.clone(),
        header_params: e.header_params.clone(),
        task_support: e.task_support,
        task_start: e.task_start,
        access: e.access.clone(),
        ui_linked: e.ui_linked,
        rate_limit: e.rate_limit,
        handler: e.handler.clone(),
        home: Some(e.home.clone().unwrap_or_else(|| home.clone())),
    }
}

fn prompt(e: &PromptEntry, name: String, home: &Server) -> PromptEntry {
    let mut def = e.def.clone();
    def.name.clone_from(&name);
    PromptEntry {
        name,
        def,
        required_args: e.required_args.clone(),
        completers: e.completers.clone(),
        access: e.access.clone(),
        handler: e.handler.clone(),
        home: Some(e.home.clone().unwrap_or_else(|| home.clone())),
    }
}

/// Adds the items of every mount to `catalog` (after its own). With `strict`, a name or URI
/// already there is an error; otherwise it is skipped with a warning.
pub(crate) fn compose(catalog: &mut Catalog, mounts: &[Mount], strict: bool) -> Result<(), BuildError> {
    for m in mounts {
        let child = m.server.catalog();
        let home = &m.server;
        let clash = |kind: ItemKind, name: String| {
            if strict {
                return Err(BuildError::Duplicate { kind, name });
            }
            tracing::warn!(target: "mcp_server::mount", "mounted {kind} {name:?} is already served here; left out");
            Ok(())
        };
        for t in &child.tools {
            let name = format!("{}{}", m.prefix, t.name);
            if catalog.tools.iter().any(|x| x.name == name) {
                clash(ItemKind::Tool, name)?;
            } else {
                catalog.tools.push(Arc::new(tool(t, name, home)));
            }
        }
        for p in &child.prompts {
            let name = format!("{}{}", m.prefix, p.name);
            if catalog.prompts.iter().any(|x| x.name == name) {
                clash(ItemKind::Prompt, name)?;
            } else {
                catalog.prompts.push(Arc::new(prompt(p, name, home)));
            }
        }
        for r in &child.resources {
            if catalog.resources.iter().any(|x| x.uri == r.uri) {
                clash(ItemKind::Resource, r.uri.clone())?;
            } else {
                let home = Some(r.home.clone().unwrap_or_else(|| home.clone()));
                catalog.resources.push(Arc::new(ResourceEntry {
                    uri: r.uri.clone(),
                    def: r.def.clone(),
                    access: r.access.clone(),
                    handler: r.handler.clone(),
                    home,
                }));
            }
        }
        for t in &child.templates {
            if catalog.templates.iter().any(|x| x.template.as_str() == t.template.as_str()) {
                clash(ItemKind::ResourceTemplate, t.template.as_str().to_owned())?;
            } else {
                let home = Some(t.home.clone().unwrap_or_else(|| home.clone()));
                catalog.templates.push(Arc::new(TemplateEntry {
                    template: t.template.clone(),
                    def: t.def.clone(),
                    access: t.access.clone(),
                    handler: t.handler.clone(),
                    home,
                }));
            }
        }
    }
    Ok(())
}

/// Registers `server` with the servers it mounts, so their changes reach it.
pub(crate) fn attach(server: &Server) {
    for m in &server.inner.config.extensions.mounts {
        m.server.inner.parents.lock().push(Arc::downgrade(&server.inner));
    }
}

/// Passes a change of `server` on to the servers it is mounted in.
pub(crate) fn tell_parents(server: &Server, event: &ChangeEvent) {
    let parents: Vec<Weak<ServerInner>> = server.inner.parents.lock().clone();
    for parent in parents.iter().filter_map(Weak::upgrade) {
        mounted_changed(&Server { inner: parent }, event);
    }
}

/// A server that `server` mounts changed: its list changes are recomposed into this catalog,
/// then announced here like this server's own.
fn mounted_changed(server: &Server, event: &ChangeEvent) {
    let kinds: &[ListKind] = match event {
        ChangeEvent::ToolsListChanged => &[ListKind::Tools],
        ChangeEvent::PromptsListChanged => &[ListKind::Prompts],
        ChangeEvent::ResourcesListChanged => &[ListKind::Resources, ListKind::Templates],
        ChangeEvent::ResourceUpdated(_) => &[],
        _ => return,
    };
    if !kinds.is_empty() {
        server.update_catalog(|c| {
            c.tools.retain(|e| e.home.is_none());
            c.prompts.retain(|e| e.home.is_none());
            c.resources.retain(|e| e.home.is_none());
            c.templates.retain(|e| e.home.is_none());
            let _ = compose(c, &server.inner.config.extensions.mounts, false);
            for k in kinds {
                c.versions[*k as usize] += 1;
            }
        });
    }
    server.notify(event.clone());
}
