//! [`assert_dialects`]: one line in a user's test suite proving every tool renders for
//! every provider.

use super::Dialect;
use super::check::anthropic_budget;
use super::vocab::{ANTHROPIC_MAX_OPTIONAL, ANTHROPIC_MAX_STRICT_TOOLS, ANTHROPIC_MAX_UNIONS};
use crate::model::set::{ToolSet, is_valid_tool_name};

/// Every problem rendering the tools of `set` in `dialects` would hit, one line each
/// (`tool `x` cannot be rendered for gemini: ...`); empty when all render cleanly.
///
/// Besides each tool's schema, the set as a whole is checked against per-request
/// limits (Anthropic strict tool use: 20 strict tools, 24 optional and 16 union-typed
/// parameters across them), since a set is what is sent in one request.
pub fn dialect_report(set: &ToolSet, dialects: &[Dialect]) -> Vec<String> {
    let mut problems = Vec::new();
    for dialect in dialects {
        let mut optional = 0;
        let mut unions = 0;
        for tool in set {
            let Some(definition) = set.definition(tool.name()) else {
                continue;
            };
            if !is_valid_tool_name(&definition.name) {
                problems.push(format!(
                    "tool `{}` has a name {dialect} refuses: it must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$",
                    definition.name
                ));
            }
            if definition.description.trim().is_empty() {
                problems.push(format!(
                    "tool `{}` has no description; a model cannot use a tool it cannot read about",
                    definition.name
                ));
            }
            match dialect.render_parameters(definition) {
                Ok(parameters) => {
                    if *dialect == Dialect::AnthropicStrict {
                        let (o, u) = anthropic_budget(&parameters);
                        optional += o;
                        unions += u;
                    }
                }
                Err(error) => problems.push(error.to_string()),
            }
        }
        if *dialect == Dialect::AnthropicStrict {
            let limits = [
                (set.len(), ANTHROPIC_MAX_STRICT_TOOLS, "strict tools"),
                (optional, ANTHROPIC_MAX_OPTIONAL, "optional parameters"),
                (
                    unions,
                    ANTHROPIC_MAX_UNIONS,
                    "parameters with `anyOf` or type arrays",
                ),
            ];
            for (count, limit, what) in limits {
                if count > limit {
                    problems.push(format!(
                        "the set has {count} {what}; Anthropic strict tool use allows {limit} per request"
                    ));
                }
            }
        }
    }
    problems
}

/// Panics, listing every problem, unless every tool of `set` renders cleanly for every
/// [`Dialect`]. Meant for your own test suite:
///
/// ```
/// # use toolwright_core::{ToolSet, dialect::assert_dialects};
/// # fn my_tools() -> ToolSet { ToolSet::new() }
/// // In `tests/tools.rs`, inside a `#[test] fn`:
/// assert_dialects(&my_tools());
/// ```
#[track_caller]
pub fn assert_dialects(set: &ToolSet) {
    assert_dialects_for(set, &Dialect::ALL);
}

/// [`assert_dialects`] for the dialects you actually send to.
#[track_caller]
pub fn assert_dialects_for(set: &ToolSet, dialects: &[Dialect]) {
    let problems = dialect_report(set, dialects);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| format!("  - {p}")).collect();
        panic!(
            "{} problem(s) rendering {} tool(s) for {}:\n{}",
            problems.len(),
            set.len(),
            dialects
                .iter()
                .map(|d| d.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            list.join("\n")
        );
    }
}
