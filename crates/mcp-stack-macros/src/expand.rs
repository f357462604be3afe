//! Code generation: the annotated function stays as written (callable in tests), and a braced
//! struct of the same name (type namespace only) gets the definition as an associated function.

use crate::attrs::{doc_comment, ItemAttrs};
use crate::params::{analyze, check_arguments, option_inner, Param};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{ItemFn, LitStr};

/// Which attribute is being expanded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }
}

/// The variable names of an RFC 6570 template (`{id}`, `{+path}`, `{?a,b*}`, `{x:3}`), read by
/// the parser the server matches URIs with.
fn template_variables(template: &str) -> Result<Vec<String>, mcp_protocol::template::TemplateError> {
    let parsed = mcp_protocol::template::UriTemplate::parse(template)?;
    Ok(parsed.variables().into_iter().map(str::to_owned).collect())
}

pub(crate) fn item(kind: Kind, attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut f: ItemFn = syn::parse2(item)
        .map_err(|e| syn::Error::new(e.span(), format!("#[{}] goes on an `async fn`", kind.name())))?;
    let attrs = ItemAttrs::parse(kind.name(), attr)?;
    let params = analyze(&mut f.sig, kind.name())?;
    check_arguments(&params, kind.name())?;
    let fn_name = f.sig.ident.clone();
    let vis = f.vis.clone();
    let plain_name = fn_name.unraw().to_string();
    let item_name = attrs.name.as_ref().map_or_else(|| plain_name.clone(), LitStr::value);
    let description = attrs.description.as_ref().map(LitStr::value).or_else(|| doc_comment(&f.attrs));

    let variables = match (&kind, &attrs.uri) {
        (Kind::Resource, Some(uri)) => {
            Some(template_variables(&uri.value()).map_err(|e| syn::Error::new(uri.span(), e.to_string()))?)
        }
        _ => None,
    };
    let mut fields = Vec::new();
    let mut closure_params = Vec::new();
    let mut call_args = Vec::new();
    let mut completions = Vec::new();
    for (i, p) in params.iter().enumerate() {
        match p {
            Param::Extractor(ty) => {
                let e = format_ident!("__e{}", i);
                closure_params.push(quote! { #e: #ty });
                call_args.push(quote! { #e });
            }
            Param::Argument { ident, ty, attrs: a } => {
                let arg_name = a.rename.as_ref().map_or_else(|| ident.unraw().to_string(), LitStr::value);
                if let Some(vars) = &variables {
                    if vars.is_empty() {
                        return Err(syn::Error::new(
                            ident.span(),
                            "a static resource takes no arguments; use a URI template with variables",
                        ));
                    }
                    if !vars.contains(&arg_name) {
                        return Err(syn::Error::new(
                            ident.span(),
                            format!(
                                "`{arg_name}` is not a variable of the URI template (variables: {})",
                                vars.join(", ")
                            ),
                        ));
                    }
                }
                let doc = a.description.as_ref().map(|d| quote! { #[doc = #d] });
                let rename = a.rename.as_ref().map(|r| quote! { #[serde(rename = #r)] });
                let default = a.default.then(|| quote! { #[serde(default)] });
                let field_ty = match kind {
                    Kind::Tool => quote! { #ty },
                    _ if option_inner(ty).is_some() => quote! { ::core::option::Option<::std::string::String> },
                    _ => quote! { ::std::string::String },
                };
                fields.push(quote! { #doc #rename #default #ident: #field_ty });
                call_args.push(match (kind, option_inner(ty)) {
                    (Kind::Tool, _) => quote! { __a.#ident },
                    (_, Some(inner)) => quote_spanned! { ty.span()=>
                        ::mcp::server::__private::parse_optional_argument::<#inner>(#arg_name, __a.#ident)?
                    },
                    (_, None) => quote_spanned! { ty.span()=>
                        ::mcp::server::__private::parse_argument::<#ty>(#arg_name, __a.#ident)?
                    },
                });
                if let Some(path) = &a.complete {
                    completions.push(quote! { .complete(#arg_name, #path) });
                }
            }
        }
    }
    let has_args = !fields.is_empty();
    let args_struct = has_args.then(|| {
        quote! {
            #[derive(::mcp::serde::Deserialize, ::mcp::schemars::JsonSchema)]
            #[serde(crate = "::mcp::serde")]
            #[schemars(crate = "::mcp::schemars")]
            struct __Arguments { #(#fields,)* }
        }
    });
    if has_args {
        // Last: the one parameter that consumes the arguments.
        closure_params.push(quote! { ::mcp::server::Args(__a): ::mcp::server::Args<__Arguments> });
    }
    let body = match kind {
        Kind::Tool => quote! { #fn_name(#(#call_args),*).await },
        _ => quote! { ::core::result::Result::<_, ::mcp::server::HandlerError>::Ok(#fn_name(#(#call_args),*).await) },
    };
    // A return type that is no result must be blamed on the return type.
    let ret_span = match &f.sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => f.sig.ident.span(),
    };
    let handler = quote_spanned! {ret_span=> .handler(|#(#closure_params),*| async move { #body }) };

    let title = attrs.title.as_ref().map(|t| quote! { .title(#t) });
    let description = description.map(|d| quote! { .description(#d) });
    let icons = attrs.icons.iter().map(|i| quote! { .icon(::mcp::types::Icon::new(#i)) });
    let hints = attrs.hints.iter().map(|(method, on, span)| {
        let m = syn::Ident::new(method, *span);
        quote! { .#m(#on) }
    });
    let task = attrs.task_support.as_ref().map(|(v, span)| {
        let variant = syn::Ident::new(&format!("{}{}", v[..1].to_uppercase(), &v[1..]), *span);
        quote! { .task_support(::mcp::server::TaskSupport::#variant) }
    });
    let mime = attrs.mime_type.as_ref().map(|m| quote! { .mime_type(#m) });
    let scopes = attrs.scopes.as_ref().map(|s| quote! { .scopes([#(#s),*]) });
    let rate_limit = attrs.rate_limit.as_ref().map(|q| quote! { .rate_limit_str(#q) });
    let ui = attrs.ui.as_ref().map(|u| quote! { .ui(#u) });
    let visibility = attrs.visibility.as_ref().map(|v| {
        let variants = v.iter().map(|l| {
            let variant = syn::Ident::new(if l.value() == "app" { "App" } else { "Model" }, l.span());
            quote! { ::mcp::server::apps::Visibility::#variant }
        });
        quote! { .ui_visibility([#(#variants),*]) }
    });

    let (method, ret, constructor) = match kind {
        Kind::Tool => (quote!(tool), quote!(::mcp::server::Tool), quote! { ::mcp::server::Tool::new(#item_name) }),
        Kind::Prompt => {
            (quote!(prompt), quote!(::mcp::server::Prompt), quote! { ::mcp::server::Prompt::new(#item_name) })
        }
        Kind::Resource => {
            let uri = attrs.uri.as_ref().expect("parsed");
            let ctor = if variables.as_ref().is_some_and(|v| !v.is_empty()) {
                quote! { ::mcp::server::Resource::template(#uri, #item_name) }
            } else {
                quote! { ::mcp::server::Resource::new(#uri, #item_name) }
            };
            (quote!(resource), quote!(::mcp::server::Resource), ctor)
        }
    };
    let struct_doc =
        format!("The MCP {} definition of [`{plain_name}()`]: register `{plain_name}::{method}()`.", kind.name());
    let method_doc = format!("The {} `{item_name}`, with its handler.", kind.name());
    let span = Span::call_site();
    Ok(quote_spanned! {span=>
        #f

        #[doc = #struct_doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #fn_name {}

        impl #fn_name {
            #[doc = #method_doc]
            #vis fn #method() -> #ret {
                #args_struct
                #constructor #title #description #(#icons)* #(#hints)* #task #mime #scopes #rate_limit #ui #visibility #(#completions)* #handler
            }
        }
    })
}

/// `#[schema]`: the three derives through `::mcp`'s re-exports.
pub(crate) fn schema(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(attr.span(), "#[schema] takes no arguments"));
    }
    let item: syn::Item = syn::parse2(item)?;
    if !matches!(item, syn::Item::Struct(_) | syn::Item::Enum(_)) {
        return Err(syn::Error::new(item.span(), "#[schema] goes on a struct or an enum"));
    }
    Ok(quote! {
        #[derive(::mcp::serde::Serialize, ::mcp::serde::Deserialize, ::mcp::schemars::JsonSchema)]
        #[serde(crate = "::mcp::serde")]
        #[schemars(crate = "::mcp::schemars")]
        #item
    })
}

#[cfg(test)]
mod tests {
    use super::template_variables;

    #[test]
    fn template_variables_cover_every_operator() {
        assert_eq!(template_variables("test://template/{id}/data").unwrap(), ["id"]);
        assert_eq!(template_variables("file:///{+path}{?q,limit*}{#frag:3}").unwrap(), ["path", "q", "limit", "frag"]);
        assert!(template_variables("config://app").unwrap().is_empty());
        assert!(template_variables("file:///{path").is_err());
    }
}
