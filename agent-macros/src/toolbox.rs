//! `#[toolbox]` on an inherent impl block: each method marked `#[tool]` (taking `&self`)
//! becomes a tool type holding an `Arc` of the impl's type, so a tool can hold a database
//! pool or an HTTP client, and the impl gains `fn into_toolset(self: Arc<Self>) -> ToolSet`.
//!
//! Naming rule: the tool type of method `search` in `impl Library` is `LibrarySearchTool`
//! (the type's name, then the method's in UpperCamelCase, then `Tool`); it is a tuple
//! struct with the method's visibility, built as `LibrarySearchTool(Arc::new(library))`.

use crate::ast::{self, RawFn};
use crate::expand::{self, Target};
use crate::spans::generated_item;
use crate::valid::{self, Ctxt, Place};
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashMap;
use syn::{ImplItem, ItemImpl, Meta, Path};

#[derive(Default, FromMeta)]
struct ToolboxAttr {
    #[darling(rename = "crate")]
    krate: Option<Path>,
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
    let mut cx = Ctxt::default();
    let attr = if args.is_empty() {
        ToolboxAttr::default()
    } else {
        match NestedMeta::parse_meta_list(args)
            .map_err(darling::Error::from)
            .and_then(|items| ToolboxAttr::from_list(&items))
        {
            Ok(attr) => attr,
            Err(e) => {
                cx.darling(e);
                ToolboxAttr::default()
            }
        }
    };
    let krate = match &attr.krate {
        Some(path) => quote!(#path),
        None => quote!(::agent_core),
    };
    if let Some((path, _)) = &imp.trait_ {
        cx.error(
            path,
            "`#[toolbox]` goes on an inherent impl (`impl MyTools { ... }`), not on a trait impl",
        );
    }
    if !imp.generics.params.is_empty() {
        cx.error(
            &imp.generics,
            "a toolbox cannot be generic: write the impl for a concrete type",
        );
    }
    let self_name = match ast::last_segment(&imp.self_ty) {
        Some(seg) => seg.ident.to_string(),
        None => {
            cx.error(
                &imp.self_ty,
                "`#[toolbox]` needs a named type: `impl MyTools { ... }`",
            );
            String::new()
        }
    };
    let self_ty = &imp.self_ty.clone();

    // The `#[tool]` attributes are consumed here, before rustc resolves them; a `use`
    // of the first one's path keeps the user's `use agent_core::tool` from looking unused.
    let mut tool_path: Option<Path> = None;
    let mut tools = Vec::new();
    let mut names: HashMap<String, ()> = HashMap::new();
    let mut failed = false;
    for item in &mut imp.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(index) = method.attrs.iter().position(is_tool_attr) else {
            continue;
        };
        let attr = method.attrs.remove(index);
        if tool_path.is_none() {
            tool_path = Some(attr.path().clone());
        }
        let args = match &attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens.clone(),
            Meta::NameValue(_) => {
                cx.error(&attr, "write `#[tool]` or `#[tool(key = value, ...)]`");
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
        match valid::check(args, &raw, &param_attrs, Place::Toolbox) {
            Ok(mut tool) => {
                if !tool.krate_given {
                    tool.krate = krate.clone();
                }
                if names.insert(tool.name.clone(), ()).is_some() {
                    cx.error(
                        &tool.name_tokens,
                        format!(
                            "this toolbox has two tools named `{}`: give one another name with \
                             `#[tool(name = \"...\")]`",
                            tool.name
                        ),
                    );
                }
                let camel = upper_camel(&method.sig.ident.to_string());
                let tool_ty = format_ident!("{}{}Tool", self_name, camel);
                tools.push((tool, method.sig.ident.clone(), tool_ty, method.vis.clone()));
            }
            Err(errors) => {
                failed = true;
                cx.tokens(errors);
            }
        }
    }

    let errors = match cx.finish() {
        Ok(()) if !failed => None,
        Ok(()) => Some(TokenStream::new()),
        Err(errors) => Some(errors),
    };
    let into_doc = format!(
        "The `#[tool]` methods of this impl as a `ToolSet`: {}.",
        if tools.is_empty() {
            "none".to_owned()
        } else {
            tools
                .iter()
                .map(|(t, ..)| format!("`{}`", t.name))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    if let Some(errors) = errors {
        let keep_import = tool_path
            .as_ref()
            .map(|path| quote!(const _: () = { #[allow(unused_imports)] use #path as _; };));
        return quote! {
            #errors
            #keep_import
            #imp
            impl #self_ty {
                #[doc = #into_doc]
                #[allow(dead_code)]
                pub fn into_toolset(self: #krate::__private::Arc<Self>) -> #krate::ToolSet {
                    let _ = self;
                    #krate::ToolSet::new()
                }
            }
        };
    }

    let mut out = quote!(#imp);
    if let Some(path) = &tool_path {
        out.extend(quote!(const _: () = { #[allow(unused_imports)] use #path as _; };));
    }
    let mut entries = Vec::new();
    for (tool, method, tool_ty, vis) in &tools {
        let doc = format!(
            "The tool `{}`: the method `{}::{}` made a tool by `#[toolbox]`. Build it with \
             `{}(Arc::new(value))`, or take every tool of the impl with `into_toolset`.",
            tool.name, self_name, method, tool_ty
        );
        let p = quote!(#krate::__private);
        let cfgs = &tool.cfgs;
        out.extend(quote! {
            #(#cfgs)*
            #[doc = #doc]
            #[allow(dead_code)]
            #[derive(Clone)]
            #vis struct #tool_ty(#vis #p::Arc<#self_ty>);
        });
        out.extend(generated_item(
            expand::impls(tool, Target::Method { tool_ty, method }),
            method.span(),
        ));
        entries.push(quote! {
            #(#cfgs)*
            __agent_tools.push(#p::Arc::new(#tool_ty(#p::Arc::clone(&self))) as #p::Arc<dyn #krate::Tool>);
        });
    }
    let p = quote!(#krate::__private);
    out.extend(quote! {
        impl #self_ty {
            #[doc = #into_doc]
            #[allow(dead_code)]
            pub fn into_toolset(self: #p::Arc<Self>) -> #krate::ToolSet {
                #[allow(unused_mut)]
                let mut __agent_tools: ::std::vec::Vec<#p::Arc<dyn #krate::Tool>> = ::std::vec::Vec::new();
                #(#entries)*
                #p::toolbox_set(__agent_tools)
            }
        }
    });
    out
}

/// `#[tool]` or `#[agent_core::tool]`.
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
