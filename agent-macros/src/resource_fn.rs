//! What `#[resource]` and `#[prompt]` share: the fn they go on (async, no generics, no
//! receiver for a free fn and `&self` for a method of a `#[toolbox]` impl, plain
//! parameters), its parameters with their doc comments, the context parameter, its
//! return type with any `Result` taken apart, the link-time registration, and the
//! stand-in emitted when the macro reports errors.

use crate::docs::{self, Docs};
use crate::errors::Errors;
use crate::spans::{self, macro_ident, spanned_at};
use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::SpannedValue;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, Ident, ImplItemFn, ItemFn, LitStr, Meta, Pat, Path, PathArguments,
    ReceiverKind, ReturnType, Signature, Type,
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

/// `register` on a `#[resource]` or `#[prompt]`: a word, no value.
#[derive(Debug, Clone, Copy)]
pub struct Register;

impl Register {
    fn error() -> darling::Error {
        darling::Error::custom(
            "`register` takes no value: write it alone, as in `#[prompt(register)]` or \
             `#[resource(register, uri = \"...\")]`",
        )
    }
}

impl FromMeta for Register {
    fn from_word() -> darling::Result<Self> {
        Ok(Self)
    }

    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        Err(Self::error().with_span(expr))
    }

    fn from_list(_: &[NestedMeta]) -> darling::Result<Self> {
        Err(Self::error())
    }
}

/// `tags` of a free fn's `#[resource]`/`#[prompt]`: checked, and refused without
/// `register` (they label registered items only).
pub fn check_tags<A: FeatureAttr>(attr: &A, what: &str, errors: &mut Errors) -> Vec<LitStr> {
    let Some(tags) = attr.tags() else {
        return Vec::new();
    };
    crate::valid::check_tags(tags, errors);
    if attr.register().is_none()
        && let Some(tag) = tags.first()
    {
        errors.error(
            tag,
            format!(
                "`tags` label a registered {what}, to filter the registry: add `register` \
                 (`#[{what}(register, tags = [...])]`), or remove `tags`"
            ),
        );
    }
    tags.clone()
}

/// The keys every `#[resource]` and `#[prompt]` has that a method reads.
pub trait FeatureAttr: FromMeta + Default {
    /// `register`.
    fn register(&self) -> Option<&SpannedValue<Register>>;
    /// `tags = [...]`.
    fn tags(&self) -> Option<&Vec<LitStr>>;
    /// `crate = path`.
    fn krate(&self) -> Option<&Path>;
}

/// A method of a `#[toolbox]` impl under `#[what(args)]`: its keys (and whether they
/// parsed), toolwright-mcp's hidden module, and the method read. `register` is refused
/// at the key: the impl is registered as a whole.
pub fn method_parts<A: FeatureAttr>(
    args: TokenStream,
    method: &mut ImplItemFn,
    what: &str,
    info: Method,
    errors: &mut Errors,
) -> (A, bool, TokenStream, FeatureFn) {
    let (attr, attr_ok) = self::attr::<A>(args, errors);
    if let Some(register) = attr.register() {
        errors.error_at(
            register.span(),
            format!(
                "a `#[{what}]` method is registered with its impl, which makes the value it \
                 shares: write `#[toolbox(register)]` on the impl block"
            ),
        );
    }
    if let Some(tag) = attr.tags().and_then(|tags| tags.first()) {
        errors.error(
            tag,
            format!(
                "a `#[{what}]` method is registered with its impl: give `tags` to \
                 `#[toolbox(register, tags = [...])]`"
            ),
        );
    }
    let p = private(attr.krate());
    let feature = parse_method(method, what, info, errors);
    (attr, attr_ok, p, feature)
}

/// The fn, its parameter attributes removed so that it compiles as written.
pub struct FeatureFn {
    /// The fn (for a method, a copy: the impl keeps the method itself).
    pub func: ItemFn,
    /// Its parameters.
    pub params: Vec<Param>,
    /// Set when it is a `&self` method of a `#[toolbox]` impl.
    pub method: Option<Method>,
}

/// A `&self` method of a `#[toolbox]` impl, made an item whose type holds an `Arc` of
/// the impl's value.
pub struct Method {
    /// The impl's type.
    pub self_ty: Type,
    /// The item type made for the method (`LibraryReadmeResource`).
    pub item_ty: Ident,
}

impl FeatureFn {
    /// The type the item's impls are for: the braced struct named like a free fn, or
    /// a method's item type.
    pub fn item_ident(&self) -> Ident {
        match &self.method {
            Some(method) => method.item_ty.clone(),
            None => macro_ident(&self.func.sig.ident),
        }
    }

    /// The fn's `#[cfg]`s.
    pub fn cfgs(&self) -> Vec<syn::Attribute> {
        self.func
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .cloned()
            .collect()
    }
}

/// Reads the fn under `#[what]`, reporting every rule it breaks.
pub fn parse(item: TokenStream, what: &str, errors: &mut Errors) -> syn::Result<FeatureFn> {
    let mut func: ItemFn = syn::parse2(item)?;
    if let Some(receiver) = func.sig.receiver() {
        errors.error(
            receiver,
            format!(
                "a `#[{what}]` fn takes no `self`: for a method sharing its impl's value, \
                 mark the impl block `#[toolbox]`, or make this a free `async fn`"
            ),
        );
    }
    let params = parse_sig(&mut func.sig, what, errors);
    Ok(FeatureFn {
        func,
        params,
        method: None,
    })
}

/// Reads a method of a `#[toolbox]` impl under `#[what]`, taking the parameter
/// attributes off the method itself, so the impl compiles as written.
fn parse_method(
    method: &mut ImplItemFn,
    what: &str,
    info: Method,
    errors: &mut Errors,
) -> FeatureFn {
    match method.sig.receiver() {
        Some(r) if matches!(&r.kind, ReceiverKind::Reference(_, _, None)) => {}
        Some(r) => errors.error(
            r,
            format!(
                "a `#[{what}]` method shares the toolbox's value, which it cannot change or \
                 take: write `&self` (for state that changes, hold a `Mutex` or an atomic)"
            ),
        ),
        None => errors.error(
            &method.sig.ident,
            format!(
                "a `#[{what}]` method of a `#[toolbox]` impl takes `&self`: add `&self` as \
                 the first parameter, or move the fn out of the impl"
            ),
        ),
    }
    let params = parse_sig(&mut method.sig, what, errors);
    let func = ItemFn {
        attrs: method.attrs.clone(),
        vis: method.vis.clone(),
        modifiers: method.modifiers.clone(),
        sig: method.sig.clone(),
        block: Box::new(method.block.clone()),
    };
    FeatureFn {
        func,
        params,
        method: Some(info),
    }
}

/// The parameters of `sig` other than `self`, their attributes taken off.
fn parse_sig(sig: &mut Signature, what: &str, errors: &mut Errors) -> Vec<Param> {
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
    for input in sig.inputs.iter_mut() {
        let FnArg::Typed(typed) = input else { continue };
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
            let parsed =
                match &attr.meta {
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
    if params.iter().filter(|p| p.ctx).count() > 1 {
        errors.error(&sig.inputs, "take the `&ToolContext` once");
    }
    params
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

/// The boxed future of `read`/`get`: the fn's future (the shared value's, for a
/// method) through toolwright-mcp's `then`, its value (past any `Result`, whose error is
/// returned) converted by `convert`, an expression of `__value`.
pub fn call(
    feature: &FeatureFn,
    args: &[TokenStream],
    output: &Output,
    convert: TokenStream,
    p: &TokenStream,
) -> TokenStream {
    let ident = &feature.func.sig.ident;
    let callee = match &feature.method {
        Some(_) => quote!(__item.0.#ident),
        None => quote!(#ident),
    };
    let convert = match &output.error {
        Some(error) => quote! {
            |__result| match __result {
                ::core::result::Result::Ok(__value) => #convert,
                ::core::result::Result::Err(__error) => ::core::result::Result::Err(#error),
            }
        },
        None => quote!(|__value| #convert),
    };
    quote!(#p::then(#callee(#(#args),*), #convert))
}

/// `let __argN: ty = read;` where `read` is a `Result` whose error refuses the call
/// before the fn runs.
pub fn read_arg(local: &Ident, ty: &Type, read: TokenStream, p: &TokenStream) -> TokenStream {
    quote! {
        let #local: #ty = match #read {
            ::core::result::Result::Ok(__value) => __value,
            ::core::result::Result::Err(__error) => return #p::refused(__error),
        };
    }
}

/// The fn's description, from its doc comment, as an `Option<&'static str>`.
pub fn description_str(func: &ItemFn) -> TokenStream {
    match description_lit(func) {
        Some(description) => quote!(::core::option::Option::Some(#description)),
        None => quote!(::core::option::Option::None),
    }
}

/// The fn's description, from its doc comment, as a `&'static str` expression.
pub fn description_lit(func: &ItemFn) -> Option<TokenStream> {
    match docs::tool_docs(&func.attrs) {
        Docs::Text { description, .. } if !description.is_empty() => Some(quote!(#description)),
        Docs::Raw(raw) => Some(raw),
        _ => None,
    }
}

/// What a valid `#[resource]`/`#[prompt]` on a free fn expands to: the fn, the item
/// type, and `impls` (with the type's `Debug`) in a block resolved as the user's code, so
/// that an item that merely moved (a line added above it) keeps its incremental
/// fingerprints (see `spans`); then any registration.
pub fn emit_free(
    feature: &FeatureFn,
    ty: TokenStream,
    impls: TokenStream,
    registration: Option<TokenStream>,
) -> TokenStream {
    let func = &feature.func;
    let debug = debug_impl(feature);
    let body = spans::as_user_code(quote!(#debug #impls), func.sig.ident.span());
    let exemption = spans::clippy_exemption();
    quote! {
        #func
        #ty
        #exemption
        const _: () = { #body };
        #registration
    }
}

/// `Debug` for a free fn's item type, written out rather than derived, to go in the
/// block resolved as the user's code (a derive's expansion moves with the item).
/// `#[inline]`: compiled only where an item is formatted.
pub fn debug_impl(feature: &FeatureFn) -> TokenStream {
    let ident = feature.item_ident();
    let name = feature.func.sig.ident.to_string();
    quote! {
        impl ::core::fmt::Debug for #ident {
            #[inline]
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(#name)
            }
        }
    }
}

/// The item's type: for a free fn a braced struct beside it, named like it; for a
/// method a tuple struct holding the shared value, with the method's visibility.
pub fn item_type(feature: &FeatureFn, what: &str, detail: &str) -> TokenStream {
    let func = &feature.func;
    let vis = &func.vis;
    let ident = feature.item_ident();
    match &feature.method {
        None => {
            let doc = format!("The {what} `{}`{detail}.", func.sig.ident);
            quote! {
                #[doc = #doc]
                #vis struct #ident {}
            }
        }
        Some(Method { self_ty, item_ty }) => {
            let doc = format!(
                "The {what}{detail}: the method `{}` made a {what} by `#[toolbox]`. Build it \
                 with `{item_ty}(Arc::new(value))`, or take every one of the impl with \
                 `into_resources` / `into_prompts`.",
                func.sig.ident
            );
            quote! {
                #[doc = #doc]
                #[derive(Clone)]
                #vis struct #ident(#vis ::std::sync::Arc<#self_ty>);
            }
        }
    }
}

/// `register`: an entry of toolwright-mcp's registry for the item `make` builds, made
/// by `constructor` (`RegisteredResource::fixed`, ...) with `key` (its URI, template or
/// name) and `tags`. `line!()` is spanned at `span`, the key that asked for it, so the registry
/// names that line.
pub fn registration(
    p: &TokenStream,
    span: proc_macro2::Span,
    constructor: TokenStream,
    key: &str,
    tags: &[LitStr],
    item_trait: TokenStream,
    make: TokenStream,
) -> TokenStream {
    let line = quote_spanned!(span=> ::core::line!());
    quote! {
        const _: () = {
            fn __toolwright_make() -> ::std::sync::Arc<dyn #item_trait> {
                ::std::sync::Arc::new(#make)
            }
            #p::inventory::submit! {
                #p::#constructor(
                    #key,
                    ::core::module_path!(),
                    ::core::file!(),
                    #line,
                    &[#(#tags),*],
                    __toolwright_make,
                )
            }
        };
    }
}

/// What an item that is not a fn expands to: it as written, and the errors.
pub fn unparsed(item: TokenStream, error: syn::Error, mut errors: Errors) -> TokenStream {
    errors.tokens(error.to_compile_error());
    let errors = errors.finish().err().unwrap_or_default();
    quote!(#errors #item)
}

/// What an invalid item expands to: the fn as written, the errors, and the type, which
/// a set takes and ignores, so the user sees their mistakes and no follow-on errors. A
/// method (in an impl without `#[toolbox]`) is emitted alone: an impl holds no type.
pub fn fallback(
    feature: &FeatureFn,
    what: &str,
    item_trait: &str,
    set: &str,
    errors: TokenStream,
    p: &TokenStream,
) -> TokenStream {
    let func = &feature.func;
    if func.sig.receiver().is_some() {
        return quote!(#errors #func);
    }
    let ty = item_type(feature, what, ", which did not compile");
    let ident = macro_ident(&func.sig.ident);
    let item_trait = Ident::new(item_trait, func.sig.ident.span());
    let set = Ident::new(set, func.sig.ident.span());
    let debug = debug_impl(feature);
    quote! {
        #errors
        #func
        #ty
        const _: () = {
            #debug
            impl #p::#item_trait for #ident {
                const KEY: &'static str = "";
                fn add_to(self, _: &mut #p::#set) {}
            }
        };
    }
}

/// The `complete` method: each parameter with a completer to its suggestions for
/// `__value`, any other name none. Nothing without completers: the trait's default
/// suggests nothing. The server refuses names that are not parameters before asking.
/// `resolved` is the type of the values already chosen.
pub fn complete_method(params: &[Param], resolved: TokenStream, p: &TokenStream) -> TokenStream {
    if params.iter().all(|param| param.complete.is_none()) {
        return TokenStream::new();
    }
    let arms = params
        .iter()
        .filter(|param| !param.ctx)
        .filter_map(|param| {
            let complete = param.complete.as_ref()?;
            let name = param.ident.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
            // The whole call at the completer, so that a wrong signature is reported there.
            let p_at = spanned_at(p.clone(), complete.span());
            let call = quote_spanned!(complete.span()=> #p_at::suggestions(#complete, __value));
            Some(quote!(#name => #call,))
        });
    method(
        "complete",
        &[
            ("__name", quote!(str)),
            ("__value", quote!(str)),
            ("__resolved", resolved),
        ],
        quote!(#p::CompleteResult),
        quote! {
            #p::suggested(match __name {
                #(#arms)*
                _ => ::std::vec::Vec::new(),
            })
        },
        p,
    )
}

/// A method of toolwright-mcp's `ResourceFn`/`TemplateFn`/`PromptFn`: one lifetime for
/// `self` and every reference parameter (by name and referenced type), returning a
/// boxed future of `output` that `body` makes.
pub fn method(
    name: &str,
    params: &[(&str, TokenStream)],
    output: TokenStream,
    body: TokenStream,
    p: &TokenStream,
) -> TokenStream {
    method_with(name, quote!(&'a self), params, output, body, p)
}

/// [`method`] with `receiver` as its first parameter.
fn method_with(
    name: &str,
    receiver: TokenStream,
    params: &[(&str, TokenStream)],
    output: TokenStream,
    body: TokenStream,
    p: &TokenStream,
) -> TokenStream {
    let name = Ident::new(name, proc_macro2::Span::call_site());
    let inputs = params.iter().map(|(param, ty)| {
        let param = Ident::new(param, proc_macro2::Span::call_site());
        quote!(#param: &'a #ty)
    });
    quote! {
        fn #name<'a>(#receiver, #(#inputs),*) -> #p::BoxFuture<'a, #output> {
            #body
        }
    }
}

/// A `read`/`get` as a method of one of toolwright-core's runner types (picked by the
/// item's name): rustc compiles a trait impl's methods in the codegen unit of the module
/// defining its type, so the item's code (and its copy of the boxed future) lands in that
/// runner's unit, which an edit of another item leaves alone, rather than in the user's
/// module. Returns the item trait's method, forwarding to it, and the runner's impl of
/// `run_trait` (toolwright-mcp's `RunRead`, `RunTemplate` or `RunGet`).
pub fn run_method(
    feature: &FeatureFn,
    run_trait: &str,
    name: &str,
    params: &[(&str, TokenStream)],
    output: TokenStream,
    body: TokenStream,
    p: &TokenStream,
) -> (TokenStream, TokenStream) {
    let ident = feature.item_ident();
    let runner = Ident::new(
        &crate::expand::runner_of(&ident.to_string()),
        proc_macro2::Span::call_site(),
    );
    let runner = quote!(#p::runners::#runner::Runner);
    let run_trait = Ident::new(run_trait, proc_macro2::Span::call_site());
    let names: Vec<Ident> = params
        .iter()
        .map(|(param, _)| Ident::new(param, proc_macro2::Span::call_site()))
        .collect();
    let method = Ident::new(name, proc_macro2::Span::call_site());
    let forward = method_with(
        name,
        quote!(&'a self),
        params,
        output.clone(),
        quote!(<#runner as #p::#run_trait<Self>>::#method(self, #(#names),*)),
        p,
    );
    let run = method_with(name, quote!(__item: &'a #ident), params, output, body, p);
    let runner_impl = quote! {
        impl #p::#run_trait<#ident> for #runner {
            #run
        }
    };
    (forward, runner_impl)
}

/// The icons `icons = [...]` names, as a `&[&str]` expression; an empty one is an error.
pub fn icons(icons: Option<&Vec<LitStr>>, errors: &mut Errors) -> TokenStream {
    let icons = icons.map(Vec::as_slice).unwrap_or_default();
    for icon in icons {
        if icon.value().trim().is_empty() {
            errors.error(icon, "an icon is a URL or a `data:` URI; this one is empty");
        }
    }
    quote!(&[#(#icons),*])
}

/// The scopes `scopes = [...]` names, as a `&[&str]` expression: what a caller's
/// principal needs to see and use the item.
pub fn scopes(scopes: Option<&Vec<LitStr>>, errors: &mut Errors) -> TokenStream {
    let scopes = scopes.map(Vec::as_slice).unwrap_or_default();
    for scope in scopes {
        if scope.value().trim().is_empty() || scope.value().contains(char::is_whitespace) {
            errors.error(
                scope,
                "a scope is one word with no spaces, as a token's `scope` claim lists it: e.g. `\"files:read\"`",
            );
        }
    }
    quote!(&[#(#scopes),*])
}

/// What a `#[resource]` or `#[prompt]` method of a `#[toolbox]` impl makes: the
/// toolbox adds it to the impl's set and, for `#[toolbox(register)]`, to the registry.
pub struct Member {
    /// Its item type, holding the shared value.
    pub item_ty: Ident,
    /// What it is.
    pub kind: MemberKind,
    /// Its URI, template or name.
    pub key: String,
    /// Where the key was written (the URI literal, or the method's name).
    pub key_span: proc_macro2::Span,
    /// The item type's definition.
    pub ty: TokenStream,
    /// Its trait impl.
    pub imp: TokenStream,
    /// toolwright-mcp's hidden module, as the method's `crate = path` names it.
    pub p: TokenStream,
    /// The method's `#[cfg]`s, for everything made of it.
    pub cfgs: Vec<syn::Attribute>,
}

/// The body of a free fn's item's `add_to`: toolwright-mcp's adder given the item's
/// declaration and its fns as pointers, so that the set holds one type of toolwright-mcp
/// rather than a trait object (vtable and all) per item. `&item {}` is a constant, so
/// it lives as long as the program.
pub fn add_stateless(kind: MemberKind, feature: &FeatureFn, p: &TokenStream) -> TokenStream {
    let ident = feature.item_ident();
    let item = quote!(&#ident {});
    let complete = |item_trait: TokenStream| {
        if feature.params.iter().any(|param| param.complete.is_some()) {
            quote! {
                ::core::option::Option::Some(|__name, __value, __resolved| {
                    #item_trait::complete(#item, __name, __value, __resolved)
                })
            }
        } else {
            quote!(::core::option::Option::None)
        }
    };
    match kind {
        MemberKind::Resource => quote! {
            #p::add_resource_fn(
                set,
                #p::ResourceFn::decl(#item),
                |__ctx| #p::ResourceFn::read(#item, __ctx),
            );
        },
        MemberKind::Template => {
            let complete = complete(quote!(#p::TemplateFn));
            quote! {
                #p::add_template_fn(
                    set,
                    #p::TemplateFn::decl(#item),
                    |__params, __ctx| #p::TemplateFn::read(#item, __params, __ctx),
                    #complete,
                );
            }
        }
        MemberKind::Prompt => {
            let complete = complete(quote!(#p::PromptFn));
            quote! {
                #p::add_prompt_fn(
                    set,
                    #p::PromptFn::decl(#item),
                    |__args, __ctx| #p::PromptFn::get(#item, __args, __ctx),
                    #complete,
                );
            }
        }
    }
}

/// The three kinds of item a method can be.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum MemberKind {
    /// A resource at one URI.
    Resource,
    /// A resource template.
    Template,
    /// A prompt.
    Prompt,
}

impl MemberKind {
    /// The trait it implements, in toolwright-mcp's hidden module.
    pub fn item_trait(self, p: &TokenStream) -> TokenStream {
        match self {
            Self::Resource => quote!(#p::Resource),
            Self::Template => quote!(#p::ResourceTemplate),
            Self::Prompt => quote!(#p::Prompt),
        }
    }

    /// toolwright-mcp's hidden fn adding a value of it, whose key was checked, to a set.
    pub fn adder(self) -> TokenStream {
        match self {
            Self::Resource => quote!(add_resource),
            Self::Template => quote!(add_template),
            Self::Prompt => quote!(add_prompt),
        }
    }

    /// Its registration (see [`registration`]).
    pub fn registration(
        self,
        p: &TokenStream,
        span: proc_macro2::Span,
        key: &str,
        tags: &[LitStr],
        make: TokenStream,
    ) -> TokenStream {
        let constructor = match self {
            Self::Resource => quote!(RegisteredResource::fixed),
            Self::Template => quote!(RegisteredResource::template),
            Self::Prompt => quote!(RegisteredPrompt::new),
        };
        registration(p, span, constructor, key, tags, self.item_trait(p), make)
    }
}
