//! A small agent on a scripted model, with no network: three tools (one reports
//! progress, one needs approval), the events printed as they happen, a pause for a
//! person, and the run resumed from its serialized state.
//!
//!     cargo run --example quickstart

use agent_core::FromToolContext;
use agent_core::{
    Agent, AgentEvent, AgentResult, Approval, Progress, RuleLlm, RunOutcome, RunState,
    ToolAnnotations, ToolConfig, ToolContext, TypedTool, async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// City name, e.g. "Paris"
    city: String,
}

/// Get the current weather for a city.
struct GetWeather;

#[async_trait]
impl TypedTool for GetWeather {
    type Args = WeatherArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "get_weather"
    }

    fn description(&self) -> &'static str {
        "Get the current weather for a city."
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: Some(true),
            ..ToolAnnotations::default()
        }
    }

    async fn call_typed(&self, args: WeatherArgs, _ctx: &ToolContext) -> AgentResult<String> {
        Ok(format!("{}: 18°C, light rain", args.city))
    }
}

#[derive(Deserialize, JsonSchema)]
struct IndexArgs {
    /// Folder to index
    path: String,
}

/// Index a folder of documents, reporting progress as it goes.
struct IndexDocs;

#[async_trait]
impl TypedTool for IndexDocs {
    type Args = IndexArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "index_docs"
    }

    fn description(&self) -> &'static str {
        "Index a folder of documents for search."
    }

    async fn call_typed(&self, args: IndexArgs, ctx: &ToolContext) -> AgentResult<String> {
        let progress = Progress::from_tool_context(ctx)?;
        for phase in ["scan", "embed", "store"] {
            progress.emit(json!({"phase": phase, "path": args.path}))?;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        ctx.set_context(json!({"indexed": args.path}));
        Ok(format!("indexed 248 documents in {}", args.path))
    }
}

#[derive(Deserialize, JsonSchema)]
struct EmailArgs {
    /// Recipient address
    to: String,
    /// Message body
    body: String,
}

/// Send an email: a person approves every call first.
struct SendEmail;

#[async_trait]
impl TypedTool for SendEmail {
    type Args = EmailArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "send_email"
    }

    fn description(&self) -> &'static str {
        "Send an email."
    }

    fn approval(&self, _args: &serde_json::Value) -> Approval {
        Approval::Required
    }

    async fn call_typed(&self, args: EmailArgs, _ctx: &ToolContext) -> AgentResult<String> {
        Ok(format!(
            "sent {} characters to {}",
            args.body.len(),
            args.to
        ))
    }
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
        } => println!(
            "  ■ {name} ({duration_ms} ms): {}",
            serde_json::to_string(&outcome).unwrap_or_default()
        ),
        AgentEvent::WaitingForHuman { pending } => {
            for p in pending {
                println!("  ⏸ {} [{}] waits for {:?}", p.call.name, p.call.id, p.kind);
            }
        }
        other => println!("{}", serde_json::to_string(&other).unwrap_or_default()),
    }
}

fn build_agent() -> AgentResult<Agent> {
    // Deterministic stand-in for a model: calls tools when the user's words match.
    let llm = RuleLlm::new()
        .when("weather", "get_weather", json!({"city": "Paris"}))
        .when("index", "index_docs", json!({"path": "./docs"}))
        .when(
            "email",
            "send_email",
            json!({"to": "team@example.com", "body": "Docs are indexed."}),
        );
    Agent::builder(llm)
        .system_prompt("You are a helpful assistant.")
        .register_tool(GetWeather)
        .register_tool(IndexDocs)
        .register_tool(SendEmail)
        .config(ToolConfig::default().with_max_output_chars(2_000))
        .on_event(print_event)
        .build()
}

#[tokio::main]
async fn main() -> AgentResult<()> {
    let agent = build_agent()?;
    let mut run =
        agent.start("What's the weather in Paris? Also index the docs and email the team.");

    let outcome = agent.run(&mut run).await?;
    let RunOutcome::Paused { pending } = outcome else {
        println!("finished without a pause: {outcome:?}");
        return Ok(());
    };

    // The run is a value: store it, and resume it later, anywhere.
    let stored = serde_json::to_string(&run)
        .map_err(|e| agent_core::AgentError::InvalidState(e.to_string()))?;
    println!("\n(run paused; {} bytes of state stored)\n", stored.len());

    let mut resumed: RunState = serde_json::from_str(&stored)
        .map_err(|e| agent_core::AgentError::InvalidState(e.to_string()))?;
    for p in &pending {
        println!("a person approves {} [{}]", p.call.name, p.call.id);
        resumed.approve(&p.call.id)?;
    }
    let outcome = build_agent()?.run(&mut resumed).await?;
    if let RunOutcome::Finished { answer } = outcome {
        println!("\nfinal answer:\n{answer}");
    }
    Ok(())
}
