//! `#[toolbox]` on an inherent impl block: each method marked `#[tool]` (taking `&self`)
//! becomes a tool type holding an `Arc` of the impl's type, so a tool can hold a database
//! pool or an HTTP client, and the impl gains `fn into_toolset(self: Arc<Self>) -> ToolSet`.
//!
//! Naming rule: the tool type of method `search` in `impl Library` is `LibrarySearchTool`
//! (the type's name, then the method's in UpperCamelCase, then `Tool`); it is a tuple
//! struct with the method's visibility, built as `LibrarySearchTool(Arc::new(library))`.
//!
//! Methods marked `#[resource]` or `#[prompt]` (of toolwright-mcp) become items the same
//! way: `LibraryReadmeResource`, `LibraryReviewPrompt`, each holding the `Arc`, and the
//! impl gains `into_resources` / `into_prompts` for the kinds it has.
//!
//! Registration needs a value of the type, which a method alone cannot make: the impl is
//! registered as a whole, `#[toolbox(register)]` with `Default::default()` or
//! `#[toolbox(register = path::to::constructor)]`, and every tool, resource and prompt of
//! it shares the one value, made on first use.

use crate::ast::{self, RawFn};
use crate::errors::Errors;
use crate::expand::{self, Target};
use crate::prompt;
use crate::resource;
use crate::resource_fn::{Member, MemberKind, Method};
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
    /// The `#[resource]` and `#[prompt]` methods, made.
    members: Members,
}

/// The `#[resource]` and `#[prompt]` methods of the impl.
#[derive(Default)]
struct Members {
    /// Each attribute's path, the first of each kind (see [`keep_tool_import`]).
    paths: Vec<Path>,
    /// Whether the impl has a `#[resource]` method, a `#[prompt]` method (made or not:
    /// an invalid impl still gains the methods its callers name).
    resources: bool,
    prompts: bool,
    /// The methods that were made.
    made: Vec<Member>,
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
    let members = take_members(&mut imp, &self_name, &mut errors);
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
        members,
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

/// Takes the `#[resource]` and `#[prompt]` attributes off the methods and makes each
/// an item; a method is one tool, resource or prompt, and two items of a kind may not
/// share a URI or name.
fn take_members(imp: &mut ItemImpl, self_name: &str, errors: &mut Errors) -> Members {
    let mut members = Members::default();
    let self_ty = (*imp.self_ty).clone();
    for item in &mut imp.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(index) = method.attrs.iter().position(is_member_attr) else {
            continue;
        };
        let attr = method.attrs.remove(index);
        let is_prompt = last_ident_is(&attr, "prompt");
        let (first, suffix) = if is_prompt {
            (!members.prompts, "Prompt")
        } else {
            (!members.resources, "Resource")
        };
        if first {
            members.paths.push(attr.path().clone());
        }
        members.prompts |= is_prompt;
        members.resources |= !is_prompt;
        if let Some(other) = method
            .attrs
            .iter()
            .find(|a| is_tool_attr(a) || is_member_attr(a))
        {
            errors.error(
                other,
                "a method is one tool, resource or prompt: keep one of these attributes, and \
                 write another method for the other",
            );
            continue;
        }
        let args = match &attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens.clone(),
            Meta::NameValue(_) => {
                errors.error(
                    &attr,
                    "write `#[resource(key = value, ...)]` or `#[prompt]`",
                );
                continue;
            }
        };
        let info = Method {
            self_ty: self_ty.clone(),
            item_ty: format_ident!(
                "{}{}{}",
                self_name,
                upper_camel(&method.sig.ident.to_string()),
                suffix
            ),
        };
        let made = if is_prompt {
            prompt::method(args, method, info, errors)
        } else {
            resource::method(args, method, info, errors)
        };
        let Some(made) = made else { continue };
        let clash = |other: &Member| {
            other.key == made.key
                && (other.kind == MemberKind::Prompt) == (made.kind == MemberKind::Prompt)
        };
        if members.made.iter().any(clash) {
            let what = match made.kind {
                MemberKind::Prompt => "prompts named",
                MemberKind::Resource | MemberKind::Template => "resources at",
            };
            errors.error_at(
                made.key_span,
                format!(
                    "this toolbox has two {what} `{}`: each is offered once; give one another",
                    made.key
                ),
            );
        }
        members.made.push(made);
    }
    members
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
    for Member { cfgs, ty, imp, .. } in &toolbox.members.made {
        out.extend(quote! {
            #(#cfgs)*
            #ty
            #(#cfgs)*
            const _: () = { #imp };
        });
    }
    out.extend(into_toolset(toolbox, &toolbox.tools));
    out.extend(into_member_sets(toolbox, &toolbox.members.made));
    out.extend(registrations(toolbox));
    out
}

/// What an invalid toolbox expands to: the errors, the impl, and an empty `into_toolset`
/// so that its callers still compile.
fn emit_fallback(errors: TokenStream, imp: &ItemImpl, toolbox: &Toolbox) -> TokenStream {
    let keep_import = keep_tool_import(toolbox);
    let into_toolset = into_toolset(toolbox, &[]);
    let into_member_sets = into_member_sets(toolbox, &[]);
    quote! {
        #errors
        #keep_import
        #imp
        #into_toolset
        #into_member_sets
    }
}

/// A `use` of the first `#[tool]`, `#[resource]` and `#[prompt]` attribute's path: the
/// attributes are consumed before rustc resolves them, and the user's
/// `use toolwright_core::tool` must not look unused.
fn keep_tool_import(toolbox: &Toolbox) -> TokenStream {
    toolbox
        .tool_path
        .iter()
        .chain(&toolbox.members.paths)
        .map(|path| macro_made(quote!(const _: () = { use #path as _; };)))
        .collect()
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

/// `into_resources` and `into_prompts`, each when the impl has a method of its kind,
/// with the given members (none for the fallback).
fn into_member_sets(toolbox: &Toolbox, made: &[Member]) -> TokenStream {
    let self_ty = &toolbox.self_ty;
    let mut out = TokenStream::new();
    let kinds = [
        (
            toolbox.members.resources,
            false,
            "into_resources",
            "ResourceSet",
            "resource",
        ),
        (
            toolbox.members.prompts,
            true,
            "into_prompts",
            "PromptSet",
            "prompt",
        ),
    ];
    for (present, prompts, name, set, what) in kinds {
        if !present {
            continue;
        }
        let of_kind: Vec<&Member> = made
            .iter()
            .filter(|m| (m.kind == MemberKind::Prompt) == prompts)
            .collect();
        // The first made member's path to toolwright-mcp (its `crate = path`), else the
        // default.
        let p = of_kind
            .first()
            .map(|m| m.p.clone())
            .unwrap_or_else(|| quote!(::toolwright_mcp::__private));
        let listed = if of_kind.is_empty() {
            "none".to_owned()
        } else {
            of_kind
                .iter()
                .map(|m| format!("`{}`", m.key))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let doc = format!("The `#[{what}]` methods of this impl as a `{set}`: {listed}.");
        let name = format_ident!("{}", name);
        let set = format_ident!("{}", set);
        let adds = of_kind.iter().map(|m| {
            let item_ty = &m.item_ty;
            let add = m.kind.adder();
            let cfgs = &m.cfgs;
            // Two of one URI or name were refused at compile time, so nothing is refused.
            quote! {
                #(#cfgs)*
                #p::#add(&mut __set, #item_ty(::std::sync::Arc::clone(&self)));
            }
        });
        out.extend(quote! {
            impl #self_ty {
                #[doc = #doc]
                pub fn #name(self: ::std::sync::Arc<Self>) -> #p::#set {
                    let mut __set = #p::#set::default();
                    #(#adds)*
                    __set
                }
            }
        });
    }
    out
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
    let members = toolbox.members.made.iter().map(|m| {
        let item_ty = &m.item_ty;
        let cfgs = &m.cfgs;
        let registration = m.kind.registration(
            &m.p,
            register.span(),
            &m.key,
            &toolbox.tags,
            quote!(#item_ty(__agent_toolbox())),
        );
        quote!(#(#cfgs)* #registration)
    });
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
            #(#members)*
        };
    })
}

/// `#[tool]` or `#[toolwright_core::tool]`.
fn is_tool_attr(attr: &syn::Attribute) -> bool {
    last_ident_is(attr, "tool")
}

/// `#[resource]` or `#[prompt]`, by any path.
fn is_member_attr(attr: &syn::Attribute) -> bool {
    last_ident_is(attr, "resource") || last_ident_is(attr, "prompt")
}

/// Whether the attribute's path ends in `name`.
fn last_ident_is(attr: &syn::Attribute, name: &str) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == name)
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
