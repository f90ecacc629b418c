//! The code a valid tool expands to.
//!
//! Beside the fn (kept as written, less its parameter attributes) come the tool type and,
//! inside `const _: () = { ... };` so no name leaks: the tool as data (a `ToolSpec`
//! static) and, for a free fn, the `ToolRun` impl (its name, its spec and its argument
//! types, which the shared `call_tool` reads), the `RunTool` impl on one of agent-core's
//! runner types (the user's fn called on those arguments) and a `ToolRoute` impl that
//! makes the type a `Tool` through agent-core's impl over the spec, with no `Tool`
//! impl of its own. A `#[toolbox]` method's type holds its receiver, so it gets a `Tool`
//! impl whose methods (`#[inline]`) forward to the spec. That code is resolved as the
//! user's as it is made and is free of desugarings and macro calls, so that an edit does
//! not re-check every later tool (see `spans`).
//!
//! It is also small, since every line of it is compiled once per tool: what does not
//! depend on the tool is a fn in `agent_core::__private`, generic in a parameter or
//! output type (so every tool with a parameter of that type shares it) or in the tool
//! type (compiled with agent-core's code, apart from the tools an edit recompiles), and
//! what a tool only describes is data read by one `Tool` implementation, `FnTool`, which
//! `tools![]` and the registry use: no per-tool vtable, decoder or trait method is
//! compiled for them.

use crate::ast::RawFn;
use crate::attr::{ApprovalAttr, DefaultAttr, Exposure, OnError, ToolAttr};
use crate::errors::Errors;
use crate::fallback;
use crate::spans::{Trees, anchored_item, macro_ident, macro_made, resolved, with_anchor};
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
    /// A free fn: the tool type is a braced struct with the fn's name, `call` is `f(..)`.
    Free {
        /// The fn's name (and the tool type's).
        ident: &'a Ident,
    },
    /// A `#[toolbox]` method: the tool type holds `Arc<Self>`, `call` is
    /// `self.0.method(..)`.
    Method {
        /// The tool type.
        tool_ty: &'a Ident,
        /// The method.
        method: &'a Ident,
    },
}

/// The `const _: () = { ... };` block with every item of one tool.
pub fn impls(tool: &Tool, target: Target<'_>) -> TokenStream {
    let fields: Vec<ArgField<'_>> = tool
        .params
        .iter()
        .filter_map(|param| Some(ArgField::new(param, param.model.as_ref()?)))
        .collect();
    let default_fns = fields.iter().filter_map(default_fn);
    // The name as generated code writes it, resolved once for the spec and the impls.
    let name = resolved(&tool.name);
    let spec = spec(tool, &fields, &name);
    let k = &tool.krate;
    let p = k.join("__private");
    let (call_fn, tool_items) = match target {
        // Up to 12 parameters: the arguments are read by `call_tool`, generic in the tool
        // type and compiled with agent-core's code (not in the tools' module, which an
        // edit recompiles); the tool's own code is `RunTool::run`, given them as a tuple,
        // and implemented on a runner type (so compiled in the runner's unit, not the
        // tools' module: see `agent_core::__private::runners`).
        Target::Free { ident } if fields.len() <= MAX_TUPLE_ARGS => {
            let (tys, plan, defaults) = plan(&p, &fields);
            let defaults = defaults.map(|defaults| {
                quote!(const DEFAULTS: <Self::Args as #p::ReadArgs>::Defaults = #defaults;)
            });
            let bindings = fields.iter().map(|f| &f.param.binding);
            let body = call_body(tool, &target, &fields, false);
            let runner = p.join(&runner_of(&tool.name)).join("Runner");
            let run = quote! {
                impl #p::ToolRun for #ident {
                    const NAME: &'static str = #name;
                    const SPEC: &'static #p::ToolSpec = &__AGENT_SPEC;
                    type Args = (#(#tys,)*);
                    const PLAN: <Self::Args as #p::ReadArgs>::Plan = #plan;
                    #defaults
                    type Runner = #runner;
                }
                impl #p::RunTool<#ident> for #runner {
                    fn run<'a>(
                        (#(#bindings,)*): <#ident as #p::ToolRun>::Args,
                        __agent_ctx: &'a #k::ToolContext,
                    ) -> #p::CallFuture<'a> {
                        #body
                    }
                }
            };
            (run, free_tool_items(tool, ident, &name, None))
        }
        Target::Free { ident } => {
            let body = call_body(tool, &target, &fields, true);
            let call_fn = quote! {
                fn __agent_call<'a>(
                    __agent_args: &#p::serde_json::Value,
                    __agent_ctx: &'a #k::ToolContext,
                ) -> #p::CallFuture<'a> {
                    #body
                }
            };
            (
                call_fn,
                free_tool_items(tool, ident, &name, Some(&quote!(__agent_call))),
            )
        }
        Target::Method { tool_ty, .. } => {
            let call = call_body(tool, &target, &fields, true);
            (TokenStream::new(), tool_impl(tool, tool_ty, &call))
        }
    };
    let cfgs = &tool.cfgs;
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        const _: () = {
            #(#default_fns)*
            #spec
            #call_fn
            #tool_items
        };
    }
}

/// The module of `agent_core::__private::runners` whose type runs the tool (see there):
/// FNV-1a of the name, modulo the 8 runners, so a tool keeps its runner from build to
/// build and the tools of a crate spread evenly.
fn runner_of(name: &str) -> String {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("r{}", hash % 8)
}

/// [`impls`], made resolved at `anchor` (a free fn's name, a toolbox method), as the
/// user's code there (see `spans`): the values interpolated into it are resolved first.
pub fn anchored_impls(tool: &mut Tool, anchor: Span, target: Target<'_>) -> TokenStream {
    with_anchor(anchor, || {
        tool.krate = resolved(&tool.krate);
        tool.description = resolved(&tool.description);
        for param in &mut tool.params {
            param.binding.set_span(crate::spans::site());
        }
        anchored_item(impls(tool, target))
    })
}

/// The tool's origin and version: the keys when given, else the defining package's name
/// and version. Cargo sets those for the compiler running this macro, so they are written
/// as literals: an `env!` call would be one more expansion per tool, which the
/// incremental cache fingerprints by position (see `spans`). Outside Cargo, `env!` it is.
fn origin_and_version(tool: &Tool) -> (Trees, Trees) {
    let from_package = |key: &str| match std::env::var(key) {
        Ok(value) => resolved(value),
        Err(_) => Trees::from(quote!(::core::env!(#key))),
    };
    let origin = match &tool.origin {
        Some(o) => Trees::from(quote!(#o)),
        None => from_package("CARGO_PKG_NAME"),
    };
    let version = match &tool.version {
        Some(v) => Trees::from(quote!(#v)),
        None => from_package("CARGO_PKG_VERSION"),
    };
    (origin, version)
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

/// One row of the schema table. The type's schema goes through `ModelArg`, spanned at
/// the type, so a type that cannot be a parameter gives one error, at its own tokens.
fn field_schema(p: &Trees, f: &ArgField<'_>) -> TokenStream {
    let ty = f.ty();
    let schema_fn = quote_spanned!(ty.span()=> <#ty as #p::ModelArg>::__agent_schema);
    let name = resolved(&f.wire_name);
    let optional = resolved(f.model.default.is_some() || f.model.optional);
    let description = resolved(f.model.description.as_deref().unwrap_or(""));
    let default = f.model.default.as_ref().map(|_| {
        let default_fn = &f.default_fn;
        let pick = macro_made(quote!(use #p::NoDefaultValue as _;));
        quote! {
            .with_default(|| {
                #pick
                #p::DefaultValue(#default_fn()).to_schema_value()
            })
        }
    });
    quote! {
        #p::FieldSchema::new(#name, #optional, #schema_fn, #description)#default
    }
}

/// The tool as data: `static __AGENT_SPEC`, built by `const fn`s from the constants, the
/// schema table and the keys given; plus the fns it points to (the output schema, and
/// `activate_when` boxed).
fn spec(tool: &Tool, fields: &[ArgField<'_>], name: &Trees) -> TokenStream {
    let k = &tool.krate;
    let p = k.join("__private");
    let output = &tool.output;
    let requirements = &tool.requirements;
    let description = &tool.description;
    let (origin, version) = origin_and_version(tool);
    let wire_names = fields.iter().map(|f| resolved(&f.wire_name));
    let field_schemas = fields.iter().map(|f| field_schema(&p, f));
    let mut keys = Vec::new();
    let mut items = Vec::new();
    if let Some(ms) = tool.timeout_ms {
        let ms = resolved(ms);
        keys.push(quote!(.with_timeout_ms(#ms)));
    }
    match tool.exposure {
        Exposure::Direct => {}
        Exposure::Deferred => keys.push(quote!(.with_exposure(#k::ToolExposure::Deferred))),
        Exposure::Hidden => keys.push(quote!(.with_exposure(#k::ToolExposure::Hidden))),
    }
    if let Some(path) = &tool.activate_when {
        let active = quote_spanned! {path.span()=>
            let __agent_active: bool = #path(__agent_ctx).await;
        };
        items.push(quote! {
            fn __agent_activate<'a>(
                __agent_ctx: &'a #k::ActivationContext,
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
            keys.push(quote!(.with_approval(#p::ApprovalRule::Always)));
        }
        Some(ApprovalAttr::Path(path)) => {
            let f = quote_spanned!(path.span()=> let __agent_fn: #p::ApprovalFn = #path;);
            keys.push(quote!(.with_approval(#p::ApprovalRule::When({ #f __agent_fn }))));
        }
    }
    if tool.on_error == OnError::FailRun {
        keys.push(quote!(.with_on_error(#k::ErrorPolicy::FailRun)));
    }
    let (r, d, i, o) = (
        resolved(tool.read_only),
        resolved(tool.destructive),
        resolved(tool.idempotent),
        resolved(tool.open_world),
    );
    if tool.title.is_some()
        || tool.read_only
        || tool.destructive
        || tool.idempotent
        || tool.open_world
    {
        let title = option(tool.title.as_ref());
        keys.push(quote!(.with_annotations(#title, [#r, #d, #i, #o])));
    }
    if tool.max_in_flight.is_some() || tool.exclusive.is_some() || tool.sequential {
        let max = option(tool.max_in_flight.as_ref());
        let group = option(tool.exclusive.as_ref());
        let seq = resolved(tool.sequential);
        keys.push(quote!(.with_concurrency(#max, #group, #seq)));
    }
    if context_free(tool) {
        keys.push(quote!(.without_context()));
    }
    if let Some(path) = &tool.validate_output {
        let f = quote_spanned!(path.span()=> let __agent_fn: #p::ValidateOutputFn = #path;);
        keys.push(quote!(.with_validate_output({ #f __agent_fn })));
    }
    if let Some(path) = &tool.validate_progress {
        let f = quote_spanned!(path.span()=> let __agent_fn: #p::ValidateProgressFn = #path;);
        keys.push(quote!(.with_validate_progress({ #f __agent_fn })));
    }
    let pick = macro_made(quote!(use #p::NoOutputSchema as _;));
    quote! {
        #pick

        #(#items)*

        static __AGENT_SPEC: #p::ToolSpec = #p::ToolSpec::new(
            #name,
            #description,
            #origin,
            #version,
            &[#(#requirements),*],
            &[#(#wire_names),*],
            &[#(#field_schemas),*],
            #p::OutputSchema::<#output>::FN,
        )#(#keys)*;
    }
}

/// The most parameters read as one tuple (`ReadArgs` in `agent_core::__private`).
const MAX_TUPLE_ARGS: usize = 12;

/// The body of a call: the arguments read from the JSON, the runtime-supplied
/// parameters, then the user's fn, boxed, and its output converted.
///
/// Each parameter is read by `ModelArg`, shared by every tool with a parameter of that
/// type and spanned at the type, so a type that cannot be a parameter gives one error at
/// its own tokens. No `async` block, `.await` or `?`: each is a desugaring that the
/// incremental cache fingerprints by position (see `spans`).
fn call_body(tool: &Tool, target: &Target<'_>, fields: &[ArgField<'_>], read: bool) -> TokenStream {
    let k = &tool.krate;
    let p = k.join("__private");
    let (call, fn_span) = match target {
        Target::Free { ident } => (quote!(#ident), ident.span()),
        Target::Method { method, .. } => (quote!(self.0.#method), method.span()),
    };
    let n = fields.len();
    let bindings: Vec<&Ident> = fields.iter().map(|f| &f.param.binding).collect();
    let reads = fields.iter().enumerate().map(|(index, f)| {
        let index_tokens = resolved(index);
        let (ty, binding) = (f.ty(), &f.param.binding);
        let read = match &f.model.default {
            Some(_) => quote!(__agent_read),
            None => quote!(__agent_arg),
        };
        quote_spanned! {ty.span()=>
            let #binding = <#ty as #p::ModelArg>::#read(&mut __agent_reader, #index_tokens);
        }
    });
    // Defaults are applied once every parameter was read without an error.
    let patterns = fields.iter().map(|f| {
        let binding = &f.param.binding;
        match &f.model.default {
            Some(_) => quote!(#binding),
            None => quote!(::core::option::Option::Some(#binding)),
        }
    });
    let values = fields.iter().map(|f| {
        let binding = &f.param.binding;
        match &f.model.default {
            Some(_) => {
                let default_fn = &f.default_fn;
                quote!(::core::option::Option::unwrap_or_else(#binding, #default_fn))
            }
            None => quote!(#binding),
        }
    });
    // Up to 12 parameters (the tuples `ReadArgs` is implemented for), one shared call.
    let read_args = if !read {
        TokenStream::new()
    } else if fields.len() <= MAX_TUPLE_ARGS {
        let (tys, plan, defaults) = plan(&p, fields);
        let defaults =
            defaults.unwrap_or_else(|| quote!(<(#(#tys,)*) as #p::ReadArgs>::NO_DEFAULTS));
        // Constants, passed by reference: one pointer each, not tuples built on each call.
        quote! {
            const __AGENT_PLAN: <(#(#tys,)*) as #p::ReadArgs>::Plan = #plan;
            const __AGENT_DEFAULTS: <(#(#tys,)*) as #p::ReadArgs>::Defaults = #defaults;
            let (#(#bindings,)*) = match <(#(#tys,)*) as #p::ReadArgs>::__agent_read_all(
                &__AGENT_SPEC,
                __agent_args,
                &__AGENT_PLAN,
                &__AGENT_DEFAULTS,
            ) {
                ::core::result::Result::Ok(__agent_values) => __agent_values,
                ::core::result::Result::Err(__agent_error) => return #p::failed(__agent_error),
            };
        }
    } else {
        quote! {
            let mut __agent_reader = match __AGENT_SPEC.reader(__agent_args, &mut __agent_slots) {
                ::core::result::Result::Ok(__agent_reader) => __agent_reader,
                ::core::result::Result::Err(__agent_error) => return #p::failed(__agent_error),
            };
            #(#reads)*
            let (#(#bindings,)*) = match (#(#bindings,)*) {
                (#(#patterns,)*) if !__agent_reader.failed() => (#(#values,)*),
                _ => return #p::failed(__agent_reader.into_error()),
            };
        }
    };
    let injected = tool
        .params
        .iter()
        .filter(|param| param.model.is_none())
        .map(|param| {
            let (ty, binding) = (&param.ty, &param.binding);
            quote_spanned! {ty.span()=>
                let #binding = match <#ty as #k::FromToolContext>::from_tool_context(__agent_ctx) {
                    ::core::result::Result::Ok(__agent_value) => __agent_value,
                    ::core::result::Result::Err(__agent_error) => return #p::failed(__agent_error),
                };
            }
        });
    let all_bindings = tool.params.iter().map(|param| &param.binding);
    let convert = convert(tool);
    // Spanned at the fn's name: a future that is not `Send` is reported there, at the
    // coercion of the box into `converted`'s `BoxFuture`.
    let run = quote_spanned! {fn_span=>
        ::std::boxed::Box::pin(#call(#(#all_bindings),*))
    };
    let slots = (read && fields.len() > MAX_TUPLE_ARGS).then(|| {
        let n = resolved(n);
        quote!(let mut __agent_slots = [::core::option::Option::None; #n];)
    });
    quote! {
        #slots
        #read_args
        #(#injected)*
        #p::converted(#run, #convert)
    }
}

/// The parameters' types, and how `ReadArgs` reads each: its read fn, named at the
/// parameter's type (so a type that cannot be a parameter is reported there, once); and,
/// when any parameter has a default, every parameter's default or `None`.
fn plan<'f>(
    p: &Trees,
    fields: &'f [ArgField<'_>],
) -> (Vec<&'f Type>, TokenStream, Option<TokenStream>) {
    let tys = fields.iter().map(ArgField::ty).collect();
    let reads = fields.iter().map(|f| {
        let ty = f.ty();
        let read = match f.model.default {
            Some(_) => quote!(__agent_read),
            None => quote!(__agent_arg),
        };
        quote_spanned!(ty.span()=> <#ty as #p::ModelArg>::#read)
    });
    let defaults = fields.iter().any(|f| f.model.default.is_some()).then(|| {
        let defaults = fields.iter().map(|f| match f.model.default {
            Some(_) => {
                let default_fn = &f.default_fn;
                quote!(::core::option::Option::Some(#default_fn))
            }
            None => quote!(::core::option::Option::None),
        });
        quote!((#(#defaults,)*))
    });
    (tys, quote!((#(#reads,)*)), defaults)
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

/// The `Tool` impl: every method reads the spec (the optional ones only where a key was
/// given, the others keep the trait's defaults), `call` runs `call`. `#[inline]`, so a
/// tool reached only through `tools![]` or the registry (which use the spec directly)
/// compiles none of them.
fn tool_impl(tool: &Tool, tool_ty: &Ident, call: &TokenStream) -> TokenStream {
    let k = &tool.krate;
    let p = k.join("__private");
    let mut methods = Vec::new();
    if tool.timeout_ms.is_some() {
        methods.push(quote! {
            #[inline]
            fn timeout_ms(&self) -> ::core::option::Option<u64> { __AGENT_SPEC.timeout_ms() }
        });
    }
    if tool.exposure != Exposure::Direct {
        methods.push(quote! {
            #[inline]
            fn exposure(&self) -> #k::ToolExposure { __AGENT_SPEC.exposure() }
        });
    }
    if tool.activate_when.is_some() {
        methods.push(quote! {
            #[inline]
            fn should_activate<'life0, 'life1, 'async_trait>(
                &'life0 self,
                __agent_ctx: &'life1 #k::ActivationContext,
            ) -> #p::BoxFuture<'async_trait, bool>
            where
                'life0: 'async_trait,
                'life1: 'async_trait,
                Self: 'async_trait,
            {
                __AGENT_SPEC.should_activate(__agent_ctx)
            }
        });
    }
    if tool.approval.is_some() {
        methods.push(quote! {
            #[inline]
            fn approval(&self, __agent_args: &#p::serde_json::Value) -> #k::Approval {
                __AGENT_SPEC.approval(__agent_args)
            }
        });
    }
    if tool.on_error == OnError::FailRun {
        methods.push(quote! {
            #[inline]
            fn on_error(&self) -> #k::ErrorPolicy { __AGENT_SPEC.on_error() }
        });
    }
    if tool.title.is_some()
        || tool.read_only
        || tool.destructive
        || tool.idempotent
        || tool.open_world
    {
        methods.push(quote! {
            #[inline]
            fn annotations(&self) -> #k::ToolAnnotations { __AGENT_SPEC.annotations() }
        });
    }
    if tool.max_in_flight.is_some() || tool.exclusive.is_some() || tool.sequential {
        methods.push(quote! {
            #[inline]
            fn concurrency(&self) -> #k::ToolConcurrency { __AGENT_SPEC.concurrency() }
        });
    }
    if context_free(tool) {
        methods.push(quote! {
            #[inline]
            fn uses_context(&self) -> bool { false }
        });
    }
    if tool.validate_output.is_some() {
        methods.push(quote! {
            #[inline]
            fn validate_output(&self, __agent_output: &[#k::Content]) -> ::core::result::Result<(), ::std::string::String> {
                __AGENT_SPEC.validate_output(__agent_output)
            }
        });
    }
    if tool.validate_progress.is_some() {
        methods.push(quote! {
            #[inline]
            fn validate_progress(&self, __agent_progress: &#p::serde_json::Value) -> ::core::result::Result<(), ::std::string::String> {
                __AGENT_SPEC.validate_progress(__agent_progress)
            }
        });
    }
    quote! {
        impl #k::Tool for #tool_ty {
            #[inline]
            fn name(&self) -> &str { __AGENT_SPEC.name() }

            #[inline]
            fn description(&self) -> &str { __AGENT_SPEC.description() }

            #[inline]
            fn schema(&self) -> #p::serde_json::Value { __AGENT_SPEC.schema() }

            #[inline]
            fn call<'life0, 'life1, 'life2, 'async_trait>(
                &'life0 self,
                __agent_args: &'life1 #p::serde_json::Value,
                __agent_ctx: &'life2 #k::ToolContext,
            ) -> #p::BoxFuture<'async_trait, #k::AgentResult<::std::vec::Vec<#k::Content>>>
            where
                'life0: 'async_trait,
                'life1: 'async_trait,
                'life2: 'async_trait,
                Self: 'async_trait,
            {
                #call
            }

            #[inline]
            fn metadata(&self) -> #k::ToolMetadata { __AGENT_SPEC.metadata() }

            #[inline]
            fn output_schema(&self) -> ::core::option::Option<#p::serde_json::Value> {
                __AGENT_SPEC.output_schema()
            }

            #(#methods)*
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

/// A free fn's tool type as a `Tool`, through its spec (`ToolRoute`) rather than an impl
/// of its own; its `StaticTool` impl when `ToolRun` does not give it (a `call` of its
/// own); its registration when `register` is given; its `Debug`.
fn free_tool_items(
    tool: &Tool,
    ident: &Ident,
    name: &Trees,
    call: Option<&TokenStream>,
) -> TokenStream {
    let k = &tool.krate;
    let p = k.join("__private");
    let static_tool = call.map(|call| {
        quote! {
            impl #p::StaticTool for #ident {
                const NAME: &'static str = #name;
                const SPEC: &'static #p::ToolSpec = &__AGENT_SPEC;
                const CALL: #p::CallFn = #call;
            }
        }
    });
    let registration = tool.register.map(|span| {
        registration(
            k,
            span,
            name,
            &tool.tags,
            &quote!(#p::static_tool::<#ident>),
        )
    });
    let debug = debug_impl(ident);
    quote! {
        impl #p::ToolRoute for #ident {
            type Route = #p::ViaSpec;
        }
        #static_tool
        #registration
        #debug
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
            #krate::RegisteredTool::new(
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

/// The tool type of a free fn: a braced struct named like the fn, so it lives in the type
/// namespace only and the fn stays callable.
pub fn free_struct(tool: &Tool, ident: &Ident, vis: &syn::Visibility) -> TokenStream {
    let doc = format!(
        "The tool `{}` made by `#[tool]` from the fn of the same name: register it with \
         `set.register_tool({} {{}})`, or list the fn in `tools![]`.",
        tool.name, ident
    );
    let cfgs = &tool.cfgs;
    // Named like the fn and perhaps never used: the macro's own name (see `macro_made`).
    let ident = macro_ident(ident);
    ::quote::quote! {
        #(#cfgs)*
        #[doc = #doc]
        #vis struct #ident {}
    }
}

/// The tool type's `Debug`, written out rather than derived: a derive is an expansion of
/// its own, which the incremental cache fingerprints by position (see `spans`). Its only
/// std impl (`missing_debug_implementations`): every impl is items to check and record
/// for each tool, and the type is built as `name {}`, so it needs no `Clone` or `Default`.
fn debug_impl(ident: &Ident) -> TokenStream {
    let name = resolved(ident.unraw().to_string());
    quote! {
        #[automatically_derived]
        impl ::core::fmt::Debug for #ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(#name)
            }
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
    let parsed = syn::parse2::<RawFn>(head.into_iter().collect()).map(|mut func| {
        func.body.extend(body);
        func
    });
    let mut func: RawFn = match parsed {
        Ok(func) => func,
        Err(_) => {
            let error = syn::Error::new_spanned(
                &item,
                "`#[tool]` goes on an `async fn` (or on a method of an impl block marked \
                 `#[toolbox]`)",
            )
            .to_compile_error();
            return quote!(#error #item);
        }
    };
    let param_attrs = valid::strip_param_attrs(&mut func.sig);
    let RawFn {
        attrs,
        vis,
        sig,
        body,
    } = &func;
    let emitted_fn = quote!(#(#attrs)* #vis #sig #body);
    match valid::check(args.clone(), &func, &param_attrs, Place::Free) {
        Ok(mut tool) => {
            let ident = &sig.ident;
            let tool_struct = free_struct(&tool, ident, vis);
            let impls = anchored_impls(&mut tool, ident.span(), Target::Free { ident });
            quote!(#emitted_fn #tool_struct #impls)
        }
        Err(errors) => {
            let stand_in = if sig.receiver().is_some() {
                TokenStream::new()
            } else {
                let krate = ToolAttr::parse(args, &mut Errors::default())
                    .krate
                    .map_or_else(|| quote!(::agent_core), |k| quote!(#k));
                fallback::free_tool(&krate, &sig.ident, vis)
            };
            quote!(#errors #emitted_fn #stand_in)
        }
    }
}

#[cfg(test)]
mod tests {
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
