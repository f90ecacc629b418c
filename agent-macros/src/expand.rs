//! The code a valid tool expands to.
//!
//! Beside the fn (kept as written, less its parameter attributes) come the tool type and,
//! inside `const _: () = { ... };` so no name leaks, the hidden args struct, the
//! `TypedTool` impl and, for free fns, the `StaticTool` impl `tools![]` reads. That code
//! is resolved as the user's and free of desugarings and macro calls, so that an edit
//! does not re-check every later tool (see `spans`).

use crate::ast::RawFn;
use crate::attr::{ApprovalAttr, DefaultAttr, Exposure, OnError, ToolAttr};
use crate::errors::Errors;
use crate::fallback;
use crate::spans::generated_item;
use crate::valid::{self, Place, Tool};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

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
    let k = &tool.krate;
    let p = quote!(#k::__private);
    let (tool_ty, call, is_free, fn_span) = match target {
        Target::Free { ident } => (ident, quote!(#ident), true, ident.span()),
        Target::Method { tool_ty, method } => {
            (tool_ty, quote!(self.0.#method), false, method.span())
        }
    };
    let name = &tool.name;

    // The hidden args struct, its default fns and the bound checks at each type.
    let mut fields = Vec::new();
    let mut field_bindings = Vec::new();
    let mut default_fns = Vec::new();
    let (mut slots, mut arms, mut finals, mut wire_names) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::<String>::new());
    let mut field_schemas = Vec::new();
    let mut injected = Vec::new();
    for param in &tool.params {
        let ty = &param.ty;
        let binding = &param.binding;
        let Some(model) = &param.model else {
            injected.push(quote_spanned! {ty.span()=>
                let #binding = match <#ty as #k::FromToolContext>::from_tool_context(__agent_ctx) {
                    ::core::result::Result::Ok(__agent_value) => __agent_value,
                    ::core::result::Result::Err(__agent_error) => return #p::failed(__agent_error),
                };
            });
            continue;
        };
        let field = &model.field;
        let index = binding.to_string();
        let index = index.trim_start_matches("__agent_arg_");
        let mut attrs = Vec::new();
        if let Some(description) = &model.description {
            attrs.push(quote!(#[doc = #description]));
        }
        let default_fn = format_ident!("__agent_default_{}", index);
        match model.default.as_ref().map(|d| (d.span(), &**d)) {
            // Through a fn spanned at `default`, so a type without `Default` is reported
            // at the key that asked for it.
            Some((span, DefaultAttr::Trait)) => default_fns.push(quote_spanned! {span=>
                fn #default_fn() -> #ty { <#ty as ::core::default::Default>::default() }
            }),
            Some((_, DefaultAttr::Expr(expr))) => default_fns.push(quote_spanned! {expr.span()=>
                fn #default_fn() -> #ty { #expr }
            }),
            None => {}
        }
        // Described and decoded through `ModelArg`, so a type that cannot be a
        // parameter gives one error, at its own tokens, and not one per derive.
        let schema_fn = quote_spanned!(ty.span()=> <#ty as #p::ModelArg>::__agent_schema);
        // The decoder's arms: the value's decoding is shared by every tool with a
        // parameter of this type; only the field matching is per tool.
        let slot = format_ident!("__agent_slot_{}", index);
        let wire_name = model
            .rename
            .as_ref()
            .map_or_else(|| field.unraw().to_string(), syn::LitStr::value);
        let position = wire_names.len();
        slots.push(quote! {
            let mut #slot: ::core::option::Option<#ty> = ::core::option::Option::None;
        });
        arms.push(quote_spanned! {ty.span()=>
            #position => {
                if let ::core::result::Result::Err(__agent_error) =
                    <#ty as #p::ModelArg>::__agent_next_field(&mut __agent_map, &mut #slot, #wire_name)
                {
                    return ::core::result::Result::Err(__agent_error);
                }
            }
        });
        let value = match model.default.as_deref() {
            Some(DefaultAttr::Trait | DefaultAttr::Expr(_)) => quote! {
                match #slot {
                    ::core::option::Option::Some(__agent_value) => __agent_value,
                    ::core::option::Option::None => #default_fn(),
                }
            },
            None if model.optional => quote!(::core::option::Option::unwrap_or_default(#slot)),
            None => quote_spanned! {ty.span()=>
                match <#ty as #p::ModelArg>::__agent_take(#slot, #wire_name) {
                    ::core::result::Result::Ok(__agent_value) => __agent_value,
                    ::core::result::Result::Err(__agent_error) => return ::core::result::Result::Err(__agent_error),
                }
            },
        };
        let optional = model.default.is_some() || model.optional;
        let doc = model.description.as_deref().unwrap_or("");
        let default = match &model.default {
            Some(_) => quote! {
                ::core::option::Option::Some(|| {
                    #[allow(unused_imports)]
                    use #p::NoDefaultValue as _;
                    #p::DefaultValue(#default_fn()).to_schema_value()
                })
            },
            None => quote!(::core::option::Option::None),
        };
        field_schemas.push(quote! {
            #p::FieldSchema {
                name: #wire_name,
                optional: #optional,
                schema: #schema_fn,
                description: #doc,
                default: #default,
            }
        });
        finals.push(quote!(#field: #value));
        wire_names.push(wire_name);
        fields.push(quote! { #(#attrs)* #field: #ty });
        field_bindings.push(quote!(#field: #binding));
    }
    let bindings = tool.params.iter().map(|p| &p.binding);

    let output = &tool.output;
    let finish = if tool.returns_result {
        let span = tool.return_span;
        let convert = quote_spanned! {span=>
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
    } else {
        quote!(::core::result::Result::Ok(__agent_output))
    };

    let mut methods = Vec::new();
    if let Some(ms) = tool.timeout_ms {
        methods.push(quote! {
            fn timeout_ms(&self) -> ::core::option::Option<u64> { ::core::option::Option::Some(#ms) }
        });
    }
    let origin = match &tool.origin {
        Some(o) => quote!(#o),
        None => quote!(::core::env!("CARGO_PKG_NAME")),
    };
    let version = match &tool.version {
        Some(v) => quote!(#v),
        None => quote!(::core::env!("CARGO_PKG_VERSION")),
    };
    let requirements = &tool.requirements;
    methods.push(quote! {
        fn metadata(&self) -> #k::ToolMetadata {
            #p::metadata(__AGENT_NAME, __AGENT_DESCRIPTION, __AGENT_ORIGIN, __AGENT_VERSION, &[#(#requirements),*])
        }
    });
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
    match &tool.approval {
        None => {}
        Some(ApprovalAttr::Always) => methods.push(quote! {
            fn approval(&self, _: &#p::serde_json::Value) -> #k::Approval { #k::Approval::Required }
        }),
        Some(ApprovalAttr::Path(path)) => {
            let f = quote_spanned!(path.span()=> let __agent_fn: #p::ApprovalFn = #path;);
            methods.push(quote! {
                fn approval(&self, __agent_args: &#p::serde_json::Value) -> #k::Approval {
                    #f
                    #k::Approval::from(__agent_fn(__agent_args))
                }
            });
        }
    }
    if tool.on_error == OnError::FailRun {
        methods.push(quote! {
            fn on_error(&self) -> #k::ErrorPolicy { #k::ErrorPolicy::FailRun }
        });
    }
    if tool.title.is_some()
        || tool.read_only
        || tool.destructive
        || tool.idempotent
        || tool.open_world
    {
        let title = match &tool.title {
            Some(t) => quote!(::core::option::Option::Some(#t)),
            None => quote!(::core::option::Option::None),
        };
        let (r, d, i, o) = (
            tool.read_only,
            tool.destructive,
            tool.idempotent,
            tool.open_world,
        );
        methods.push(quote! {
            fn annotations(&self) -> #k::ToolAnnotations {
                #p::annotations(#title, #r, #d, #i, #o)
            }
        });
    }
    if tool.max_in_flight.is_some() || tool.exclusive.is_some() || tool.sequential {
        let max = match &tool.max_in_flight {
            Some(n) => quote!(::core::option::Option::Some(#n)),
            None => quote!(::core::option::Option::None),
        };
        let group = match &tool.exclusive {
            Some(g) => quote!(::core::option::Option::Some(#g)),
            None => quote!(::core::option::Option::None),
        };
        let seq = tool.sequential;
        methods.push(quote! {
            fn concurrency(&self) -> #k::ToolConcurrency { #p::concurrency(#max, #group, #seq) }
        });
    }
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

    let static_tool = match is_free {
        true => {
            let registration = tool.register.map(|span| {
                registration(
                    k,
                    span,
                    &quote!(__AGENT_NAME),
                    &tool.tags,
                    &quote!(#p::instance::<#tool_ty>),
                )
            });
            quote! {
                impl #p::StaticTool for #tool_ty {
                    const NAME: &'static str = __AGENT_NAME;
                    fn instance() -> Self { #tool_ty {} }
                }
                #registration
            }
        }
        false => TokenStream::new(),
    };
    let description = &tool.description;
    let cfgs = &tool.cfgs;
    // Spanned at the fn's name, so rustc names the fn when its future is not `Send`.
    // No `async` block, `.await` or `?`: each is a desugaring that the incremental cache
    // fingerprints by position (see `spans`); `finish` is one generic async fn instead.
    let call_body = quote_spanned! {fn_span=>
        let __AgentToolArgs { #(#field_bindings,)* } = __agent_args;
        #(#injected)*
        let __agent_future: #p::BoxFuture<'async_trait, #k::AgentResult<Self::Output>> =
            ::std::boxed::Box::pin(#p::finish(#call(#(#bindings),*), |__agent_output| #finish));
        __agent_future
    };

    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        const _: () = {
            const __AGENT_NAME: &str = #name;
            const __AGENT_DESCRIPTION: &str = #description;
            // Macro calls stay in constants of their own: each is an expansion that the
            // incremental cache fingerprints by position (see `spans`).
            const __AGENT_ORIGIN: &str = #origin;
            const __AGENT_VERSION: &str = #version;
            const __AGENT_SCHEMA_ID: &str = ::core::concat!(::core::module_path!(), "::__AgentToolArgs");

            // The schema and the decoder are written out, not derived: a property's
            // schema and a field's decoding are then shared by every tool with a
            // parameter of that type (the derives add a type and impls per field, per
            // tool), and the rest is a table read by one fn.
            pub struct __AgentToolArgs {
                #(#fields,)*
            }

            impl #p::schemars::JsonSchema for __AgentToolArgs {
                fn schema_name() -> #p::Cow<'static, str> {
                    #p::Cow::Borrowed("__AgentToolArgs")
                }

                fn schema_id() -> #p::Cow<'static, str> {
                    #p::Cow::Borrowed(__AGENT_SCHEMA_ID)
                }

                fn json_schema(generator: &mut #p::schemars::SchemaGenerator) -> #p::schemars::Schema {
                    #p::args_object_schema(generator, &[#(#field_schemas),*])
                }

                fn inline_schema() -> bool {
                    false
                }
            }

            const __AGENT_FIELDS: &[&str] = &[#(#wire_names),*];

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

            #(#default_fns)*

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
                    // The generated struct denies unknown fields itself.
                    #p::cached_args_schema(&__AGENT_SCHEMA, || {
                        #k::ArgsSchema::of::<__AgentToolArgs>().decoder_denies_unknown_fields()
                    })
                }

                fn output_schema(&self) -> ::core::option::Option<#p::serde_json::Value> {
                    #[allow(unused_imports)]
                    use #p::{NoOutputSchema as _, SchemaOfOutput as _};
                    static __AGENT_OUTPUT: #p::OnceLock<::core::option::Option<#p::serde_json::Value>> = #p::OnceLock::new();
                    #p::cached_output_schema(&__AGENT_OUTPUT, || {
                        (&#p::OutputSchema::<#output>::new()).__agent_output_schema()
                    })
                }

                #(#methods)*
            }

            #static_tool
        };
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
    // incremental cache fingerprints by position (see `spans`).
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
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(#name)
                }
            }
            #[automatically_derived]
            impl ::core::clone::Clone for #ident {
                fn clone(&self) -> Self {
                    *self
                }
            }
            #[automatically_derived]
            impl ::core::marker::Copy for #ident {}
            #[automatically_derived]
            impl ::core::default::Default for #ident {
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
