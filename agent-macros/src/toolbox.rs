//! `#[toolbox]` on an inherent impl block: each method marked `#[tool]` (taking `&self`)
//! becomes a tool type holding an `Arc` of the impl's type, so a tool can hold a database
//! pool or an HTTP client, and the impl gains `fn into_toolset(self: Arc<Self>) -> ToolSet`.
//!
//! Naming rule: the tool type of method `search` in `impl Library` is `LibrarySearchTool`
//! (the type's name, then the method's in UpperCamelCase, then `Tool`); it is a tuple
//! struct with the method's visibility, built as `LibrarySearchTool(Arc::new(library))`.
//!
//! Registration needs a value of the type, which a method alone cannot make: the impl is
//! registered as a whole, `#[toolbox(register)]` with `Default::default()` or
//! `#[toolbox(register = path::to::constructor)]`, and every tool of it shares the one
//! value, made on first use.

use crate::ast::{self, RawFn};
use crate::errors::Errors;
use crate::expand::{self, Target};
use crate::spans::{Trees, macro_made, spanned_at};
use crate::valid::{self, Place, Tool};
use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::SpannedValue;
use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use std::collections::HashSet;
use syn::spanned::Spanned;
use syn::{Expr, Ident, ImplItem, ItemImpl, LitStr, Meta, Path, Type, Visibility};

/// The keys of `#[toolbox(...)]`.
#[derive(Default, FromMeta)]
struct ToolboxAttr {
    /// `crate = path`.
    #[darling(rename = "crate")]
    krate: Option<Path>,
    /// `register` or `register = path::to::constructor`.
    register: Option<SpannedValue<ToolboxRegister>>,
    /// `tags = [...]`, for every tool of the impl.
    tags: Option<Vec<LitStr>>,
}

/// How a registered toolbox makes its value.
enum ToolboxRegister {
    /// `Default::default()`.
    Default,
    /// A `fn() -> Self`.
    Constructor(Path),
}

impl FromMeta for ToolboxRegister {
    fn from_word() -> darling::Result<Self> {
        Ok(Self::Default)
    }

    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Path(path) if path.qself.is_none() => Ok(Self::Constructor(path.path.clone())),
            Expr::Group(group) => Self::from_expr(&group.expr),
            _ => Err(darling::Error::custom(
                "expected `register` alone (the type's `Default`), or `register = \
                 path::to::constructor` naming a `fn() -> Self`",
            )
            .with_span(expr)),
        }
    }
}

/// One `#[tool]` method, checked.
struct ToolMethod {
    tool: Tool,
    method: Ident,
    tool_ty: Ident,
    vis: Visibility,
}

/// The impl as the macro reads it.
struct Toolbox {
    krate: TokenStream,
    self_ty: Type,
    self_name: String,
    /// The path of the first `#[tool]` attribute (see [`keep_tool_import`]).
    tool_path: Option<Path>,
    tools: Vec<ToolMethod>,
    register: Option<SpannedValue<ToolboxRegister>>,
    tags: Vec<LitStr>,
}

/// Expands `#[toolbox]`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut imp: ItemImpl = match syn::parse2(item.clone()) {
        Ok(imp) => imp,
        Err(_) => {
            let error = syn::Error::new_spanned(
                &item,
                "`#[toolbox]` goes on an impl block: `#[toolbox] impl MyTools { ... }`",
            )
            .to_compile_error();
            return quote!(#error #item);
        }
    };
    let mut errors = Errors::default();
    let attr = parse_attr(args, &mut errors);
    let self_name = check_impl(&imp, &mut errors);
    let krate = match &attr.krate {
        Some(path) => quote!(#path),
        None => quote!(::toolwright_core),
    };
    let (tool_path, tools) = take_tools(&mut imp, &krate, &self_name, &mut errors);
    check_registration(&attr, &tools, &mut errors);
    let mut toolbox = Toolbox {
        krate,
        self_ty: (*imp.self_ty).clone(),
        self_name,
        tool_path,
        tools,
        register: attr.register,
        tags: attr.tags.unwrap_or_default(),
    };
    match errors.finish() {
        Ok(()) => emit(&imp, &mut toolbox),
        Err(errors) => emit_fallback(errors, &imp, &toolbox),
    }
}

/// `#[toolbox(...)]`'s keys; a mistake is reported and the defaults used.
fn parse_attr(args: TokenStream, errors: &mut Errors) -> ToolboxAttr {
    if args.is_empty() {
        return ToolboxAttr::default();
    }
    match NestedMeta::parse_meta_list(args)
        .map_err(darling::Error::from)
        .and_then(|items| ToolboxAttr::from_list(&items))
    {
        Ok(attr) => attr,
        Err(e) => {
            errors.darling(e);
            ToolboxAttr::default()
        }
    }
}

/// The impl is inherent, not generic, for a named type; returns the type's name.
fn check_impl(imp: &ItemImpl, errors: &mut Errors) -> String {
    if let Some((path, _)) = &imp.trait_ {
        errors.error(
            path,
            "`#[toolbox]` goes on an inherent impl (`impl MyTools { ... }`), not on a trait impl",
        );
    }
    if !imp.generics.params.is_empty() {
        errors.error(
            &imp.generics,
            "a toolbox cannot be generic: write the impl for a concrete type",
        );
    }
    match ast::last_segment(&imp.self_ty) {
        Some(seg) => seg.ident.to_string(),
        None => {
            errors.error(
                &imp.self_ty,
                "`#[toolbox]` needs a named type: `impl MyTools { ... }`",
            );
            String::new()
        }
    }
}

/// Takes the `#[tool]` attributes off the methods (before rustc resolves them) and
/// checks each method; two tools of one impl may not share a name.
fn take_tools(
    imp: &mut ItemImpl,
    krate: &TokenStream,
    self_name: &str,
    errors: &mut Errors,
) -> (Option<Path>, Vec<ToolMethod>) {
    let mut tool_path: Option<Path> = None;
    let mut tools = Vec::new();
    let mut names = HashSet::new();
    for item in &mut imp.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(index) = method.attrs.iter().position(is_tool_attr) else {
            continue;
        };
        let attr = method.attrs.remove(index);
        tool_path.get_or_insert_with(|| attr.path().clone());
        let args = match &attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens.clone(),
            Meta::NameValue(_) => {
                errors.error(&attr, "write `#[tool]` or `#[tool(key = value, ...)]`");
                continue;
            }
        };
        let param_attrs = valid::strip_param_attrs(&mut method.sig);
        let raw = RawFn {
            attrs: method.attrs.clone(),
            vis: method.vis.clone(),
            sig: method.sig.clone(),
            body: TokenStream::new(),
        };
        let mut tool = match valid::check(args, &raw, &param_attrs, Place::Toolbox) {
            Ok(tool) => tool,
            Err(tool_errors) => {
                errors.tokens(tool_errors);
                continue;
            }
        };
        if !tool.krate_given {
            // The toolbox's path (its `crate = path`, or the default): resolved as given.
            tool.krate = Trees::from(krate.clone());
            tool.krate_given = true;
        }
        if !names.insert(tool.name.clone()) {
            errors.error_at(
                tool.name_span,
                format!(
                    "this toolbox has two tools named `{}`: give one another name with \
                     `#[tool(name = \"...\")]`",
                    tool.name
                ),
            );
        }
        let tool_ty = format_ident!(
            "{}{}Tool",
            self_name,
            upper_camel(&method.sig.ident.to_string())
        );
        tools.push(ToolMethod {
            tool,
            method: method.sig.ident.clone(),
            tool_ty,
            vis: method.vis.clone(),
        });
    }
    (tool_path, tools)
}

/// Tags, on the impl or on a method, label the tools of a registered toolbox.
fn check_registration(attr: &ToolboxAttr, tools: &[ToolMethod], errors: &mut Errors) {
    if let Some(tags) = &attr.tags {
        valid::check_tags(tags, errors);
    }
    if attr.register.is_some() {
        return;
    }
    let tagged = attr
        .tags
        .iter()
        .flatten()
        .chain(tools.iter().flat_map(|t| &t.tool.tags));
    if let Some(tag) = tagged.into_iter().next() {
        errors.error(
            tag,
            "`tags` label registered tools, to filter the registry: add `register` to \
             `#[toolbox(...)]`, or remove `tags`",
        );
    }
}

/// The impl as written, the tool types and their impls, `into_toolset` and the
/// registrations.
fn emit(imp: &ItemImpl, toolbox: &mut Toolbox) -> TokenStream {
    let mut out = quote!(#imp);
    out.extend(keep_tool_import(toolbox));
    for tool in &toolbox.tools {
        out.extend(tool_type(toolbox, tool));
    }
    for ToolMethod {
        tool,
        method,
        tool_ty,
        ..
    } in &mut toolbox.tools
    {
        out.extend(expand::anchored_impls(
            tool,
            method.span(),
            Target::Method { tool_ty, method },
        ));
    }
    out.extend(into_toolset(toolbox, &toolbox.tools));
    out.extend(registrations(toolbox));
    out
}

/// What an invalid toolbox expands to: the errors, the impl, and an empty `into_toolset`
/// so that its callers still compile.
fn emit_fallback(errors: TokenStream, imp: &ItemImpl, toolbox: &Toolbox) -> TokenStream {
    let keep_import = keep_tool_import(toolbox);
    let into_toolset = into_toolset(toolbox, &[]);
    quote! {
        #errors
        #keep_import
        #imp
        #into_toolset
    }
}

/// A `use` of the first `#[tool]` attribute's path: the attributes are consumed before
/// rustc resolves them, and the user's `use toolwright_core::tool` must not look unused.
fn keep_tool_import(toolbox: &Toolbox) -> Option<TokenStream> {
    toolbox
        .tool_path
        .as_ref()
        .map(|path| macro_made(quote!(const _: () = { use #path as _; };)))
}

/// The tool type of one method: a tuple struct holding the shared value.
fn tool_type(toolbox: &Toolbox, tool: &ToolMethod) -> TokenStream {
    let Toolbox {
        krate,
        self_ty,
        self_name,
        ..
    } = toolbox;
    let ToolMethod {
        tool,
        method,
        tool_ty,
        vis,
    } = tool;
    let doc = format!(
        "The tool `{}`: the method `{}::{}` made a tool by `#[toolbox]`. Build it with \
         `{}(Arc::new(value))`, or take every tool of the impl with `into_toolset`.",
        tool.name, self_name, method, tool_ty
    );
    let cfgs = &tool.cfgs;
    // The name is made here (`format_ident!`), so it is the macro's own and an unused
    // type is not linted (see `macro_made`).
    quote! {
        #(#cfgs)*
        #[doc = #doc]
        #[derive(Clone)]
        #vis struct #tool_ty(#vis #krate::__private::Arc<#self_ty>);
    }
}

/// `into_toolset`, with the given tools (none for the fallback).
fn into_toolset(toolbox: &Toolbox, tools: &[ToolMethod]) -> TokenStream {
    let Toolbox { krate, self_ty, .. } = toolbox;
    let p = quote!(#krate::__private);
    let listed = if toolbox.tools.is_empty() {
        "none".to_owned()
    } else {
        toolbox
            .tools
            .iter()
            .map(|t| format!("`{}`", t.tool.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let doc = format!("The `#[tool]` methods of this impl as a `ToolSet`: {listed}.");
    let entries = tools.iter().map(|ToolMethod { tool, tool_ty, .. }| {
        let cfgs = &tool.cfgs;
        quote! {
            #(#cfgs)*
            __agent_tools.push(#p::Arc::new(#tool_ty(#p::Arc::clone(&self))) as #p::Arc<dyn #krate::Tool>);
        }
    });
    // Made here, at the call site: an `into_toolset` never called and a `mut` binding no
    // tool pushes to are the macro's own, and not linted (see `macro_made`).
    quote! {
        impl #self_ty {
            #[doc = #doc]
            pub fn into_toolset(self: #p::Arc<Self>) -> #krate::ToolSet {
                let mut __agent_tools: ::std::vec::Vec<#p::Arc<dyn #krate::Tool>> = ::std::vec::Vec::new();
                #(#entries)*
                #p::toolbox_set(__agent_tools)
            }
        }
    }
}

/// For `#[toolbox(register)]`: the shared value, made on first use, and one registration
/// per tool.
fn registrations(toolbox: &Toolbox) -> Option<TokenStream> {
    let register = toolbox.register.as_ref()?;
    let Toolbox { krate, self_ty, .. } = toolbox;
    let p = quote!(#krate::__private);
    // Spanned at the key or the path, so a type without `Default` or a constructor of
    // the wrong type is reported there.
    let make = match &**register {
        ToolboxRegister::Default => {
            let default = spanned_at(quote!(#p::registered_default), register.span());
            quote!(let __agent_make: fn() -> #self_ty = #default;)
        }
        ToolboxRegister::Constructor(path) => quote_spanned! {path.span()=>
            let __agent_make: fn() -> #self_ty = #path;
        },
    };
    let entries = toolbox.tools.iter().map(
        |ToolMethod {
             tool,
             tool_ty,
             method,
             ..
         }| {
            let make_fn = format_ident!("__agent_make_{}", method);
            let mut tags = toolbox.tags.clone();
            tags.extend(tool.tags.iter().cloned());
            let cfgs = &tool.cfgs;
            let registration = expand::registration(
                krate,
                register.span(),
                &syn::LitStr::new(&tool.name, register.span()).into_token_stream(),
                &tags,
                &quote!(#make_fn),
            );
            quote! {
                #(#cfgs)*
                const _: () = {
                    fn #make_fn() -> #p::Arc<dyn #krate::Tool> {
                        #p::Arc::new(#tool_ty(__agent_toolbox()))
                    }
                    #registration
                };
            }
        },
    );
    Some(quote! {
        const _: () = {
            fn __agent_toolbox() -> #p::Arc<#self_ty> {
                static __AGENT_TOOLBOX: #p::OnceLock<#p::Arc<#self_ty>> = #p::OnceLock::new();
                #p::Arc::clone(__AGENT_TOOLBOX.get_or_init(|| {
                    #make
                    #p::Arc::new(__agent_make())
                }))
            }
            #(#entries)*
        };
    })
}

/// `#[tool]` or `#[toolwright_core::tool]`.
fn is_tool_attr(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "tool")
}

/// `get_weather` → `GetWeather`.
fn upper_camel(name: &str) -> String {
    let name = name.strip_prefix("r#").unwrap_or(name);
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}
