//! `resources![a, b]` and `prompts![x]`: the sets of the named `#[resource]` and
//! `#[prompt]` fns, with a compile-time check that no two share a URI (or template) or
//! a name, as `tools![]` checks tool names.
//!
//! toolwright-mcp's `resources!` forwards `($crate) a, b` here. Each path names the type
//! the attribute put beside the fn, whose `KEY` is a constant; a constant evaluation
//! compares them and its panic, spanned at the repeated path, names the key.

use proc_macro2::{TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Ident, Path, Token};

/// One kind of set.
struct Kind {
    /// The macro, for messages.
    macro_name: &'static str,
    /// What its items are, for messages.
    items: &'static str,
    /// The item trait and set type in toolwright_mcp::__private.
    item_trait: &'static str,
    set: &'static str,
    /// The start of the duplicate message, which ends with the key.
    duplicate: &'static str,
}

/// Expands `resources_impl!`.
pub fn resources(input: TokenStream) -> TokenStream {
    expand(
        input,
        &Kind {
            macro_name: "resources",
            items: "`#[resource]` fns",
            item_trait: "ResourceItem",
            set: "ResourceSet",
            duplicate: "resources![] lists two resources at `",
        },
    )
}

/// Expands `prompts_impl!`.
pub fn prompts(input: TokenStream) -> TokenStream {
    expand(
        input,
        &Kind {
            macro_name: "prompts",
            items: "`#[prompt]` fns",
            item_trait: "PromptItem",
            set: "PromptSet",
            duplicate: "prompts![] lists two prompts named `",
        },
    )
}

fn expand(input: TokenStream, kind: &Kind) -> TokenStream {
    let parse = |input: ParseStream| -> syn::Result<(TokenStream, Vec<Path>)> {
        let krate = input.step(|cursor| match cursor.token_tree() {
            Some((TokenTree::Group(g), rest)) => Ok((g.stream(), rest)),
            _ => Err(cursor.error(format!(
                "expected the crate path; use `toolwright_mcp::{}![...]`",
                kind.macro_name
            ))),
        })?;
        let paths = Punctuated::<Path, Token![,]>::parse_terminated(input).map_err(|e| {
            syn::Error::new(
                e.span(),
                format!(
                    "`{}![]` takes the names of {} separated by commas: `{}![a, module::b]`",
                    kind.macro_name, kind.items, kind.macro_name
                ),
            )
        })?;
        Ok((krate, paths.into_iter().collect()))
    };
    let (krate, paths) = match Parser::parse2(parse, input) {
        Ok(parsed) => parsed,
        Err(e) => return e.to_compile_error(),
    };
    let p = quote!(#krate::__private);
    let item_trait = Ident::new(kind.item_trait, proc_macro2::Span::call_site());
    let set = Ident::new(kind.set, proc_macro2::Span::call_site());
    let n = paths.len();
    let keys = paths
        .iter()
        .map(|path| quote_spanned!(path.span()=> <#path as #p::#item_trait>::KEY));
    let duplicate = kind.duplicate;
    // The callee is parenthesized so the whole call, and the panic `#[track_caller]`
    // reports, is at the path.
    let checks = paths.iter().enumerate().skip(1).map(|(i, path)| {
        quote_spanned! {path.span()=> (#p::distinct_key)(&__KEYS, #i, #duplicate); }
    });
    let check = if n > 1 {
        quote! {
            const _: () = {
                const __KEYS: [&str; #n] = [#(#keys),*];
                #(#checks)*
            };
        }
    } else {
        TokenStream::new()
    };
    let adds = paths.iter().map(|path| {
        let add = quote_spanned!(path.span()=> #p::#item_trait::add_to);
        quote!(#add(#path {}, &mut __set);)
    });
    quote! {
        {
            #check
            let mut __set = #p::#set::default();
            #(#adds)*
            __set
        }
    }
}
