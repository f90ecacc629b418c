//! The annotated fn as a model: its signature, its parameters classified as model
//! arguments or injected values, and its return type. Only the signature is parsed; the
//! body is kept as tokens, so a body that does not compile still expands and rustc reports
//! the real error. The common shape of signature is read from its tokens by
//! [`parse_plain`], every other by syn.

use proc_macro2::{Delimiter, Group, Punct, Spacing, TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{
    Attribute, FnArg, GenericArgument, Ident, Pat, PathArguments, ReturnType, Signature, Token,
    Type, Visibility,
};

/// `attrs vis sig { body }`, the body unparsed.
pub struct RawFn {
    /// Outer attributes (doc comments included).
    pub attrs: Vec<Attribute>,
    /// Visibility.
    pub vis: Visibility,
    /// The signature, parameter attributes still on it.
    pub sig: Signature,
    /// The body (or `;`), as written.
    pub body: TokenStream,
}

impl Parse for RawFn {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse()?;
        let body: TokenStream = input.parse()?;
        Ok(Self {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

/// The last path segment's name of a path type, if `ty` is one.
pub fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// What kind of value a parameter receives.
pub enum ParamKind {
    /// `&ToolContext`, `State<T>`, `Progress`: supplied by the runtime.
    Injected,
    /// Filled from the model's JSON.
    Model,
}

/// How a parameter type is recognised.
pub fn classify(ty: &Type) -> ParamKind {
    match ty {
        Type::Reference(r) => match last_segment(&r.elem) {
            Some(seg) if seg.ident == "ToolContext" => ParamKind::Injected,
            _ => ParamKind::Model,
        },
        _ => match last_segment(ty) {
            Some(seg) if seg.ident == "State" && !seg.arguments.is_none() => ParamKind::Injected,
            Some(seg) if seg.ident == "Progress" && seg.arguments.is_none() => ParamKind::Injected,
            _ => ParamKind::Model,
        },
    }
}

/// Whether `ty` is `Option<..>` (any path ending in `Option` with one argument).
pub fn is_option(ty: &Type) -> bool {
    match last_segment(ty) {
        Some(seg) if seg.ident == "Option" => match &seg.arguments {
            PathArguments::AngleBracketed(args) => args.args.len() == 1,
            _ => false,
        },
        _ => false,
    }
}

/// The return type, read syntactically.
pub enum Return<'a> {
    /// `-> T` or no arrow (`()`).
    Bare(Option<&'a Type>),
    /// `-> Result<T, E>` or `-> XResult<T>`: `T` is the output.
    Result(&'a Type),
}

/// Reads the return type.
pub fn read_return(output: &ReturnType) -> Return<'_> {
    let ty = match output {
        ReturnType::Default => return Return::Bare(None),
        ReturnType::Type(_, ty) => &**ty,
    };
    if let Some(seg) = last_segment(ty) {
        let name = seg.ident.to_string();
        if let PathArguments::AngleBracketed(args) = &seg.arguments {
            let types: Vec<&Type> = args
                .args
                .iter()
                .filter_map(|a| match a {
                    GenericArgument::Type(t) => Some(t),
                    _ => None,
                })
                .collect();
            let is_result = (name == "Result" && (types.len() == 1 || types.len() == 2))
                || (name.ends_with("Result") && types.len() == 1);
            if is_result && types.len() == args.args.len() {
                return Return::Result(types[0]);
            }
        }
    }
    Return::Bare(Some(ty))
}

/// The parameter's name, when the pattern is a plain identifier.
pub fn param_ident(arg: &FnArg) -> Option<&Ident> {
    match arg {
        FnArg::Typed(pt) => match &*pt.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some(&pi.ident),
            _ => None,
        },
        FnArg::Receiver(_) => None,
    }
}

/// The fn of the common shape read straight from its tokens, without syn's parser:
/// outer attributes, a visibility, `async fn name(params) -> Type`, each parameter
/// `name: Type` with its attributes, every type a path or a reference to one. rustc runs
/// the macro again for every tool on every build, and in a debug build of the macro
/// syn's parser was a third of its work. `None` for any other shape, which
/// [`RawFn`]'s syn parser then reads (and validation reports what is wrong with it);
/// where both read a fn, they read the same (a test below keeps it so).
///
/// Also returns the fn as it is emitted: its own tokens, the parameters' `#[arg]` and
/// doc attributes removed (what validation strips from the syn signature), so the tokens
/// need not be made again.
pub fn parse_plain(head: &[TokenTree]) -> Option<(RawFn, Vec<TokenTree>)> {
    let mut at = 0;
    let mut attrs = Vec::new();
    while let Some(attr) = outer_attr(head, at) {
        attrs.push(attr?);
        at += 2;
    }
    let vis = match head.get(at) {
        Some(TokenTree::Ident(ident)) if ident == "pub" => match head.get(at + 1) {
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                at += 2;
                syn::parse2(head[at - 2..at].iter().cloned().collect()).ok()?
            }
            _ => {
                at += 1;
                Visibility::Public(syn::token::Pub(ident.span()))
            }
        },
        _ => Visibility::Inherited,
    };
    let asyncness = match head.get(at) {
        Some(TokenTree::Ident(ident)) if ident == "async" => syn::token::Async(ident.span()),
        _ => return None,
    };
    let fn_token = match head.get(at + 1) {
        Some(TokenTree::Ident(ident)) if ident == "fn" => syn::token::Fn(ident.span()),
        _ => return None,
    };
    let ident = match head.get(at + 2) {
        Some(TokenTree::Ident(ident)) if !is_keyword(ident) => ident.clone(),
        _ => return None,
    };
    let params = match head.get(at + 3) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => g,
        _ => return None,
    };
    let output = match &head[at + 4..] {
        [] => ReturnType::Default,
        [TokenTree::Punct(dash), TokenTree::Punct(gt), ty @ ..]
            if dash.as_char() == '-' && dash.spacing() == Spacing::Joint && gt.as_char() == '>' =>
        {
            ReturnType::Type(
                syn::token::RArrow([dash.span(), gt.span()]),
                Box::new(plain_type(ty)?),
            )
        }
        _ => return None,
    };
    let (inputs, kept_params) = plain_params(params)?;
    let sig = Signature {
        constness: None,
        asyncness: Some(asyncness),
        safety: syn::Safety::Default,
        abi: None,
        fn_token,
        ident,
        generics: syn::Generics::default(),
        paren_token: syn::token::Paren(params.delim_span()),
        inputs,
        variadic: None,
        output,
    };
    let mut emitted: Vec<TokenTree> = head[..at + 3].to_vec();
    let mut kept = Group::new(Delimiter::Parenthesis, kept_params.into_iter().collect());
    kept.set_span(params.span());
    emitted.push(kept.into());
    emitted.extend_from_slice(&head[at + 4..]);
    let func = RawFn {
        attrs,
        vis,
        sig,
        body: TokenStream::new(),
    };
    Some((func, emitted))
}

/// The outer attribute (`#` and its brackets) at `at`: `None` when there is none there,
/// `Some(None)` when there is one this reader does not take.
fn outer_attr(trees: &[TokenTree], at: usize) -> Option<Option<Attribute>> {
    match (trees.get(at), trees.get(at + 1)) {
        (Some(TokenTree::Punct(pound)), Some(TokenTree::Group(group)))
            if pound.as_char() == '#' && group.delimiter() == Delimiter::Bracket =>
        {
            Some(plain_attr(pound, group))
        }
        (Some(TokenTree::Punct(pound)), _) if pound.as_char() == '#' => Some(None),
        _ => None,
    }
}

/// An outer attribute: a doc comment (`doc = "..."`) made here, any other by syn.
fn plain_attr(pound: &Punct, group: &Group) -> Option<Attribute> {
    let inner: Vec<TokenTree> = group.stream().into_iter().collect();
    if let [
        TokenTree::Ident(doc),
        TokenTree::Punct(eq),
        TokenTree::Literal(lit),
    ] = &inner[..]
        && doc == "doc"
        && eq.as_char() == '='
    {
        return Some(Attribute {
            pound_token: syn::token::Pound(pound.span()),
            style: syn::AttrStyle::Outer,
            bracket_token: syn::token::Bracket(group.delim_span()),
            meta: syn::Meta::NameValue(syn::MetaNameValue {
                path: syn::Path::from(doc.clone()),
                eq_token: syn::token::Eq(eq.span()),
                value: syn::Expr::Lit(syn::ExprLit {
                    attrs: Vec::new(),
                    lit: syn::Lit::new(lit.clone()),
                }),
            }),
        });
    }
    let tokens: TokenStream = [
        TokenTree::Punct(pound.clone()),
        TokenTree::Group(group.clone()),
    ]
    .into_iter()
    .collect();
    let mut attrs = Parser::parse2(Attribute::parse_outer, tokens).ok()?;
    (attrs.len() == 1).then(|| attrs.remove(0))
}

/// The parameters, each `attributes name: Type`, and the tokens to emit for them (the
/// `#[arg]` and doc attributes left out).
fn plain_params(params: &Group) -> Option<(Punctuated<FnArg, Token![,]>, Vec<TokenTree>)> {
    let trees: Vec<TokenTree> = params.stream().into_iter().collect();
    let mut inputs = Punctuated::new();
    let mut kept = Vec::with_capacity(trees.len());
    for param in split_top_level(&trees)? {
        let (param, comma) = match param {
            [rest @ .., TokenTree::Punct(p)] if p.as_char() == ',' => (rest, Some(p)),
            _ => (param, None),
        };
        let mut at = 0;
        let mut attrs = Vec::new();
        while let Some(attr) = outer_attr(param, at) {
            let attr = attr?;
            if !(attr.path().is_ident("arg") || attr.path().is_ident("doc")) {
                kept.extend_from_slice(&param[at..at + 2]);
            }
            attrs.push(attr);
            at += 2;
        }
        let (ident, colon, ty) = match &param[at..] {
            [TokenTree::Ident(ident), TokenTree::Punct(colon), ty @ ..]
                if colon.as_char() == ':' && colon.spacing() == Spacing::Alone =>
            {
                (ident, colon, ty)
            }
            _ => return None,
        };
        if is_keyword(ident) || ident == "self" {
            return None;
        }
        inputs.push_value(FnArg::Typed(syn::PatType {
            attrs,
            pat: Box::new(Pat::Ident(syn::PatIdent {
                attrs: Vec::new(),
                by_ref: None,
                mutability: None,
                ident: ident.clone(),
                subpat: None,
            })),
            colon_token: syn::token::Colon(colon.span()),
            ty: Box::new(plain_type(ty)?),
        }));
        kept.extend_from_slice(&param[at..]);
        if let Some(comma) = comma {
            inputs.push_punct(syn::token::Comma(comma.span()));
            kept.push(TokenTree::Punct(comma.clone()));
        }
    }
    Some((inputs, kept))
}

/// `trees` cut after each comma outside angle brackets (each part keeps its comma).
fn split_top_level(trees: &[TokenTree]) -> Option<Vec<&[TokenTree]>> {
    let mut parts = Vec::new();
    let (mut start, mut depth) = (0, 0usize);
    for (i, tree) in trees.iter().enumerate() {
        let TokenTree::Punct(p) = tree else { continue };
        match p.as_char() {
            '<' => depth += 1,
            '>' => depth = depth.checked_sub(1)?,
            // `->` and the like: left to syn.
            '-' => return None,
            ',' if depth == 0 => {
                parts.push(&trees[start..=i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < trees.len() {
        parts.push(&trees[start..]);
    }
    Some(parts)
}

/// A type that is a path (`String`, `Option<Unit>`, `::std::string::String`,
/// `Vec<a::B>`), or a reference to one (`&ToolContext`, `&'static str`).
fn plain_type(trees: &[TokenTree]) -> Option<Type> {
    match trees {
        [TokenTree::Punct(and), rest @ ..] if and.as_char() == '&' => {
            let (lifetime, rest) = match rest {
                [TokenTree::Punct(q), TokenTree::Ident(name), rest @ ..]
                    if q.as_char() == '\'' && q.spacing() == Spacing::Joint =>
                {
                    let mut lifetime = syn::Lifetime::new(&format!("'{name}"), q.span());
                    lifetime.ident = name.clone();
                    (Some(lifetime), rest)
                }
                _ => (None, rest),
            };
            let (mutability, rest) = match rest {
                [TokenTree::Ident(m), rest @ ..] if m == "mut" => {
                    (Some(syn::token::Mut(m.span())), rest)
                }
                _ => (None, rest),
            };
            Some(Type::Reference(syn::TypeReference {
                attrs: Vec::new(),
                and_token: syn::token::And(and.span()),
                lifetime,
                mutability,
                elem: Box::new(plain_path(rest)?),
            }))
        }
        _ => plain_path(trees),
    }
}

/// A path type: segments separated by `::`, each with type arguments or none.
fn plain_path(trees: &[TokenTree]) -> Option<Type> {
    let mut path = syn::Path {
        leading_colon: None,
        segments: Punctuated::new(),
    };
    let mut rest = trees;
    if let Some((colons, after)) = path_sep(rest) {
        path.leading_colon = Some(colons);
        rest = after;
    }
    loop {
        let (ident, after) = match rest {
            [TokenTree::Ident(ident), after @ ..] if !is_keyword(ident) => (ident, after),
            _ => return None,
        };
        let (arguments, after) = match after {
            [TokenTree::Punct(lt), after @ ..] if lt.as_char() == '<' => {
                let close = matching_gt(after)?;
                let mut args = Punctuated::new();
                for arg in split_top_level(&after[..close])? {
                    let (arg, comma) = match arg {
                        [rest @ .., TokenTree::Punct(p)] if p.as_char() == ',' => (rest, Some(p)),
                        _ => (arg, None),
                    };
                    args.push_value(GenericArgument::Type(plain_type(arg)?));
                    if let Some(comma) = comma {
                        args.push_punct(syn::token::Comma(comma.span()));
                    }
                }
                let TokenTree::Punct(gt) = &after[close] else {
                    return None;
                };
                let arguments =
                    PathArguments::AngleBracketed(syn::AngleBracketedGenericArguments {
                        colon2_token: None,
                        lt_token: syn::token::Lt(lt.span()),
                        args,
                        gt_token: syn::token::Gt(gt.span()),
                    });
                (arguments, &after[close + 1..])
            }
            _ => (PathArguments::None, after),
        };
        path.segments.push_value(syn::PathSegment {
            ident: ident.clone(),
            arguments,
        });
        match path_sep(after) {
            Some((colons, after)) => {
                path.segments.push_punct(colons);
                rest = after;
            }
            None if after.is_empty() => break,
            None => return None,
        }
    }
    Some(Type::Path(syn::TypePath {
        attrs: Vec::new(),
        qself: None,
        path,
    }))
}

/// `::` at the head of `trees`, and what follows.
fn path_sep(trees: &[TokenTree]) -> Option<(Token![::], &[TokenTree])> {
    match trees {
        [TokenTree::Punct(a), TokenTree::Punct(b), rest @ ..]
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':' =>
        {
            Some((syn::token::PathSep([a.span(), b.span()]), rest))
        }
        _ => None,
    }
}

/// The index of the `>` closing the angle brackets just opened.
fn matching_gt(trees: &[TokenTree]) -> Option<usize> {
    let mut depth = 0usize;
    for (i, tree) in trees.iter().enumerate() {
        if let TokenTree::Punct(p) = tree {
            match p.as_char() {
                '<' => depth += 1,
                '>' if depth == 0 => return Some(i),
                '>' => depth -= 1,
                _ => {}
            }
        }
    }
    None
}

/// A keyword this reader leaves to syn wherever it finds one.
fn is_keyword(ident: &proc_macro2::Ident) -> bool {
    const KEYWORDS: &[&str] = &[
        "_", "as", "async", "await", "const", "crate", "dyn", "else", "extern", "fn", "for", "if",
        "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
        "Self", "static", "struct", "super", "trait", "type", "unsafe", "use", "where", "while",
    ];
    let name = ident.to_string();
    KEYWORDS.contains(&name.as_str())
}
