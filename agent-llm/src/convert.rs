//! Conversions both adapters share: tool results as text, tool definitions rendered in
//! a dialect, and the model's arguments mapped back through it.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;
use toolwright_core::{
    AgentError, AgentResult, Content, Message, ModelSettings,
    dialect::Dialect,
    llm::{LlmRequest, OutputSchema, ToolChoice},
    toolset::ToolDefinition,
};

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

/// Every tool the model may call on `request`: those sent in full, then those sent for
/// the provider's tool search.
pub(crate) fn callable<'a>(request: &LlmRequest<'a>) -> Cow<'a, [Arc<ToolDefinition>]> {
    if request.deferred.is_empty() {
        Cow::Borrowed(request.tools)
    } else {
        Cow::Owned(
            request
                .tools
                .iter()
                .chain(request.deferred)
                .cloned()
                .collect(),
        )
    }
}

/// The tools to send for a provider without an allowed-tools choice: with
/// [`ToolChoice::Allowed`] only the allowed ones, otherwise all of `tools`.
pub(crate) fn allowed<'a>(
    tools: &'a [Arc<ToolDefinition>],
    settings: &ModelSettings,
) -> Cow<'a, [Arc<ToolDefinition>]> {
    match &settings.tool_choice {
        Some(ToolChoice::Allowed(names)) => Cow::Owned(
            tools
                .iter()
                .filter(|tool| names.contains(&tool.name))
                .cloned()
                .collect(),
        ),
        _ => Cow::Borrowed(tools),
    }
}

/// Marks rendered tools `"defer_loading": true`: their schemas are read only once the
/// provider's tool search found them (Anthropic and OpenAI Responses spell it alike).
pub(crate) fn mark_deferred(tools: &mut [Value]) {
    for tool in tools {
        if let Value::Object(tool) = tool {
            tool.insert("defer_loading".into(), Value::Bool(true));
        }
    }
}

/// The JSON Schema of `output`, rendered in `dialect` (for a structured-output field).
pub(crate) fn render_output(dialect: Dialect, output: &OutputSchema) -> AgentResult<Value> {
    dialect
        .render_parameters(&output.as_tool())
        .map_err(|e| AgentError::InvalidTool {
            tool: output.name.clone(),
            reason: format!(
                "the output schema cannot be rendered for {}: {}",
                e.dialect, e.reason
            ),
        })
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

/// An image as a `data:` URL, for the APIs that take images by URL.
pub(crate) fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

/// The system messages' text, joined, for the APIs that take it apart from the
/// conversation.
pub(crate) fn system_text(messages: &[Message]) -> String {
    let parts: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    parts.join("\n\n")
}

/// A conversation's turns for the APIs that want strictly alternating roles:
/// consecutive blocks of one role share one turn, so one turn's tool results sit
/// together after the calls, before any text the user adds.
#[derive(Default)]
pub(crate) struct Turns(Vec<(&'static str, Vec<Value>)>);

impl Turns {
    /// Adds `blocks` to the last turn when it is `role`'s, else opens a turn; no
    /// blocks, no turn (the APIs refuse empty ones).
    pub fn push(&mut self, role: &'static str, blocks: Vec<Value>) {
        if blocks.is_empty() {
            return;
        }
        match self.0.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => self.0.push((role, blocks)),
        }
    }

    /// Each turn as `{"role": role, <key>: blocks}`.
    pub fn into_json(self, key: &str) -> Vec<Value> {
        self.0
            .into_iter()
            .map(|(role, blocks)| {
                let mut turn = Map::new();
                turn.insert("role".into(), Value::from(role));
                turn.insert(key.into(), Value::Array(blocks));
                Value::Object(turn)
            })
            .collect()
    }
}

/// A call's arguments as the object the APIs that take objects want; arguments that
/// never parsed (they came from another provider) are sent as none.
pub(crate) fn object_arguments(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        _ => Value::Object(Map::new()),
    }
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
