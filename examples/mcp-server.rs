//! An MCP server: the quickstart's tools (a weather lookup, an adder) and the tools the
//! official MCP conformance suite calls.
//!
//! ```text
//! cargo run -p agent-examples --example mcp-server                       # stdio
//! cargo run -p agent-examples --example mcp-server -- --http 127.0.0.1:8000
//! ```
//!
//! Over HTTP the endpoint is `http://ADDR/mcp`; once it accepts connections the server
//! prints `listening on http://ADDR/mcp` on stderr (port 0 picks a free port).
//!
//! The tools are written by hand with `TypedTool` for now: `#[tool]` is not on `main` yet.

use agent_core::{AgentResult, Content, ToolContext, ToolError, ToolSet, TypedTool, async_trait};
use agent_mcp::{LogLevel, McpHttpServer, McpPeer, McpServer, ServerOptions};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::Duration;

/// A 1x1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// A WAV file of a single silent 8-bit sample at 8 kHz.
const SILENT_WAV: &str = "UklGRiUAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQEAAACA";

/// Arguments of a tool that takes none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// Declares a tool without arguments whose body is `$body` (an async block over `ctx`).
macro_rules! no_arg_tool {
    ($ty:ident, $name:literal, $description:literal, $output:ty, |$ctx:ident| $body:expr) => {
        struct $ty;

        #[async_trait]
        impl TypedTool for $ty {
            type Args = NoArgs;
            type Output = $output;

            fn name(&self) -> &'static str {
                $name
            }

            fn description(&self) -> &'static str {
                $description
            }

            async fn call_typed(&self, _args: NoArgs, $ctx: &ToolContext) -> AgentResult<$output> {
                $body
            }
        }
    };
}

no_arg_tool!(
    SimpleText,
    "test_simple_text",
    "Returns a simple text response.",
    String,
    |_ctx| Ok("This is a simple text response for testing.".to_owned())
);

no_arg_tool!(
    ImageContent,
    "test_image_content",
    "Returns a 1x1 red PNG image.",
    Content,
    |_ctx| Ok(Content::image(RED_PIXEL_PNG, "image/png"))
);

no_arg_tool!(
    AudioContent,
    "test_audio_content",
    "Returns a short WAV clip.",
    Content,
    |_ctx| Ok(Content::audio(SILENT_WAV, "audio/wav"))
);

no_arg_tool!(
    EmbeddedResource,
    "test_embedded_resource",
    "Returns an embedded text resource.",
    Content,
    |_ctx| Ok(Content::text_resource(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))
);

no_arg_tool!(
    MultipleContentTypes,
    "test_multiple_content_types",
    "Returns text, an image and an embedded resource in one result.",
    Vec<Content>,
    |_ctx| Ok(vec![
        Content::text("Multiple content types test:"),
        Content::image(RED_PIXEL_PNG, "image/png"),
        Content::text_resource(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ])
);

no_arg_tool!(
    ErrorHandling,
    "test_error_handling",
    "Always fails, to show how tool errors reach the client.",
    String,
    |_ctx| Err(ToolError::execution("This tool intentionally returns an error for testing").into())
);

no_arg_tool!(
    ToolWithLogging,
    "test_tool_with_logging",
    "Sends three log messages to the client while it runs.",
    String,
    |ctx| {
        let peer = mcp_peer(ctx)?;
        peer.log(LogLevel::Info, "Tool execution started").await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        peer.log(LogLevel::Info, "Tool processing data").await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        peer.log(LogLevel::Info, "Tool execution completed").await?;
        Ok("Logging test completed: sent 3 log messages".to_owned())
    }
);

no_arg_tool!(
    ToolWithProgress,
    "test_tool_with_progress",
    "Reports progress 0, 50 and 100 of 100 while it runs.",
    String,
    |ctx| {
        for (step, progress) in [0, 50, 100].into_iter().enumerate() {
            if step > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            ctx.emit_progress(json!({"progress": progress, "total": 100}))?;
        }
        Ok("Progress test completed".to_owned())
    }
);

/// The client that called, for what only MCP offers (logging, sampling, elicitation).
fn mcp_peer(ctx: &ToolContext) -> Result<&McpPeer, ToolError> {
    ctx.state::<McpPeer>()
        .ok_or_else(|| ToolError::execution("this tool only works when served over MCP"))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SamplingArgs {
    /// The prompt to send to the client's model
    prompt: String,
}

struct Sampling;

#[async_trait]
impl TypedTool for Sampling {
    type Args = SamplingArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "test_sampling"
    }

    fn description(&self) -> &'static str {
        "Asks the client's model to answer a prompt (MCP sampling)."
    }

    async fn call_typed(&self, args: SamplingArgs, ctx: &ToolContext) -> AgentResult<String> {
        let peer = mcp_peer(ctx)?;
        if !peer.client_supports("sampling") {
            return Err(ToolError::execution("the client does not support sampling").into());
        }
        let answer = peer
            .request(
                "sampling/createMessage",
                json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": args.prompt}}],
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
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ElicitationArgs {
    /// The message to show the user
    message: String,
}

struct Elicitation;

#[async_trait]
impl TypedTool for Elicitation {
    type Args = ElicitationArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "test_elicitation"
    }

    fn description(&self) -> &'static str {
        "Asks the user for a username and an email (MCP elicitation)."
    }

    async fn call_typed(&self, args: ElicitationArgs, ctx: &ToolContext) -> AgentResult<String> {
        let peer = mcp_peer(ctx)?;
        if !peer.client_supports("elicitation") {
            return Err(ToolError::execution("the client does not support elicitation").into());
        }
        let answer = peer
            .request(
                "elicitation/create",
                json!({
                    "mode": "form",
                    "message": args.message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "username": {"type": "string", "description": "User's response"},
                            "email": {"type": "string", "description": "User's email address"},
                        },
                        "required": ["username", "email"],
                    },
                }),
            )
            .await?;
        Ok(format!(
            "User response: action={}, content={}",
            answer["action"].as_str().unwrap_or("unknown"),
            answer.get("content").unwrap_or(&Value::Null)
        ))
    }
}

/// Asks the client for a form whose fields carry defaults (SEP-1034).
struct ElicitationDefaults;

#[async_trait]
impl TypedTool for ElicitationDefaults {
    type Args = NoArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "test_elicitation_sep1034_defaults"
    }

    fn description(&self) -> &'static str {
        "Asks the user for a form whose fields have default values (SEP-1034)."
    }

    async fn call_typed(&self, _args: NoArgs, ctx: &ToolContext) -> AgentResult<String> {
        elicit_form(
            ctx,
            "Please review your profile",
            json!({
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
            }),
        )
        .await
    }
}

/// Asks the client for a form with every kind of enum field (SEP-1330).
struct ElicitationEnums;

#[async_trait]
impl TypedTool for ElicitationEnums {
    type Args = NoArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "test_elicitation_sep1330_enums"
    }

    fn description(&self) -> &'static str {
        "Asks the user for a form with single- and multi-select enum fields (SEP-1330)."
    }

    async fn call_typed(&self, _args: NoArgs, ctx: &ToolContext) -> AgentResult<String> {
        let titled = |values: [(&str, &str); 3]| -> Vec<Value> {
            values
                .iter()
                .map(|(value, title)| json!({"const": value, "title": title}))
                .collect()
        };
        elicit_form(
            ctx,
            "Please choose",
            json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {
                        "type": "string",
                        "oneOf": titled([("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")]),
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
                        "items": {"anyOf": titled([("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])},
                    },
                },
            }),
        )
        .await
    }
}

/// Sends a form elicitation and describes the answer.
async fn elicit_form(ctx: &ToolContext, message: &str, schema: Value) -> AgentResult<String> {
    let peer = mcp_peer(ctx)?;
    if !peer.client_supports("elicitation") {
        return Err(ToolError::execution("the client does not support elicitation").into());
    }
    let answer = peer
        .request(
            "elicitation/create",
            json!({"mode": "form", "message": message, "requestedSchema": schema}),
        )
        .await?;
    Ok(format!(
        "Elicitation completed: action={}, content={}",
        answer["action"].as_str().unwrap_or("unknown"),
        answer.get("content").unwrap_or(&Value::Null)
    ))
}

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "address")]
#[allow(dead_code)] // Read by the schema, not by the tool.
struct Address {
    street: Option<String>,
    city: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SchemaArgs {
    name: Option<String>,
    address: Option<Address>,
}

struct JsonSchema202012;

#[async_trait]
impl TypedTool for JsonSchema202012 {
    type Args = SchemaArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "json_schema_2020_12_tool"
    }

    fn description(&self) -> &'static str {
        "Tool with JSON Schema 2020-12 features"
    }

    async fn call_typed(&self, args: SchemaArgs, _ctx: &ToolContext) -> AgentResult<String> {
        let city = args.address.and_then(|a| a.city);
        Ok(format!(
            "name={}, city={}",
            args.name.as_deref().unwrap_or("-"),
            city.as_deref().unwrap_or("-")
        ))
    }
}

/// Temperature unit.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    /// Degrees Celsius
    #[default]
    Celsius,
    /// Degrees Fahrenheit
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WeatherArgs {
    /// City name, e.g. "Beijing"
    city: String,
    /// Temperature unit
    unit: Option<Unit>,
}

/// Today's weather in a city.
#[derive(Debug, Serialize, JsonSchema)]
struct Forecast {
    city: String,
    temperature: f64,
    unit: Unit,
    conditions: String,
}

struct GetWeather;

#[async_trait]
impl TypedTool for GetWeather {
    type Args = WeatherArgs;
    type Output = Forecast;

    fn name(&self) -> &'static str {
        "get_weather"
    }

    fn description(&self) -> &'static str {
        "Get current weather for a city."
    }

    fn output_schema(&self) -> Option<Value> {
        serde_json::to_value(schemars::schema_for!(Forecast)).ok()
    }

    fn annotations(&self) -> agent_core::ToolAnnotations {
        agent_core::ToolAnnotations {
            title: Some("Weather lookup".to_owned()),
            read_only: Some(true),
            open_world: Some(true),
            ..Default::default()
        }
    }

    async fn call_typed(&self, args: WeatherArgs, _ctx: &ToolContext) -> AgentResult<Forecast> {
        // A deterministic stand-in for a weather service, so tests can check values.
        let unit = args.unit.unwrap_or_default();
        let celsius = 10.0 + (args.city.len() % 15) as f64;
        let temperature = match unit {
            Unit::Celsius => celsius,
            Unit::Fahrenheit => celsius * 9.0 / 5.0 + 32.0,
        };
        Ok(Forecast {
            city: args.city,
            temperature,
            unit,
            conditions: "sunny".to_owned(),
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    /// The first addend
    a: f64,
    /// The second addend
    b: f64,
}

struct Add;

#[async_trait]
impl TypedTool for Add {
    type Args = AddArgs;
    type Output = f64;

    fn name(&self) -> &'static str {
        "add"
    }

    fn description(&self) -> &'static str {
        "Add two numbers."
    }

    fn annotations(&self) -> agent_core::ToolAnnotations {
        agent_core::ToolAnnotations {
            read_only: Some(true),
            idempotent: Some(true),
            ..Default::default()
        }
    }

    async fn call_typed(&self, args: AddArgs, _ctx: &ToolContext) -> AgentResult<f64> {
        Ok(args.a + args.b)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SleepArgs {
    /// How long to sleep, in milliseconds
    ms: u64,
}

/// Sleeps, stopping early when cancelled; its timeout is 1s, so longer sleeps time out.
struct Sleep;

#[async_trait]
impl TypedTool for Sleep {
    type Args = SleepArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "sleep"
    }

    fn description(&self) -> &'static str {
        "Sleeps for the given number of milliseconds (at most 1s: longer calls time out)."
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(1_000)
    }

    async fn call_typed(&self, args: SleepArgs, ctx: &ToolContext) -> AgentResult<String> {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(args.ms)) => Ok(format!("slept {}ms", args.ms)),
            () = ctx.cancellation().cancelled() => Err(ToolError::cancelled("sleep").into()),
        }
    }
}

fn toolset() -> AgentResult<ToolSet> {
    let mut set = ToolSet::new();
    set.register_tool(GetWeather)?
        .register_tool(Add)?
        .register_tool(Sleep)?
        .register_tool(SimpleText)?
        .register_tool(ImageContent)?
        .register_tool(AudioContent)?
        .register_tool(EmbeddedResource)?
        .register_tool(MultipleContentTypes)?
        .register_tool(ToolWithLogging)?
        .register_tool(ToolWithProgress)?
        .register_tool(ErrorHandling)?
        .register_tool(Sampling)?
        .register_tool(Elicitation)?
        .register_tool(ElicitationDefaults)?
        .register_tool(ElicitationEnums)?
        .register_tool(JsonSchema202012)?;
    Ok(set)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = McpServer::with_options(
        toolset()?,
        ServerOptions::named("agent-mcp-example", env!("CARGO_PKG_VERSION")),
    );
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (None, _) => agent_mcp::serve_stdio_with(server).await?,
        (Some("--http"), Some(addr)) => {
            let http = McpHttpServer::bind(server, addr.as_str()).await?;
            eprintln!("listening on {}", http.url());
            http.run().await?;
        }
        _ => {
            eprintln!("usage: mcp-server [--http ADDR]   (stdio without --http)");
            std::process::exit(2);
        }
    }
    Ok(())
}
