//! [`assert_dialects`]: one line in a user's test suite proving every tool renders for
//! every provider.

use super::Dialect;
use super::check::anthropic_budget;
use super::example::mismatch;
use super::vocab::{ANTHROPIC_MAX_OPTIONAL, ANTHROPIC_MAX_STRICT_TOOLS, ANTHROPIC_MAX_UNIONS};
use crate::model::set::{ToolDefinition, ToolSet, is_valid_tool_name};
use serde_json::Value;

/// Every problem rendering the tools of `set` in `dialects` would hit, one line each
/// (`tool `x` cannot be rendered for gemini: ...`); empty when all render cleanly.
///
/// Besides each tool's schema, the set as a whole is checked against per-request
/// limits (Anthropic strict tool use: 20 strict tools, 24 optional and 16 union-typed
/// parameters across them), since a set is what is sent in one request. A tool's own
/// [`strict`](crate::tool::Tool::strict) choice is honoured: it is checked in the
/// dialect a client of that provider sends it in.
///
/// Each tool's [`input_examples`](crate::tool::Tool::input_examples) are checked
/// against its own schema (`tool `x` has an example that does not match its schema:
/// example 2 {...}: at `/days`: expected integer, found "three"`), and, for a provider
/// that shows them, against the schema as rendered for it.
pub fn dialect_report(set: &ToolSet, dialects: &[Dialect]) -> Vec<String> {
    let mut problems = Vec::new();
    for tool in set {
        if let Some(definition) = set.definition(tool.name()) {
            example_problems(definition, None, &mut problems);
        }
    }
    for dialect in dialects {
        let mut strict_tools = 0;
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
            // A tool that says `strict` is sent in the dialect it picks, so that is the
            // one its schema must fit (a client in `anthropic` sends it strict).
            let sent_in = dialect.for_tool(definition);
            match sent_in.render_parameters(definition) {
                Ok(parameters) => {
                    if sent_in == Dialect::AnthropicStrict {
                        let (o, u) = anthropic_budget(&parameters);
                        strict_tools += 1;
                        optional += o;
                        unions += u;
                    }
                    if sent_in.shows_input_examples() && sent_in != Dialect::Anthropic {
                        // The provider checks the examples against the schema it was
                        // sent, which a strict dialect rewrote.
                        example_problems(definition, Some((sent_in, &parameters)), &mut problems);
                    }
                }
                Err(error) => problems.push(error.to_string()),
            }
        }
        if matches!(dialect, Dialect::Anthropic | Dialect::AnthropicStrict) {
            let limits = [
                (strict_tools, ANTHROPIC_MAX_STRICT_TOOLS, "strict tools"),
                (optional, ANTHROPIC_MAX_OPTIONAL, "optional parameters"),
                (
                    unions,
                    ANTHROPIC_MAX_UNIONS,
                    "parameters with `anyOf` or type arrays",
                ),
            ];
            for (count, limit, what) in limits {
                let problem = format!(
                    "the set has {count} {what}; Anthropic strict tool use allows {limit} per request"
                );
                // Checked for both Anthropic dialects: the same count is one problem.
                if count > limit && !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
        }
    }
    problems
}

/// A problem per example of `definition` that does not match its own schema, or, with
/// `rendered`, the schema as a dialect rendered it (an example already reported against
/// the tool's own schema is not reported again).
fn example_problems(
    definition: &ToolDefinition,
    rendered: Option<(Dialect, &Value)>,
    problems: &mut Vec<String>,
) {
    for (index, example) in definition.input_examples.iter().enumerate() {
        if rendered.is_some() && mismatch(&definition.parameters, example).is_some() {
            continue;
        }
        let (schema, sent) = match rendered {
            Some((dialect, schema)) => (schema, format!(" as sent to {dialect}")),
            None => (&definition.parameters, String::new()),
        };
        if let Some(problem) = mismatch(schema, example) {
            problems.push(format!(
                "tool `{}` has an example that does not match its schema{sent}: example {} {}: {problem}",
                definition.name,
                index + 1,
                example
            ));
        }
    }
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
