//! The server the interoperability tests and the official MCP conformance suite run
//! against: examples/mcp-server.rs's tools plus every tool the suite calls.
//!
//! ```text
//! cargo run -p agent-examples --example conformance-server                       # stdio
//! cargo run -p agent-examples --example conformance-server -- --http 127.0.0.1:8000
//! ```
//!
//! It takes the same arguments as examples/mcp-server.rs and prints the same
//! `listening on http://ADDR/mcp` line. The tools that use MCP itself (logging,
//! sampling, elicitation) take the calling client as `State<McpPeer>`.

// The example's tools and its command line, shared rather than copied.
#[path = "../examples/mcp-server.rs"]
#[allow(dead_code)] // its `main`: this file has its own.
mod example;

#[path = "conformance_input_tools.rs"]
mod input_tools;

#[path = "conformance_task_tools.rs"]
mod task_tools;

use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::OnceLock;
use std::time::Duration;
use toolwright_core::{
    AgentResult, Content, Progress, State, Tool, ToolContext, ToolError, ToolSet, tool, tools,
};
use toolwright_mcp::prompts::{FnPrompt, PromptArgument, PromptMessage, PromptSet};
use toolwright_mcp::resources::{
    FnResource, FnTemplate, ResourceContent, ResourceInfo, ResourceSet,
};
use toolwright_mcp::{LogLevel, McpPeer, McpServer, ServerOptions};

/// A 1x1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// A WAV file of a single silent 8-bit sample at 8 kHz.
const SILENT_WAV: &str = "UklGRiUAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQEAAACA";

/// Returns a simple text response.
#[tool]
async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns a 1x1 red PNG image.
#[tool]
async fn test_image_content() -> Content {
    Content::image(RED_PIXEL_PNG, "image/png")
}

/// Returns a short WAV clip.
#[tool]
async fn test_audio_content() -> Content {
    Content::audio(SILENT_WAV, "audio/wav")
}

/// Returns an embedded text resource.
#[tool]
async fn test_embedded_resource() -> Content {
    Content::text_resource(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Returns text, an image and an embedded resource in one result.
#[tool]
async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(RED_PIXEL_PNG, "image/png"),
        Content::text_resource(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]
}

/// Always fails, to show how tool errors reach the client.
#[tool]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::execution(
        "This tool intentionally returns an error for testing",
    ))
}

/// Sends three log messages to the client while it runs.
#[tool]
async fn test_tool_with_logging(peer: State<McpPeer>) -> Result<&'static str, ToolError> {
    peer.log(LogLevel::Info, "Tool execution started").await?;
    tokio::time::sleep(Duration::from_millis(50)).await;
    peer.log(LogLevel::Info, "Tool processing data").await?;
    tokio::time::sleep(Duration::from_millis(50)).await;
    peer.log(LogLevel::Info, "Tool execution completed").await?;
    Ok("Logging test completed: sent 3 log messages")
}

/// Reports progress 0, 50 and 100 of 100 while it runs.
#[tool]
async fn test_tool_with_progress(progress: Progress) -> Result<&'static str, ToolError> {
    for (step, done) in [0, 50, 100].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // `{progress, total}` is MCP's own shape; it becomes `notifications/progress`.
        progress.emit(json!({"progress": done, "total": 100}))?;
    }
    Ok("Progress test completed")
}

/// Asks the client's model to answer a prompt (MCP sampling).
#[tool]
async fn test_sampling(
    /// The prompt to send to the client's model
    prompt: String,
    peer: State<McpPeer>,
) -> Result<String, ToolError> {
    if !peer.client_supports("sampling") {
        return Err(ToolError::execution("the client does not support sampling"));
    }
    let answer = peer
        .request(
            "sampling/createMessage",
            json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                "maxTokens": 100,
            }),
        )
        .await?;
    let text = answer
        .pointer("/content/text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(format!("LLM response: {text}"))
}

/// Asks the user for a username and an email (MCP elicitation).
#[tool]
async fn test_elicitation(
    /// The message to show the user
    message: String,
    peer: State<McpPeer>,
) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    let (action, content) = elicit_form(&peer, &message, schema).await?;
    Ok(format!("User response: action={action}, content={content}"))
}

/// Asks the user for a form whose fields have default values (SEP-1034).
#[tool]
async fn test_elicitation_sep1034_defaults(peer: State<McpPeer>) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true},
        },
    });
    let (action, content) = elicit_form(&peer, "Please review your profile", schema).await?;
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// Asks the user for a form with single- and multi-select enum fields (SEP-1330).
#[tool]
async fn test_elicitation_sep1330_enums(peer: State<McpPeer>) -> Result<String, ToolError> {
    let titled = |values: [(&str, &str); 3]| -> Vec<Value> {
        values
            .iter()
            .map(|(value, title)| json!({"const": value, "title": title}))
            .collect()
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": titled([
                    ("value1", "First Option"),
                    ("value2", "Second Option"),
                    ("value3", "Third Option"),
                ]),
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {"anyOf": titled([
                    ("value1", "First Choice"),
                    ("value2", "Second Choice"),
                    ("value3", "Third Choice"),
                ])},
            },
        },
    });
    let (action, content) = elicit_form(&peer, "Please choose", schema).await?;
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// Sends a form elicitation; the user's action and the content they sent.
async fn elicit_form(
    peer: &McpPeer,
    message: &str,
    schema: Value,
) -> Result<(String, Value), ToolError> {
    if !peer.client_supports("elicitation") {
        return Err(ToolError::execution(
            "the client does not support elicitation",
        ));
    }
    let answer = peer
        .request(
            "elicitation/create",
            json!({"mode": "form", "message": message, "requestedSchema": schema}),
        )
        .await?;
    let action = answer["action"].as_str().unwrap_or("unknown").to_owned();
    Ok((
        action,
        answer.get("content").cloned().unwrap_or(Value::Null),
    ))
}

/// The argument schema of `json_schema_2020_12_tool`, as the suite expects to find it:
/// composition, conditional and anchor keywords that no Rust type derives, written by
/// hand and served unchanged.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            },
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    })
}

/// A tool whose schema is written by hand (`Tool` implemented directly).
struct JsonSchema202012Tool;

#[async_trait]
impl Tool for JsonSchema202012Tool {
    fn name(&self) -> &str {
        "json_schema_2020_12_tool"
    }

    fn description(&self) -> &str {
        "Tool with JSON Schema 2020-12 features"
    }

    fn schema(&self) -> Value {
        json_schema_2020_12()
    }

    async fn call(&self, args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        Ok(vec![Content::text(format!("received {args}"))])
    }
}

/// Runs a query in a region; the region travels as the Mcp-Param-Region header too
/// (`x-mcp-header`, SEP-2243), so that gateways can route on it without reading the
/// body. The server refuses a call whose header is missing or differs from the argument.
#[tool]
async fn test_region_header(
    #[arg(header = "Region")] region: String,
    query: Option<String>,
) -> String {
    format!("region {region}, query {}", query.unwrap_or_default())
}

/// Asks the client's model for a one-line answer: needs the client's `sampling`
/// capability, so a client that did not declare it gets the protocol's refusal.
#[tool]
async fn test_missing_capability(peer: State<McpPeer>) -> Result<String, ToolError> {
    let answer = peer
        .request(
            "sampling/createMessage",
            json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "ping"}}],
                "maxTokens": 10,
            }),
        )
        .await?;
    Ok(format!("sampled: {answer}"))
}

/// Asks the user to confirm (MCP elicitation) while the call's response streams.
#[tool]
async fn test_streaming_elicitation(peer: State<McpPeer>) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "description": "Go ahead?"}},
    });
    let (action, content) = elicit_form(&peer, "Confirm to continue", schema).await?;
    Ok(format!("action={action}, content={content}"))
}

/// Sends a log message at every level; the client sees those at or above the level
/// its request asked for, and none if it asked for none.
#[tool]
async fn test_logging_tool(peer: State<McpPeer>) -> Result<&'static str, ToolError> {
    for level in [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
    ] {
        peer.log(level, format!("a {} message", level.as_str()))
            .await?;
    }
    Ok("logged at debug, info, warning and error")
}

/// The server this example runs, for the tool that changes its tools.
static SERVER: OnceLock<McpServer> = OnceLock::new();

/// A tool that comes and goes, so that `test_trigger_tool_change` changes the list.
#[tool]
async fn test_dynamic_tool() -> &'static str {
    "I come and go."
}

/// Adds `test_dynamic_tool` to the tools served, or removes it if it is served: every
/// client listening for tool changes is told.
#[tool]
async fn test_trigger_tool_change() -> Result<&'static str, ToolError> {
    let server = SERVER
        .get()
        .ok_or_else(|| ToolError::execution("the server is not running"))?;
    if server.remove_tool("test_dynamic_tool").await.is_some() {
        return Ok("removed test_dynamic_tool");
    }
    server
        .update_tools(|tools| tools.extend(tools![test_dynamic_tool]))
        .await
        .map_err(|e| ToolError::execution(e.to_string()))?;
    Ok("added test_dynamic_tool")
}

fn toolset() -> ToolSet {
    let mut tools = example::toolset();
    tools
        .extend(toolwright_core::tools![
            test_simple_text,
            test_image_content,
            test_audio_content,
            test_embedded_resource,
            test_multiple_content_types,
            test_tool_with_logging,
            test_tool_with_progress,
            test_error_handling,
            test_sampling,
            test_elicitation,
            test_elicitation_sep1034_defaults,
            test_elicitation_sep1330_enums,
            test_missing_capability,
            test_streaming_elicitation,
            test_logging_tool,
            test_trigger_tool_change,
            test_region_header,
        ])
        .expect("the suite's tools are named apart from the example's");
    let taken = "the suite's tools are named apart from the example's";
    tools.register_tool(JsonSchema202012Tool).expect(taken);
    tools.extend(input_tools::tools()).expect(taken);
    tools.extend(task_tools::tools()).expect(taken);
    tools
}

/// examples/mcp-server.rs's resources, and those the suite reads (`resources-*`,
/// `caching`): a text and a binary resource, one it subscribes to, and the template
/// `test://template/{id}/data`.
fn resources() -> ResourceSet {
    let mut set = example::resources();
    let taken = "the suite's resources have distinct URIs";
    set.add_resource(FnResource::new(
        "test://static-text",
        ResourceInfo::named("static-text")
            .with_description("A static text resource")
            .with_mime_type("text/plain"),
        |_ctx| async {
            Ok(vec![ResourceContent::text(
                "This is the content of the static text resource.",
            )])
        },
    ))
    .expect(taken);
    set.add_resource(FnResource::new(
        "test://static-binary",
        ResourceInfo::named("static-binary")
            .with_description("A static binary resource (a 1x1 PNG)")
            .with_mime_type("image/png"),
        |_ctx| async { Ok(vec![ResourceContent::blob(RED_PIXEL_PNG, "image/png")]) },
    ))
    .expect(taken);
    set.add_resource(FnResource::new(
        "test://watched-resource",
        ResourceInfo::named("watched-resource")
            .with_description("A resource clients subscribe to")
            .with_mime_type("text/plain"),
        |_ctx| async { Ok(vec![ResourceContent::text("Watched resource content.")]) },
    ))
    .expect(taken);
    let template = FnTemplate::new(
        "test://template/{id}/data",
        ResourceInfo::named("template-data")
            .with_description("Data for an id, from a URI template")
            .with_mime_type("application/json"),
        |_uri, params, _ctx| async move {
            let id = params.get("id").cloned().unwrap_or_default();
            let data =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            Ok(vec![ResourceContent::json(&data)?])
        },
    )
    .expect("the suite's template is well-formed")
    .with_completion(|_variable, value, _resolved| {
        ["123", "456", "789"]
            .into_iter()
            .filter(|id| id.starts_with(value))
            .map(str::to_owned)
            .collect()
    });
    set.add_template(template).expect(taken);
    set
}

/// examples/mcp-server.rs's prompt, and those the suite gets (`prompts-*`,
/// `completion-complete`).
fn prompts() -> PromptSet {
    let mut set = example::prompts();
    let taken = "the suite's prompts have distinct names";
    set.add(FnPrompt::new(
        "test_simple_prompt",
        "A simple prompt without arguments",
        Vec::new(),
        |_args, _ctx| async {
            Ok(vec![PromptMessage::user(
                "This is a simple prompt for testing.",
            )])
        },
    ))
    .expect(taken);
    set.add(
        FnPrompt::new(
            "test_prompt_with_arguments",
            "A prompt with two arguments",
            vec![
                PromptArgument::required("arg1", "First test argument"),
                PromptArgument::required("arg2", "Second test argument"),
            ],
            |args, _ctx| async move {
                let text = format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    args["arg1"], args["arg2"]
                );
                Ok(vec![PromptMessage::user(text)])
            },
        )
        .with_completion(|_argument, value, _resolved| {
            ["paris", "park", "party", "test", "testing"]
                .into_iter()
                .filter(|word| word.starts_with(value))
                .map(str::to_owned)
                .collect()
        }),
    )
    .expect(taken);
    set.add(FnPrompt::new(
        "test_prompt_with_embedded_resource",
        "A prompt that embeds a resource",
        vec![PromptArgument::required(
            "resourceUri",
            "URI of the resource to embed",
        )],
        |args, _ctx| async move {
            Ok(vec![
                PromptMessage::user(Content::text_resource(
                    args["resourceUri"].clone(),
                    "text/plain",
                    "Embedded resource content for testing.",
                )),
                PromptMessage::user("Please process the embedded resource above."),
            ])
        },
    ))
    .expect(taken);
    set.add(FnPrompt::new(
        "test_prompt_with_image",
        "A prompt with an image",
        Vec::new(),
        |_args, _ctx| async {
            Ok(vec![
                PromptMessage::user(Content::image(RED_PIXEL_PNG, "image/png")),
                PromptMessage::user("Please analyze the image above."),
            ])
        },
    ))
    .expect(taken);
    input_tools::add_prompts(&mut set);
    set
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let name = "agent-mcp-conformance";
    let server = McpServer::with_options(
        toolset(),
        ServerOptions::named(name, env!("CARGO_PKG_VERSION")),
    )
    .with_resources(resources())
    .with_prompts(prompts());
    SERVER.set(server.clone()).expect("the server is made once");
    example::serve(name, server).await
}
