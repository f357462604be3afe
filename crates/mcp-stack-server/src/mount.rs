//! Composition: one server's items served as part of another; the rules are on
//! [`ServerBuilder::mount`](crate::ServerBuilder::mount).

use crate::catalog::{BoxFuture, Catalog, ListKind, PromptEntry, ResourceEntry, ResourceFn, TemplateEntry, ToolEntry};
use crate::change_feed::ChangeEvent;
use crate::context::Context;
use crate::error::{BuildError, ItemKind};
use crate::server::{Mount, Parent, Server};
use std::sync::Arc;

/// The mounted server, as a [`Context`] carries it (what [`Context::server`] names).
type Home = Arc<dyn std::any::Any + Send + Sync>;

/// Marks `ctx` as served by an item of `home` (the first mount wins: an item mounted through
/// two levels names the server that registered it).
fn enter(ctx: &Context, home: &Home) {
    let _ = ctx.inner.home.set(home.clone());
}

/// A handler of the context alone (a tool's, a prompt's), naming `home` as its server.
fn context_fn<R: 'static>(
    f: &Arc<dyn Fn(Context) -> BoxFuture<R> + Send + Sync>,
    home: &Home,
) -> Arc<dyn Fn(Context) -> BoxFuture<R> + Send + Sync> {
    let (f, home) = (f.clone(), home.clone());
    Arc::new(move |ctx| {
        enter(&ctx, &home);
        f(ctx)
    })
}

fn resource_fn(f: &ResourceFn, home: &Home) -> ResourceFn {
    let (f, home) = (f.clone(), home.clone());
    Arc::new(move |ctx, uri, vars| {
        enter(&ctx, &home);
        f(ctx, uri, vars)
    })
}

/// `f`, or for an item registered by `home` itself, `f` naming `home` as its server.
macro_rules! homed {
    ($wrap:ident, $entry:expr, $home:expr) => {
        if $entry.mounted {
            $entry.handler.clone()
        } else {
            $wrap(&$entry.handler, $home)
        }
    };
}

fn tool(e: &ToolEntry, name: String, home: &Home) -> ToolEntry {
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
        handler: homed!(context_fn, e, home),
        mounted: true,
    }
}

fn prompt(e: &PromptEntry, name: String, home: &Home) -> PromptEntry {
    let mut def = e.def.clone();
    def.name.clone_from(&name);
    PromptEntry {
        name,
        def,
        required_args: e.required_args.clone(),
        completers: e.completers.clone(),
        access: e.access.clone(),
        handler: homed!(context_fn, e, home),
        mounted: true,
    }
}

/// Adds the items of every mount to `catalog` (after its own). With `strict`, a name or URI
/// already there is an error; otherwise it is skipped with a warning.
pub(crate) fn compose(catalog: &mut Catalog, mounts: &[Mount], strict: bool) -> Result<(), BuildError> {
    for m in mounts {
        let child = m.server.catalog();
        let home: &Home = &(Arc::new(m.server.clone()) as Home);
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
                catalog.resources.push(Arc::new(ResourceEntry {
                    uri: r.uri.clone(),
                    def: r.def.clone(),
                    access: r.access.clone(),
                    handler: homed!(resource_fn, r, home),
                    mounted: true,
                }));
            }
        }
        for t in &child.templates {
            if catalog.templates.iter().any(|x| x.template.as_str() == t.template.as_str()) {
                clash(ItemKind::ResourceTemplate, t.template.as_str().to_owned())?;
            } else {
                catalog.templates.push(Arc::new(TemplateEntry {
                    template: t.template.clone(),
                    def: t.def.clone(),
                    access: t.access.clone(),
                    handler: homed!(resource_fn, t, home),
                    mounted: true,
                }));
            }
        }
    }
    Ok(())
}

/// Registers `server` with the servers it mounts, so their changes reach it.
pub(crate) fn attach(server: &Server) {
    for m in &server.inner.config.extensions.mounts {
        let parent = Parent { server: Arc::downgrade(&server.inner), relay: mounted_changed };
        m.server.inner.parents.lock().push(parent);
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
            c.tools.retain(|e| !e.mounted);
            c.prompts.retain(|e| !e.mounted);
            c.resources.retain(|e| !e.mounted);
            c.templates.retain(|e| !e.mounted);
            let _ = compose(c, &server.inner.config.extensions.mounts, false);
            for k in kinds {
                c.versions[*k as usize] += 1;
            }
        });
    }
    server.notify(event.clone());
}
