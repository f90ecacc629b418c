//! The code a valid tool expands to.
//!
//! Beside the fn (kept as written, less its parameter attributes) come the tool type and,
//! inside `const _: () = { ... };` so no name leaks, two impls: `ToolRoute`, which makes
//! the type a `Tool` through toolwright-core's impl for the route `ViaFn` (or `ViaMethod`
//! for a `#[toolbox]` method), and `RunTool` (`RunMethod`) on one of toolwright-core's runner
//! types: the fn's argument types, its declaration (one string, and per parameter the
//! functions its type has as a `ModelArg`), the keys given, and `run`, the fn called on
//! its arguments. That code is resolved as the user's as it is made and is free of
//! desugarings and macro calls, so that an edit does not re-check every later tool (see
//! `spans`).
//!
//! It is also small, since a crate compiles every line of it once per tool and rustc
//! runs the macro again for every tool on every build: what does not depend on the tool
//! is in `toolwright_core::__private`, generic in a parameter or output type (so every tool
//! with a parameter of that type shares it) or in the tool type (compiled with
//! toolwright-core's code, apart from the tools an edit recompiles), and what a tool only
//! describes is data: a string toolwright-core reads when a set takes the tool, and the
//! optional keys as one constant the tool writes only when it gives one.

use crate::ast::{self, RawFn};
use crate::attr::{ApprovalAttr, DefaultAttr, Exposure, OnError, TaskAttr, ToolAttr};
use crate::errors::Errors;
use crate::fallback;
use crate::spans::{Trees, clippy_exemption, macro_ident, macro_made, resolved, with_anchor};
use crate::valid::{self, ModelParam, Param, Place, Tool};
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, Type};

// Every token this module makes is resolved as user code as it is made (see `spans`):
// `quote!` and `quote_spanned!` here resolve their spans at the tool's anchor.
macro_rules! quote {
    ($($tokens:tt)*) => { ::quote::quote_spanned!(crate::spans::site()=> $($tokens)*) };
}
macro_rules! quote_spanned {
    ($span:expr=> $($tokens:tt)*) => { ::quote::quote_spanned!(crate::spans::at($span)=> $($tokens)*) };
}

/// How the generated code reaches the user's fn.
pub enum Target<'a> {
    /// A free fn: the tool type is a braced struct with the fn's name, `run` calls `f(..)`.
    Free {
        /// The fn's name (and the tool type's).
        ident: &'a Ident,
        /// The fn's visibility (and the tool type's).
        vis: &'a syn::Visibility,
    },
    /// A `#[toolbox]` method: the tool type holds `Arc<Self>`, `run` calls
    /// `tool.0.method(..)`.
    Method {
        /// The tool type.
        tool_ty: &'a Ident,
        /// The method.
        method: &'a Ident,
    },
}

/// The `const _: () = { ... };` block with every item of one tool.
///
/// Written as one `quote!` with the parts interpolated as tokens, not as streams made
/// apart: each stream interpolated is a round trip to rustc, and the macro runs for every
/// tool on every build.
pub fn impls(tool: &Tool, target: Target<'_>) -> TokenStream {
    let fields: Vec<ArgField<'_>> = tool
        .params
        .iter()
        .filter_map(|param| Some(ArgField::new(param, param.model.as_ref()?)))
        .collect();
    let k = &tool.krate;
    let p = k.join("__private");
    let runner = p.join(&runner_of(&tool.name)).join("Runner");
    let (self_ty, route, run_trait, debug) = match &target {
        Target::Free { ident, .. } => (*ident, "ViaFn", "RunTool", Some(*ident)),
        Target::Method { tool_ty, .. } => (*tool_ty, "ViaMethod", "RunMethod", None),
    };
    // A free fn's tool type: a braced struct named like the fn, so it lives in the type
    // namespace only and the fn stays callable. Named like the fn and perhaps never used:
    // the macro's own name (see `macro_made`). A toolbox method's is the toolbox's.
    let (struct_doc, struct_vis, struct_ident) = match &target {
        Target::Free { ident, vis } => (
            Some(format!(
                "The tool `{}` made by `#[tool]` from the fn of the same name: register it \
                 with `set.register_tool({ident} {{}})`, or list the fn in `tools![]`.",
                tool.name
            )),
            Some(*vis),
            Some(macro_ident(ident)),
        ),
        Target::Method { .. } => (None, None, None),
    };
    let struct_cfgs = struct_ident
        .as_ref()
        .map(|_| &tool.cfgs)
        .into_iter()
        .flatten();
    let (struct_doc, struct_vis, struct_ident) = (
        struct_doc.into_iter(),
        struct_vis.into_iter(),
        struct_ident.into_iter(),
    );
    let (route, run_trait) = (ident(route), ident(run_trait));
    let default_fns = fields.iter().filter_map(default_fn);
    let tys = fields.iter().map(ArgField::ty);
    // Each parameter's functions through `ModelArg`: the bound is reported at the type,
    // so a type that cannot be a parameter gives one error, at its own tokens.
    let fns_tys = fields.iter().map(ArgField::ty);
    let defaults = fields.iter().map(|f| with_default(&p, f));
    // A header parameter's type must be one a header can carry: the bound is checked at
    // the type, so the error lands on the user's tokens.
    let header_checks = fields.iter().filter(|f| f.model.header.is_some()).map(|f| {
        let ty = f.ty();
        quote_spanned! {ty.span()=> const _: () = #p::header_param::<#ty>(); }
    });
    let decl = decl(tool, &fields);
    let (keys, key_items) = keys(tool);
    let (output, pick_output) = output_schema(tool);
    let run = run_fn(tool, &target, &fields);
    let registration = match target {
        Target::Free { ident, .. } => tool.register.map(|span| {
            registration(
                k,
                span,
                &crate::spans::string(&tool.name),
                &tool.tags,
                &quote!(#p::static_tool::<#ident>),
            )
        }),
        Target::Method { .. } => None,
    };
    // The tool type's `Debug`, written out rather than derived: a derive is an expansion
    // of its own, which the incremental cache fingerprints by position (see `spans`). Its
    // only std impl (`missing_debug_implementations`): the type is built as `name {}`, so
    // it needs no `Clone` or `Default`. `#[inline]`, so it is compiled where a tool is
    // formatted, not with the tools an edit recompiles.
    let debug_name = debug.map(|ident| crate::spans::string(&ident.unraw().to_string()));
    let debug = debug.into_iter();
    let exemption = clippy_exemption();
    let cfgs = &tool.cfgs;
    quote! {
        #(#struct_cfgs)*
        #(
            #[doc = #struct_doc]
            #struct_vis struct #struct_ident {}
        )*
        #(#cfgs)*
        #exemption
        const _: () = {
            #(#default_fns)*
            #(#header_checks)*
            #key_items
            #pick_output
            impl #p::ToolRoute for #self_ty {
                type Route = #p::#route<#runner>;
            }
            impl #p::#run_trait<#self_ty> for #runner {
                type Args = (#(#tys,)*);
                const DECL: &'static #p::Decl<Self::Args> =
                    &#p::Decl(#decl, (#(<#fns_tys as #p::ModelArg>::FNS #defaults,)*));
                #keys
                #output
                #run
            }
            #(
                #[automatically_derived]
                impl ::core::fmt::Debug for #debug {
                    #[inline]
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str(#debug_name)
                    }
                }
            )*
            #registration
        };
    }
}

/// An identifier the macro makes, resolved at the anchor (see `spans`).
fn ident(name: &str) -> Ident {
    Ident::new(name, crate::spans::site())
}

/// The module of `toolwright_core::__private::runners` whose type runs the tool (see there):
/// FNV-1a of the name, modulo the 8 runners, so a tool keeps its runner from build to
/// build and the tools of a crate spread evenly.
pub fn runner_of(name: &str) -> String {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("r{}", hash % 8)
}

/// [`impls`], made resolved at `anchor` (a free fn's name, a toolbox method), as the
/// user's code there (see `spans`): the values interpolated into it are resolved first.
pub fn anchored_impls(tool: &mut Tool, anchor: Span, target: Target<'_>) -> TokenStream {
    with_anchor(anchor, || {
        tool.krate = if tool.krate_given {
            resolved(&tool.krate)
        } else {
            crate::spans::toolwright_core()
        };
        for param in &mut tool.params {
            param.binding.set_span(crate::spans::site());
        }
        impls(tool, target)
    })
}

/// A parameter the model fills, with the names its generated code uses.
struct ArgField<'a> {
    param: &'a Param,
    model: &'a ModelParam,
    /// The property's name in the schema and the JSON.
    wire_name: String,
    /// The fn giving its default, when it has one.
    default_fn: Ident,
}

impl<'a> ArgField<'a> {
    fn new(param: &'a Param, model: &'a ModelParam) -> Self {
        let index = param.binding.to_string();
        let index = index.trim_start_matches("__agent_arg_").to_owned();
        Self {
            param,
            model,
            wire_name: model
                .rename
                .as_ref()
                .map_or_else(|| model.field.unraw().to_string(), syn::LitStr::value),
            default_fn: format_ident!("__agent_default_{}", index, span = crate::spans::site()),
        }
    }

    fn ty(&self) -> &Type {
        &self.param.ty
    }
}

/// The fn giving a parameter's default, spanned at `default` (so a type without
/// `Default` is reported at the key that asked for it) or at the expression.
fn default_fn(f: &ArgField<'_>) -> Option<TokenStream> {
    let (ty, name) = (f.ty(), &f.default_fn);
    let default = f.model.default.as_ref()?;
    Some(match &**default {
        DefaultAttr::Trait => quote_spanned! {default.span()=>
            fn #name() -> #ty { <#ty as ::core::default::Default>::default() }
        },
        DefaultAttr::Expr(expr) => quote_spanned! {expr.span()=>
            fn #name() -> #ty { #expr }
        },
    })
}

/// `.with_default(..)` after a parameter's functions when it has a default: the fn
/// making it, and the fn giving it as JSON for the schema.
fn with_default(p: &Trees, f: &ArgField<'_>) -> Option<TokenStream> {
    f.model.default.as_ref()?;
    let default_fn = &f.default_fn;
    let pick = macro_made(quote!(use #p::NoDefaultValue as _;));
    Some(quote! {
        .with_default(#default_fn, || {
            #pick
            #p::DefaultValue(#default_fn()).to_schema_value()
        })
    })
}

/// The declaration's text, as `ToolSpec::new` in toolwright-core reads it: the name, the
/// origin, the version, each parameter (its flag and name, then its description) and
/// last the description, NUL-separated. One literal when every part is known here;
/// `concat!` of the parts when one is not (a description from `include_str!`, a package
/// name outside Cargo).
fn decl(tool: &Tool, fields: &[ArgField<'_>]) -> Trees {
    let mut parts: Vec<TokenStream> = Vec::new();
    let mut text = String::new();
    let mut push = |part: Part<'_>| match part {
        Part::Text(value) => {
            // Only the description, which comes last, may hold a NUL: toolwright-core reads
            // the other parts up to the next one.
            text.extend(
                value
                    .chars()
                    .map(|c| if c == '\0' { '\u{fffd}' } else { c }),
            );
            text.push('\0');
        }
        Part::Tokens(tokens) => {
            if !text.is_empty() {
                parts.push(std::mem::take(&mut text).into_token_stream());
            }
            parts.push(tokens);
            text.push('\0');
        }
    };
    push(Part::Text(&tool.name));
    for (given, key) in [
        (&tool.origin, "CARGO_PKG_NAME"),
        (&tool.version, "CARGO_PKG_VERSION"),
    ] {
        match (given, std::env::var(key)) {
            (Some(lit), _) => push(Part::Text(&lit.value())),
            // Cargo sets these for the compiler running this macro, so they are written
            // as literals: an `env!` call would be one more expansion per tool, which the
            // incremental cache fingerprints by position (see `spans`).
            (None, Ok(value)) => push(Part::Text(&value)),
            (None, Err(_)) => push(Part::Tokens(::quote::quote!(::core::env!(#key)))),
        }
    }
    for f in fields {
        let flag = match (&f.model.default, f.model.optional) {
            (Some(_), _) => '=',
            (None, true) => '?',
            (None, false) => '-',
        };
        push(Part::Text(&format!("{flag}{}", f.wire_name)));
        let header = f.model.header.as_ref().map(syn::LitStr::value);
        push(Part::Text(header.as_deref().unwrap_or("")));
        push(Part::Text(f.model.description.as_deref().unwrap_or("")));
    }
    match &tool.description {
        valid::Description::Text(description) => {
            text.push_str(description);
            if parts.is_empty() {
                return crate::spans::string(&text);
            }
            parts.push(text.into_token_stream());
        }
        valid::Description::Tokens(tokens) => {
            parts.push(std::mem::take(&mut text).into_token_stream());
            parts.push(tokens.clone());
        }
    }
    resolved(::quote::quote!(::core::concat!(#(#parts),*)))
}

/// A part of the declaration's text.
enum Part<'a> {
    /// Known here.
    Text(&'a str),
    /// An expression `concat!` takes.
    Tokens(TokenStream),
}

/// `const KEYS` when the tool gives a key (or reads its context), and the items the keys
/// point to (`activate_when` boxed).
fn keys(tool: &Tool) -> (Option<TokenStream>, Option<TokenStream>) {
    let k = &tool.krate;
    let p = k.join("__private");
    let mut keys = Vec::new();
    let mut items = None;
    if !context_free(tool) {
        keys.push(quote!(.with_context()));
    }
    if let Some(ms) = tool.timeout_ms {
        let ms = resolved(ms);
        keys.push(quote!(.with_timeout_ms(#ms)));
    }
    match tool.exposure {
        Exposure::Direct => {}
        Exposure::Deferred => {
            keys.push(quote!(.with_exposure(#k::__private::ToolExposure::Deferred)))
        }
        Exposure::Hidden => keys.push(quote!(.with_exposure(#k::__private::ToolExposure::Hidden))),
    }
    if let Some(path) = &tool.activate_when {
        let active = quote_spanned! {path.span()=>
            let __agent_active: bool = #path(__agent_ctx).await;
        };
        items = Some(quote! {
            fn __agent_activate<'a>(
                __agent_ctx: &'a #k::__private::ActivationContext,
            ) -> #p::BoxFuture<'a, bool> {
                #p::Box::pin(async move {
                    #active
                    __agent_active
                })
            }
        });
        keys.push(quote!(.with_activate_when(__agent_activate)));
    }
    match tool.approval.as_ref() {
        None => {}
        Some(ApprovalAttr::Always) => {
            keys.push(quote!(.with_approval(#p::ApprovalSpec::Always)));
        }
        Some(ApprovalAttr::Path(path)) => {
            let f = quote_spanned!(path.span()=> let __agent_fn: #p::RequireApprovalFn = #path;);
            keys.push(quote!(.with_approval(#p::ApprovalSpec::When({ #f __agent_fn }))));
        }
    }
    if tool.on_error == OnError::FailRun {
        keys.push(quote!(.with_on_error(#k::__private::ErrorPolicy::FailRun)));
    }
    if tool.title.is_some()
        || tool.read_only
        || tool.destructive
        || tool.idempotent
        || tool.open_world
    {
        let title = option(tool.title.as_ref());
        let (r, d, i, o) = (
            resolved(tool.read_only),
            resolved(tool.destructive),
            resolved(tool.idempotent),
            resolved(tool.open_world),
        );
        keys.push(quote!(.with_annotations(#title, [#r, #d, #i, #o])));
    }
    if tool.max_in_flight.is_some() || tool.exclusive.is_some() || tool.sequential {
        let max = option(tool.max_in_flight.as_ref());
        let group = option(tool.exclusive.as_ref());
        let seq = resolved(tool.sequential);
        keys.push(quote!(.with_concurrency(#max, #group, #seq)));
    }
    match tool.task {
        None => {}
        Some(TaskAttr::Optional) => {
            keys.push(quote!(.with_task(#k::__private::TaskSupport::Optional)));
        }
        Some(TaskAttr::Required) => {
            keys.push(quote!(.with_task(#k::__private::TaskSupport::Required)));
        }
        Some(TaskAttr::OnDemand) => {
            keys.push(quote!(.with_task(#k::__private::TaskSupport::OnDemand)));
        }
    }
    if !tool.requirements.is_empty() {
        let requirements = &tool.requirements;
        keys.push(quote!(.with_requirements(&[#(#requirements),*])));
    }
    if let Some(path) = &tool.validate_output {
        let f = quote_spanned!(path.span()=> let __agent_fn: #p::ValidateOutputFn = #path;);
        keys.push(quote!(.with_validate_output({ #f __agent_fn })));
    }
    if let Some(path) = &tool.validate_progress {
        let f = quote_spanned!(path.span()=> let __agent_fn: #p::ValidateProgressFn = #path;);
        keys.push(quote!(.with_validate_progress({ #f __agent_fn })));
    }
    if let Some(strict) = tool.strict {
        let strict = resolved(strict);
        keys.push(quote!(.with_strict(#strict)));
    }
    if let Some(examples) = &tool.examples {
        let examples = crate::spans::string(examples);
        keys.push(quote!(.with_examples(#examples)));
    }
    let keys = (!keys.is_empty())
        .then(|| quote!(const KEYS: &'static #p::ToolKeys = &#p::ToolKeys::NONE #(#keys)*;));
    (keys, items)
}

/// `const OUTPUT`, picking the output schema (`OutputSchema::<T>::FN`, with the trait
/// it falls back to in scope), unless the output is one of the types known to have none.
fn output_schema(tool: &Tool) -> (Option<TokenStream>, Option<TokenStream>) {
    if tool.output_kind != valid::OutputKind::Schema {
        return (None, None);
    }
    let p = tool.krate.join("__private");
    let output = &tool.output;
    let pick = macro_made(quote!(use #p::NoOutputSchema as _;));
    (
        Some(quote!(const OUTPUT: #p::OutputFn = #p::OutputSchema::<#output>::FN;)),
        Some(pick),
    )
}

/// `run`: the runtime-supplied parameters taken from the context, then the user's fn on
/// every parameter, boxed, and its output converted.
///
/// No `async` block, `.await` or `?`: each is a desugaring that the incremental cache
/// fingerprints by position (see `spans`).
fn run_fn(tool: &Tool, target: &Target<'_>, fields: &[ArgField<'_>]) -> TokenStream {
    let k = &tool.krate;
    let p = k.join("__private");
    let bindings = fields.iter().map(|f| &f.param.binding);
    let injected: Vec<TokenStream> = tool
        .params
        .iter()
        .filter(|param| param.model.is_none())
        .map(|param| {
            let (ty, binding) = (&param.ty, &param.binding);
            quote_spanned! {ty.span()=>
                let #binding = match <#ty as #k::__private::FromToolContext>::from_tool_context(__agent_ctx) {
                    ::core::result::Result::Ok(__agent_value) => __agent_value,
                    ::core::result::Result::Err(__agent_error) => return #p::failed(__agent_error),
                };
            }
        })
        .collect();
    let ctx = ident(if injected.is_empty() {
        "_"
    } else {
        "__agent_ctx"
    });
    let all_bindings = tool.params.iter().map(|param| &param.binding);
    let (fn_ident, receiver) = match target {
        Target::Free { ident, .. } => (*ident, None),
        Target::Method { method, .. } => (*method, Some(quote!(__agent_tool.0.))),
    };
    let fn_span = fn_ident.span();
    // The call of the free fn by name (`tool.0.method` for a toolbox method), spanned at
    // the fn's name: a future that is not `Send` is reported there, at the coercion of
    // the box into the call's `BoxFuture`.
    let body = if tool.output_kind == valid::OutputKind::Text && !tool.returns_result {
        let text = p.join("text").spanned(crate::spans::at(fn_span));
        quote_spanned!(fn_span=> #text(#receiver #fn_ident(#(#all_bindings),*)))
    } else {
        let convert = convert(tool);
        quote_spanned! {fn_span=>
            #p::converted(::std::boxed::Box::pin(#receiver #fn_ident(#(#all_bindings),*)), #convert)
        }
    };
    match target {
        Target::Free { .. } => quote! {
            fn run((#(#bindings,)*): Self::Args, #ctx: &#k::ToolContext) -> #p::CallFuture<'_> {
                #(#injected)*
                #body
            }
        },
        Target::Method { tool_ty, .. } => quote! {
            fn run<'a>(
                __agent_tool: &'a #tool_ty,
                (#(#bindings,)*): Self::Args,
                #ctx: &'a #k::ToolContext,
            ) -> #p::CallFuture<'a> {
                #(#injected)*
                #body
            }
        },
    }
}

/// The fn turning the user's output into the call's result: `Ok` as content, an error
/// converted to a `ToolError` (keeping its kind when it has one), spanned at the return
/// type.
fn convert(tool: &Tool) -> TokenStream {
    let k = &tool.krate;
    let p = k.join("__private");
    let output = &tool.output;
    let to_content = quote_spanned!(tool.return_span=> #p::output_result::<#output>);
    if !tool.returns_result {
        return to_content;
    }
    let pick = macro_made(quote!(use #p::{DisplayToolError as _, KeepToolError as _};));
    let convert = quote_spanned! {tool.return_span=>
        (&#p::ErrorProbe::of(&__agent_error)).__agent_tag().convert(__agent_error)
    };
    quote! {
        |__agent_output| match __agent_output {
            ::core::result::Result::Ok(__agent_value) => #to_content(__agent_value),
            ::core::result::Result::Err(__agent_error) => {
                #pick
                ::core::result::Result::Err(#k::AgentError::from(#convert))
            }
        }
    }
}

/// Whether every parameter is the model's: no `&ToolContext`, `State<T>` or `Progress`.
fn context_free(tool: &Tool) -> bool {
    tool.params.iter().all(|param| param.model.is_some())
}

/// `Some(value)` or `None`, as an expression.
fn option(value: Option<&impl quote::ToTokens>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// The item adding a tool to the link-time registry: its name, where `register` was
/// written (`span`), its tags, and `make`, a `fn() -> Arc<dyn Tool>`.
pub fn registration(
    krate: &impl ToTokens,
    span: proc_macro2::Span,
    name: &impl ToTokens,
    tags: &[syn::LitStr],
    make: &TokenStream,
) -> TokenStream {
    let p = quote!(#krate::__private);
    // `line!()` at the key, so the registry names the line that asked for it.
    let line = quote_spanned!(span=> ::core::line!());
    quote! {
        #p::inventory::submit! {
            #krate::__private::RegisteredTool::new(
                #name,
                ::core::module_path!(),
                ::core::file!(),
                #line,
                &[#(#tags),*],
                #make,
            )
        }
    }
}

/// `#[tool]` on an item: the fn, its tool type and impls, or the fallback with errors.
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    // The body is split off before parsing: only the signature is read, and the body's
    // tokens go back out untouched, never walked (an edit's expansions are rerun for
    // every tool of the crate).
    let mut head: Vec<TokenTree> = item.clone().into_iter().collect();
    let body = match head.last() {
        Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => head.pop(),
        _ => None,
    };
    // The common shape is read from its tokens and emitted as them (see
    // `ast::parse_plain`); any other, by syn.
    let (mut func, emitted) = match ast::parse_plain(&head) {
        Some((func, emitted)) => (func, Some(emitted)),
        None => match syn::parse2::<RawFn>(head.into_iter().collect()) {
            Ok(func) => (func, None),
            Err(_) => {
                let error = syn::Error::new_spanned(
                    &item,
                    "`#[tool]` goes on an `async fn` (or on a method of an impl block marked \
                     `#[toolbox]`)",
                )
                .to_compile_error();
                return quote!(#error #item);
            }
        },
    };
    func.body.extend(body);
    let param_attrs = valid::strip_param_attrs(&mut func.sig);
    let RawFn {
        attrs,
        vis,
        sig,
        body,
    } = &func;
    let emitted_fn = match emitted {
        Some(mut trees) => {
            trees.extend(body.clone());
            Trees::from_trees(trees)
        }
        None => Trees::from(quote!(#(#attrs)* #vis #sig #body)),
    };
    match valid::check(args.clone(), &func, &param_attrs, Place::Free) {
        Ok(mut tool) => {
            let ident = &sig.ident;
            let impls = anchored_impls(&mut tool, ident.span(), Target::Free { ident, vis });
            quote!(#emitted_fn #impls)
        }
        Err(errors) => {
            let stand_in = if sig.receiver().is_some() {
                TokenStream::new()
            } else {
                let krate = ToolAttr::parse(args, &mut Errors::default())
                    .krate
                    .map_or_else(|| quote!(::toolwright_core), |k| quote!(#k));
                fallback::free_tool(&krate, &sig.ident, vis)
            };
            quote!(#errors #emitted_fn #stand_in)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::{RawFn, parse_plain};
    use proc_macro2::{TokenStream, TokenTree};

    /// The head of a fn (its tokens less the body) and syn's reading of it.
    fn head_and_syn(source: &str) -> (Vec<TokenTree>, Option<RawFn>) {
        let mut trees: Vec<TokenTree> =
            source.parse::<TokenStream>().unwrap().into_iter().collect();
        trees.pop();
        let syn = syn::parse2::<RawFn>(trees.iter().cloned().collect()).ok();
        (trees, syn)
    }

    /// Where the plain reader takes a fn, it reads what syn reads, and emits what the
    /// syn path emits once the parameters' attributes are stripped.
    #[test]
    fn the_plain_reader_reads_what_syn_reads() {
        let plain = [
            "/// Doc.\nasync fn a() {}",
            "pub async fn a(x: String) -> String {}",
            "pub(crate) async fn a(x: u8, y: Option<Unit>,) -> Result<Vec<u8>, Error> {}",
            "/** Block\n doc. */ #[cfg(test)] pub(super) async fn a(#[arg(default = 1)] x: u8) {}",
            "async fn a(/// Doc\n #[allow(unused)] x: ::std::string::String, ctx: &ToolContext) -> &'static str {}",
            "async fn a(m: HashMap<String, Vec<Option<a::B>>>, s: State<Db>, p: Progress) -> toolwright_core::Content {}",
            "#[doc = \"raw\"] #[doc = include_str!(\"x.md\")] async fn r#type(r#in: u8) {}",
            "async fn a(x: &mut ToolContext, y: &'a str) {}",
        ];
        for source in plain {
            let (head, syn) = head_and_syn(source);
            let (mut fast, emitted) =
                parse_plain(&head).unwrap_or_else(|| panic!("not plain: {source}"));
            let mut syn = syn.unwrap();
            assert!(fast.attrs == syn.attrs, "attributes of {source}");
            assert!(fast.vis == syn.vis, "visibility of {source}");
            assert!(fast.sig == syn.sig, "signature of {source}");
            crate::valid::strip_param_attrs(&mut fast.sig);
            crate::valid::strip_param_attrs(&mut syn.sig);
            let (attrs, vis, sig) = (&syn.attrs, &syn.vis, &syn.sig);
            // The same tokens (the spacing of a punctuation mark may differ: it is kept).
            let unspaced = |tokens: TokenStream| tokens.to_string().replace(' ', "");
            let expected = unspaced(::quote::quote!(#(#attrs)* #vis #sig));
            let emitted = unspaced(emitted.into_iter().collect());
            assert_eq!(emitted, expected, "emitted {source}");
        }
        let other = [
            "fn a() {}",
            "async unsafe fn a() {}",
            "const async fn a() {}",
            "async fn a<T>(x: T) {}",
            "async fn a(x: u8) where u8: Copy {}",
            "async fn a(&self) {}",
            "async fn a((x, y): (u8, u8)) {}",
            "async fn a(mut x: u8) {}",
            "async fn a(x: impl Display) {}",
            "async fn a(x: Box<dyn Fn() -> u8>) {}",
            "async fn a(x: [u8; 4]) {}",
            "async fn a(x: Cow<'static, str>) {}",
            "async fn a(x: <T as Tr>::A) {}",
            "#![inner] async fn a() {}",
            "extern \"C\" fn a() {}",
        ];
        for source in other {
            let (head, _) = head_and_syn(source);
            assert!(parse_plain(&head).is_none(), "read as plain: {source}");
        }
    }

    #[test]
    #[ignore = "prints an expansion for review"]
    fn print_expansion() {
        let out = super::tool(
            quote::quote!(timeout = "5s"),
            quote::quote! {
                /// Get the weather.
                async fn get_weather(/// City
                    city: String, #[arg(default = 1)] days: u8, ctx: &ToolContext) -> Result<String, E> { todo!() }
            },
        );
        println!("{out}");
    }
}
