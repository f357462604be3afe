//! The parameters of an annotated function: extractors, passed through, and arguments, which
//! become fields of the generated arguments struct.

use crate::attrs::ArgAttrs;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Pat, Signature, Type};

/// Extractor types, recognised by the last segment of their path.
const EXTRACTORS: &[&str] = &["Context", "State", "Args", "HttpRequest"];

/// One parameter of the annotated function.
pub(crate) enum Param {
    /// Passed through as an extractor of this type.
    Extractor(Type),
    /// An argument of the tool, prompt or resource template.
    Argument {
        /// The parameter name (and argument name unless renamed).
        ident: Ident,
        /// Its type.
        ty: Type,
        /// `#[arg(...)]`.
        attrs: ArgAttrs,
    },
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        _ => None,
    }
}

fn is_extractor(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|s| EXTRACTORS.iter().any(|e| s.ident == e))
}

/// Checks the one rule about the arguments: they are read once, by the last parameter. So
/// there is at most one `Args<T>`, it comes last, and it does not go with plain arguments
/// (which the macro gathers into an `Args` of its own).
pub(crate) fn check_arguments(params: &[Param], kind: &str) -> syn::Result<()> {
    let is_args = |p: &Param| matches!(p, Param::Extractor(ty) if last_segment(ty).is_some_and(|s| s.ident == "Args"));
    let plain = params.iter().find_map(|p| match p {
        Param::Argument { ident, .. } => Some(ident),
        Param::Extractor(_) => None,
    });
    let mut takers = params.iter().enumerate().filter(|(_, p)| is_args(p));
    let Some((first, Param::Extractor(ty))) = takers.next() else { return Ok(()) };
    if let Some(ident) = plain {
        let mut e = syn::Error::new(
            ty.span(),
            format!("#[{kind}]: `Args<T>` and plain arguments do not mix: both would read the arguments"),
        );
        e.combine(syn::Error::new(
            ident.span(),
            "a plain argument; make it a field of the `Args` type, or drop `Args`",
        ));
        return Err(e);
    }
    if let Some((_, Param::Extractor(second))) = takers.next() {
        return Err(syn::Error::new(
            second.span(),
            format!("#[{kind}]: a second `Args<T>`: the arguments are read once, by one `Args<T>`"),
        ));
    }
    if first + 1 != params.len() {
        return Err(syn::Error::new(ty.span(), format!("#[{kind}]: `Args<T>` reads the arguments, so it goes last")));
    }
    Ok(())
}

/// `T` when `ty` is written `Option<T>`.
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    let seg = last_segment(ty).filter(|s| s.ident == "Option")?;
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// Checks the signature's shape and classifies its parameters (taking out `#[arg]`).
pub(crate) fn analyze(sig: &mut Signature, kind: &str) -> syn::Result<Vec<Param>> {
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(sig.fn_token.span, format!("#[{kind}] needs an `async fn`")));
    }
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new(sig.generics.span(), format!("#[{kind}] functions cannot be generic")));
    }
    if let Some(v) = &sig.variadic {
        return Err(syn::Error::new(v.span(), "variadic parameters are not supported"));
    }
    let mut out = Vec::new();
    for input in sig.inputs.iter_mut() {
        let pt = match input {
            FnArg::Receiver(r) => {
                return Err(syn::Error::new(
                    r.span(),
                    format!("#[{kind}] goes on a free function; share data with `State<T>` instead of `self`"),
                ))
            }
            FnArg::Typed(pt) => pt,
        };
        let attrs = ArgAttrs::take(&mut pt.attrs, kind)?;
        if is_extractor(&pt.ty) {
            if attrs.description.is_some() || attrs.rename.is_some() || attrs.default || attrs.complete.is_some() {
                return Err(syn::Error::new(pt.ty.span(), "#[arg] applies to arguments, not to extractors"));
            }
            out.push(Param::Extractor((*pt.ty).clone()));
            continue;
        }
        let ident = match &*pt.pat {
            Pat::Ident(p) if p.subpat.is_none() => p.ident.clone(),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "an argument needs a plain name (the argument's name); destructure in the body",
                ))
            }
        };
        out.push(Param::Argument { ident, ty: (*pt.ty).clone(), attrs });
    }
    Ok(out)
}
