//! The code a valid tool expands to.
//!
//! Beside the fn (kept as written, less its parameter attributes) come the tool type and,
//! inside `const _: () = { ... };` so no name leaks, the hidden args struct, the
//! `TypedTool` impl and, for free fns, the `StaticTool` impl `tools![]` reads. That code
//! is resolved as the user's and free of desugarings and macro calls, so that an edit
//! does not re-check every later tool (see `spans`).
//!
//! It is also small, since every line of it is compiled once per tool: what does not
//! depend on the tool is a fn in `agent_core::__private`, generic in a parameter or
//! output type at most (so every tool with a parameter of that type shares it), and what
//! a tool only describes is data (constants, a table of fields) read by one fn.

use crate::ast::RawFn;
use crate::attr::{ApprovalAttr, DefaultAttr, Exposure, OnError, ToolAttr};
use crate::errors::Errors;
use crate::fallback;
use crate::spans::generated_item;
use crate::valid::{self, ModelParam, Param, Place, Tool};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, Type};

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

/// The `const _: () = { ... };` block with every impl of one tool.
pub fn impls(tool: &Tool, target: Target<'_>) -> TokenStream {
    let fields: Vec<ArgField<'_>> = tool
        .params
        .iter()
        .filter_map(|param| Some(ArgField::new(param, param.model.as_ref()?)))
        .collect();
    let constants = constants(tool);
    let args = args_struct(tool, &fields);
    let typed_tool = typed_tool(tool, &target);
    let static_tool = match target {
        Target::Free { ident } => static_tool(tool, ident),
        Target::Method { .. } => TokenStream::new(),
    };
    let cfgs = &tool.cfgs;
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        const _: () = {
            #constants
            #args
            #typed_tool
            #static_tool
        };
    }
}

/// The tool's name, description and metadata as constants. Macro calls stay in
/// constants of their own: each is an expansion that the incremental cache fingerprints
/// by position (see `spans`).
fn constants(tool: &Tool) -> TokenStream {
    let name = &tool.name;
    let description = &tool.description;
    let origin = match &tool.origin {
        Some(o) => quote!(#o),
        None => quote!(::core::env!("CARGO_PKG_NAME")),
    };
    let version = match &tool.version {
        Some(v) => quote!(#v),
        None => quote!(::core::env!("CARGO_PKG_VERSION")),
    };
    quote! {
        const __AGENT_NAME: &str = #name;
        const __AGENT_DESCRIPTION: &str = #description;
        const __AGENT_ORIGIN: &str = #origin;
        const __AGENT_VERSION: &str = #version;
        const __AGENT_SCHEMA_ID: &str = ::core::concat!(::core::module_path!(), "::__AgentToolArgs");
    }
}

/// A parameter the model fills, with the names its generated code uses.
struct ArgField<'a> {
    param: &'a Param,
    model: &'a ModelParam,
    /// The property's name in the schema and the JSON.
    wire_name: String,
    /// The fn giving its default, when it has one.
    default_fn: Ident,
    /// The local its decoded value waits in.
    slot: Ident,
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
            default_fn: format_ident!("__agent_default_{}", index),
            slot: format_ident!("__agent_slot_{}", index),
        }
    }

    fn ty(&self) -> &Type {
        &self.param.ty
    }
}

/// The hidden args struct: its fields, its schema (a table read by one shared fn) and
/// its decoder (a small visitor whose keys and values are decoded by shared code).
///
/// Written out, not derived: a property's schema and a field's decoding are then shared
/// by every tool with a parameter of that type (the derives add a type and impls per
/// field, per tool).
fn args_struct(tool: &Tool, fields: &[ArgField<'_>]) -> TokenStream {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    let struct_fields = fields.iter().map(|f| {
        let (field, ty) = (&f.model.field, f.ty());
        let doc = f.model.description.iter();
        quote!(#(#[doc = #doc])* #field: #ty)
    });
    let default_fns = fields.iter().filter_map(default_fn);
    let field_schemas = fields.iter().map(|f| field_schema(&p, f));
    let wire_names = fields.iter().map(|f| &f.wire_name);
    let decoder = decoder(&p, fields);
    quote! {
        pub struct __AgentToolArgs {
            #(#struct_fields,)*
        }

        #(#default_fns)*

        const __AGENT_FIELDS: &[&str] = &[#(#wire_names),*];
        static __AGENT_FIELD_SCHEMAS: &[#p::FieldSchema] = &[#(#field_schemas),*];

        // Only the bounds need these: the tool builds its schema from the table.
        impl #p::schemars::JsonSchema for __AgentToolArgs {
            #[inline]
            fn schema_name() -> #p::Cow<'static, str> {
                #p::Cow::Borrowed("__AgentToolArgs")
            }

            #[inline]
            fn schema_id() -> #p::Cow<'static, str> {
                #p::Cow::Borrowed(__AGENT_SCHEMA_ID)
            }

            #[inline]
            fn json_schema(generator: &mut #p::schemars::SchemaGenerator) -> #p::schemars::Schema {
                #p::args_object_schema(generator, __AGENT_FIELD_SCHEMAS)
            }

            #[inline]
            fn inline_schema() -> bool {
                false
            }
        }

        #decoder
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
fn field_schema(p: &TokenStream, f: &ArgField<'_>) -> TokenStream {
    let ty = f.ty();
    let schema_fn = quote_spanned!(ty.span()=> <#ty as #p::ModelArg>::__agent_schema);
    let name = &f.wire_name;
    let optional = f.model.default.is_some() || f.model.optional;
    let description = f.model.description.as_deref().unwrap_or("");
    let default = match &f.model.default {
        Some(_) => {
            let default_fn = &f.default_fn;
            quote! {
                ::core::option::Option::Some(|| {
                    #[allow(unused_imports)]
                    use #p::NoDefaultValue as _;
                    #p::DefaultValue(#default_fn()).to_schema_value()
                })
            }
        }
        None => quote!(::core::option::Option::None),
    };
    quote! {
        #p::FieldSchema {
            name: #name,
            optional: #optional,
            schema: #schema_fn,
            description: #description,
            default: #default,
        }
    }
}

/// The args struct's `Deserialize`: a visitor reading the map into one slot per field.
/// The keys are matched by the shared `FieldSeed` and each value decoded by `ModelArg`
/// (shared by every tool with a parameter of that type, and spanned at the type, so a
/// type that cannot be a parameter gives one error, at its own tokens); only the slots
/// are per tool.
fn decoder(p: &TokenStream, fields: &[ArgField<'_>]) -> TokenStream {
    let slots = fields.iter().map(|f| {
        let (ty, slot) = (f.ty(), &f.slot);
        quote!(let mut #slot: ::core::option::Option<#ty> = ::core::option::Option::None;)
    });
    let arms = fields.iter().enumerate().map(|(position, f)| {
        let (ty, slot, wire_name) = (f.ty(), &f.slot, &f.wire_name);
        quote_spanned! {ty.span()=>
            #position => {
                if let ::core::result::Result::Err(__agent_error) =
                    <#ty as #p::ModelArg>::__agent_next_field(&mut __agent_map, &mut #slot, #wire_name)
                {
                    return ::core::result::Result::Err(__agent_error);
                }
            }
        }
    });
    let finals = fields.iter().map(|f| {
        let field = &f.model.field;
        let value = field_value(p, f);
        quote!(#field: #value)
    });
    quote! {
        impl<'de> #p::serde::Deserialize<'de> for __AgentToolArgs {
            fn deserialize<__AgentD: #p::serde::Deserializer<'de>>(
                __agent_deserializer: __AgentD,
            ) -> ::core::result::Result<Self, __AgentD::Error> {
                // A map, not a struct: the arguments are a JSON object, and serde_json's
                // `deserialize_struct` would also instantiate a decoder for arrays.
                __agent_deserializer.deserialize_map(__AgentVisitor)
            }
        }

        struct __AgentVisitor;

        impl<'de> #p::serde::de::Visitor<'de> for __AgentVisitor {
            type Value = __AgentToolArgs;

            fn expecting(&self, __agent_f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                __agent_f.write_str("struct __AgentToolArgs")
            }

            fn visit_map<__AgentA: #p::serde::de::MapAccess<'de>>(
                self,
                mut __agent_map: __AgentA,
            ) -> ::core::result::Result<__AgentToolArgs, __AgentA::Error> {
                #(#slots)*
                loop {
                    match __agent_map.next_key_seed(#p::FieldSeed(__AGENT_FIELDS)) {
                        ::core::result::Result::Ok(::core::option::Option::Some(__agent_key)) => match __agent_key {
                            #(#arms)*
                            _ => {}
                        },
                        ::core::result::Result::Ok(::core::option::Option::None) => break,
                        ::core::result::Result::Err(__agent_error) => return ::core::result::Result::Err(__agent_error),
                    }
                }
                ::core::result::Result::Ok(__AgentToolArgs { #(#finals,)* })
            }
        }
    }
}

/// A field's value once the map is read: its slot, else its default, else `None` for an
/// `Option` and the "missing field" error for anything else.
fn field_value(p: &TokenStream, f: &ArgField<'_>) -> TokenStream {
    let (ty, slot, wire_name, default_fn) = (f.ty(), &f.slot, &f.wire_name, &f.default_fn);
    match (&f.model.default, f.model.optional) {
        (Some(_), _) => quote! {
            match #slot {
                ::core::option::Option::Some(__agent_value) => __agent_value,
                ::core::option::Option::None => #default_fn(),
            }
        },
        (None, true) => quote!(::core::option::Option::unwrap_or_default(#slot)),
        (None, false) => quote_spanned! {ty.span()=>
            match <#ty as #p::ModelArg>::__agent_take(#slot, #wire_name) {
                ::core::result::Result::Ok(__agent_value) => __agent_value,
                ::core::result::Result::Err(__agent_error) => return ::core::result::Result::Err(__agent_error),
            }
        },
    }
}

/// The `TypedTool` impl: name, description, the call, the cached schemas, and the
/// optional methods the attribute's keys override.
fn typed_tool(tool: &Tool, target: &Target<'_>) -> TokenStream {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    let tool_ty = match target {
        Target::Free { ident } => *ident,
        Target::Method { tool_ty, .. } => *tool_ty,
    };
    let output = &tool.output;
    let call_body = call_body(tool, target);
    let methods = optional_methods(tool);
    let requirements = &tool.requirements;
    quote! {
        impl #k::TypedTool for #tool_ty {
            type Args = __AgentToolArgs;
            type Output = #output;

            fn name(&self) -> &'static str { __AGENT_NAME }

            fn description(&self) -> &'static str { __AGENT_DESCRIPTION }

            fn call_typed<'life0, 'life1, 'async_trait>(
                &'life0 self,
                __agent_args: Self::Args,
                __agent_ctx: &'life1 #k::ToolContext,
            ) -> #p::BoxFuture<'async_trait, #k::AgentResult<Self::Output>>
            where
                'life0: 'async_trait,
                'life1: 'async_trait,
                Self: 'async_trait,
            {
                #call_body
            }

            fn args_schema(&self) -> &'static #k::ArgsSchema {
                static __AGENT_SCHEMA: #p::OnceLock<#k::ArgsSchema> = #p::OnceLock::new();
                #p::cached_args_schema(&__AGENT_SCHEMA, __AGENT_FIELD_SCHEMAS)
            }

            fn output_schema(&self) -> ::core::option::Option<#p::serde_json::Value> {
                #[allow(unused_imports)]
                use #p::{NoOutputSchema as _, SchemaOfOutput as _};
                static __AGENT_OUTPUT: #p::OnceLock<::core::option::Option<#p::serde_json::Value>> = #p::OnceLock::new();
                #p::cached_output_schema(
                    &__AGENT_OUTPUT,
                    (&#p::OutputSchema::<#output>::new()).__agent_output_schema(),
                )
            }

            fn metadata(&self) -> #k::ToolMetadata {
                #p::metadata(__AGENT_NAME, __AGENT_DESCRIPTION, __AGENT_ORIGIN, __AGENT_VERSION, &[#(#requirements),*])
            }

            #(#methods)*
        }
    }
}

/// The body of `call_typed`: the runtime-supplied parameters, then the user's fn.
///
/// Spanned at the fn's name, so rustc names the fn when its future is not `Send`. No
/// `async` block, `.await` or `?`: each is a desugaring that the incremental cache
/// fingerprints by position (see `spans`); `finish` is one small generic future instead.
fn call_body(tool: &Tool, target: &Target<'_>) -> TokenStream {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    let (call, fn_span) = match target {
        Target::Free { ident } => (quote!(#ident), ident.span()),
        Target::Method { method, .. } => (quote!(self.0.#method), method.span()),
    };
    let field_bindings = tool.params.iter().filter_map(|param| {
        let field = &param.model.as_ref()?.field;
        let binding = &param.binding;
        Some(quote!(#field: #binding))
    });
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
    let bindings = tool.params.iter().map(|param| &param.binding);
    let finish = finish(tool);
    quote_spanned! {fn_span=>
        let __AgentToolArgs { #(#field_bindings,)* } = __agent_args;
        #(#injected)*
        let __agent_future: #p::BoxFuture<'async_trait, #k::AgentResult<Self::Output>> =
            ::std::boxed::Box::pin(#p::finish(#call(#(#bindings),*), |__agent_output| #finish));
        __agent_future
    }
}

/// The user's output as the call's result: `Ok` as it is, an error converted to a
/// `ToolError` (keeping its kind when it has one), spanned at the return type.
fn finish(tool: &Tool) -> TokenStream {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    if !tool.returns_result {
        return quote!(::core::result::Result::Ok(__agent_output));
    }
    let convert = quote_spanned! {tool.return_span=>
        (&#p::ErrorProbe::of(&__agent_error)).__agent_tag().convert(__agent_error)
    };
    quote! {
        match __agent_output {
            ::core::result::Result::Ok(__agent_value) => ::core::result::Result::Ok(__agent_value),
            ::core::result::Result::Err(__agent_error) => {
                #[allow(unused_imports)]
                use #p::{DisplayToolError as _, KeepToolError as _};
                ::core::result::Result::Err(#k::AgentError::from(#convert))
            }
        }
    }
}

/// The `TypedTool` methods the keys override; the others keep their defaults.
fn optional_methods(tool: &Tool) -> Vec<TokenStream> {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    let mut methods = Vec::new();
    if let Some(ms) = tool.timeout_ms {
        methods.push(quote! {
            fn timeout_ms(&self) -> ::core::option::Option<u64> { ::core::option::Option::Some(#ms) }
        });
    }
    methods.extend(exposure_methods(tool));
    methods.extend(approval_method(tool));
    if tool.on_error == OnError::FailRun {
        methods.push(quote! {
            fn on_error(&self) -> #k::ErrorPolicy { #k::ErrorPolicy::FailRun }
        });
    }
    methods.extend(annotations_method(tool));
    methods.extend(concurrency_method(tool));
    if let Some(path) = &tool.validate_output {
        let f = quote_spanned!(path.span()=> let __agent_fn: #p::ValidateOutputFn = #path;);
        methods.push(quote! {
            fn validate_output(&self, __agent_output: &[#k::Content]) -> ::core::result::Result<(), ::std::string::String> {
                #f
                __agent_fn(__agent_output)
            }
        });
    }
    if let Some(path) = &tool.validate_progress {
        let f = quote_spanned!(path.span()=> let __agent_fn: #p::ValidateProgressFn = #path;);
        methods.push(quote! {
            fn validate_progress(&self, __agent_progress: &#p::serde_json::Value) -> ::core::result::Result<(), ::std::string::String> {
                #f
                __agent_fn(__agent_progress)
            }
        });
    }
    methods
}

/// `exposure`, and `should_activate` for a deferred tool.
fn exposure_methods(tool: &Tool) -> Vec<TokenStream> {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    let mut methods = Vec::new();
    match tool.exposure {
        Exposure::Direct => {}
        Exposure::Deferred => methods
            .push(quote!(fn exposure(&self) -> #k::ToolExposure { #k::ToolExposure::Deferred })),
        Exposure::Hidden => methods
            .push(quote!(fn exposure(&self) -> #k::ToolExposure { #k::ToolExposure::Hidden })),
    }
    if let Some(path) = &tool.activate_when {
        let active = quote_spanned! {path.span()=>
            let __agent_active: bool = #path(__agent_ctx).await;
        };
        methods.push(quote! {
            fn should_activate<'life0, 'life1, 'async_trait>(
                &'life0 self,
                __agent_ctx: &'life1 #k::ActivationContext,
            ) -> #p::BoxFuture<'async_trait, bool>
            where
                'life0: 'async_trait,
                'life1: 'async_trait,
                Self: 'async_trait,
            {
                #p::Box::pin(async move {
                    #active
                    __agent_active
                })
            }
        });
    }
    methods
}

/// `approval`: every call, or a fn deciding per call.
fn approval_method(tool: &Tool) -> Option<TokenStream> {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    Some(match tool.approval.as_ref()? {
        ApprovalAttr::Always => quote! {
            fn approval(&self, _: &#p::serde_json::Value) -> #k::Approval { #k::Approval::Required }
        },
        ApprovalAttr::Path(path) => {
            let f = quote_spanned!(path.span()=> let __agent_fn: #p::ApprovalFn = #path;);
            quote! {
                fn approval(&self, __agent_args: &#p::serde_json::Value) -> #k::Approval {
                    #f
                    #k::Approval::from(__agent_fn(__agent_args))
                }
            }
        }
    })
}

/// `annotations`, when a title or a hint is given.
fn annotations_method(tool: &Tool) -> Option<TokenStream> {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    let (r, d, i, o) = (
        tool.read_only,
        tool.destructive,
        tool.idempotent,
        tool.open_world,
    );
    if tool.title.is_none() && !(r || d || i || o) {
        return None;
    }
    let title = option(tool.title.as_ref());
    Some(quote! {
        fn annotations(&self) -> #k::ToolAnnotations {
            #p::annotations(#title, #r, #d, #i, #o)
        }
    })
}

/// `concurrency`, when a limit is given.
fn concurrency_method(tool: &Tool) -> Option<TokenStream> {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    if tool.max_in_flight.is_none() && tool.exclusive.is_none() && !tool.sequential {
        return None;
    }
    let max = option(tool.max_in_flight.as_ref());
    let group = option(tool.exclusive.as_ref());
    let seq = tool.sequential;
    Some(quote! {
        fn concurrency(&self) -> #k::ToolConcurrency { #p::concurrency(#max, #group, #seq) }
    })
}

/// `Some(value)` or `None`, as an expression.
fn option(value: Option<&impl quote::ToTokens>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// The `StaticTool` impl `tools![]` reads, and the registration when `register` is given.
fn static_tool(tool: &Tool, ident: &Ident) -> TokenStream {
    let k = &tool.krate;
    let p = quote!(#k::__private);
    let registration = tool.register.map(|span| {
        registration(
            k,
            span,
            &quote!(__AGENT_NAME),
            &tool.tags,
            &quote!(#p::instance::<#ident>),
        )
    });
    quote! {
        impl #p::StaticTool for #ident {
            const NAME: &'static str = __AGENT_NAME;
            fn instance() -> Self { #ident {} }
        }
        #registration
    }
}

/// The item adding a tool to the link-time registry: its name, where `register` was
/// written (`span`), its tags, and `make`, a `fn() -> Arc<dyn Tool>`.
pub fn registration(
    krate: &TokenStream,
    span: proc_macro2::Span,
    name: &TokenStream,
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
/// namespace only and the fn stays callable; then its impls of the std traits.
pub fn free_struct(tool: &Tool, ident: &Ident, vis: &syn::Visibility) -> [TokenStream; 2] {
    let doc = format!(
        "The tool `{}` made by `#[tool]` from the fn of the same name: register it with \
         `set.register_tool({} {{}})`, or list the fn in `tools![]`.",
        tool.name, ident
    );
    let cfgs = &tool.cfgs;
    let name = ident.unraw().to_string();
    // Written out rather than derived: a derive is an expansion of its own, which the
    // incremental cache fingerprints by position (see `spans`). `#[inline]`, so a tool
    // whose value is never printed, cloned or defaulted compiles none of them.
    let tool_struct = quote! {
        #(#cfgs)*
        #[doc = #doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}
    };
    let std_impls = quote! {
        #(#cfgs)*
        const _: () = {
            #[automatically_derived]
            impl ::core::fmt::Debug for #ident {
                #[inline]
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(#name)
                }
            }
            #[automatically_derived]
            impl ::core::clone::Clone for #ident {
                #[inline]
                fn clone(&self) -> Self {
                    *self
                }
            }
            #[automatically_derived]
            impl ::core::marker::Copy for #ident {}
            #[automatically_derived]
            impl ::core::default::Default for #ident {
                #[inline]
                fn default() -> Self {
                    Self {}
                }
            }
        };
    };
    [tool_struct, std_impls]
}

/// `#[tool]` on an item: the fn, its tool type and impls, or the fallback with errors.
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: RawFn = match syn::parse2(item.clone()) {
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
    let krate = ToolAttr::parse(args.clone(), &mut Errors::default())
        .krate
        .map_or_else(|| quote!(::agent_core), |k| quote!(#k));
    let RawFn {
        attrs,
        vis,
        sig,
        body,
    } = &func;
    let emitted_fn = quote!(#(#attrs)* #vis #sig #body);
    match valid::check(args, &func, &param_attrs, Place::Free) {
        Ok(tool) => {
            let ident = &sig.ident;
            let [tool_struct, struct_impls] = free_struct(&tool, ident, vis);
            let impls = impls(&tool, Target::Free { ident });
            let struct_impls = generated_item(struct_impls, ident.span());
            let impls = generated_item(impls, ident.span());
            quote!(#emitted_fn #tool_struct #struct_impls #impls)
        }
        Err(errors) => {
            let stand_in = if sig.receiver().is_some() {
                TokenStream::new()
            } else {
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
