//! The vocabulary of `#[tool(...)]` and `#[arg(...)]`, parsed with darling. Every value
//! keeps its tokens, so later errors can point at what the user wrote.

use crate::errors::Errors;
use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::{Flag, SpannedValue};
use proc_macro2::{Literal, Span};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, LitInt, LitStr, Meta, Path, Token, braced, bracketed, token};

/// The keys of `#[tool(...)]`. Unknown keys get darling's did-you-mean, repeated keys
/// are errors; the meaning of each value is checked in `valid.rs`.
#[derive(Debug, Default, FromMeta)]
pub struct ToolAttr {
    /// `name = "..."`: the tool's name instead of the fn's.
    pub name: Option<LitStr>,
    /// `description = "..."`: instead of the doc comment.
    pub description: Option<LitStr>,
    /// `title = "..."`: a human-readable title (annotations.title).
    pub title: Option<LitStr>,
    /// `timeout = "30s"`.
    pub timeout: Option<LitStr>,
    /// `timeout_ms = 30000`.
    pub timeout_ms: Option<LitInt>,
    /// `exposure = "direct" | "deferred" | "hidden"`.
    pub exposure: Option<SpannedValue<Exposure>>,
    /// `activate_when = path`: an async fn(&ActivationContext) -> bool.
    pub activate_when: Option<Path>,
    /// `origin = "..."`.
    pub origin: Option<LitStr>,
    /// `version = "..."`.
    pub version: Option<LitStr>,
    /// `requirements = ["network"]`.
    pub requirements: Option<Vec<LitStr>>,
    /// `require_approval` or `require_approval = path`.
    pub require_approval: Option<SpannedValue<ApprovalAttr>>,
    /// `on_error = "return_to_model" | "fail_run"`.
    pub on_error: Option<SpannedValue<OnError>>,
    /// Effect hints.
    pub read_only: Flag,
    /// Effect hints.
    pub destructive: Flag,
    /// Effect hints.
    pub idempotent: Flag,
    /// Effect hints.
    pub open_world: Flag,
    /// `max_in_flight = N`.
    pub max_in_flight: Option<LitInt>,
    /// `exclusive = "group"`.
    pub exclusive: Option<LitStr>,
    /// `sequential`.
    pub sequential: Flag,
    /// `task` or `task = "optional" | "required"`: the call may run as an MCP task.
    pub task: Option<SpannedValue<TaskAttr>>,
    /// `validate_output = path`: fn(&[Content]) -> Result<(), String>.
    pub validate_output: Option<Path>,
    /// `validate_progress = path`: fn(&serde_json::Value) -> Result<(), String>.
    pub validate_progress: Option<Path>,
    /// `register`: add the tool to the link-time registry.
    pub register: Option<SpannedValue<RegisterAttr>>,
    /// `tags = ["billing"]`: labels of a registered tool, for filtering the registry.
    pub tags: Option<Vec<LitStr>>,
    /// `strict` or `strict = false`: the tool's own strict-mode choice.
    pub strict: Option<StrictAttr>,
    /// `example(city = "Paris", days = 3)`, any number of times.
    #[darling(multiple)]
    pub example: Vec<ExampleAttr>,
    /// `crate = path`: where toolwright_core is, for crates that re-export it.
    #[darling(rename = "crate")]
    pub krate: Option<Path>,
}

/// `register` on a `#[tool]`: a word, no value.
#[derive(Debug, Clone, Copy)]
pub struct RegisterAttr;

impl FromMeta for RegisterAttr {
    fn from_word() -> darling::Result<Self> {
        Ok(Self)
    }

    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        Err(darling::Error::custom(
            "`register` takes no value: write `#[tool(register)]`, and labels as \
             `tags = [\"...\"]`",
        )
        .with_span(expr))
    }

    fn from_list(_: &[NestedMeta]) -> darling::Result<Self> {
        Err(darling::Error::custom(
            "`register` takes no value: write `#[tool(register)]`, and labels as \
             `tags = [\"...\"]`",
        ))
    }
}

/// The keys of `#[tool(...)]`, for did-you-mean.
pub const TOOL_KEYS: &[&str] = &[
    "name",
    "description",
    "title",
    "timeout",
    "timeout_ms",
    "exposure",
    "activate_when",
    "origin",
    "version",
    "requirements",
    "require_approval",
    "on_error",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "max_in_flight",
    "exclusive",
    "sequential",
    "task",
    "validate_output",
    "validate_progress",
    "register",
    "tags",
    "strict",
    "example",
    "crate",
];

/// The keys of `#[tool(...)]` that may be given more than once.
const REPEATABLE_KEYS: &[&str] = &["example"];

/// The keys of `#[arg(...)]`.
pub const ARG_KEYS: &[&str] = &["description", "rename", "default", "header"];

impl ToolAttr {
    /// Parses the tokens inside `#[tool(...)]`; errors go to `errors` and the keys that did
    /// parse are kept, so one bad key does not hide the others' checks.
    pub fn parse(tokens: proc_macro2::TokenStream, errors: &mut Errors) -> Self {
        parse_keys(tokens, TOOL_KEYS, "#[tool]", errors)
    }
}

impl ArgAttr {
    /// Parses the tokens inside `#[arg(...)]`.
    pub fn parse(tokens: proc_macro2::TokenStream, errors: &mut Errors) -> Self {
        parse_keys(tokens, ARG_KEYS, "#[arg]", errors)
    }
}

fn parse_keys<T: FromMeta + Default>(
    tokens: proc_macro2::TokenStream,
    known: &[&str],
    attr: &str,
    errors: &mut Errors,
) -> T {
    if tokens.is_empty() {
        return T::default();
    }
    let items = match NestedMeta::parse_meta_list(tokens) {
        Ok(items) => items,
        Err(e) => {
            errors.darling(e.into());
            return T::default();
        }
    };
    let mut seen: Vec<String> = Vec::new();
    let items: Vec<NestedMeta> = items
        .into_iter()
        .filter(|item| {
            let path = match item {
                NestedMeta::Meta(meta) => meta.path(),
                NestedMeta::NameValueInvalidExpr(meta) => &meta.path,
                NestedMeta::Lit(_) => return true,
            };
            let key = match path.get_ident() {
                Some(ident) => ident.to_string(),
                None => path.to_token_stream().to_string().replace(' ', ""),
            };
            if known.contains(&key.as_str()) {
                if seen.contains(&key) && !REPEATABLE_KEYS.contains(&key.as_str()) {
                    errors.error(
                        path,
                        format!("`{key}` is given twice in `{attr}`: keep one"),
                    );
                    return false;
                }
                seen.push(key);
                return true;
            }
            let hint = match did_you_mean(&key, known) {
                Some(near) => format!("did you mean `{near}`? "),
                None => String::new(),
            };
            errors.error(
                path,
                format!(
                    "unknown key `{key}` in `{attr}`: {hint}the keys are {}",
                    known
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            false
        })
        .collect();
    match T::from_list(&items) {
        Ok(parsed) => parsed,
        Err(e) => {
            errors.darling(e);
            T::default()
        }
    }
}

/// The known key closest to `key`, if one is close enough to be a typo.
pub fn did_you_mean<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let squash = |s: &str| s.replace(['_', '-'], "").to_lowercase();
    if let Some(k) = known.iter().find(|k| squash(k) == squash(key)) {
        return Some(k);
    }
    known
        .iter()
        .map(|k| (edit_distance(key, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// `exposure = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromMeta)]
#[darling(rename_all = "snake_case")]
pub enum Exposure {
    /// Always offered.
    Direct,
    /// Offered while `activate_when` says so.
    Deferred,
    /// Never offered to the model.
    Hidden,
}

/// `on_error = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromMeta)]
#[darling(rename_all = "snake_case")]
pub enum OnError {
    /// The error becomes the tool's result.
    ReturnToModel,
    /// The error ends the run.
    FailRun,
}

/// `task` (a task when the caller supports tasks), `task = "required"` (only as a task)
/// or `task = "on_demand"` (a task from where the tool says so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskAttr {
    /// `task` or `task = "optional"`.
    Optional,
    /// `task = "required"`.
    Required,
    /// `task = "on_demand"`.
    OnDemand,
}

impl FromMeta for TaskAttr {
    fn from_word() -> darling::Result<Self> {
        Ok(Self::Optional)
    }

    fn from_string(value: &str) -> darling::Result<Self> {
        match value {
            "optional" => Ok(Self::Optional),
            "required" => Ok(Self::Required),
            "on_demand" => Ok(Self::OnDemand),
            other => Err(darling::Error::custom(format!(
                "unknown task support `{other}`: write `task` (a task when the caller \
                 supports tasks, a plain call otherwise), `task = \"required\"` (only as a task) \
                 or `task = \"on_demand\"` (a task from where the tool says so)"
            ))),
        }
    }

    fn from_bool(value: bool) -> darling::Result<Self> {
        if value {
            Ok(Self::Optional)
        } else {
            Err(darling::Error::custom(
                "`task = false` is the default: remove the key",
            ))
        }
    }
}

/// `strict` (`true`) or `strict = true | false`.
#[derive(Debug, Clone, Copy)]
pub struct StrictAttr(pub bool);

impl FromMeta for StrictAttr {
    fn from_word() -> darling::Result<Self> {
        Ok(Self(true))
    }

    fn from_bool(value: bool) -> darling::Result<Self> {
        Ok(Self(value))
    }

    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Bool(value),
                ..
            }) => Ok(Self(value.value)),
            Expr::Group(group) => Self::from_expr(&group.expr),
            _ => Err(darling::Error::custom(
                "write `strict` (this tool in its provider's strict mode) or `strict = false` \
                 (never in strict mode)",
            )
            .with_span(expr)),
        }
    }
}

/// `require_approval` (every call) or `require_approval = path` (decided per call).
#[derive(Debug, Clone)]
pub enum ApprovalAttr {
    /// Every call needs approval.
    Always,
    /// `fn(&serde_json::Value) -> bool` decides.
    Path(Path),
}

impl FromMeta for ApprovalAttr {
    fn from_word() -> darling::Result<Self> {
        Ok(Self::Always)
    }

    fn from_bool(value: bool) -> darling::Result<Self> {
        if value {
            Ok(Self::Always)
        } else {
            Err(darling::Error::custom(
                "`require_approval = false` is the default: remove the key",
            ))
        }
    }

    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Path(path) if path.qself.is_none() => Ok(Self::Path(path.path.clone())),
            Expr::Lit(lit) => Self::from_value(&lit.lit),
            Expr::Group(group) => Self::from_expr(&group.expr),
            _ => Err(darling::Error::custom(
                "expected `require_approval` alone, or `require_approval = path::to::fn` naming a `fn(&serde_json::Value) -> bool`",
            )
            .with_span(expr)),
        }
    }
}

/// The keys of `#[arg(...)]` on a parameter.
#[derive(Debug, Default, FromMeta)]
pub struct ArgAttr {
    /// `description = "..."`.
    pub description: Option<LitStr>,
    /// `rename = "..."`: the property's name in the schema.
    pub rename: Option<LitStr>,
    /// `default` or `default = expr`.
    pub default: Option<SpannedValue<DefaultAttr>>,
    /// `header = "Name"`: MCP clients also send the argument as the HTTP header
    /// `Mcp-Param-Name` (`x-mcp-header`).
    pub header: Option<LitStr>,
}

/// `default` (uses `Default::default()`) or `default = expr`.
#[derive(Debug, Clone)]
pub enum DefaultAttr {
    /// `Default::default()`.
    Trait,
    /// The expression.
    Expr(Box<Expr>),
}

impl FromMeta for DefaultAttr {
    fn from_word() -> darling::Result<Self> {
        Ok(Self::Trait)
    }

    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        Ok(Self::Expr(Box::new(expr.clone())))
    }
}

/// `example(name = value, ...)`: one example input. Each value is a JSON literal (a
/// string, a number, `true`, `false`, `null`, `[...]`, or `{"key": value}`), written as
/// the model would send it; the macro turns it into JSON text here, and `valid.rs`
/// checks the names against the fn's parameters.
#[derive(Debug, Clone)]
pub struct ExampleAttr {
    /// The `example` token, where a missing parameter is reported.
    pub span: Span,
    /// The arguments, in the order written.
    pub fields: Vec<ExampleField>,
}

/// One `name = value` of an example.
#[derive(Debug, Clone)]
pub struct ExampleField {
    /// The parameter's name as the fn spells it.
    pub name: Ident,
    /// The value as JSON text.
    pub json: String,
}

impl FromMeta for ExampleAttr {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        let span = item.path().span();
        let Meta::List(list) = item else {
            return Err(darling::Error::custom(
                "write an example as `example(name = value, ...)`, one `name = value` per \
                 parameter, each value a JSON literal: `example(city = \"Paris\", days = 3)`",
            )
            .with_span(item));
        };
        let fields = list
            .parse_args_with(Punctuated::<ExampleField, Token![,]>::parse_terminated)
            .map_err(darling::Error::from)?;
        Ok(Self {
            span,
            fields: fields.into_iter().collect(),
        })
    }
}

impl Parse for ExampleField {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name = Ident::parse_any(input)?;
        input.parse::<Token![=]>()?;
        let mut json = String::new();
        json_value(input, &mut json)?;
        Ok(Self { name, json })
    }
}

/// What an example's value may be, for the error on anything else.
const JSON_VALUES: &str = "an example's values are JSON, as the model sends them: a string, \
     a number, `true`, `false`, `null`, `[...]` or `{\"key\": value}` (an enum variant is \
     its name in the schema, such as `\"celsius\"`)";

/// Reads one JSON literal written in Rust tokens and appends it to `out` as JSON text.
fn json_value(input: ParseStream<'_>, out: &mut String) -> syn::Result<()> {
    if input.peek(token::Bracket) {
        let content;
        bracketed!(content in input);
        let items = Punctuated::<JsonText, Token![,]>::parse_terminated(&content)?;
        push_joined(out, '[', items.iter().map(|item| &item.0), ']');
        return Ok(());
    }
    if input.peek(token::Brace) {
        let content;
        braced!(content in input);
        let entries = Punctuated::<JsonEntry, Token![,]>::parse_terminated(&content)?;
        push_joined(out, '{', entries.iter().map(|entry| &entry.0), '}');
        return Ok(());
    }
    if input.peek(Token![-]) {
        let minus = input.parse::<Token![-]>()?;
        out.push('-');
        return match input.parse::<Lit>() {
            Ok(Lit::Int(int)) => number(&int.token(), int.suffix(), int.base10_digits(), out),
            Ok(Lit::Float(float)) => {
                number(&float.token(), float.suffix(), float.base10_digits(), out)
            }
            _ => Err(syn::Error::new(minus.span, JSON_VALUES)),
        };
    }
    if input.peek(Ident::peek_any) {
        let ident = Ident::parse_any(input)?;
        return match ident.to_string().as_str() {
            word @ ("true" | "false" | "null") => {
                out.push_str(word);
                Ok(())
            }
            _ => Err(syn::Error::new(ident.span(), JSON_VALUES)),
        };
    }
    match input.parse::<Lit>() {
        Ok(Lit::Str(text)) => {
            json_string(&text.value(), out);
            Ok(())
        }
        Ok(Lit::Int(int)) => number(&int.token(), int.suffix(), int.base10_digits(), out),
        Ok(Lit::Float(float)) => number(&float.token(), float.suffix(), float.base10_digits(), out),
        Ok(other) => Err(syn::Error::new(other.span(), JSON_VALUES)),
        Err(error) => Err(syn::Error::new(error.span(), JSON_VALUES)),
    }
}

/// `parts` between `open` and `close`, separated by commas.
fn push_joined<'a>(
    out: &mut String,
    open: char,
    parts: impl Iterator<Item = &'a String>,
    close: char,
) {
    out.push(open);
    for (i, part) in parts.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(part);
    }
    out.push(close);
}

/// A number: its digits as JSON has them (a Rust suffix such as `u8` would say the
/// value has a Rust type, which it does not: it is what the model sends).
fn number(token: &Literal, suffix: &str, digits: &str, out: &mut String) -> syn::Result<()> {
    if !suffix.is_empty() {
        return Err(syn::Error::new(
            token.span(),
            format!(
                "write the number without the `{suffix}` suffix: an example's values are \
                 JSON, as the model sends them"
            ),
        ));
    }
    // A float's digits may end in `.` (`1.`), which JSON does not allow.
    out.push_str(digits);
    if digits.ends_with('.') {
        out.push('0');
    }
    Ok(())
}

/// A JSON string literal of `text`.
pub fn json_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// One element of a JSON array, as JSON text.
struct JsonText(String);

impl Parse for JsonText {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut json = String::new();
        json_value(input, &mut json)?;
        Ok(Self(json))
    }
}

/// One `"key": value` of a JSON object (the key may also be written bare, `key: value`),
/// as JSON text.
struct JsonEntry(String);

impl Parse for JsonEntry {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key = if input.peek(LitStr) {
            input.parse::<LitStr>()?.value()
        } else {
            Ident::parse_any(input)
                .map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "write an object's entries as `\"key\": value`, as in JSON",
                    )
                })?
                .unraw()
                .to_string()
        };
        input.parse::<Token![:]>()?;
        let mut entry = String::new();
        json_string(&key, &mut entry);
        entry.push(':');
        json_value(input, &mut entry)?;
        Ok(Self(entry))
    }
}
