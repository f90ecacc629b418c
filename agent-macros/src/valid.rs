//! Every rule a `#[tool]` fn must follow, checked in one pass. Errors are collected, not
//! returned at the first, so one build shows every mistake; each is spanned at the user's
//! own tokens and says what to write instead.

use crate::ast::{self, ParamKind, RawFn, Return};
use crate::attr::{
    ApprovalAttr, ArgAttr, DefaultAttr, ExampleAttr, Exposure, OnError, TaskAttr, ToolAttr,
};
use crate::docs::{self, Docs};
use crate::errors::Errors;
use crate::spans::Trees;
use darling::util::SpannedValue;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use std::collections::HashSet;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, LitInt, LitStr, Path, ReceiverKind, Type};

/// The longest timeout a tool may declare: one day.
const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

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
    /// The path of toolwright_core.
    pub krate: Trees,
    /// Whether `crate = path` was written (a toolbox's own `crate` applies otherwise), or
    /// the path is the toolbox's: otherwise it is `::toolwright_core`.
    pub krate_given: bool,
    /// The tool's name.
    pub name: String,
    /// Where the name was written (the `name` literal, else the fn's name).
    pub name_span: Span,
    /// The description.
    pub description: Description,
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
    /// Whether calls may run as MCP tasks.
    pub task: Option<TaskAttr>,
    /// Output validator.
    pub validate_output: Option<Path>,
    /// Progress validator.
    pub validate_progress: Option<Path>,
    /// The parameters, in order.
    pub params: Vec<Param>,
    /// The success type, as written (`()` when there is no arrow).
    pub output: TokenStream,
    /// What the success type is known to be.
    pub output_kind: OutputKind,
    /// Whether the fn returns a `Result`.
    pub returns_result: bool,
    /// Span for the error conversion (the return type).
    pub return_span: Span,
    /// The fn's `#[cfg(...)]` attributes, repeated on every generated item.
    pub cfgs: Vec<syn::Attribute>,
    /// Where `register` was written, when the tool goes into the link-time registry.
    pub register: Option<Span>,
    /// `tags = [...]`.
    pub tags: Vec<LitStr>,
    /// `strict` or `strict = false`.
    pub strict: Option<bool>,
    /// `example(...)`, every one, as one JSON array of argument objects; `None` when
    /// the tool gives none.
    pub examples: Option<String>,
}

/// A tool's description.
pub enum Description {
    /// Known to the macro.
    Text(String),
    /// An expression `concat!` takes (a doc comment from `include_str!`).
    Tokens(TokenStream),
}

/// What a tool's success type is, read syntactically.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// `String`: text, with no output schema.
    Text,
    /// A type with no output schema: `()`, `&'static str`, `Content`, `Vec<Content>`.
    NoSchema,
    /// Any other type: an output schema when it implements `JsonSchema`.
    Schema,
}

/// The most parameters a tool's model fills (the tuples toolwright-core reads them as).
pub const MAX_MODEL_PARAMS: usize = 16;

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
    /// The parameter's name (the property's, unless renamed).
    pub field: Ident,
    /// `#[arg(rename)]`.
    pub rename: Option<LitStr>,
    /// Description for the schema.
    pub description: Option<String>,
    /// `#[arg(default)]`, spanned at the key (for `Default` errors) or the expression.
    pub default: Option<SpannedValue<DefaultAttr>>,
    /// `Option<T>`.
    pub optional: bool,
    /// `#[arg(header = "...")]`, checked to be an HTTP header name's token.
    pub header: Option<LitStr>,
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
    let mut errors = Errors::default();
    let attr = ToolAttr::parse(args, &mut errors);
    let sig = &func.sig;
    check_signature(sig, &mut errors);
    let (name, name_span) = tool_name(&attr, sig, &mut errors);
    let (description, arguments) = description(&attr, func, &name, &mut errors);
    let timeout_ms = timeout(&attr, &mut errors);
    check_exposure(&attr, &mut errors);
    check_concurrency(&attr, &mut errors);
    check_receiver(sig, place, &mut errors);
    check_registration(&attr, place, &mut errors);
    let params = params(sig, param_attrs, &arguments, &mut errors);
    check_arguments_section(func, &params, &arguments, &mut errors);
    let examples = examples(&attr.example, &params, sig, &mut errors);
    let (output, output_kind, returns_result, return_span) = return_type(sig, &mut errors);
    errors.finish()?;
    Ok(Tool {
        krate: match &attr.krate {
            Some(path) => Trees::from(quote!(#path)),
            None => crate::spans::toolwright_core(),
        },
        krate_given: attr.krate.is_some(),
        name,
        name_span,
        description,
        title: attr.title,
        timeout_ms,
        exposure: attr.exposure.as_ref().map_or(Exposure::Direct, |e| **e),
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
        task: attr.task.map(|t| *t),
        validate_output: attr.validate_output,
        validate_progress: attr.validate_progress,
        params,
        output,
        output_kind,
        returns_result,
        return_span,
        cfgs: func
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .cloned()
            .collect(),
        register: attr.register.as_ref().map(SpannedValue::span),
        tags: attr.tags.unwrap_or_default(),
        strict: attr.strict.map(|strict| strict.0),
        examples,
    })
}

/// Every example names parameters the model fills, each once, and gives every one the
/// tool requires (neither `Option` nor `#[arg(default)]`): an example the tool would
/// refuse teaches the model a mistake. The examples become one JSON array, each key the
/// parameter's name in the schema.
fn examples(
    examples: &[ExampleAttr],
    params: &[Param],
    sig: &syn::Signature,
    errors: &mut Errors,
) -> Option<String> {
    if examples.is_empty() {
        return None;
    }
    let fn_name = &sig.ident;
    let model: Vec<(String, &ModelParam)> = params
        .iter()
        .filter_map(|param| param.model.as_ref())
        .map(|model| (model.field.unraw().to_string(), model))
        .collect();
    // The fn's other parameters are the ones the runtime supplies.
    let injected: Vec<String> = sig
        .inputs
        .iter()
        .filter_map(ast::param_ident)
        .map(|ident| ident.unraw().to_string())
        .filter(|name| !model.iter().any(|(n, _)| n == name))
        .collect();
    let names: Vec<&str> = model.iter().map(|(name, _)| name.as_str()).collect();
    let mut json = String::from("[");
    for (index, example) in examples.iter().enumerate() {
        if index > 0 {
            json.push(',');
        }
        json.push('{');
        let mut given: Vec<String> = Vec::new();
        let mut misnamed = false;
        for field in &example.fields {
            let name = field.name.unraw().to_string();
            if injected.contains(&name) {
                misnamed = true;
                errors.error(
                    &field.name,
                    format!(
                        "`{name}` is supplied by the runtime, not sent by the model: leave it \
                         out of the example"
                    ),
                );
                continue;
            }
            let Some((_, param)) = model.iter().find(|(n, _)| *n == name) else {
                misnamed = true;
                let hint = match crate::attr::did_you_mean(&name, &names) {
                    Some(near) => format!("did you mean `{near}`? "),
                    None => String::new(),
                };
                let listed = if names.is_empty() {
                    "it takes none from the model".to_owned()
                } else {
                    format!(
                        "its parameters are {}",
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                errors.error(
                    &field.name,
                    format!(
                        "this example names `{name}`, which is not a parameter the model \
                         fills in `{fn_name}`: {hint}{listed}"
                    ),
                );
                continue;
            };
            if given.contains(&name) {
                errors.error(
                    &field.name,
                    format!("`{name}` is given twice in this example: keep one"),
                );
                continue;
            }
            if !given.is_empty() {
                json.push(',');
            }
            given.push(name);
            let wire = match &param.rename {
                Some(lit) => lit.value(),
                None => param.field.unraw().to_string(),
            };
            crate::attr::json_string(&wire, &mut json);
            json.push(':');
            json.push_str(&field.json);
        }
        json.push('}');
        let missing: Vec<&str> = model
            .iter()
            .filter(|(name, param)| {
                !param.optional && param.default.is_none() && !given.contains(name)
            })
            .map(|(name, _)| name.as_str())
            .collect();
        // A misspelled name is most likely the missing one: its error is the one to read.
        if !missing.is_empty() && !misnamed {
            let list = missing.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>();
            let add = missing
                .iter()
                .map(|n| format!("`{n} = ...`"))
                .collect::<Vec<_>>();
            errors.error_at(
                example.span,
                format!(
                    "this example leaves out {}, which `{fn_name}` requires: add {}",
                    list.join(" and "),
                    add.join(", ")
                ),
            );
        }
    }
    json.push(']');
    Some(json)
}

/// A tool is a plain, safe, non-generic `async fn`.
fn check_signature(sig: &syn::Signature, errors: &mut Errors) {
    if sig.asyncness.is_none() {
        errors.error(
            sig.fn_token,
            format!(
                "a tool must be an `async fn`: write `async fn {}(...)`",
                sig.ident
            ),
        );
    }
    if let Some(c) = &sig.constness {
        errors.error(c, "a tool cannot be a `const fn`: remove `const`");
    }
    if !matches!(sig.safety, syn::Safety::Default) {
        errors.error(
            &sig.safety,
            "a tool cannot be an `unsafe fn`: make the fn safe and use `unsafe` blocks inside",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.error(abi, "a tool cannot have an ABI: remove `extern`");
    }
    if let Some(v) = &sig.variadic {
        errors.error(v, "a tool cannot be variadic");
    }
    if !sig.generics.params.is_empty() {
        errors.error(
            &sig.generics,
            "a tool cannot be generic: the model sends JSON, which has one concrete type; \
             remove the generic parameters and use concrete types (`String`, a struct deriving \
             `Deserialize` and `JsonSchema`)",
        );
    }
    if let Some(wc) = &sig.generics.where_clause {
        errors.error(
            wc,
            "a tool cannot have a `where` clause: use concrete types",
        );
    }
}

/// The tool's name (`name = "..."`, else the fn's) and where it was written; it must
/// match the rule every provider accepts.
fn tool_name(attr: &ToolAttr, sig: &syn::Signature, errors: &mut Errors) -> (String, Span) {
    let (name, name_span) = match &attr.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (sig.ident.unraw().to_string(), sig.ident.span()),
    };
    if !is_valid_tool_name(&name) {
        errors.error_at(
            name_span,
            format!(
                "invalid tool name `{name}`: a tool name must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$ \
                 (start with a letter or `_`, then letters, digits, `_` or `-`, at most 64 in all); \
                 write `#[tool(name = \"...\")]` with a valid name"
            ),
        );
    }
    (name, name_span)
}

/// The description (`description = "..."`, else the doc comment), required, and the
/// items of the doc's `# Arguments` section.
fn description(
    attr: &ToolAttr,
    func: &RawFn,
    name: &str,
    errors: &mut Errors,
) -> (Description, Vec<(String, String)>) {
    let docs = docs::tool_docs(&func.attrs);
    let mut arguments: Vec<(String, String)> = Vec::new();
    let description = match (&attr.description, docs) {
        (Some(lit), docs) => {
            if let Docs::Text { arguments: a, .. } = docs {
                arguments = a;
            }
            if lit.value().trim().is_empty() {
                errors.error(
                    lit,
                    "the description is empty: say what the tool does, for the model",
                );
            }
            Some(Description::Text(lit.value()))
        }
        (
            None,
            Docs::Text {
                description,
                arguments: a,
            },
        ) if !description.trim().is_empty() => {
            arguments = a;
            Some(Description::Text(description))
        }
        (None, Docs::Raw(tokens)) => Some(Description::Tokens(tokens)),
        (None, _) => None,
    };
    let description = description.unwrap_or_else(|| {
        errors.error(
            &func.sig.ident,
            format!(
                "the tool `{name}` has no description, and a model cannot use a tool it cannot \
                 read about: add a doc comment (`/// What the tool does.`) above the fn, or \
                 `#[tool(description = \"...\")]`"
            ),
        );
        Description::Text(String::new())
    });
    (description, arguments)
}

/// `timeout = "30s"` or `timeout_ms = N`, not both; positive and at most a day.
fn timeout(attr: &ToolAttr, errors: &mut Errors) -> Option<u64> {
    match (&attr.timeout, &attr.timeout_ms) {
        (Some(t), Some(ms)) => {
            errors.error(
                ms,
                "`timeout` and `timeout_ms` both set: keep one (`timeout = \"30s\"`)",
            );
            parse_timeout(t, errors)
        }
        (Some(t), None) => parse_timeout(t, errors),
        (None, Some(ms)) => parse_timeout_ms(ms, errors),
        (None, None) => None,
    }
}

/// `timeout_ms = N`: positive and at most a day.
fn parse_timeout_ms(ms: &LitInt, errors: &mut Errors) -> Option<u64> {
    match ms.base10_parse::<u64>() {
        Ok(0) => {
            errors.error(ms, "a timeout of zero would fail every call: write a positive number of milliseconds, or remove `timeout_ms` to use the runtime's default");
            None
        }
        Ok(v) if v > MAX_TIMEOUT_MS => {
            errors.error(ms, format!("a timeout longer than a day ({MAX_TIMEOUT_MS} ms) is not supported: use a shorter one, or remove `timeout_ms`"));
            None
        }
        Ok(v) => Some(v),
        Err(e) => {
            errors.error(
                ms,
                format!("`timeout_ms` must be a whole number of milliseconds: {e}"),
            );
            None
        }
    }
}

/// A deferred tool says when it is offered (`activate_when`), and only a deferred one.
fn check_exposure(attr: &ToolAttr, errors: &mut Errors) {
    match (&attr.exposure, &attr.activate_when) {
        (Some(e), None) if **e == Exposure::Deferred => errors.error_at(
            e.span(),
            "a deferred tool needs `activate_when = path::to::fn`, an \
             `async fn(&ActivationContext) -> bool` saying when the tool is offered",
        ),
        (e, Some(path)) if e.as_ref().is_none_or(|e| **e != Exposure::Deferred) => errors.error(
            path,
            "`activate_when` only applies to deferred tools: add `exposure = \"deferred\"`, or \
             remove `activate_when`",
        ),
        _ => {}
    }
}

/// `max_in_flight` lets at least one call run; an exclusive group has a name.
fn check_concurrency(attr: &ToolAttr, errors: &mut Errors) {
    if let Some(n) = &attr.max_in_flight {
        match n.base10_parse::<usize>() {
            Ok(0) => errors.error(
                n,
                "`max_in_flight = 0` would never run the tool: write 1 or more",
            ),
            Ok(_) => {}
            Err(e) => errors.error(n, format!("`max_in_flight` must be a whole number: {e}")),
        }
    }
    if let Some(group) = &attr.exclusive
        && group.value().is_empty()
    {
        errors.error(
            group,
            "the exclusive group needs a name: `exclusive = \"database\"`",
        );
    }
}

/// `register` goes on a free fn (a toolbox registers as a whole); `tags` label a
/// registered tool, each a distinct, non-empty word.
fn check_registration(attr: &ToolAttr, place: Place, errors: &mut Errors) {
    if let (Some(register), Place::Toolbox) = (&attr.register, place) {
        errors.error_at(
            register.span(),
            "a `#[toolbox]` method is registered with its impl, which makes the value the \
             tools share: write `#[toolbox(register)]` (the type must implement `Default`) or \
             `#[toolbox(register = path::to::constructor)]` on the impl, and remove `register` \
             here",
        );
    }
    let Some(tags) = &attr.tags else { return };
    if attr.register.is_none() && place == Place::Free {
        errors.error_at(
            tags.first().map_or_else(Span::call_site, LitStr::span),
            "`tags` label a registered tool, to filter the registry: add `register` \
             (`#[tool(register, tags = [...])]`), or remove `tags`",
        );
    }
    check_tags(tags, errors);
}

/// Each tag is non-empty and given once.
pub fn check_tags(tags: &[LitStr], errors: &mut Errors) {
    let mut seen = HashSet::new();
    for tag in tags {
        let value = tag.value();
        if value.trim().is_empty() {
            errors.error(tag, "a tag needs a name: `tags = [\"billing\"]`");
        } else if !seen.insert(value.clone()) {
            errors.error(tag, format!("the tag `{value}` is given twice: keep one"));
        }
    }
}

/// A toolbox method takes `&self`; a free fn takes no `self`.
fn check_receiver(sig: &syn::Signature, place: Place, errors: &mut Errors) {
    match (sig.receiver(), place) {
        (Some(r), Place::Free) => errors.error(
            r,
            "`self` is only allowed in a `#[tool]` method of an impl block marked \
             `#[toolbox]`: add `#[toolbox]` to the impl block, or make this a free \
             `async fn`",
        ),
        (Some(r), Place::Toolbox) => {
            if !matches!(&r.kind, ReceiverKind::Reference(_, _, None)) {
                errors.error(r, "a toolbox tool takes `&self`: write `&self`");
            }
        }
        (None, Place::Toolbox) => errors.error(
            &sig.ident,
            "a `#[tool]` method of a `#[toolbox]` impl takes `&self`: add `&self` as the first \
             parameter, or move the fn out of the impl",
        ),
        (None, Place::Free) => {}
    }
}

/// The parameters other than `self`, each classified; two model parameters may not share
/// a schema name.
fn params(
    sig: &syn::Signature,
    param_attrs: &[Vec<syn::Attribute>],
    arguments: &[(String, String)],
    errors: &mut Errors,
) -> Vec<Param> {
    let mut params = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (i, arg) in sig.inputs.iter().enumerate() {
        let FnArg::Typed(pt) = arg else { continue };
        let own_attrs = param_attrs.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let binding = format_ident!("__agent_arg_{}", i);
        let Some(ident) = ast::param_ident(arg) else {
            errors.error(
                &pt.pat,
                "pattern parameters are not supported: name the parameter (`point: Point`) and \
                 destructure it in the body",
            );
            continue;
        };
        let ty = (*pt.ty).clone();
        let arg_attrs: Vec<&syn::Attribute> = own_attrs
            .iter()
            .filter(|a| a.path().is_ident("arg"))
            .collect();
        let model = match check_param_type(&ty, errors) {
            Some(ParamKind::Injected) => {
                for a in &arg_attrs {
                    errors.error(
                        a,
                        "`#[arg]` does not apply to a parameter the runtime supplies \
                         (`&ToolContext`, `State<T>`, `Progress`): remove it",
                    );
                }
                None
            }
            Some(ParamKind::Model) | None => {
                let model = model_param(ident, &ty, own_attrs, &arg_attrs, arguments, errors);
                check_distinct_name(&model, &mut seen, errors);
                Some(model)
            }
        };
        params.push(Param { binding, ty, model });
    }
    if let Some(extra) = params
        .iter()
        .filter(|param| param.model.is_some())
        .nth(MAX_MODEL_PARAMS)
    {
        errors.error(
            &extra.ty,
            format!(
                "a tool takes at most {MAX_MODEL_PARAMS} parameters from the model: group \
                 related ones into a struct deriving `Deserialize` and `JsonSchema`, and take \
                 that as one parameter"
            ),
        );
    }
    params
}

/// A parameter the model fills: its `#[arg]` keys and its description.
fn model_param(
    ident: &Ident,
    ty: &Type,
    own_attrs: &[syn::Attribute],
    arg_attrs: &[&syn::Attribute],
    arguments: &[(String, String)],
    errors: &mut Errors,
) -> ModelParam {
    let arg_attr = arg_attr(arg_attrs, errors);
    let rust_name = ident.unraw().to_string();
    let prop_name = match &arg_attr.rename {
        Some(lit) => lit.value(),
        None => rust_name.clone(),
    };
    let description = match &arg_attr.description {
        Some(lit) => Some(lit.value()),
        None => match docs::param_docs(own_attrs) {
            Ok(Some(text)) => Some(text),
            // The item naming the parameter itself comes first: its schema name may be
            // another parameter's Rust name.
            Ok(None) => arguments
                .iter()
                .find(|(n, _)| *n == rust_name)
                .or_else(|| arguments.iter().find(|(n, _)| *n == prop_name))
                .map(|(_, d)| d.clone())
                .filter(|d| !d.is_empty()),
            Err(exprs) => {
                errors.error(
                    &exprs[0],
                    "a parameter's doc must be a literal: write `/// text` or \
                     `#[arg(description = \"...\")]`",
                );
                None
            }
        },
    };
    if let Some(header) = &arg_attr.header {
        check_header_name(header, errors);
    }
    ModelParam {
        field: ident.clone(),
        rename: arg_attr.rename,
        description,
        default: arg_attr.default,
        optional: ast::is_option(ty),
        header: arg_attr.header,
    }
}

/// A header parameter's name becomes part of an HTTP header name, `Mcp-Param-{name}`:
/// it must be a non-empty token (RFC 9110: letters, digits and ``!#$%&'*+-.^_`|~``).
fn check_header_name(header: &LitStr, errors: &mut Errors) {
    let name = header.value();
    let is_tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(is_tchar) {
        errors.error(
            header,
            format!(
                "`header = \"{}\"` cannot name an HTTP header (it becomes \
                 `Mcp-Param-{}`): write letters, digits and `-`, e.g. `header = \"Region\"`",
                name.escape_default(),
                name.escape_default()
            ),
        );
    }
}

/// The keys of a parameter's one `#[arg(...)]`.
fn arg_attr(arg_attrs: &[&syn::Attribute], errors: &mut Errors) -> ArgAttr {
    let mut parsed = ArgAttr::default();
    for (n, a) in arg_attrs.iter().enumerate() {
        if n > 0 {
            errors.error(
                a,
                "write one `#[arg(...)]` per parameter: merge the keys into the first",
            );
            continue;
        }
        match &a.meta {
            syn::Meta::List(list) => parsed = ArgAttr::parse(list.tokens.clone(), errors),
            _ => errors.error(
                a,
                "write `#[arg(...)]` with keys: `description = \"...\"`, \
                 `rename = \"...\"`, `default` or `default = expr`",
            ),
        }
    }
    parsed
}

/// Two model parameters may not share a name in the schema.
fn check_distinct_name(model: &ModelParam, seen: &mut HashSet<String>, errors: &mut Errors) {
    let prop_name = match &model.rename {
        Some(lit) => lit.value(),
        None => model.field.unraw().to_string(),
    };
    if seen.insert(prop_name.clone()) {
        return;
    }
    let message = format!(
        "two parameters are named `{prop_name}` in the schema: give one another name with \
         `#[arg(rename = \"...\")]`"
    );
    match &model.rename {
        Some(lit) => errors.error(lit, message),
        None => errors.error(&model.field, message),
    }
}

/// Every item of an `# Arguments` section names a parameter: a stale or misspelled one
/// would silently leave a parameter undescribed.
fn check_arguments_section(
    func: &RawFn,
    params: &[Param],
    arguments: &[(String, String)],
    errors: &mut Errors,
) {
    let sig = &func.sig;
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
    for (name, _) in arguments {
        if param_names.contains(name) {
            continue;
        }
        let needle = format!("`{name}`");
        let at = func
            .attrs
            .iter()
            .filter(|a| docs::is_doc(a))
            .find(|a| a.to_token_stream().to_string().contains(&needle))
            .map_or_else(|| sig.ident.to_token_stream(), ToTokens::to_token_stream);
        let listed = if param_names.is_empty() {
            "none".to_owned()
        } else {
            param_names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        errors.error(
            at,
            format!(
                "the `# Arguments` section describes `{name}`, which is not a parameter of \
                 this tool: the parameters are {listed}"
            ),
        );
    }
}

/// The success type as written (`()` without an arrow), whether the fn returns a
/// `Result`, and the span its error conversion is reported at.
fn return_type(sig: &syn::Signature, errors: &mut Errors) -> (TokenStream, OutputKind, bool, Span) {
    match ast::read_return(&sig.output) {
        Return::Bare(None) => (quote!(()), OutputKind::NoSchema, false, sig.ident.span()),
        Return::Bare(Some(ty)) => {
            check_return_type(ty, errors);
            (ty.to_token_stream(), output_kind(ty), false, ty.span())
        }
        Return::Result(ty) => {
            check_return_type(ty, errors);
            let whole = match &sig.output {
                syn::ReturnType::Type(_, t) => t.span(),
                syn::ReturnType::Default => ty.span(),
            };
            (ty.to_token_stream(), output_kind(ty), true, whole)
        }
    }
}

/// What the success type is known to be, by its spelling: only `String`, `()`,
/// `&'static str`, `Content` and `Vec<Content>`, which cannot be anything else.
fn output_kind(ty: &Type) -> OutputKind {
    let named = |path: &syn::Path, name: &str| {
        path.segments
            .last()
            .is_some_and(|seg| seg.ident == name && seg.arguments.is_none())
    };
    match ty {
        Type::Tuple(t) if t.elems.is_empty() => OutputKind::NoSchema,
        Type::Reference(_) => OutputKind::NoSchema,
        Type::Path(p) if p.qself.is_none() => {
            let path = &p.path;
            let std_string = path.segments.len() == 3
                && (path.segments[0].ident == "std" || path.segments[0].ident == "alloc")
                && path.segments[1].ident == "string";
            if named(path, "String") && (path.segments.len() == 1 || std_string) {
                OutputKind::Text
            } else if path.segments.len() == 1 && named(path, "Content") {
                OutputKind::NoSchema
            } else {
                OutputKind::Schema
            }
        }
        _ => OutputKind::Schema,
    }
}

/// Classifies a parameter type, reporting the types no tool can take.
fn check_param_type(ty: &Type, errors: &mut Errors) -> Option<ParamKind> {
    match ty {
        Type::ImplTrait(_) => {
            errors.error(
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
                    errors.error(ty, "the context is shared: write `&ToolContext`");
                    None
                } else {
                    Some(ParamKind::Injected)
                }
            }
            _ => {
                let owned = owned_suggestion(&r.elem);
                errors.error(
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
fn check_return_type(ty: &Type, errors: &mut Errors) {
    let unsupported = "unsupported return type: a tool returns an owned value `T` or \
                       `Result<T, E>`, where `T` is `String`, `Content`, `Vec<Content>`, `()` or \
                       any `Serialize` type, and `E` is a `ToolError` or any `Display` error";
    match ty {
        Type::ImplTrait(_) => errors.error(
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
                errors.error(
                    ty,
                    format!("{unsupported}; a borrowed result cannot outlive the call: return `{}` (or `&'static str`)", owned_suggestion(&r.elem)),
                );
            }
        }
        Type::Never(_) | Type::TraitObject(_) | Type::Infer(_) | Type::Ptr(_) | Type::FnPtr(_) => {
            errors.error(ty, unsupported)
        }
        _ => {}
    }
}

/// Parses `"30s"`, `"500ms"`, `"2m"`, `"1h"` (any duration humantime reads, such as
/// `"1m 30s"`) into whole milliseconds, positive and at most a day.
fn parse_timeout(lit: &LitStr, errors: &mut Errors) -> Option<u64> {
    let text = lit.value();
    let duration = match humantime::parse_duration(text.trim()) {
        Ok(duration) => duration,
        Err(e) => {
            errors.error(
                lit,
                format!("cannot read the timeout `{text}` ({e}): write a number followed by a unit, such as \"500ms\", \"30s\", \"2m\" or \"1h\""),
            );
            return None;
        }
    };
    if duration.subsec_nanos() % 1_000_000 != 0 {
        errors.error(lit, format!("timeout `{text}` is not a whole number of milliseconds: write it in `ms` or larger units, such as \"500ms\""));
        return None;
    }
    match u64::try_from(duration.as_millis()) {
        Ok(0) => {
            errors.error(lit, "a timeout of zero would fail every call: write a positive duration such as \"30s\", or remove `timeout` to use the runtime's default");
            None
        }
        Ok(ms) if ms <= MAX_TIMEOUT_MS => Some(ms),
        _ => {
            errors.error(lit, format!("timeout `{text}` is longer than a day, the most a tool may declare: use a shorter one such as \"1h\""));
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
