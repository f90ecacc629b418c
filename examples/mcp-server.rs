//! An MCP server: a weather lookup, an adder, a destructive tool that asks first, and
//! `whoami`, which answers who is calling; beside the tools, a resource (`config://app`),
//! a resource template (`weather://{city}/today`, whose cities complete) and a prompt
//! (`plan_trip`).
//!
//! ```text
//! cargo run -p agent-examples --example mcp-server                       # stdio
//! cargo run -p agent-examples --example mcp-server -- --http 127.0.0.1:8000
//! cargo run -p agent-examples --example mcp-server -- --http 127.0.0.1:8000 --auth-token s3cret
//! ```
//!
//! Over HTTP the endpoint is `http://ADDR/mcp`; once it accepts connections the server
//! prints `listening on http://ADDR/mcp` on stderr (port 0 picks a free port). With
//! `--auth-token TOKEN` every HTTP request must carry `Authorization: Bearer TOKEN`;
//! without it, anyone who can reach the address may call the tools (by default only
//! loopback hosts and origins are accepted). `--stateless` serves without sessions, so
//! that several instances behind a load balancer can share the clients.
//!
//! Every tool is an `async fn` with `#[tool]`, the resources `#[resource]`, the prompt
//! `#[prompt]`. `delete_note` is destructive: before it
//! runs, the server asks the client's user (MCP elicitation).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use toolwright_core::{Principal, ToolContext, ToolError, ToolSet, tool, tools};
use toolwright_mcp::prompts::{PromptMessage, PromptSet};
use toolwright_mcp::resources::ResourceSet;
use toolwright_mcp::{
    HttpAuth, HttpOptions, McpHttpServer, McpServer, ServerOptions, StaticTokens, prompt, prompts,
    resource, resources,
};

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

/// Today's weather in a city.
#[derive(Debug, Serialize, JsonSchema)]
struct Forecast {
    city: String,
    temperature: f64,
    unit: Unit,
    conditions: String,
}

/// Get current weather for a city.
#[tool(title = "Weather lookup", read_only, open_world, timeout = "5s")]
async fn get_weather(
    /// City name, e.g. "Beijing"
    city: String,
    /// Temperature unit
    unit: Option<Unit>,
) -> Forecast {
    // A deterministic stand-in for a weather service, so tests can check values.
    let unit = unit.unwrap_or_default();
    let celsius = 10.0 + (city.len() % 15) as f64;
    let temperature = match unit {
        Unit::Celsius => celsius,
        Unit::Fahrenheit => celsius * 9.0 / 5.0 + 32.0,
    };
    Forecast {
        city,
        temperature,
        unit,
        conditions: "sunny".to_owned(),
    }
}

/// Add two numbers.
#[tool(read_only, idempotent)]
async fn add(
    /// The first addend
    a: f64,
    /// The second addend
    b: f64,
) -> f64 {
    a + b
}

/// Deletes a note.
#[tool(destructive)]
async fn delete_note(
    /// The note's title
    title: String,
) -> String {
    format!("deleted the note `{title}`")
}

/// Sleeps for the given number of milliseconds (at most 1s: longer calls time out).
#[tool(timeout = "1s")]
async fn sleep(
    /// How long to sleep, in milliseconds
    ms: u64,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("slept {ms}ms")),
        () = ctx.cancellation().cancelled() => Err(ToolError::cancelled("sleep")),
    }
}

/// Says who is calling: the subject the server authenticated, or `anonymous`.
#[tool(read_only)]
async fn whoami(ctx: &ToolContext) -> String {
    ctx.principal()
        .map_or("anonymous", |principal| principal.subject.as_str())
        .to_owned()
}

/// The subject a client holding the `--auth-token` token is known as.
const TOKEN_SUBJECT: &str = "token-holder";

/// This example's tools.
pub fn toolset() -> ToolSet {
    tools![get_weather, add, delete_note, sleep, whoami]
}

/// The cities the weather template suggests as a client types.
const CITIES: [&str; 5] = ["Beijing", "Berlin", "Lisbon", "London", "Paris"];

/// The server's settings.
#[resource(uri = "config://app", name = "app-config")]
async fn app_config() -> serde_json::Value {
    serde_json::json!({"units": "celsius", "forecast_days": 1})
}

/// Today's forecast for a city.
#[resource(template = "weather://{city}/today")]
async fn today(#[arg(complete = complete_city)] city: String) -> Forecast {
    get_weather(city, None).await
}

/// This example's resources: the app's settings, and today's forecast for any city.
pub fn resources() -> ResourceSet {
    resources![app_config, today]
}

/// The cities that begin like `typed` (ignoring case).
fn complete_city(typed: &str) -> Vec<String> {
    let typed = typed.to_lowercase();
    CITIES
        .into_iter()
        .filter(|city| city.to_lowercase().starts_with(&typed))
        .map(str::to_owned)
        .collect()
}

/// Plans a day out in a city, with today's weather.
#[prompt]
async fn plan_trip(
    /// Where to go
    #[arg(complete = complete_city)]
    city: String,
    /// What the traveller likes
    interests: Option<String>,
) -> Vec<PromptMessage> {
    let interests = interests.as_deref().unwrap_or("anything");
    let forecast =
        serde_json::to_string(&get_weather(city.clone(), None).await).unwrap_or_default();
    vec![
        PromptMessage::user(toolwright_core::Content::text_resource(
            format!("weather://{city}/today"),
            "application/json",
            forecast,
        )),
        PromptMessage::user(format!(
            "Plan a day in {city} for someone who likes {interests}, given the weather above."
        )),
    ]
}

/// This example's prompts: planning a trip to a city.
pub fn prompts() -> PromptSet {
    prompts![plan_trip]
}

/// Serves `tools` as the command line says: stdio, or `--http ADDR` with optional
/// `--auth-token TOKEN` and `--stateless`; with this example's resources and prompts.
pub async fn run(name: &str, tools: ToolSet) -> Result<(), Box<dyn std::error::Error>> {
    let server =
        McpServer::with_options(tools, ServerOptions::named(name, env!("CARGO_PKG_VERSION")))
            .with_resources(resources())
            .with_prompts(prompts());
    serve(name, server).await
}

/// Serves `server` as the command line says (see [`run`]).
pub async fn serve(name: &str, server: McpServer) -> Result<(), Box<dyn std::error::Error>> {
    let (mut addr, mut token, mut stateless) = (None, None, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => addr = Some(args.next().unwrap_or_else(|| usage(name))),
            "--auth-token" => token = Some(args.next().unwrap_or_else(|| usage(name))),
            "--stateless" => stateless = true,
            _ => usage(name),
        }
    }
    let Some(addr) = addr else {
        toolwright_mcp::serve_stdio_with(server).await?;
        return Ok(());
    };
    // Without sessions any instance can answer any request: run several behind a load
    // balancer.
    let mut options = HttpOptions::default().stateless(stateless);
    if let Some(token) = token {
        let tokens = StaticTokens::new().with_token(token, Principal::new(TOKEN_SUBJECT));
        options = options.with_auth(HttpAuth::new(tokens));
    }
    let http = McpHttpServer::bind(server, addr.as_str())
        .await?
        .with_options(options);
    eprintln!("listening on {}", http.url());
    // Ctrl-C or SIGTERM (what systemd, Docker and Kubernetes send) stops accepting,
    // lets the calls in flight finish, then ends.
    let stop = http.shutdown_token();
    let signal = toolwright_mcp::shutdown_signal();
    tokio::spawn(async move {
        signal.await;
        stop.cancel();
    });
    http.run().await?;
    Ok(())
}

fn usage(name: &str) -> ! {
    eprintln!(
        "usage: {name} [--http ADDR [--auth-token TOKEN] [--stateless]]   (stdio without --http)"
    );
    std::process::exit(2);
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    run("agent-mcp-example", toolset()).await
}
