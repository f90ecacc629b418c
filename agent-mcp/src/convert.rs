//! Translations between the core's types and MCP's: definitions to `Tool`s, content to
//! content blocks and back, tool errors to `isError` results and back.

use rmcp::model::{self as mcp, CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value};
use std::sync::Arc;
use toolwright_core::{
    Content, ToolError, ToolErrorKind, tool::ToolAnnotations, toolset::ToolDefinition,
};

/// The JSON Schema dialect MCP specifies for tool schemas (SEP-1613). Our schemas are
/// generated as 2020-12, so we say so explicitly on the wire.
pub(crate) const JSON_SCHEMA_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// The `_meta` key under which a failed call carries its [`ToolErrorKind`], so a client
/// built on this crate gets the kind back, not only the message.
pub(crate) const ERROR_KIND_META: &str = "agent-tools/errorKind";

/// The MCP listing of a tool: the core's cached definition, its schema declared as
/// JSON Schema 2020-12 unless the tool's own schema names another dialect.
pub(crate) fn tool_to_mcp(
    definition: &ToolDefinition,
    declared_dialect: Option<Value>,
) -> mcp::Tool {
    let mut input = as_object(definition.parameters.clone());
    let dialect = declared_dialect.unwrap_or_else(|| Value::String(JSON_SCHEMA_2020_12.into()));
    // `$schema` first, as people write it; `Map` keeps insertion order.
    let mut ordered = Map::with_capacity(input.len() + 1);
    ordered.insert("$schema".into(), dialect);
    ordered.append(&mut input);

    let mut tool = mcp::Tool::default();
    tool.name = definition.name.clone().into();
    tool.title = definition.title.clone();
    tool.description = Some(definition.description.clone().into());
    tool.input_schema = Arc::new(ordered);
    // MCP requires an output schema's root to be an object (structured content is an
    // object); other result schemas are not advertised, as in `Dialect::Mcp`.
    tool.output_schema = definition
        .output_schema
        .clone()
        .filter(|schema| schema.get("type") == Some(&Value::String("object".into())))
        .map(|schema| Arc::new(as_object(schema)));
    tool.annotations = annotations_to_mcp(&definition.annotations);
    tool
}

fn as_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        // Definitions are checked at registration to have object roots; anything else
        // would be a bug upstream, and an empty schema is the safe answer.
        _ => Map::new(),
    }
}

fn annotations_to_mcp(a: &ToolAnnotations) -> Option<mcp::ToolAnnotations> {
    if *a == ToolAnnotations::default() {
        return None;
    }
    Some(mcp::ToolAnnotations::from_raw(
        a.title.clone(),
        a.read_only,
        a.destructive,
        a.idempotent,
        a.open_world,
    ))
}

/// The core's annotations for an MCP tool's hints.
pub(crate) fn annotations_from_mcp(tool: &mcp::Tool) -> ToolAnnotations {
    let mut out = ToolAnnotations {
        title: tool.title.clone(),
        ..ToolAnnotations::default()
    };
    if let Some(a) = &tool.annotations {
        out.title = out.title.or_else(|| a.title.clone());
        out.read_only = a.read_only_hint;
        out.destructive = a.destructive_hint;
        out.idempotent = a.idempotent_hint;
        out.open_world = a.open_world_hint;
    }
    out
}

/// A successful result: every block mapped; the first structured block becomes
/// `structuredContent`, and its JSON is also sent as text unless the tool already
/// returned text (clients without structured-content support still see the value).
pub(crate) fn success_result(output: Vec<Content>) -> CallToolResult {
    let has_text = output.iter().any(|c| c.as_text().is_some());
    let mut structured = None;
    let mut blocks = Vec::with_capacity(output.len() + 1);
    for content in output {
        match content {
            Content::Json { value } if structured.is_none() => {
                if !has_text {
                    blocks.push(ContentBlock::text(value.to_string()));
                }
                structured = Some(value);
            }
            other => blocks.push(content_to_mcp(other)),
        }
    }
    let mut result = CallToolResult::success(blocks);
    result.structured_content = structured;
    result
}

/// A failed call as MCP says tool errors travel: a result with `isError: true` and a
/// text block the model can act on, the kind in `_meta`.
pub(crate) fn error_result(error: &ToolError) -> CallToolResult {
    let mut meta = mcp::MetaObject::default();
    meta.0.insert(
        ERROR_KIND_META.into(),
        Value::String(error.kind().as_str().into()),
    );
    CallToolResult::error(vec![ContentBlock::text(error.message())]).with_meta(Some(meta))
}

pub(crate) fn content_to_mcp(content: Content) -> ContentBlock {
    match content {
        Content::Text { text } => ContentBlock::text(text),
        Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        Content::Audio { data, mime_type } => ContentBlock::audio(data, mime_type),
        Content::Json { value } => ContentBlock::text(value.to_string()),
        Content::Resource {
            uri,
            mime_type,
            text,
            blob,
        } => ContentBlock::resource(match blob {
            Some(blob) => ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                meta: None,
            },
            None => ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text: text.unwrap_or_default(),
                meta: None,
            },
        }),
        Content::ResourceLink {
            uri,
            name,
            description,
            mime_type,
        } => {
            let mut link = mcp::Resource::new(uri, name);
            link.description = description;
            link.mime_type = mime_type;
            ContentBlock::resource_link(link)
        }
        // `Content` is non-exhaustive: a kind added later still reaches the client, as
        // its JSON form in text, rather than being dropped.
        other => ContentBlock::text(serde_json::to_string(&other).unwrap_or_default()),
    }
}

/// The core's content for an MCP content block.
pub(crate) fn content_from_mcp(block: ContentBlock) -> Content {
    match block {
        ContentBlock::Text(t) => Content::text(t.text),
        ContentBlock::Image(i) => Content::image(i.data, i.mime_type),
        ContentBlock::Audio(a) => Content::audio(a.data, a.mime_type),
        ContentBlock::Resource(r) => match r.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => Content::Resource {
                uri,
                mime_type,
                text: Some(text),
                blob: None,
            },
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => Content::Resource {
                uri,
                mime_type,
                text: None,
                blob: Some(blob),
            },
            #[allow(unreachable_patterns)]
            other => Content::text(serde_json::to_string(&other).unwrap_or_default()),
        },
        ContentBlock::ResourceLink(link) => Content::ResourceLink {
            uri: link.uri,
            name: link.name,
            description: link.description,
            mime_type: link.mime_type,
        },
        // rmcp's enum is non-exhaustive; keep whatever arrives, as JSON text.
        #[allow(unreachable_patterns)]
        other => Content::text(serde_json::to_string(&other).unwrap_or_default()),
    }
}

/// The core's view of a remote result: content (plus `structuredContent` as a JSON
/// block), or the tool error it reported.
pub(crate) fn result_from_mcp(result: CallToolResult) -> Result<Vec<Content>, ToolError> {
    if result.is_error == Some(true) {
        let kind = result
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get(ERROR_KIND_META))
            .and_then(Value::as_str)
            .and_then(kind_from_str)
            .unwrap_or(ToolErrorKind::Execution);
        let message: Vec<String> = result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.clone()))
            .collect();
        let message = if message.is_empty() {
            result
                .structured_content
                .map(|v| v.to_string())
                .unwrap_or_else(|| "the MCP tool reported an error without a message".into())
        } else {
            message.join("\n")
        };
        return Err(ToolError::new(kind, message));
    }
    let mut out: Vec<Content> = result.content.into_iter().map(content_from_mcp).collect();
    if let Some(value) = result.structured_content {
        out.push(Content::json(value));
    }
    Ok(out)
}

fn kind_from_str(kind: &str) -> Option<ToolErrorKind> {
    Some(match kind {
        "invalid_arguments" => ToolErrorKind::InvalidArguments,
        "execution" => ToolErrorKind::Execution,
        "timeout" => ToolErrorKind::Timeout,
        "cancelled" => ToolErrorKind::Cancelled,
        "unknown_tool" => ToolErrorKind::UnknownTool,
        "denied" => ToolErrorKind::Denied,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structured_output_keeps_text_and_structured_content() {
        let result = success_result(vec![
            Content::text(r#"{"a":1}"#),
            Content::json(json!({"a": 1})),
        ]);
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(wire["structuredContent"], json!({"a": 1}));
        assert_eq!(
            wire["content"],
            json!([{"type": "text", "text": "{\"a\":1}"}])
        );
        assert_eq!(wire["isError"], json!(false));
    }

    #[test]
    fn structured_output_without_text_gets_its_json_as_text() {
        let result = success_result(vec![Content::json(json!({"b": true}))]);
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(wire["content"][0]["text"], json!("{\"b\":true}"));
        assert_eq!(wire["structuredContent"], json!({"b": true}));
    }

    #[test]
    fn every_content_kind_round_trips() {
        let contents = vec![
            Content::text("t"),
            Content::image("aW1n", "image/png"),
            Content::audio("YXVk", "audio/wav"),
            Content::text_resource("test://r", "text/plain", "body"),
            Content::Resource {
                uri: "test://b".into(),
                mime_type: Some("application/octet-stream".into()),
                text: None,
                blob: Some("AAE=".into()),
            },
            Content::resource_link("file:///x", "x"),
        ];
        let back: Vec<Content> = contents
            .iter()
            .cloned()
            .map(content_to_mcp)
            .map(content_from_mcp)
            .collect();
        assert_eq!(back, contents);
    }

    #[test]
    fn errors_keep_their_kind_across_the_wire() {
        let error = ToolError::timeout("slow", 10);
        let wire = serde_json::to_value(error_result(&error)).unwrap();
        assert_eq!(wire["isError"], json!(true));
        assert_eq!(wire["content"][0]["text"], json!(error.message()));
        let parsed: CallToolResult = serde_json::from_value(wire).unwrap();
        assert_eq!(result_from_mcp(parsed).unwrap_err(), error);
    }

    /// The listing is the core's MCP dialect, plus the `$schema` declaration.
    #[test]
    fn listing_matches_the_core_mcp_dialect() {
        let with_output = ToolDefinition {
            name: "weather".into(),
            title: Some("Weather".into()),
            description: "Get the weather.".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}},
                "required": ["city"], "additionalProperties": false}),
            output_schema: Some(json!({"type": "object", "properties": {"t": {"type": "number"}}})),
            annotations: ToolAnnotations {
                read_only: Some(true),
                open_world: Some(false),
                ..ToolAnnotations::default()
            },
            ..ToolDefinition::default()
        };
        let scalar_output = ToolDefinition {
            output_schema: Some(json!({"type": "number"})),
            annotations: ToolAnnotations::default(),
            title: None,
            ..with_output.clone()
        };
        for definition in [with_output, scalar_output] {
            let mut expected = toolwright_core::dialect::Dialect::Mcp
                .render(&definition)
                .unwrap();
            expected["inputSchema"]
                .as_object_mut()
                .unwrap()
                .insert("$schema".into(), json!(JSON_SCHEMA_2020_12));
            let ours = serde_json::to_value(tool_to_mcp(&definition, None)).unwrap();
            assert_eq!(ours, expected);
        }
    }

    #[test]
    fn listing_declares_2020_12_and_keeps_the_schema() {
        let definition = ToolDefinition {
            name: "t".into(),
            title: Some("T".into()),
            description: "d".into(),
            parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            output_schema: None,
            annotations: ToolAnnotations {
                read_only: Some(true),
                ..ToolAnnotations::default()
            },
            ..ToolDefinition::default()
        };
        let wire = serde_json::to_value(tool_to_mcp(&definition, None)).unwrap();
        assert_eq!(wire["inputSchema"]["$schema"], json!(JSON_SCHEMA_2020_12));
        assert_eq!(wire["inputSchema"]["additionalProperties"], json!(false));
        assert_eq!(wire["annotations"]["readOnlyHint"], json!(true));
        assert_eq!(wire["title"], json!("T"));
    }
}
