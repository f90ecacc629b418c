//! Spans of generated code, chosen for rustc's incremental cache.
//!
//! Tokens a proc macro makes carry the expansion's hygiene mark, and rustc's incremental
//! cache fingerprints an expansion by where the macro was called. Adding a line above a
//! `#[tool]` moves that call, so every later tool's generated code looked changed and was
//! type checked again. Resolved at a span of the user's own code, the same tokens keep
//! their locations (errors still point at the attribute) and their fingerprints.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::quote;
use std::cell::Cell;

thread_local! {
    /// The span generated code is resolved at while one tool is expanded.
    static ANCHOR: Cell<Option<Span>> = const { Cell::new(None) };
}

/// Runs `expand` with the generated code's tokens resolved at `anchor` as they are made
/// (`site`, `at`), rather than by a walk over the finished output: every token a proc
/// macro hands to rustc costs a round trip, and the walk made each one twice more.
pub fn with_anchor<R>(anchor: Span, expand: impl FnOnce() -> R) -> R {
    let outer = ANCHOR.with(|cell| cell.replace(Some(anchor)));
    let result = expand();
    ANCHOR.with(|cell| cell.set(outer));
    result
}

/// The span of a token the macro makes: the call site resolved at the anchor, when one
/// is set.
pub fn site() -> Span {
    at(Span::call_site())
}

/// `span` resolved at the anchor, when one is set: same location, the user's hygiene.
pub fn at(span: Span) -> Span {
    match ANCHOR.with(Cell::get) {
        Some(anchor) => span.resolved_at(anchor),
        None => span,
    }
}

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

/// A value interpolated into generated code (a literal, a path made elsewhere) with its
/// tokens resolved at the anchor, when one is set: a walk over a few tokens only.
pub fn resolved(value: impl quote::ToTokens) -> TokenStream {
    let tokens = value.into_token_stream();
    match ANCHOR.with(Cell::get) {
        Some(anchor) => resolved_as_user_code(tokens, anchor),
        None => tokens,
    }
}

/// A generated item made under `with_anchor` as it is emitted: behind the clippy
/// exemption, its tokens already resolved as user code.
pub fn anchored_item(item: TokenStream) -> TokenStream {
    let exempt = clippy_exemption();
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
