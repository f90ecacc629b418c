//! The vocabulary of `#[tool(...)]` and `#[arg(...)]`, parsed with darling. Every value
//! keeps its tokens, so later errors can point at what the user wrote.

use crate::errors::Errors;
use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::{Flag, SpannedValue};
use quote::ToTokens;
use syn::{Expr, LitInt, LitStr, Path};

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
    "crate",
];

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
                if seen.contains(&key) {
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
fn did_you_mean<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
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
