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

use futures::StreamExt;
use serde_json::json;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolwright_core::{
    Agent, AgentError, AgentResult, LlmClient, ModelSettings, Progress, RunOutcome, RunState,
    ToolContext, ToolError,
    agent::AgentEvent,
    llm::{LlmEvent, ToolChoice},
    testing::RuleLlm,
    tool, tools,
    toolset::ToolConfig,
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

fn print_event(event: AgentEvent) {
    match event {
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

/// The agent; a streamed run prints its own events, others print them from a sink.
fn build_agent(llm: Arc<dyn LlmClient>, streamed: bool) -> AgentResult<Agent> {
    let builder = Agent::builder(llm)
        .system_prompt("You are a helpful assistant.")
        .tools(tools![get_weather, index_docs, send_email])
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
    let agent = build_agent(llm.clone(), streamed)?;
    let mut run =
        agent.start("What's the weather in Paris? Also index the docs and email the team.");
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
    match drive(&build_agent(llm, streamed)?, &mut resumed, streamed).await? {
        RunOutcome::Finished { answer } => println!("\nfinal answer:\n{answer}"),
        other => println!("\nended: {other:?}"),
    }
    Ok(())
}
