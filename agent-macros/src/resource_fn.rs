//! What `#[resource]` and `#[prompt]` share: the fn they go on (async, no generics, no
//! receiver, plain parameters), its parameters with their doc comments, the context
//! parameter, its return type with any `Result` taken apart, and the stand-in emitted
//! when the macro reports errors.

use crate::docs::{self, Docs};
use crate::errors::Errors;
use crate::spans::macro_ident;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, Ident, ItemFn, LitStr, Meta, Pat, Path, PathArguments, ReturnType, Type,
};

/// One parameter of the fn.
pub struct Param {
    /// Its name.
    pub ident: Ident,
    /// Its type.
    pub ty: Type,
    /// Its doc comment.
    pub doc: Option<String>,
    /// Whether it is the `&ToolContext` of the call rather than an input.
    pub ctx: bool,
    /// `#[arg(complete = path)]`: the fn suggesting its values.
    pub complete: Option<Path>,
}

/// The keys of `#[arg(...)]` on a `#[resource]` or `#[prompt]` parameter.
#[derive(Debug, Default, FromMeta)]
struct ArgAttr {
    /// `complete = path`: a `fn(&str) -> Vec<String>` suggesting the values that begin
    /// like what the client typed (`completion/complete`).
    complete: Option<Path>,
}

/// The fn, its parameter attributes removed so that it compiles as written.
pub struct FeatureFn {
    /// The fn.
    pub func: ItemFn,
    /// Its parameters.
    pub params: Vec<Param>,
}

/// Reads the fn under `#[what]`, reporting every rule it breaks.
pub fn parse(item: TokenStream, what: &str, errors: &mut Errors) -> syn::Result<FeatureFn> {
    let mut func: ItemFn = syn::parse2(item)?;
    let sig = &func.sig;
    if sig.asyncness.is_none() {
        errors.error(
            sig.fn_token,
            format!(
                "`#[{what}]` goes on an `async fn`: write `async fn {}`",
                sig.ident
            ),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.error(
            &sig.generics,
            format!("a `#[{what}]` fn cannot be generic: its parameter types are read from strings, so each must be one concrete type"),
        );
    }
    let mut params = Vec::new();
    for input in func.sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(receiver) => errors.error(
                &*receiver,
                format!("a `#[{what}]` is a free fn: take no `self`"),
            ),
            FnArg::Typed(typed) => {
                let doc = match docs::param_docs(&typed.attrs) {
                    Ok(doc) => doc,
                    Err(_) => {
                        errors.error(
                            &typed.attrs[0],
                            "a parameter's doc comment must be written out (`/// ...`), not computed",
                        );
                        None
                    }
                };
                let mut complete = None;
                for attr in typed.attrs.iter().filter(|a| a.path().is_ident("arg")) {
                    let parsed = match &attr.meta {
                        Meta::List(list) => NestedMeta::parse_meta_list(list.tokens.clone())
                            .map_err(darling::Error::from)
                            .and_then(|list| ArgAttr::from_list(&list)),
                        _ => Err(darling::Error::custom("write `#[arg(complete = some_fn)]`")
                            .with_span(attr)),
                    };
                    match parsed {
                        Ok(arg) => complete = arg.complete.or(complete),
                        Err(e) => errors.darling(e),
                    }
                }
                typed
                    .attrs
                    .retain(|a| !docs::is_doc(a) && !a.path().is_ident("arg"));
                match &*typed.pat {
                    Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                        let ctx = is_ctx(&typed.ty);
                        if ctx && let Some(complete) = &complete {
                            errors.error(
                                complete,
                                "the `&ToolContext` is not an argument: it has nothing to complete",
                            );
                        }
                        params.push(Param {
                            ident: pat.ident.clone(),
                            ty: (*typed.ty).clone(),
                            doc,
                            ctx,
                            complete,
                        });
                    }
                    other => errors.error(
                        other,
                        format!("a `#[{what}]` parameter is a plain name: `name: Type`"),
                    ),
                }
            }
        }
    }
    if params.iter().filter(|p| p.ctx).count() > 1 {
        errors.error(&func.sig.inputs, "take the `&ToolContext` once");
    }
    Ok(FeatureFn { func, params })
}

/// The attribute's keys, and whether they parsed (when they did not, the errors are
/// reported and the defaults used).
pub fn attr<T: FromMeta + Default>(args: TokenStream, errors: &mut Errors) -> (T, bool) {
    match NestedMeta::parse_meta_list(args) {
        Ok(list) => match T::from_list(&list) {
            Ok(attr) => (attr, true),
            Err(e) => {
                errors.darling(e);
                (T::default(), false)
            }
        },
        Err(e) => {
            errors.tokens(e.to_compile_error());
            (T::default(), false)
        }
    }
}

/// The path of toolwright-mcp's hidden module: `crate = path`'s, else the default.
pub fn private(krate: Option<&Path>) -> TokenStream {
    match krate {
        Some(krate) => quote!(#krate::__private),
        None => quote!(::toolwright_mcp::__private),
    }
}

/// Whether `ty` is `&ToolContext` (by any path).
fn is_ctx(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => last_ident(&r.elem).is_some_and(|i| i == "ToolContext"),
        _ => false,
    }
}

/// The last segment of a path type.
pub fn last_ident(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| &s.ident),
        Type::Group(g) => last_ident(&g.elem),
        Type::Paren(p) => last_ident(&p.elem),
        _ => None,
    }
}

/// The type arguments of the last segment of a path type (`Option<T>` gives `[T]`).
pub fn type_args(ty: &Type) -> Vec<&Type> {
    let Type::Path(p) = ty else {
        return Vec::new();
    };
    let Some(segment) = p.path.segments.last() else {
        return Vec::new();
    };
    let PathArguments::AngleBracketed(args) = &segment.arguments else {
        return Vec::new();
    };
    args.args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// What the fn returns.
pub struct Output {
    /// The value past any `Result`.
    pub value: Type,
    /// How an `Err` becomes a `FeatureError` (`None`: it returns no `Result`).
    pub error: Option<TokenStream>,
}

/// The return type; an error if there is none.
pub fn output(func: &ItemFn, what: &str, p: &TokenStream, errors: &mut Errors) -> Option<Output> {
    let ty = match &func.sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => {
            errors.error(
                &func.sig,
                format!("a `#[{what}]` fn returns what it serves: add `-> String` or another return type"),
            );
            return None;
        }
    };
    let args = type_args(&ty);
    if last_ident(&ty).is_some_and(|i| i == "Result") && !args.is_empty() {
        // `Result<T, FeatureError>` keeps the error's kind (not found, invalid
        // arguments); any other error is a failure with its message.
        let keeps_kind = args
            .get(1)
            .and_then(|e| last_ident(e))
            .is_some_and(|i| i == "FeatureError");
        let error = if keeps_kind {
            quote!(__error)
        } else {
            quote!(#p::failed(__error))
        };
        return Some(Output {
            value: args[0].clone(),
            error: Some(error),
        });
    }
    Some(Output {
        value: ty,
        error: None,
    })
}

/// The call of the fn, bound to `__value`, returning early with its error.
pub fn call(func: &ItemFn, args: &[TokenStream], output: &Output) -> TokenStream {
    let ident = &func.sig.ident;
    match &output.error {
        Some(error) => quote! {
            let __value = match #ident(#(#args),*).await {
                ::core::result::Result::Ok(__value) => __value,
                ::core::result::Result::Err(__error) => return ::core::result::Result::Err(#error),
            };
        },
        None => quote! { let __value = #ident(#(#args),*).await; },
    }
}

/// The description from the doc comment, as an `Option<String>` expression.
pub fn description(func: &ItemFn) -> TokenStream {
    match docs::tool_docs(&func.attrs) {
        Docs::None => quote!(::core::option::Option::None),
        Docs::Text { description, .. } if description.is_empty() => {
            quote!(::core::option::Option::None)
        }
        Docs::Text { description, .. } => {
            quote!(::core::option::Option::Some(::std::string::String::from(#description)))
        }
        Docs::Raw(raw) => quote!(::core::option::Option::Some(::std::string::String::from(#raw))),
    }
}

/// `Some("...")` or `None` for an optional string.
pub fn opt(value: Option<String>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(::std::string::String::from(#v))),
        None => quote!(::core::option::Option::None),
    }
}

/// The type beside the fn, named like it.
pub fn item_type(func: &ItemFn, what: &str, detail: &str) -> TokenStream {
    let vis = &func.vis;
    let ident = macro_ident(&func.sig.ident);
    let doc = format!("The {what} `{}`{detail}.", func.sig.ident);
    quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #ident {}
    }
}

/// What an item that is not a fn expands to: it as written, and the errors.
pub fn unparsed(item: TokenStream, error: syn::Error, mut errors: Errors) -> TokenStream {
    errors.tokens(error.to_compile_error());
    let errors = errors.finish().err().unwrap_or_default();
    quote!(#errors #item)
}

/// What an invalid item expands to: the fn as written, the errors, and the type, which
/// a set takes and ignores, so the user sees their mistakes and no follow-on errors.
pub fn fallback(
    func: &ItemFn,
    what: &str,
    item_trait: &str,
    set: &str,
    errors: TokenStream,
    p: &TokenStream,
) -> TokenStream {
    let ty = item_type(func, what, ", which did not compile");
    let ident = macro_ident(&func.sig.ident);
    let item_trait = Ident::new(item_trait, func.sig.ident.span());
    let set = Ident::new(set, func.sig.ident.span());
    quote! {
        #errors
        #func
        #ty
        const _: () = {
            impl #p::#item_trait for #ident {
                const KEY: &'static str = "";
                fn add_to(self, _: &mut #p::#set) {}
            }
        };
    }
}

/// The `complete` method: each parameter with a completer to its suggestions for
/// `__value`, any other name none. Nothing when no parameter has a completer: the
/// trait's own method suggests nothing, without a future of its own per item. The server
/// refuses names that are not parameters before asking. `resolved` is the type of the
/// values already chosen.
pub fn complete_method(params: &[Param], resolved: TokenStream, p: &TokenStream) -> TokenStream {
    if params.iter().all(|param| param.complete.is_none()) {
        return TokenStream::new();
    }
    async_method(
        "complete",
        &[
            ("__name", quote!(str)),
            ("__value", quote!(str)),
            ("__resolved", resolved),
        ],
        quote!(::core::result::Result<::std::vec::Vec<::std::string::String>, #p::FeatureError>),
        complete_arms(params, p),
    )
}

fn complete_arms(params: &[Param], p: &TokenStream) -> TokenStream {
    let arms = params
        .iter()
        .filter(|param| !param.ctx)
        .filter_map(|param| {
            let complete = param.complete.as_ref()?;
            let name = param.ident.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
            let call = quote_spanned!(complete.span()=> #p::suggestions(#complete, __value));
            Some(quote!(#name => ::core::result::Result::Ok(#call),))
        });
    quote! {
        match __name {
            #(#arms)*
            _ => ::core::result::Result::Ok(::std::vec::Vec::new()),
        }
    }
}

/// An async method of toolwright-mcp's `#[async_trait]` traits, written out as that
/// attribute declares it (one lifetime per reference, a boxed `Send` future), so that no
/// attribute adds an `allow` a crate forbidding lints would refuse. `params` are the
/// method's reference parameters, by name and referenced type.
pub fn async_method(
    name: &str,
    params: &[(&str, TokenStream)],
    output: TokenStream,
    body: TokenStream,
) -> TokenStream {
    let name = Ident::new(name, proc_macro2::Span::call_site());
    let lifetime =
        |i: usize| syn::Lifetime::new(&format!("'life{i}"), proc_macro2::Span::call_site());
    let lifetimes: Vec<syn::Lifetime> = (0..=params.len()).map(lifetime).collect();
    let self_lifetime = &lifetimes[0];
    let inputs = params.iter().zip(&lifetimes[1..]).map(|((param, ty), lt)| {
        let param = Ident::new(param, proc_macro2::Span::call_site());
        quote!(#param: &#lt #ty)
    });
    quote! {
        fn #name<#(#lifetimes,)* 'async_trait>(
            &#self_lifetime self,
            #(#inputs),*
        ) -> ::core::pin::Pin<::std::boxed::Box<
            dyn ::core::future::Future<Output = #output> + ::core::marker::Send + 'async_trait,
        >>
        where
            #(#lifetimes: 'async_trait,)*
            Self: 'async_trait,
        {
            ::std::boxed::Box::pin(async move { #body })
        }
    }
}

/// `fn scopes(&self)` of a resource, template or prompt that names `scopes = [...]`:
/// what a caller's principal needs to see and use it. Nothing when none are named.
pub fn scopes_method(scopes: Option<&Vec<LitStr>>, errors: &mut Errors) -> TokenStream {
    let Some(scopes) = scopes else {
        return TokenStream::new();
    };
    for scope in scopes {
        if scope.value().trim().is_empty() || scope.value().contains(char::is_whitespace) {
            errors.error(
                scope,
                "a scope is one word with no spaces, as a token's `scope` claim lists it: e.g. `\"files:read\"`",
            );
        }
    }
    quote! {
        fn scopes(&self) -> &[::std::string::String] {
            static SCOPES: ::std::sync::OnceLock<::std::vec::Vec<::std::string::String>> =
                ::std::sync::OnceLock::new();
            SCOPES.get_or_init(|| ::std::vec![#(::std::string::String::from(#scopes)),*])
        }
    }
}
