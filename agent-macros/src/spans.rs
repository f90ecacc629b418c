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
fn resolved_as_user_code(tokens: TokenStream, anchor: Span) -> TokenStream {
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
            // The generated `pub` items are not reachable (they live in `const _` blocks);
            // kept in the macro's span, `pub` tells `unreachable_pub` they are not the
            // user's to fix. (An `allow` would be refused in a crate forbidding the lint.)
            TokenTree::Ident(ident) if ident == "pub" => TokenTree::Ident(ident),
            mut other => {
                other.set_span(other.span().resolved_at(anchor));
                other
            }
        })
        .collect()
}

/// A generated item as it is emitted: resolved as user code, behind the clippy
/// exemption.
pub fn generated_item(item: TokenStream, anchor: Span) -> TokenStream {
    let exempt = clippy_exemption();
    let item = resolved_as_user_code(item, anchor);
    quote!(#exempt #item)
}

/// Clippy's lint groups, allowed on generated items: clippy treats resolved code as the
/// user's, and the generated code is not written to clippy's taste (it avoids `?`, say,
/// for the cache's sake). The attribute keeps the macro's span. rustc's lints get no such
/// pass: the generated code raises none (`ui-tests/pass/strict-lints.rs`), and an `allow`
/// would be refused in a crate that forbids the lint.
fn clippy_exemption() -> TokenStream {
    quote!(#[allow(clippy::all, clippy::pedantic, clippy::nursery, clippy::restriction)])
}

/// `tokens` with every span set to `span`: a path the generated code calls, so that an
/// error about it (an unmet bound) points at the user's tokens that asked for it.
pub fn spanned_at(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}
