//! Spans of generated code, chosen for rustc's incremental cache.
//!
//! Tokens a proc macro makes carry the expansion's hygiene mark, and rustc's incremental
//! cache fingerprints an expansion by where the macro was called. Adding a line above a
//! `#[tool]` moves that call, so every later tool's generated code looked changed and was
//! type checked again. Resolved at a span of the user's own code, the same tokens keep
//! their locations (errors still point at the attribute) and their fingerprints.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::quote;

/// `tokens` with every span resolved at `anchor`, a span of the user's own code: each
/// token keeps its location and loses the expansion's mark. Name resolution is unchanged,
/// since a proc macro's call-site spans already resolve at the call site. Never apply it
/// to `$crate`, which resolves through its mark.
pub fn resolved_as_user_code(tokens: TokenStream, anchor: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Group(group) => {
                let mut resolved = Group::new(
                    group.delimiter(),
                    resolved_as_user_code(group.stream(), anchor),
                );
                resolved.set_span(group.span().resolved_at(anchor));
                TokenTree::Group(resolved)
            }
            mut other => {
                other.set_span(other.span().resolved_at(anchor));
                other
            }
        })
        .collect()
}

/// Each generated item resolved as user code (see [`resolved_as_user_code`]), behind the
/// lints it is exempt from.
pub fn generated_items(items: impl IntoIterator<Item = TokenStream>, anchor: Span) -> TokenStream {
    let exempt = lint_exemptions();
    items
        .into_iter()
        .map(|item| {
            let item = resolved_as_user_code(item, anchor);
            quote!(#exempt #item)
        })
        .collect()
}

/// The lints generated code is exempt from, for the item it precedes. Code resolved as
/// the user's is linted as the user's, so rustc and clippy would check it too. This
/// attribute keeps the macro's own spans: in a crate that forbids one of these lints,
/// rustc then ignores it instead of refusing it.
fn lint_exemptions() -> TokenStream {
    quote! {
        #[allow(
            unreachable_pub,
            unused_qualifications,
            unused_results,
            clippy::all,
            clippy::pedantic,
            clippy::nursery,
            clippy::restriction
        )]
    }
}
