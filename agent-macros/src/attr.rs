//! The vocabulary of `#[tool(...)]` and `#[arg(...)]`, parsed with darling. Every value
//! keeps its tokens, so later errors can point at what the user wrote.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::{Flag, SpannedValue};
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
    /// `validate_output = path`: fn(&[Content]) -> Result<(), String>.
    pub validate_output: Option<Path>,
    /// `validate_progress = path`: fn(&serde_json::Value) -> Result<(), String>.
    pub validate_progress: Option<Path>,
    /// `crate = path`: where agent_core is, for crates that re-export it.
    #[darling(rename = "crate")]
    pub krate: Option<Path>,
}

impl ToolAttr {
    /// Parses the tokens inside `#[tool(...)]`.
    pub fn parse(tokens: proc_macro2::TokenStream) -> darling::Result<Self> {
        if tokens.is_empty() {
            return Ok(Self::default());
        }
        let items = NestedMeta::parse_meta_list(tokens)?;
        Self::from_list(&items)
    }
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
    pub default: Option<DefaultAttr>,
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
