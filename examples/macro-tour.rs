//! A tour of `#[tool]`, `#[toolbox]` and `tools![]`: every feature once.
//!
//! `cargo run -p agent-examples --example macro-tour`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use toolwright_core::{
    AgentResult, Content, Progress, State, Tool, ToolContext, ToolError, ToolSet, tool,
    tool::{ActivationContext, CallReporter},
    toolbox, tools,
};

/// Temperature unit.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// A forecast.
#[derive(Debug, Serialize, JsonSchema)]
struct Forecast {
    city: String,
    unit: Unit,
    days: u8,
    highs: Vec<f64>,
}

/// Application state: the weather service's base URL.
#[derive(Clone)]
struct WeatherService {
    base_url: String,
}

/// Get the forecast for a city.
///
/// Uses the national weather service; results are cached for ten minutes.
///
/// # Arguments
///
/// * `days` - How many days ahead, 1 to 7.
///
/// # Errors
///
/// When the service is unreachable (this section is not sent to the model).
#[tool(timeout = "5s", read_only, idempotent, open_world, requirements = ["network"])]
async fn get_weather(
    /// City name, e.g. "Beijing"
    city: String,
    /// Temperature unit; Celsius when absent
    unit: Option<Unit>,
    #[arg(default = 3)] days: u8,
    service: State<WeatherService>,
    progress: Progress,
    ctx: &ToolContext,
) -> Result<Forecast, ToolError> {
    if ctx.is_cancelled() {
        return Err(ToolError::cancelled("get_weather"));
    }
    if !(1..=7).contains(&days) {
        return Err(ToolError::invalid_arguments("days must be 1 to 7"));
    }
    let _ = &service.base_url;
    let mut highs = Vec::new();
    for day in 0..days {
        highs.push(20.0 + f64::from(day));
        progress.emit(json!({"day": day + 1, "of": days}))?;
    }
    Ok(Forecast {
        city,
        unit: unit.unwrap_or(Unit::Celsius),
        days,
        highs,
    })
}

fn large_amount(args: &Value) -> bool {
    args["amount_cents"].as_u64().unwrap_or(0) > 10_000
}

fn mentions_receipt(output: &[Content]) -> Result<(), String> {
    match output.first().and_then(Content::as_text) {
        Some(text) if text.contains("receipt") => Ok(()),
        _ => Err("a payment must return a receipt".into()),
    }
}

/// Send money to someone.
#[tool(
    name = "send_money",
    title = "Send money",
    timeout_ms = 20_000,
    destructive,
    require_approval = large_amount,
    on_error = "fail_run",
    exclusive = "ledger",
    max_in_flight = 1,
    validate_output = mentions_receipt,
    origin = "payments",
    version = "1.2.0"
)]
async fn pay(
    #[arg(rename = "to", description = "Who receives the money")] recipient: String,
    amount_cents: u64,
) -> String {
    format!("receipt: {amount_cents} cents to {recipient}")
}

async fn in_a_repository(ctx: &ActivationContext) -> bool {
    !ctx.workspace.as_os_str().is_empty() && ctx.workspace.join(".git").exists()
}

/// Show the repository's recent commits.
#[tool(exposure = "deferred", activate_when = in_a_repository, sequential)]
async fn git_log(#[arg(default)] limit: u32) -> Vec<Content> {
    vec![Content::text(format!("(the last {limit} commits)"))]
}

fn small_progress(value: &Value) -> Result<(), String> {
    value
        .get("percent")
        .map(|_| ())
        .ok_or("progress needs `percent`".into())
}

/// Reindex the search engine (an administrator's tool, never offered to the model).
#[tool(exposure = "hidden", require_approval, validate_progress = small_progress)]
async fn reindex() -> AgentResult<&'static str> {
    Ok("reindexed")
}

#[doc = include_str!("macro-tour.md")]
#[tool]
async fn about() -> &'static str {
    "agent-core tools"
}

mod math {
    use toolwright_core::tool;

    /// Add two numbers.
    #[tool(read_only, crate = ::toolwright_core)]
    pub async fn add(a: f64, b: f64) -> f64 {
        a + b
    }
}

/// A shared client: its tools hold an `Arc` of it.
struct Notes {
    notes: Mutex<Vec<String>>,
}

#[toolbox]
impl Notes {
    /// Save a note.
    #[tool]
    async fn save(
        &self,
        /** The note's text */
        text: String,
    ) -> usize {
        let mut notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        notes.push(text);
        notes.len()
    }

    /// List the saved notes.
    #[tool(read_only)]
    async fn list(&self) -> Vec<String> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Prints what tools report while they run.
struct PrintProgress;

impl CallReporter for PrintProgress {
    fn progress(&self, call_id: &str, value: Value) -> Result<(), ToolError> {
        println!("    progress {call_id}: {value}");
        Ok(())
    }

    fn set_context(&self, _call_id: &str, _value: Value) {}
}

fn show(tool: &dyn Tool) {
    let meta = tool.metadata();
    println!("- {} ({} {})", tool.name(), meta.origin, meta.version);
    println!("    description: {:?}", tool.description());
    println!("    schema: {}", tool.schema());
    println!(
        "    timeout: {:?}, exposure: {:?}, on error: {:?}, approval for {{}}: {:?}",
        tool.timeout_ms(),
        tool.exposure(),
        tool.on_error(),
        tool.approval(&json!({}))
    );
    println!(
        "    annotations: {}, concurrency: {}",
        serde_json::to_string(&tool.annotations()).unwrap_or_default(),
        serde_json::to_string(&tool.concurrency()).unwrap_or_default()
    );
    if let Some(output) = tool.output_schema() {
        println!("    output schema: {output}");
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> AgentResult<()> {
    let mut set: ToolSet = tools![get_weather, pay, git_log, reindex, about, math::add,]
        .with_state(WeatherService {
            base_url: "https://weather.example".into(),
        });
    let notes = Arc::new(Notes {
        notes: Mutex::new(Vec::new()),
    });
    set.extend(notes.clone().into_toolset())?;

    println!("{} tools:", set.len());
    for tool in &set {
        show(tool.as_ref());
    }

    let ctx = ToolContext::new("tour")
        .with_call_id("call-1")
        .with_reporter(Arc::new(PrintProgress));
    println!("\ncalls:");
    let forecast = set
        .call(
            "get_weather",
            &json!({"city": "Beijing", "unit": null}),
            &ctx,
        )
        .await?;
    println!("  get_weather -> {}", forecast[0].as_text().unwrap_or(""));
    let sum = set.call("add", &json!({"a": 2, "b": 3}), &ctx).await?;
    println!("  add -> {}", sum[0].as_text().unwrap_or(""));
    let receipt = set
        .call(
            "send_money",
            &json!({"to": "Ada", "amount_cents": 500}),
            &ctx,
        )
        .await?;
    println!("  send_money -> {}", receipt[0].as_text().unwrap_or(""));
    let pay_tool = set.get("send_money").expect("registered");
    println!(
        "  send_money approval for 500 / 50000 cents: {:?} / {:?}",
        pay_tool.approval(&json!({"amount_cents": 500})),
        pay_tool.approval(&json!({"amount_cents": 50_000}))
    );
    set.call("save", &json!({"text": "buy milk"}), &ctx).await?;
    let listed = set.call("list", &json!({}), &ctx).await?;
    println!("  list -> {}", listed[0].as_text().unwrap_or(""));

    println!("\nmistakes the model can make:");
    for (name, args) in [
        ("get_weather", json!({"city": "Oslo", "country": "NO"})),
        ("get_weather", json!({"city": "Oslo", "days": 9})),
        ("reindex", json!({})),
        ("git_log", json!({})),
    ] {
        match set.call(name, &args, &ctx).await {
            Ok(out) => println!("  {name} {args} -> {out:?}"),
            Err(e) => println!("  {name} {args} -> error ({:?}): {e}", e.tool_error_kind()),
        }
    }

    let repo = std::env::current_dir()
        .map_err(|e| toolwright_core::AgentError::InvalidState(e.to_string()))?;
    let repo = repo
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(|dir| dir.to_path_buf());
    if let Some(repo) = repo {
        let in_repo = ctx.clone().with_workspace(repo);
        let log = set.call("git_log", &json!({"limit": 5}), &in_repo).await?;
        println!(
            "  git_log, inside a repository, is offered -> {}",
            log[0].as_text().unwrap_or("")
        );
    }

    println!("\nthe fns stay callable:");
    println!("  math::add(1.5, 2.0) = {}", math::add(1.5, 2.0).await);
    println!("  notes saved: {}", notes.list().await.len());
    Ok(())
}
