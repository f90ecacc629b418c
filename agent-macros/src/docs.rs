//! Doc comments into descriptions: the tool's from the fn's `///`, each parameter's from
//! its own `///` or from the items of an `# Arguments` section.
//!
//! Rules for the tool's description: common indentation is removed, paragraphs are kept,
//! the rustdoc sections a model has no use for (`# Examples`, `# Errors`, `# Panics`,
//! `# Safety`, ...) are dropped, and the items of `# Arguments` / `# Parameters`
//! (`` * `city` - City name ``) become parameter descriptions. A doc attribute that is not
//! a string literal (`#[doc = include_str!("x.md")]`) cannot be read by a macro: then the
//! parts are joined with `concat!` and sent as written.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// Sections dropped from the description. `# Arguments` and its synonyms are dropped too,
/// after their items are read.
const DROPPED_SECTIONS: &[&str] = &[
    "examples",
    "example",
    "errors",
    "panics",
    "safety",
    "aborts",
    "undefined behavior",
];

const ARGUMENT_SECTIONS: &[&str] = &["arguments", "parameters", "args", "params"];

/// The doc comment of an item.
pub enum Docs {
    /// No doc attribute at all.
    None,
    /// Every part a string literal: the processed description and parameter items.
    Text {
        /// The description (may be empty when only dropped sections were written).
        description: String,
        /// `(name, description)` from an `# Arguments` section.
        arguments: Vec<(String, String)>,
    },
    /// Some part is not a literal: `concat!` of the parts, unprocessed.
    Raw(TokenStream),
}

/// Whether `attr` is a doc attribute (`///` or `#[doc = ...]`).
pub fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}

/// The values of the doc attributes: `Ok(lines)` when all are literals, else `Err(exprs)`.
fn doc_parts(attrs: &[Attribute]) -> Result<Vec<String>, Vec<Expr>> {
    let mut lines = Vec::new();
    let mut exprs = Vec::new();
    let mut raw = false;
    for attr in attrs.iter().filter(|a| is_doc(a)) {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => lines.push(s.value()),
            _ => raw = true,
        }
        exprs.push(nv.value.clone());
    }
    if raw { Err(exprs) } else { Ok(lines) }
}

/// Reads the doc comment of a tool.
pub fn tool_docs(attrs: &[Attribute]) -> Docs {
    match doc_parts(attrs) {
        Ok(lines) if lines.is_empty() => Docs::None,
        Ok(lines) => {
            let (description, arguments) = process(&split_lines(&lines));
            Docs::Text {
                description,
                arguments,
            }
        }
        Err(exprs) => {
            let mut parts = Vec::new();
            for (i, expr) in exprs.iter().enumerate() {
                if i > 0 {
                    parts.push(quote!("\n"));
                }
                parts.push(quote!(#expr));
            }
            Docs::Raw(quote!(::core::concat!(#(#parts),*)))
        }
    }
}

/// Reads the doc comment of a parameter: indentation removed, lines kept, trimmed.
/// `Err` when it is not all literals (parameters take literal docs only).
pub fn param_docs(attrs: &[Attribute]) -> Result<Option<String>, Vec<Expr>> {
    let lines = doc_parts(attrs)?;
    if lines.is_empty() {
        return Ok(None);
    }
    let text = dedent(&split_lines(&lines)).join("\n").trim().to_owned();
    Ok((!text.is_empty()).then_some(text))
}

/// `/** ... */` blocks carry several lines in one attribute: their first line follows
/// `/**` and their others are indented together, so each block is dedented on its own
/// before the lines of all attributes are.
fn split_lines(parts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for part in parts {
        let lines: Vec<String> = part.split('\n').map(|l| l.trim_end().to_owned()).collect();
        if lines.len() == 1 {
            out.extend(lines);
            continue;
        }
        out.push(format!(" {}", lines[0].trim_start()));
        out.extend(
            dedent(&lines[1..])
                .into_iter()
                .map(|l| if l.is_empty() { l } else { format!(" {l}") }),
        );
    }
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Removes the indentation common to the non-blank lines.
fn dedent(lines: &[String]) -> Vec<String> {
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l))
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(common..).unwrap_or("").to_owned())
        .collect()
}

/// A `# Heading` line outside a code fence: its lowercase title.
fn heading(line: &str) -> Option<String> {
    let title = line.strip_prefix('#')?;
    let title = title.trim_start_matches('#');
    if !title.starts_with(' ') {
        return None;
    }
    Some(title.trim().trim_end_matches(':').to_lowercase())
}

/// The description and the `# Arguments` items of dedented doc lines.
fn process(lines: &[String]) -> (String, Vec<(String, String)>) {
    let lines = dedent(lines);
    let mut kept: Vec<&str> = Vec::new();
    let mut arguments: Vec<(String, String)> = Vec::new();
    #[derive(PartialEq)]
    enum Section {
        Kept,
        Dropped,
        Arguments,
    }
    let mut section = Section::Kept;
    let mut in_fence = false;
    for line in &lines {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        if !in_fence && let Some(title) = heading(line) {
            section = if DROPPED_SECTIONS.contains(&title.as_str()) {
                Section::Dropped
            } else if ARGUMENT_SECTIONS.contains(&title.as_str()) {
                Section::Arguments
            } else {
                Section::Kept
            };
            if section != Section::Kept {
                continue;
            }
        }
        if fence {
            in_fence = !in_fence;
        }
        match section {
            Section::Kept => kept.push(line),
            Section::Dropped => {}
            Section::Arguments => read_argument_line(line, &mut arguments),
        }
    }
    // Collapse runs of blank lines; trim the ends.
    let mut out: Vec<&str> = Vec::new();
    for line in kept {
        if line.trim().is_empty() && out.last().is_none_or(|l| l.trim().is_empty()) {
            continue;
        }
        out.push(line);
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    (out.join("\n"), arguments)
}

/// `* `name` - text`, `- `name`: text`; an indented line continues the previous item.
fn read_argument_line(line: &str, arguments: &mut Vec<(String, String)>) {
    let trimmed = line.trim_start();
    if trimmed.is_empty() {
        return;
    }
    let item = trimmed
        .strip_prefix("* ")
        .or_else(|| trimmed.strip_prefix("- "))
        .or_else(|| trimmed.strip_prefix("+ "));
    if let Some(item) = item.filter(|_| indent_of(line) < 2) {
        let item = item.trim_start();
        let Some(rest) = item.strip_prefix('`') else {
            return;
        };
        let Some(end) = rest.find('`') else {
            return;
        };
        let name = rest[..end].trim().to_owned();
        let text = rest[end + 1..]
            .trim_start()
            .trim_start_matches(['-', ':', '—', '–'])
            .trim()
            .to_owned();
        arguments.push((name, text));
    } else if let Some((_, text)) = arguments.last_mut() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(trimmed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(doc: &str) -> (String, Vec<(String, String)>) {
        let lines: Vec<String> = doc.lines().map(|l| format!(" {l}")).collect();
        process(&split_lines(&lines))
    }

    #[test]
    fn keeps_paragraphs_and_drops_sections() {
        let (d, a) = run(
            "Get the weather.\n\nUses the service.\n\n# Arguments\n\n* `city` - City name\n  in full\n- `unit`: Unit\n\n# Examples\n\n```\n# use x;\nfoo();\n```\n\n# Notes\nKept.",
        );
        assert_eq!(d, "Get the weather.\n\nUses the service.\n\n# Notes\nKept.");
        assert_eq!(
            a,
            vec![
                ("city".to_owned(), "City name in full".to_owned()),
                ("unit".to_owned(), "Unit".to_owned())
            ]
        );
    }

    #[test]
    fn removes_common_indentation() {
        let lines = vec!["   a".to_owned(), "     b".to_owned(), String::new()];
        assert_eq!(process(&lines).0, "a\n  b");
    }

    #[test]
    fn hash_lines_in_code_are_not_headings() {
        let (d, _) = run("Run.\n\n```\n# Examples\n```");
        assert_eq!(d, "Run.\n\n```\n# Examples\n```");
    }
}
