//! Conversions both adapters share: tool results as text, tool definitions rendered in
//! a dialect, and the model's arguments mapped back through it.

use agent_core::{AgentError, AgentResult, Content, Dialect, ToolDefinition};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A tool result as one text, for providers whose tool results are text only. Text
/// blocks are kept as they are; a JSON block is written out only when the result has
/// no text (tools that return JSON return it as text too); other blocks are described
/// in brackets so the model knows something was there.
pub(crate) fn content_text(content: &[Content]) -> String {
    let has_text = content.iter().any(|c| c.as_text().is_some());
    let mut parts = Vec::with_capacity(content.len());
    for block in content {
        match block {
            Content::Text { text } => parts.push(text.clone()),
            Content::Json { value } if !has_text => parts.push(value.to_string()),
            Content::Json { .. } => {}
            other => parts.push(describe(other)),
        }
    }
    parts.join("\n")
}

/// A bracketed description of a block that cannot be sent as it is.
pub(crate) fn describe(block: &Content) -> String {
    match block {
        Content::Text { text } => text.clone(),
        Content::Json { value } => value.to_string(),
        Content::Image { mime_type, .. } => format!("[{mime_type} image not shown]"),
        Content::Audio { mime_type, .. } => format!("[{mime_type} audio not shown]"),
        Content::Resource {
            uri,
            text: Some(text),
            ..
        } => format!("[resource {uri}]\n{text}"),
        Content::Resource { uri, mime_type, .. } => match mime_type {
            Some(mime) => format!("[resource {uri} ({mime}), binary, not shown]"),
            None => format!("[resource {uri}, binary, not shown]"),
        },
        Content::ResourceLink {
            uri,
            name,
            description,
            ..
        } => match description {
            Some(description) => format!("[resource link {name}: {uri} — {description}]"),
            None => format!("[resource link {name}: {uri}]"),
        },
        _ => "[content not shown]".to_owned(),
    }
}

/// Every tool rendered in `dialect`; a tool the dialect cannot express is an
/// [`AgentError::InvalidTool`] naming it and the reason, and nothing is sent.
pub(crate) fn render_tools(
    dialect: Dialect,
    tools: &[Arc<ToolDefinition>],
) -> AgentResult<Vec<Value>> {
    tools
        .iter()
        .map(|tool| {
            dialect.render(tool).map_err(|e| AgentError::InvalidTool {
                tool: e.tool.clone(),
                reason: format!("cannot be rendered for {}: {}", e.dialect, e.reason),
            })
        })
        .collect()
}

/// The model's arguments for `name` mapped back through `dialect` (a `null` for an
/// optional parameter becomes absent...). Arguments that are not an object, and calls
/// of tools that were not offered, are left for the runtime to reject.
pub(crate) fn map_arguments(
    dialect: Dialect,
    tools: &[Arc<ToolDefinition>],
    name: &str,
    arguments: Value,
) -> Value {
    if !arguments.is_object() {
        return arguments;
    }
    match tools.iter().find(|tool| tool.name == name) {
        Some(tool) => dialect.normalize_arguments(tool, arguments),
        None => arguments,
    }
}

/// Arguments a provider sent as a JSON string: parsed, or kept as the string when they
/// do not parse, so the runtime answers the model with an invalid-arguments error. An
/// empty string (some servers send it for a tool without parameters) is `{}`.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

/// A string field of a JSON object, or `None`.
pub(crate) fn str_field<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// A token count: a non-negative integer field, or 0.
pub(crate) fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_of_results() {
        let json_result = [Content::text("{\"a\":1}"), Content::json(json!({"a": 1}))];
        assert_eq!(content_text(&json_result), "{\"a\":1}");
        assert_eq!(content_text(&[Content::json(json!([1, 2]))]), "[1,2]");
        assert_eq!(
            content_text(&[Content::text("see"), Content::image("AAAA", "image/png")]),
            "see\n[image/png image not shown]"
        );
        assert_eq!(content_text(&[]), "");
    }

    #[test]
    fn arguments_parse_or_stay_strings() {
        assert_eq!(parse_arguments("{\"x\": 1}"), json!({"x": 1}));
        assert_eq!(parse_arguments(""), json!({}));
        assert_eq!(parse_arguments("{\"x\": "), json!("{\"x\": "));
    }
}
