//! `tools![a, path::b]`: the set of the named `#[tool]` fns, with a compile-time check that
//! no two share a name.
//!
//! `toolwright_core::tools!` forwards `($crate) a, path::b` here, so the first token tree is
//! the path of toolwright_core. Each path names the tool type `#[tool]` put beside the fn (a
//! braced struct of the same name), whose `StaticTool::NAME` is a constant; a constant
//! assertion compares them, and its panic, spanned at the repeated path, names the tool.

use proc_macro2::{TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Path, Token};

/// Expands `tools_impl!`.
pub fn expand(input: TokenStream) -> TokenStream {
    match Parser::parse2(parse, input) {
        Ok((krate, paths)) => generate(&krate, &paths),
        Err(e) => e.to_compile_error(),
    }
}

fn parse(input: ParseStream) -> syn::Result<(TokenStream, Vec<Path>)> {
    let krate = input.step(|cursor| match cursor.token_tree() {
        Some((TokenTree::Group(g), rest)) => Ok((g.stream(), rest)),
        _ => Err(cursor.error("expected the crate path; use `toolwright_core::tools![...]`")),
    })?;
    let paths = Punctuated::<Path, Token![,]>::parse_terminated(input).map_err(|e| {
        syn::Error::new(
            e.span(),
            "`tools![]` takes the names of `#[tool]` fns separated by commas: `tools![add, math::divide]`",
        )
    })?;
    Ok((krate, paths.into_iter().collect()))
}

fn generate(krate: &TokenStream, paths: &[Path]) -> TokenStream {
    let p = quote!(#krate::__private);
    let names = paths.iter().map(|path| {
        quote_spanned! {path.span()=> <#path as #p::StaticTool>::NAME }
    });
    let entries = paths.iter().map(|path| {
        quote_spanned! {path.span()=> <#path as #p::StaticTool>::ENTRY }
    });
    // One call per repeated-name check: the panic, inside toolwright-core, reports the caller's
    // location (`#[track_caller]`), so no `panic!` is expanded here. The callee is
    // parenthesized so that the whole call, not only its arguments, is at the path.
    let checks = paths.iter().enumerate().skip(1).map(|(i, path)| {
        quote_spanned! {path.span()=>
            (#p::distinct_name)(&__AGENT_REPEATED, &__AGENT_NAMES, #i);
        }
    });
    let n = paths.len();
    let check_block = if n > 1 {
        quote! {
            const _: () = {
                const __AGENT_NAMES: [&str; #n] = [#(#names),*];
                const __AGENT_REPEATED: [bool; #n] = #p::repeated_names(&__AGENT_NAMES);
                #(#checks)*
            };
        }
    } else {
        TokenStream::new()
    };
    // A constant table and one call: the fn listing the tools compiles to a few lines,
    // however many tools it lists. The table is a constant of a type of the block, read
    // by a fn generic in it (see `table_toolset`), so it is not compiled into the
    // caller's module.
    quote! {
        {
            #check_block
            struct __AgentTools;
            impl #p::ToolTable for __AgentTools {
                const TOOLS: &'static [#p::ToolEntry] = &[#(#entries),*];
            }
            #p::table_toolset::<__AgentTools>()
        }
    }
}
