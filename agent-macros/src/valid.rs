//! Every rule a `#[tool]` fn must follow, checked in one pass. Errors are collected, not
//! returned at the first, so one build shows every mistake; each is spanned at the user's
//! own tokens and says what to write instead.

use crate::ast::{self, ParamKind, RawFn, Return};
use crate::attr::{ApprovalAttr, ArgAttr, DefaultAttr, Exposure, OnError, ToolAttr};
use crate::docs::{self, Docs};
use darling::util::SpannedValue;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use std::collections::HashMap;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, LitInt, LitStr, Path, ReceiverKind, Type};

/// The longest timeout a tool may declare: one day.
const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// Collects errors; `finish` turns them into one token stream of `compile_error!`s.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<TokenStream>,
}

impl Ctxt {
    /// An error over the whole of `tokens`.
    pub fn error(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.errors
            .push(syn::Error::new_spanned(tokens, message).to_compile_error());
    }

    /// An error at `span`.
    pub fn error_at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.errors
            .push(syn::Error::new(span, message).to_compile_error());
    }

    /// A darling error (kept as darling renders it, with its did-you-mean).
    pub fn darling(&mut self, error: darling::Error) {
        self.errors.push(error.write_errors());
    }

    /// Errors already rendered.
    pub fn tokens(&mut self, errors: TokenStream) {
        self.errors.push(errors);
    }

    /// `Err` with every error, if there were any.
    pub fn finish(self) -> Result<(), TokenStream> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self.errors.into_iter().collect())
        }
    }
}

/// Where the fn is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A free fn (or an item the attribute was put on directly).
    Free,
    /// A method of a `#[toolbox]` impl.
    Toolbox,
}

/// A checked tool: everything expansion needs.
pub struct Tool {
    /// The path of agent_core.
    pub krate: TokenStream,
    /// Whether `crate = path` was written (a toolbox's own `crate` applies otherwise).
    pub krate_given: bool,
    /// The tool's name.
    pub name: String,
    /// Where the name was written (the `name` literal, else the fn's name).
    pub name_tokens: TokenStream,
    /// An expression of type `&'static str`.
    pub description: TokenStream,
    /// Human-readable title.
    pub title: Option<LitStr>,
    /// Timeout.
    pub timeout_ms: Option<u64>,
    /// Exposure.
    pub exposure: Exposure,
    /// `async fn(&ActivationContext) -> bool` for deferred tools.
    pub activate_when: Option<Path>,
    /// Metadata origin override.
    pub origin: Option<LitStr>,
    /// Metadata version override.
    pub version: Option<LitStr>,
    /// Metadata requirements.
    pub requirements: Vec<LitStr>,
    /// Approval.
    pub approval: Option<ApprovalAttr>,
    /// Error policy.
    pub on_error: OnError,
    /// Hints.
    pub read_only: bool,
    /// Hints.
    pub destructive: bool,
    /// Hints.
    pub idempotent: bool,
    /// Hints.
    pub open_world: bool,
    /// Concurrency.
    pub max_in_flight: Option<LitInt>,
    /// Concurrency.
    pub exclusive: Option<LitStr>,
    /// Concurrency.
    pub sequential: bool,
    /// Output validator.
    pub validate_output: Option<Path>,
    /// Progress validator.
    pub validate_progress: Option<Path>,
    /// The parameters, in order.
    pub params: Vec<Param>,
    /// The success type, as written (`()` when there is no arrow).
    pub output: TokenStream,
    /// Whether the fn returns a `Result`.
    pub returns_result: bool,
    /// Span for the error conversion (the return type).
    pub return_span: Span,
    /// The fn's `#[cfg(...)]` attributes, repeated on every generated item.
    pub cfgs: Vec<syn::Attribute>,
}

/// One parameter.
pub struct Param {
    /// The local the generated code binds it to.
    pub binding: Ident,
    /// Its type, as written.
    pub ty: Type,
    /// Model argument details; `None` for injected parameters.
    pub model: Option<ModelParam>,
}

/// A parameter filled from the model's JSON.
pub struct ModelParam {
    /// Field name of the hidden args struct (the parameter's name).
    pub field: Ident,
    /// `#[arg(rename)]`.
    pub rename: Option<LitStr>,
    /// Description for the schema.
    pub description: Option<String>,
    /// `#[arg(default)]`, spanned at the key (for `Default` errors) or the expression.
    pub default: Option<SpannedValue<DefaultAttr>>,
    /// `Option<T>`.
    pub optional: bool,
}

/// Removes what rustc must not see from the signature (`#[arg]` and doc comments on
/// parameters) and returns them per parameter.
pub fn strip_param_attrs(sig: &mut syn::Signature) -> Vec<Vec<syn::Attribute>> {
    sig.inputs
        .iter_mut()
        .map(|arg| {
            let attrs = match arg {
                FnArg::Typed(pt) => &mut pt.attrs,
                FnArg::Receiver(r) => &mut r.attrs,
            };
            let (ours, theirs): (Vec<_>, Vec<_>) = std::mem::take(attrs)
                .into_iter()
                .partition(|a| a.path().is_ident("arg") || docs::is_doc(a));
            *attrs = theirs;
            ours
        })
        .collect()
}

/// Parses `#[tool(...)]`'s tokens and checks the fn. `param_attrs` are the attributes
/// [`strip_param_attrs`] took off; `func` is the fn with them already removed.
pub fn check(
    args: TokenStream,
    func: &RawFn,
    param_attrs: &[Vec<syn::Attribute>],
    place: Place,
) -> Result<Tool, TokenStream> {
    let mut cx = Ctxt::default();
    let attr = ToolAttr::parse(args, &mut cx);
    let sig = &func.sig;
    let krate = match &attr.krate {
        Some(path) => quote!(#path),
        None => quote!(::agent_core),
    };

    // The fn itself.
    if sig.asyncness.is_none() {
        cx.error(
            sig.fn_token,
            format!(
                "a tool must be an `async fn`: write `async fn {}(...)`",
                sig.ident
            ),
        );
    }
    if let Some(c) = &sig.constness {
        cx.error(c, "a tool cannot be a `const fn`: remove `const`");
    }
    if !matches!(sig.safety, syn::Safety::Default) {
        cx.error(
            &sig.safety,
            "a tool cannot be an `unsafe fn`: make the fn safe and use `unsafe` blocks inside",
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error(abi, "a tool cannot have an ABI: remove `extern`");
    }
    if let Some(v) = &sig.variadic {
        cx.error(v, "a tool cannot be variadic");
    }
    if !sig.generics.params.is_empty() {
        cx.error(
            &sig.generics,
            "a tool cannot be generic: the model sends JSON, which has one concrete type; \
             remove the generic parameters and use concrete types (`String`, a struct deriving \
             `Deserialize` and `JsonSchema`)",
        );
    }
    if let Some(wc) = &sig.generics.where_clause {
        cx.error(
            wc,
            "a tool cannot have a `where` clause: use concrete types",
        );
    }

    // Name.
    let (name, name_tokens): (String, TokenStream) = match &attr.name {
        Some(lit) => (lit.value(), lit.to_token_stream()),
        None => (sig.ident.unraw().to_string(), sig.ident.to_token_stream()),
    };
    if !is_valid_tool_name(&name) {
        cx.error(
            &name_tokens,
            format!(
                "invalid tool name `{name}`: a tool name must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$ \
                 (start with a letter or `_`, then letters, digits, `_` or `-`, at most 64 in all); \
                 write `#[tool(name = \"...\")]` with a valid name"
            ),
        );
    }

    // Description.
    let docs = docs::tool_docs(&func.attrs);
    let mut arguments: Vec<(String, String)> = Vec::new();
    let description = match (&attr.description, docs) {
        (Some(lit), docs) => {
            if let Docs::Text { arguments: a, .. } = docs {
                arguments = a;
            }
            if lit.value().trim().is_empty() {
                cx.error(
                    lit,
                    "the description is empty: say what the tool does, for the model",
                );
            }
            Some(quote!(#lit))
        }
        (
            None,
            Docs::Text {
                description,
                arguments: a,
            },
        ) if !description.trim().is_empty() => {
            arguments = a;
            Some(quote!(#description))
        }
        (None, Docs::Raw(tokens)) => Some(tokens),
        (None, _) => None,
    };
    let description = description.unwrap_or_else(|| {
        cx.error(
            &sig.ident,
            format!(
                "the tool `{name}` has no description, and a model cannot use a tool it cannot \
                 read about: add a doc comment (`/// What the tool does.`) above the fn, or \
                 `#[tool(description = \"...\")]`"
            ),
        );
        quote!("")
    });

    // Timeout.
    let timeout_ms = match (&attr.timeout, &attr.timeout_ms) {
        (Some(t), Some(ms)) => {
            cx.error(
                ms,
                "`timeout` and `timeout_ms` both set: keep one (`timeout = \"30s\"`)",
            );
            parse_timeout(t, &mut cx)
        }
        (Some(t), None) => parse_timeout(t, &mut cx),
        (None, Some(ms)) => match ms.base10_parse::<u64>() {
            Ok(0) => {
                cx.error(ms, "a timeout of zero would fail every call: write a positive number of milliseconds, or remove `timeout_ms` to use the runtime's default");
                None
            }
            Ok(v) if v > MAX_TIMEOUT_MS => {
                cx.error(ms, format!("a timeout longer than a day ({MAX_TIMEOUT_MS} ms) is not supported: use a shorter one, or remove `timeout_ms`"));
                None
            }
            Ok(v) => Some(v),
            Err(e) => {
                cx.error(
                    ms,
                    format!("`timeout_ms` must be a whole number of milliseconds: {e}"),
                );
                None
            }
        },
        (None, None) => None,
    };

    // Exposure and activation.
    let exposure = attr.exposure.as_ref().map_or(Exposure::Direct, |e| **e);
    match (&attr.exposure, &attr.activate_when) {
        (Some(e), None) if **e == Exposure::Deferred => cx.error_at(
            e.span(),
            "a deferred tool needs `activate_when = path::to::fn`, an \
             `async fn(&ActivationContext) -> bool` saying when the tool is offered",
        ),
        (e, Some(path)) if e.as_ref().is_none_or(|e| **e != Exposure::Deferred) => cx.error(
            path,
            "`activate_when` only applies to deferred tools: add `exposure = \"deferred\"`, or \
             remove `activate_when`",
        ),
        _ => {}
    }

    // Concurrency.
    if let Some(n) = &attr.max_in_flight {
        match n.base10_parse::<usize>() {
            Ok(0) => cx.error(
                n,
                "`max_in_flight = 0` would never run the tool: write 1 or more",
            ),
            Ok(_) => {}
            Err(e) => cx.error(n, format!("`max_in_flight` must be a whole number: {e}")),
        }
    }
    if let Some(group) = &attr.exclusive
        && group.value().is_empty()
    {
        cx.error(
            group,
            "the exclusive group needs a name: `exclusive = \"database\"`",
        );
    }

    // Parameters.
    let mut params = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut has_receiver = false;
    for (i, arg) in sig.inputs.iter().enumerate() {
        let own_attrs = param_attrs.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let pt = match arg {
            FnArg::Receiver(r) => {
                has_receiver = true;
                match place {
                    Place::Free => cx.error(
                        r,
                        "`self` is only allowed in a `#[tool]` method of an impl block marked \
                         `#[toolbox]`: add `#[toolbox]` to the impl block, or make this a free \
                         `async fn`",
                    ),
                    Place::Toolbox => {
                        if !matches!(&r.kind, ReceiverKind::Reference(_, _, None)) {
                            cx.error(r, "a toolbox tool takes `&self`: write `&self`");
                        }
                    }
                }
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let binding = format_ident!("__agent_arg_{}", i);
        let Some(ident) = ast::param_ident(arg) else {
            cx.error(
                &pt.pat,
                "pattern parameters are not supported: name the parameter (`point: Point`) and \
                 destructure it in the body",
            );
            continue;
        };
        let ty = (*pt.ty).clone();
        let kind = check_param_type(&ty, &mut cx);
        let arg_attrs: Vec<&syn::Attribute> = own_attrs
            .iter()
            .filter(|a| a.path().is_ident("arg"))
            .collect();
        match kind {
            Some(ParamKind::Injected) => {
                for a in &arg_attrs {
                    cx.error(
                        a,
                        "`#[arg]` does not apply to a parameter the runtime supplies \
                         (`&ToolContext`, `State<T>`, `Progress`): remove it",
                    );
                }
                params.push(Param {
                    binding,
                    ty,
                    model: None,
                });
            }
            Some(ParamKind::Model) | None => {
                let mut arg_attr = ArgAttr::default();
                for (n, a) in arg_attrs.iter().enumerate() {
                    if n > 0 {
                        cx.error(
                            a,
                            "write one `#[arg(...)]` per parameter: merge the keys into the first",
                        );
                        continue;
                    }
                    match &a.meta {
                        syn::Meta::List(list) => {
                            arg_attr = ArgAttr::parse(list.tokens.clone(), &mut cx);
                        }
                        _ => cx.error(
                            a,
                            "write `#[arg(...)]` with keys: `description = \"...\"`, \
                             `rename = \"...\"`, `default` or `default = expr`",
                        ),
                    }
                }
                let rust_name = ident.unraw().to_string();
                let prop_name = match &arg_attr.rename {
                    Some(lit) => lit.value(),
                    None => rust_name.clone(),
                };
                if seen.insert(prop_name.clone(), ()).is_some() {
                    let at: TokenStream = match &arg_attr.rename {
                        Some(lit) => lit.to_token_stream(),
                        None => ident.to_token_stream(),
                    };
                    cx.error(
                        at,
                        format!(
                            "two parameters are named `{prop_name}` in the schema: give one \
                             another name with `#[arg(rename = \"...\")]`"
                        ),
                    );
                }
                let description = match &arg_attr.description {
                    Some(lit) => Some(lit.value()),
                    None => match docs::param_docs(own_attrs) {
                        Ok(Some(text)) => Some(text),
                        // The item naming the parameter itself comes first: its schema
                        // name may be another parameter's Rust name.
                        Ok(None) => arguments
                            .iter()
                            .find(|(n, _)| *n == rust_name)
                            .or_else(|| arguments.iter().find(|(n, _)| *n == prop_name))
                            .map(|(_, d)| d.clone())
                            .filter(|d| !d.is_empty()),
                        Err(exprs) => {
                            cx.error(
                                &exprs[0],
                                "a parameter's doc must be a literal: write `/// text` or \
                                 `#[arg(description = \"...\")]`",
                            );
                            None
                        }
                    },
                };
                let optional = ast::is_option(&ty);
                params.push(Param {
                    binding,
                    ty,
                    model: Some(ModelParam {
                        field: ident.clone(),
                        rename: arg_attr.rename,
                        description,
                        default: arg_attr.default,
                        optional,
                    }),
                });
            }
        }
    }
    // Every item of an `# Arguments` section names a parameter: a stale or misspelled one
    // would silently leave a parameter undescribed.
    let param_names: Vec<String> = sig
        .inputs
        .iter()
        .filter_map(ast::param_ident)
        .map(|i| i.unraw().to_string())
        .chain(params.iter().filter_map(|p| {
            p.model
                .as_ref()
                .and_then(|m| m.rename.as_ref().map(LitStr::value))
        }))
        .collect();
    for (name, _) in &arguments {
        if !param_names.contains(name) {
            let needle = format!("`{name}`");
            let at = func
                .attrs
                .iter()
                .filter(|a| docs::is_doc(a))
                .find(|a| a.to_token_stream().to_string().contains(&needle))
                .map_or_else(|| sig.ident.to_token_stream(), ToTokens::to_token_stream);
            cx.error(
                at,
                format!(
                    "the `# Arguments` section describes `{name}`, which is not a parameter of \
                     this tool: the parameters are {}",
                    if param_names.is_empty() {
                        "none".to_owned()
                    } else {
                        param_names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            );
        }
    }

    if place == Place::Toolbox && !has_receiver {
        cx.error(
            &sig.ident,
            "a `#[tool]` method of a `#[toolbox]` impl takes `&self`: add `&self` as the first \
             parameter, or move the fn out of the impl",
        );
    }

    // Return type.
    let (output, returns_result, return_span) = match ast::read_return(&sig.output) {
        Return::Bare(None) => (quote!(()), false, sig.ident.span()),
        Return::Bare(Some(ty)) => {
            check_return_type(ty, &mut cx);
            (ty.to_token_stream(), false, ty.span())
        }
        Return::Result(ty) => {
            check_return_type(ty, &mut cx);
            let whole = match &sig.output {
                syn::ReturnType::Type(_, t) => t.span(),
                syn::ReturnType::Default => ty.span(),
            };
            (ty.to_token_stream(), true, whole)
        }
    };

    cx.finish()?;
    Ok(Tool {
        krate,
        krate_given: attr.krate.is_some(),
        name,
        name_tokens,
        description,
        title: attr.title,
        timeout_ms,
        exposure,
        activate_when: attr.activate_when,
        origin: attr.origin,
        version: attr.version,
        requirements: attr.requirements.unwrap_or_default(),
        approval: attr.require_approval.map(|a| a.into_inner()),
        on_error: attr.on_error.map_or(OnError::ReturnToModel, |o| *o),
        read_only: attr.read_only.is_present(),
        destructive: attr.destructive.is_present(),
        idempotent: attr.idempotent.is_present(),
        open_world: attr.open_world.is_present(),
        max_in_flight: attr.max_in_flight,
        exclusive: attr.exclusive,
        sequential: attr.sequential.is_present(),
        validate_output: attr.validate_output,
        validate_progress: attr.validate_progress,
        params,
        output,
        returns_result,
        return_span,
        cfgs: func
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .cloned()
            .collect(),
    })
}

/// Classifies a parameter type, reporting the types no tool can take.
fn check_param_type(ty: &Type, cx: &mut Ctxt) -> Option<ParamKind> {
    match ty {
        Type::ImplTrait(_) => {
            cx.error(
                ty,
                "`impl Trait` parameters are not supported: the model's JSON is decoded into one \
                 concrete type; write a concrete type such as `String` or a struct deriving \
                 `Deserialize` and `JsonSchema`",
            );
            None
        }
        Type::Reference(r) => match ast::last_segment(&r.elem) {
            Some(seg) if seg.ident == "ToolContext" => {
                if r.mutability.is_some() {
                    cx.error(ty, "the context is shared: write `&ToolContext`");
                    None
                } else {
                    Some(ParamKind::Injected)
                }
            }
            _ => {
                let owned = owned_suggestion(&r.elem);
                cx.error(
                    ty,
                    format!(
                        "borrowed parameters are not supported: the model's arguments are \
                         decoded into owned values; write `{owned}` instead (only `&ToolContext` \
                         may be borrowed)"
                    ),
                );
                None
            }
        },
        _ => Some(ast::classify(ty)),
    }
}

/// The owned type to suggest for a borrowed one.
fn owned_suggestion(elem: &Type) -> String {
    let text = elem.to_token_stream().to_string().replace(' ', "");
    match elem {
        Type::Path(_) if text == "str" => "String".to_owned(),
        Type::Path(_) if text == "Path" || text.ends_with("::Path") => "PathBuf".to_owned(),
        Type::Path(_) if text == "OsStr" => "OsString".to_owned(),
        Type::Path(_) if text == "Value" || text.ends_with("::Value") => text,
        Type::Slice(s) => format!(
            "Vec<{}>",
            s.elem.to_token_stream().to_string().replace(' ', "")
        ),
        Type::Reference(r) => owned_suggestion(&r.elem),
        _ => text,
    }
}

/// Reports return types a tool cannot have.
fn check_return_type(ty: &Type, cx: &mut Ctxt) {
    let unsupported = "unsupported return type: a tool returns an owned value `T` or \
                       `Result<T, E>`, where `T` is `String`, `Content`, `Vec<Content>`, `()` or \
                       any `Serialize` type, and `E` is a `ToolError` or any `Display` error";
    match ty {
        Type::ImplTrait(_) => cx.error(
            ty,
            format!(
                "{unsupported}; `impl Trait` cannot be decoded into content: name the concrete type"
            ),
        ),
        Type::Reference(r) => {
            let is_static_str = r.lifetime.as_ref().is_some_and(|l| l.ident == "static")
                && r.mutability.is_none()
                && r.elem.to_token_stream().to_string() == "str";
            if !is_static_str {
                cx.error(
                    ty,
                    format!("{unsupported}; a borrowed result cannot outlive the call: return `{}` (or `&'static str`)", owned_suggestion(&r.elem)),
                );
            }
        }
        Type::Never(_) | Type::TraitObject(_) | Type::Infer(_) | Type::Ptr(_) | Type::FnPtr(_) => {
            cx.error(ty, unsupported)
        }
        _ => {}
    }
}

/// Parses `"30s"`, `"500ms"`, `"2m"`, `"1h"`.
fn parse_timeout(lit: &LitStr, cx: &mut Ctxt) -> Option<u64> {
    let text = lit.value();
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let factor = match unit.trim() {
        "ms" => Some(1),
        "s" => Some(1000),
        "m" | "min" => Some(60_000),
        "h" => Some(3_600_000),
        _ => None,
    };
    let value = num.parse::<u64>().ok();
    match (value, factor) {
        (Some(v), Some(f)) => {
            let ms = v.checked_mul(f);
            match ms {
                Some(0) => {
                    cx.error(lit, "a timeout of zero would fail every call: write a positive duration such as \"30s\", or remove `timeout` to use the runtime's default");
                    None
                }
                Some(ms) if ms <= MAX_TIMEOUT_MS => Some(ms),
                _ => {
                    cx.error(lit, format!("timeout `{text}` is longer than a day, the most a tool may declare: use a shorter one such as \"1h\""));
                    None
                }
            }
        }
        _ => {
            cx.error(
                lit,
                format!("cannot read the timeout `{text}`: write a whole number followed by `ms`, `s`, `m` or `h`, such as \"500ms\", \"30s\", \"2m\" or \"1h\""),
            );
            None
        }
    }
}

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}
