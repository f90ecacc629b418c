//! An MCP client: connects to the server at the URL given, lists its tools, and calls
//! each with example arguments made from its input schema, printing what it answers.
//!
//! ```text
//! cargo run -p agent-examples --example mcp-server -- --http 127.0.0.1:8000 &
//! cargo run -p agent-examples --example mcp-client -- http://127.0.0.1:8000/mcp
//! ```
//!
//! With `--token TOKEN` every request carries `Authorization: Bearer TOKEN`. When a
//! tool asks for input (MCP elicitation), the client accepts the form with its default
//! values, as a user who presses Enter would.

use agent_core::{ToolContext, ToolExposure};
use agent_mcp::{HttpClientOptions, McpClient};
use serde_json::{Map, Value, json};

/// An example value for a property of this schema: its default, its first enum value,
/// or a plain value of its type.
fn example_value(schema: &Value) -> Value {
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("number" | "integer") => json!(1),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => example_arguments(schema),
        _ => json!("example"),
    }
}

/// Arguments giving every required property of `schema` an example value.
fn example_arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = &schema["properties"][name];
        arguments.insert(name.to_owned(), example_value(property));
    }
    Value::Object(arguments)
}

/// The default value of each property of a form's schema that has one.
fn form_defaults(schema: &Value) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    properties
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut options = HttpClientOptions::new().with_elicitation(|message, schema| async move {
        println!("the server asks: {message}");
        Some(form_defaults(&schema))
    });
    if let Some(at) = args.iter().position(|a| a == "--token") {
        let token = args.get(at + 1).cloned().ok_or("--token needs a value")?;
        options = options.with_bearer_token(token);
        args.drain(at..=at + 1);
    }
    let Some(url) = args.last() else {
        eprintln!("usage: mcp-client [--token TOKEN] URL");
        std::process::exit(2);
    };
    let client = McpClient::connect_http_with(url, &options).await?;
    println!("connected to {}", client.server_name());
    let tools = client.toolset()?;
    let ctx = ToolContext::default();
    for tool in tools
        .iter()
        .filter(|t| t.exposure() == ToolExposure::Direct)
    {
        let arguments = example_arguments(&tool.schema());
        match tools.call(tool.name(), &arguments, &ctx).await {
            Ok(output) => {
                let text: Vec<&str> = output.iter().filter_map(|c| c.as_text()).collect();
                println!("{}({arguments}) -> {}", tool.name(), text.join(" "));
            }
            Err(error) => println!("{}({arguments}) failed: {error}", tool.name()),
        }
    }
    client.close().await;
    Ok(())
}
