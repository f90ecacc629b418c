//! A small agent: three tools written with `#[tool]` (one reports progress, one needs
//! approval), the events printed as they happen, a pause for a person, and the run
//! resumed from its serialized state.
//!
//!     cargo run --example quickstart
//!
//! The model is a scripted stand-in, with no network, unless a real one is configured:
//! `OPENAI_BASE_URL` (any OpenAI-compatible server; `OPENAI_API_KEY` and `OPENAI_MODEL`
//! if it needs them) or `OPENAI_API_KEY` alone for OpenAI itself, else
//! `ANTHROPIC_API_KEY` (and optionally `ANTHROPIC_MODEL`). A real model's answer is
//! streamed to stdout as it is written; `QUICKSTART_TOOL_CHOICE=get_weather` makes its
//! first answer call that tool.
//!
//! `QUICKSTART_CATALOG=297` adds that many generated warehouse tools (300 in all), and a
//! question only one of them answers. They are deferred: the model searches for the one
//! it needs instead of reading every definition on every turn (Anthropic's own tool
//! search; other providers get a built-in `search_tools` tool). Only a real model
//! searches: the scripted stand-in keeps to the three.

use futures::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolwright_core::{
    Agent, AgentError, AgentResult, LlmClient, ModelSettings, Progress, RunOutcome, RunState,
    ToolContext, ToolError, ToolExposure, TypedTool,
    agent::AgentEvent,
    async_trait,
    llm::{LlmEvent, ToolChoice},
    search::ToolSearch,
    testing::RuleLlm,
    tool, tools,
    toolset::{ToolConfig, ToolSet},
};
use toolwright_llm::{AnthropicClient, OpenAiClient};

/// Get the current weather for a city.
#[tool(read_only, timeout = "5s")]
async fn get_weather(
    /// City name, e.g. "Paris"
    city: String,
) -> String {
    format!("{city}: 18°C, light rain")
}

/// Index a folder of documents for search.
#[tool(timeout = "2m")]
async fn index_docs(
    /// Folder to index
    path: String,
    progress: Progress,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    for phase in ["scan", "embed", "store"] {
        // Preliminary results: they appear on the run's event stream.
        progress.emit(json!({"phase": phase, "path": path}))?;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Later turns (and the model's next request) see this context.
    ctx.set_context(json!({"indexed": path}));
    Ok(format!("indexed 248 documents in {path}"))
}

/// Send an email. A person approves every call first.
#[tool(require_approval)]
async fn send_email(
    /// Recipient address
    to: String,
    /// Message body
    body: String,
) -> String {
    format!("sent {} characters to {to}", body.len())
}

/// What a warehouse tool is asked.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StockArgs {
    /// Item to count, e.g. "umbrella"
    item: String,
}

/// `warehouse_{n}_stock`: one of a catalog too large to send whole on every turn, made
/// at run time (`#[tool]` makes one tool per fn; `TypedTool` any number).
struct WarehouseStock {
    n: usize,
    name: String,
    description: String,
}

#[async_trait]
impl TypedTool for WarehouseStock {
    type Args = StockArgs;
    type Output = String;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn exposure(&self) -> ToolExposure {
        // Found by searching, not sent in full on every turn.
        ToolExposure::Deferred
    }

    async fn call_typed(&self, args: StockArgs, _ctx: &ToolContext) -> AgentResult<String> {
        // Made up, like the forecast above.
        let count = (self.n * 7 + args.item.len()) % 40;
        Ok(format!("warehouse {}: {count} × {}", self.n, args.item))
    }
}

/// The three tools above, and `catalog` warehouse tools.
fn tool_set(catalog: usize) -> AgentResult<ToolSet> {
    let mut set = tools![get_weather, index_docs, send_email];
    for n in 1..=catalog {
        set.register_tool(WarehouseStock {
            n,
            name: format!("warehouse_{n}_stock"),
            description: format!("Count an item in stock at warehouse {n}."),
        })?;
    }
    Ok(set)
}

/// `QUICKSTART_CATALOG`: how many warehouse tools to add (none when unset).
fn catalog_size() -> AgentResult<usize> {
    match std::env::var("QUICKSTART_CATALOG") {
        Ok(n) if !n.is_empty() => n.parse().map_err(|_| {
            AgentError::InvalidState(format!("QUICKSTART_CATALOG={n}: expected a number"))
        }),
        _ => Ok(0),
    }
}

fn print_event(event: AgentEvent) {
    match event {
        // A large catalog is counted, not listed.
        AgentEvent::TurnStarted { turn, tools } if tools.len() > 10 => {
            println!("── turn {turn} ({} tools)", tools.len());
        }
        AgentEvent::TurnStarted { turn, tools } => {
            println!("── turn {turn} (tools: {})", tools.join(", "));
        }
        AgentEvent::Message { message, .. } => {
            if let Some(text) = &message.text {
                println!("model: {text}");
            }
            if let Some(usage) = message.usage {
                println!(
                    "  ({} tokens in, {} out)",
                    usage.input_tokens, usage.output_tokens
                );
            }
            for call in &message.tool_calls {
                println!(
                    "model calls {}({}) [{}]",
                    call.name, call.arguments, call.id
                );
            }
        }
        AgentEvent::ToolStarted { name, call_id, .. } => println!("  ▶ {name} [{call_id}]"),
        AgentEvent::ToolProgress { name, value, .. } => println!("  … {name}: {value}"),
        AgentEvent::ContextSet { value, .. } => println!("  ⚙ context = {value}"),
        AgentEvent::ToolFinished {
            name,
            outcome,
            duration_ms,
            ..
        } => match (outcome.content(), outcome.error()) {
            (Some(content), _) => {
                let text: Vec<&str> = content.iter().filter_map(|c| c.as_text()).collect();
                println!("  ■ {name} ({duration_ms} ms): {}", text.join(" "));
            }
            (_, Some(error)) => println!("  ✗ {name} ({duration_ms} ms): {error}"),
            _ => {}
        },
        AgentEvent::WaitingForHuman { pending } => {
            for p in pending {
                println!("  ⏸ {} [{}] waits for {:?}", p.call.name, p.call.id, p.kind);
            }
        }
        AgentEvent::RunFinished { .. } => println!("── run finished"),
        other => println!("{other:?}"),
    }
}

/// Runs `run` to its next stop. A real model's run is streamed: its text is printed as
/// it arrives, with the time to its first token.
async fn drive(agent: &Agent, run: &mut RunState, streamed: bool) -> AgentResult<RunOutcome> {
    if !streamed {
        return agent.run(run).await;
    }
    let started = Instant::now();
    let mut first_token = None;
    let mut events = agent.run_stream(run);
    while let Some(event) = events.next().await {
        match event? {
            AgentEvent::ModelDelta {
                event: LlmEvent::TextDelta { text },
                ..
            } => {
                if first_token.is_none() {
                    first_token = Some(started.elapsed());
                    print!("model: ");
                }
                print!("{text}");
                // Shown as it arrives, not when the line ends.
                let _ = std::io::stdout().flush();
            }
            AgentEvent::ModelDelta { .. } => {}
            AgentEvent::Message { mut message, .. } => {
                if message.text.take().is_some() {
                    println!();
                }
                print_event(AgentEvent::Message { turn: 0, message });
            }
            other => print_event(other),
        }
    }
    if let Some(first) = first_token {
        println!("  (first token after {} ms)", first.as_millis());
    }
    println!("  (run took {} ms)", started.elapsed().as_millis());
    events
        .outcome()
        .cloned()
        .ok_or_else(|| AgentError::InvalidState("the run stream ended without an outcome".into()))
}

/// A real model when the environment configures one (see the top of this file), else a
/// deterministic stand-in that calls tools when the user's words match; and a line
/// saying which; and whether it is real.
fn model() -> AgentResult<(Arc<dyn LlmClient>, String, bool)> {
    // A cap on each answer, so a small local model cannot ramble to the end of its
    // context.
    let capped = ModelSettings::new().max_output_tokens(1024);
    match OpenAiClient::from_env() {
        Ok(client) => {
            let client = client.with_settings(capped.clone());
            let about = format!("{} at {}", client.model(), client.url());
            return Ok((Arc::new(client), about, true));
        }
        Err(unset) if unset.is_not_configured() => {}
        Err(invalid) => return Err(invalid.into()),
    }
    match AnthropicClient::from_env() {
        Ok(client) => {
            let client = client.with_settings(capped);
            let about = format!("{} at {}", client.model(), client.url());
            return Ok((Arc::new(client), about, true));
        }
        Err(unset) if unset.is_not_configured() => {}
        Err(invalid) => return Err(invalid.into()),
    }
    let scripted = RuleLlm::new()
        .when("weather", "get_weather", json!({"city": "Paris"}))
        .when("index", "index_docs", json!({"path": "./docs"}))
        .when(
            "email",
            "send_email",
            json!({"to": "team@example.com", "body": "Docs are indexed."}),
        );
    Ok((
        Arc::new(scripted),
        "a scripted model (no network)".into(),
        false,
    ))
}

/// The agent, with `catalog` warehouse tools; a streamed run prints its own events,
/// others print them from a sink.
fn build_agent(llm: Arc<dyn LlmClient>, catalog: usize, streamed: bool) -> AgentResult<Agent> {
    let builder = Agent::builder(llm)
        .system_prompt("You are a helpful assistant.")
        .tools(tool_set(catalog)?)
        .tool_search(ToolSearch::Deferred)
        .config(ToolConfig::default().with_max_output_chars(2_000));
    if streamed {
        builder.build()
    } else {
        builder.on_event(print_event).build()
    }
}

fn storage_error(error: serde_json::Error) -> AgentError {
    AgentError::InvalidState(format!("run state could not be stored: {error}"))
}

#[tokio::main]
async fn main() -> AgentResult<()> {
    // A real model's answers are streamed; the scripted one's come whole, as before.
    let (llm, about, streamed) = model()?;
    println!("model: {about}\n");
    let catalog = catalog_size()?;
    let agent = build_agent(llm.clone(), catalog, streamed)?;
    let mut question =
        String::from("What's the weather in Paris? Also index the docs and email the team.");
    if catalog > 0 {
        question.push_str(&format!(
            " And how many umbrellas are at warehouse {catalog}?"
        ));
    }
    let mut run = agent.start(question);
    if let Ok(tool) = std::env::var("QUICKSTART_TOOL_CHOICE")
        && !tool.is_empty()
    {
        // For the first answer only: a forced call on every turn would never end.
        run.next_settings = ModelSettings::new().tool_choice(ToolChoice::Tool(tool));
    }

    let outcome = drive(&agent, &mut run, streamed).await?;
    // A real model may answer without calling `send_email`, and so without a pause.
    let pending = match outcome {
        RunOutcome::Paused { pending } => pending,
        RunOutcome::Finished { answer } => {
            println!("\nfinal answer (no pause):\n{answer}");
            return Ok(());
        }
        other => {
            println!("ended without a pause: {other:?}");
            return Ok(());
        }
    };

    // A run is a value: store it, and resume it later, in any process.
    let stored = serde_json::to_string(&run).map_err(storage_error)?;
    println!("\n(run paused; {} bytes of state stored)\n", stored.len());

    let mut resumed: RunState = serde_json::from_str(&stored).map_err(storage_error)?;
    for p in &pending {
        println!("a person approves {} [{}]", p.call.name, p.call.id);
        resumed.approve(&p.call.id)?;
    }
    match drive(
        &build_agent(llm, catalog, streamed)?,
        &mut resumed,
        streamed,
    )
    .await?
    {
        RunOutcome::Finished { answer } => println!("\nfinal answer:\n{answer}"),
        other => println!("\nended: {other:?}"),
    }
    Ok(())
}
