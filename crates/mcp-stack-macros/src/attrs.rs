//! The arguments of `#[tool(...)]`, `#[prompt(...)]`, `#[resource(...)]` and `#[arg(...)]`.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitBool, LitStr, Path};

/// What an item attribute may say.
#[derive(Default)]
pub(crate) struct ItemAttrs {
    pub(crate) uri: Option<LitStr>,
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) icons: Vec<LitStr>,
    pub(crate) hints: Vec<(&'static str, bool, Span)>,
    pub(crate) task_support: Option<(String, Span)>,
    /// `scopes = ["a", "b"]`: the item is served only to callers granted every one.
    pub(crate) scopes: Option<Vec<LitStr>>,
    /// `rate_limit = "5/10s"` (tools): calls per caller.
    pub(crate) rate_limit: Option<LitStr>,
    /// `ui = "ui://..."` (tools): the MCP Apps view of its results.
    pub(crate) ui: Option<LitStr>,
    /// `visibility = ["model", "app"]` (tools): who may call a view-linked tool.
    pub(crate) visibility: Option<Vec<LitStr>>,
}

/// `["a", "b"]`: a bracketed list of string literals.
fn string_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    let value = meta.value()?;
    let content;
    syn::bracketed!(content in value);
    let items = content.parse_terminated(|i| i.parse::<LitStr>(), syn::Token![,])?;
    Ok(items.into_iter().collect())
}

fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(syn::Token![=]) {
        Ok(meta.value()?.parse::<LitBool>()?.value)
    } else {
        Ok(true)
    }
}

fn is(path: &Path, name: &str) -> bool {
    path.is_ident(name)
}

impl ItemAttrs {
    /// Parses `attr` for an item of `kind` (`tool`, `prompt` or `resource`).
    pub(crate) fn parse(kind: &str, attr: TokenStream) -> syn::Result<Self> {
        let mut out = ItemAttrs::default();
        if attr.is_empty() && kind != "resource" {
            return Ok(out);
        }
        let parser = syn::meta::parser(|meta| {
            let p = &meta.path;
            let hint = [
                ("read_only", "read_only_hint"),
                ("destructive", "destructive_hint"),
                ("idempotent", "idempotent_hint"),
                ("open_world", "open_world_hint"),
            ]
            .into_iter()
            .find(|(k, _)| is(p, k));
            if is(p, "name") {
                out.name = Some(meta.value()?.parse()?);
            } else if is(p, "title") {
                out.title = Some(meta.value()?.parse()?);
            } else if is(p, "description") {
                out.description = Some(meta.value()?.parse()?);
            } else if kind == "tool" && is(p, "rate_limit") {
                out.rate_limit = Some(meta.value()?.parse()?);
            } else if kind == "tool" && is(p, "ui") {
                out.ui = Some(meta.value()?.parse()?);
            } else if kind == "tool" && is(p, "visibility") {
                let list = string_list(&meta)?;
                if let Some(bad) = list.iter().find(|v| !matches!(v.value().as_str(), "model" | "app")) {
                    return Err(syn::Error::new(bad.span(), "visibility lists \"model\" and/or \"app\""));
                }
                out.visibility = Some(list);
            } else if is(p, "scopes") {
                out.scopes = Some(string_list(&meta)?);
            } else if is(p, "icon") {
                out.icons.push(meta.value()?.parse()?);
            } else if kind == "resource" && is(p, "mime_type") {
                out.mime_type = Some(meta.value()?.parse()?);
            } else if kind == "tool" && hint.is_some() {
                let (_, method) = hint.expect("checked");
                out.hints.push((method, flag(&meta)?, p.segments[0].ident.span()));
            } else if kind == "tool" && is(p, "task_support") {
                let v: LitStr = meta.value()?.parse()?;
                if !matches!(v.value().as_str(), "forbidden" | "optional" | "required") {
                    return Err(syn::Error::new(
                        v.span(),
                        "task_support is \"forbidden\", \"optional\" or \"required\"",
                    ));
                }
                out.task_support = Some((v.value(), v.span()));
            } else {
                let allowed = match kind {
                    "tool" => {
                        "name, title, description, icon, scopes, rate_limit, ui, visibility, read_only, \
                         destructive, idempotent, open_world, task_support"
                    }
                    "resource" => "a URI string first, then name, title, description, mime_type, icon, scopes",
                    _ => "name, title, description, icon, scopes",
                };
                return Err(meta.error(format!("unknown #[{kind}] argument; expected one of: {allowed}")));
            }
            Ok(())
        });
        let mut uri = None;
        let rest = if kind == "resource" {
            let mut tokens = attr.into_iter();
            let first: TokenStream = tokens.next().into_iter().collect();
            uri = Some(syn::parse2::<LitStr>(first).map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "#[resource] needs the URI (or URI template) first: #[resource(\"scheme://path\")]",
                )
            })?);
            match tokens.next() {
                None => TokenStream::new(),
                Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == ',' => tokens.collect(),
                Some(other) => return Err(syn::Error::new(other.span(), "expected `,` after the URI")),
            }
        } else {
            attr
        };
        if rest.is_empty() {
            drop(parser);
        } else {
            syn::parse::Parser::parse2(parser, rest)?;
        }
        out.uri = uri;
        Ok(out)
    }
}

/// What `#[arg(...)]` on a parameter may say.
#[derive(Default)]
pub(crate) struct ArgAttrs {
    pub(crate) description: Option<LitStr>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) default: bool,
    pub(crate) complete: Option<Path>,
}

impl ArgAttrs {
    /// Takes the `#[arg]` attributes out of `attrs` (they are not real attributes).
    pub(crate) fn take(attrs: &mut Vec<Attribute>, kind: &str) -> syn::Result<Self> {
        let mut out = ArgAttrs::default();
        let mut err = None;
        attrs.retain(|a| {
            if !a.path().is_ident("arg") {
                return true;
            }
            let r = a.parse_nested_meta(|meta| {
                if meta.path.is_ident("description") {
                    out.description = Some(meta.value()?.parse()?);
                } else if meta.path.is_ident("rename") {
                    out.rename = Some(meta.value()?.parse()?);
                } else if kind == "tool" && meta.path.is_ident("default") {
                    out.default = true;
                } else if kind == "prompt" && meta.path.is_ident("complete") {
                    out.complete = Some(meta.value()?.parse()?);
                } else {
                    let allowed = match kind {
                        "tool" => "description, rename, default",
                        "prompt" => "description, rename, complete",
                        _ => "description",
                    };
                    return Err(meta.error(format!("unknown #[arg] argument; expected one of: {allowed}")));
                }
                Ok(())
            });
            if let Err(e) = r {
                err.get_or_insert(e);
            }
            false
        });
        err.map_or(Ok(out), Err)
    }
}

/// The doc comment of an item, as one string (lines trimmed, paragraphs kept).
pub(crate) fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}
