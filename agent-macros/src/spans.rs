//! Spans of generated code, chosen for rustc's incremental cache.
//!
//! Tokens a proc macro makes carry the expansion's hygiene mark, and rustc's incremental
//! cache fingerprints an expansion by where the macro was called. Adding a line above a
//! `#[tool]` moves that call, so every later tool's generated code looked changed and was
//! type checked again. Resolved at a span of the user's own code, the same tokens keep
//! their locations (errors still point at the attribute) and their fingerprints.

use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};
use std::cell::Cell;

thread_local! {
    /// While one tool is expanded: the span generated code is resolved at, and the call
    /// site resolved there (the span of every token the macro makes, asked of rustc once).
    static ANCHOR: Cell<Option<(Span, Span)>> = const { Cell::new(None) };
}

/// Runs `expand` with the generated code's tokens resolved at `anchor` as they are made
/// (`site`, `at`), rather than by a walk over the finished output: every token a proc
/// macro hands to rustc costs a round trip, and the walk made each one twice more.
pub fn with_anchor<R>(anchor: Span, expand: impl FnOnce() -> R) -> R {
    let site = Span::call_site().resolved_at(anchor);
    let outer = ANCHOR.with(|cell| cell.replace(Some((anchor, site))));
    let result = expand();
    ANCHOR.with(|cell| cell.set(outer));
    result
}

/// The span of a token the macro makes: the call site resolved at the anchor, when one
/// is set.
pub fn site() -> Span {
    match ANCHOR.with(Cell::get) {
        Some((_, site)) => site,
        None => Span::call_site(),
    }
}

/// `span` resolved at the anchor, when one is set: same location, the user's hygiene.
pub fn at(span: Span) -> Span {
    match ANCHOR.with(Cell::get) {
        Some((anchor, _)) => span.resolved_at(anchor),
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

/// `tokens` resolved at `anchor` (see [`resolved_as_user_code`]): for generated code
/// made whole, as `#[resource]` and `#[prompt]` make theirs.
pub fn as_user_code(tokens: TokenStream, anchor: Span) -> TokenStream {
    resolved_as_user_code(tokens, anchor)
}

/// A value interpolated into generated code (a literal, a path made elsewhere) with its
/// tokens resolved at the anchor, when one is set: a walk over a few tokens only. Kept as
/// trees, which `quote!` appends as they are; a `TokenStream` would be a round trip to
/// rustc wherever it is interpolated.
pub fn resolved(value: impl quote::ToTokens) -> Trees {
    let tokens = value.into_token_stream();
    Trees::from(match ANCHOR.with(Cell::get) {
        Some((anchor, _)) => resolved_as_user_code(tokens, anchor),
        None => tokens,
    })
}

/// A string literal made here, as [`resolved`] would make it, without a walk: its span is
/// [`site`].
pub fn string(text: &str) -> Trees {
    let mut literal = proc_macro2::Literal::string(text);
    literal.set_span(site());
    Trees(vec![literal.into()])
}

/// `::toolwright_core`, the crate path when no `crate = path` is given, spanned at [`site`].
pub fn toolwright_core() -> Trees {
    let span = site();
    let mut trees: Vec<TokenTree> = vec![
        Punct::new(':', Spacing::Joint).into(),
        Punct::new(':', Spacing::Alone).into(),
        Ident::new("toolwright_core", span).into(),
    ];
    for tree in &mut trees {
        tree.set_span(span);
    }
    Trees(trees)
}

/// Tokens interpolated tree by tree (see [`resolved`]).
#[derive(Clone)]
pub struct Trees(Vec<TokenTree>);

impl Trees {
    /// This path followed by `::segment`, made here rather than by `quote!`, whose stream
    /// would cost a round trip wherever it is interpolated.
    pub fn join(&self, segment: &str) -> Trees {
        let span = site();
        let mut trees = self.0.clone();
        for punct in [
            Punct::new(':', Spacing::Joint),
            Punct::new(':', Spacing::Alone),
        ] {
            let mut punct = TokenTree::Punct(punct);
            punct.set_span(span);
            trees.push(punct);
        }
        trees.push(Ident::new(segment, span).into());
        Trees(trees)
    }
}

impl Trees {
    /// These tokens with every span set to `span` (an error about a path the generated
    /// code calls then points at the user's tokens that asked for it).
    pub fn spanned(mut self, span: Span) -> Trees {
        for tree in &mut self.0 {
            tree.set_span(span);
        }
        self
    }

    /// Trees as they are.
    pub fn from_trees(trees: Vec<TokenTree>) -> Self {
        Trees(trees)
    }
}

impl From<TokenStream> for Trees {
    fn from(tokens: TokenStream) -> Self {
        Trees(tokens.into_iter().collect())
    }
}

impl quote::ToTokens for Trees {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(self.0.iter().cloned());
    }
}

/// `#[allow(clippy::all, clippy::pedantic, clippy::nursery, clippy::restriction)]`, put
/// on generated items: clippy treats resolved code as the user's, and the generated code
/// is not written to clippy's taste (it avoids `?`, say, for the cache's sake). The
/// attribute keeps the macro's span. rustc's lints get no such pass: the generated code
/// raises none (`ui-tests/pass/strict-lints.rs`), and an `allow` would be refused in a
/// crate that forbids the lint. Made as trees: one round trip to rustc per group.
pub fn clippy_exemption() -> Trees {
    let span = Span::call_site();
    let mut lints = Vec::new();
    for (i, group) in ["all", "pedantic", "nursery", "restriction"]
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            lints.push(TokenTree::Punct(Punct::new(',', Spacing::Alone)));
        }
        lints.push(Ident::new("clippy", span).into());
        lints.push(Punct::new(':', Spacing::Joint).into());
        lints.push(Punct::new(':', Spacing::Alone).into());
        lints.push(Ident::new(group, span).into());
    }
    let allow: TokenStream = [
        TokenTree::Ident(Ident::new("allow", span)),
        Group::new(Delimiter::Parenthesis, lints.into_iter().collect()).into(),
    ]
    .into_iter()
    .collect();
    Trees(vec![
        Punct::new('#', Spacing::Alone).into(),
        Group::new(Delimiter::Bracket, allow).into(),
    ])
}

/// `tokens` as the macro's own, at its call site, each token keeping its location: rustc
/// reports no lint in code an external macro made, so an item that may go unused or that
/// breaks a naming lint (a tool type named like its fn, a trait imported only to pick a
/// conversion) needs no `allow`, which a crate forbidding the lint would refuse (E0453).
/// `$crate` keeps its span: it resolves through its mark.
pub fn macro_made(tokens: TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Group(group) => {
                let mut made = Group::new(group.delimiter(), macro_made(group.stream()));
                made.set_span(macro_span(group.span()));
                TokenTree::Group(made)
            }
            TokenTree::Ident(ident) if ident == "$crate" => TokenTree::Ident(ident),
            mut other => {
                other.set_span(macro_span(other.span()));
                other
            }
        })
        .collect()
}

/// `span`'s location in the macro's own context (see [`macro_made`]).
fn macro_span(span: Span) -> Span {
    Span::call_site().located_at(span)
}

/// `ident` as the macro's own name, at the same location (see [`macro_made`]).
pub fn macro_ident(ident: &Ident) -> Ident {
    let mut made = ident.clone();
    made.set_span(macro_span(ident.span()));
    made
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
