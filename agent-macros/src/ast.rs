//! The annotated fn as a model: its signature, its parameters classified as model
//! arguments or injected values, and its return type. Only the signature is parsed; the
//! body is kept as tokens, so a body that does not compile still expands and rustc reports
//! the real error.

use proc_macro2::TokenStream;
use syn::parse::{Parse, ParseStream};
use syn::{
    Attribute, FnArg, GenericArgument, Ident, Pat, PathArguments, ReturnType, Signature, Type,
    Visibility,
};

/// `attrs vis sig { body }`, the body unparsed.
pub struct RawFn {
    /// Outer attributes (doc comments included).
    pub attrs: Vec<Attribute>,
    /// Visibility.
    pub vis: Visibility,
    /// The signature, parameter attributes still on it.
    pub sig: Signature,
    /// The body (or `;`), as written.
    pub body: TokenStream,
}

impl Parse for RawFn {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse()?;
        let body: TokenStream = input.parse()?;
        Ok(Self {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

/// The last path segment's name of a path type, if `ty` is one.
pub fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// What kind of value a parameter receives.
pub enum ParamKind {
    /// `&ToolContext`, `State<T>`, `Progress`: supplied by the runtime.
    Injected,
    /// Filled from the model's JSON.
    Model,
}

/// How a parameter type is recognised.
pub fn classify(ty: &Type) -> ParamKind {
    match ty {
        Type::Reference(r) => match last_segment(&r.elem) {
            Some(seg) if seg.ident == "ToolContext" => ParamKind::Injected,
            _ => ParamKind::Model,
        },
        _ => match last_segment(ty) {
            Some(seg) if seg.ident == "State" && !seg.arguments.is_none() => ParamKind::Injected,
            Some(seg) if seg.ident == "Progress" && seg.arguments.is_none() => ParamKind::Injected,
            _ => ParamKind::Model,
        },
    }
}

/// Whether `ty` is `Option<..>` (any path ending in `Option` with one argument).
pub fn is_option(ty: &Type) -> bool {
    match last_segment(ty) {
        Some(seg) if seg.ident == "Option" => match &seg.arguments {
            PathArguments::AngleBracketed(args) => args.args.len() == 1,
            _ => false,
        },
        _ => false,
    }
}

/// The return type, read syntactically.
pub enum Return<'a> {
    /// `-> T` or no arrow (`()`).
    Bare(Option<&'a Type>),
    /// `-> Result<T, E>` or `-> XResult<T>`: `T` is the output.
    Result(&'a Type),
}

/// Reads the return type.
pub fn read_return(output: &ReturnType) -> Return<'_> {
    let ty = match output {
        ReturnType::Default => return Return::Bare(None),
        ReturnType::Type(_, ty) => &**ty,
    };
    if let Some(seg) = last_segment(ty) {
        let name = seg.ident.to_string();
        if let PathArguments::AngleBracketed(args) = &seg.arguments {
            let types: Vec<&Type> = args
                .args
                .iter()
                .filter_map(|a| match a {
                    GenericArgument::Type(t) => Some(t),
                    _ => None,
                })
                .collect();
            let is_result = (name == "Result" && (types.len() == 1 || types.len() == 2))
                || (name.ends_with("Result") && types.len() == 1);
            if is_result && types.len() == args.args.len() {
                return Return::Result(types[0]);
            }
        }
    }
    Return::Bare(Some(ty))
}

/// The parameter's name, when the pattern is a plain identifier.
pub fn param_ident(arg: &FnArg) -> Option<&Ident> {
    match arg {
        FnArg::Typed(pt) => match &*pt.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some(&pi.ident),
            _ => None,
        },
        FnArg::Receiver(_) => None,
    }
}
