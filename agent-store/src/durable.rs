//! Running agents inside a durable-execution engine (Temporal, Restate, or a job queue
//! that retries): a recipe.
//!
//! The engine brings retries, timers and waiting for signals; the store and the agent's
//! hooks bring the agent's own durability:
//!
//! - **Checkpoints** ([`AgentBuilder::checkpoints`](toolwright_core::agent::AgentBuilder::checkpoints)):
//!   after every step (the model's answer, a turn's tool results, a pause, the final
//!   answer) the run is saved as its next revision. A step retried after a crash
//!   resumes from the last checkpoint; the tools that finished before it are not run
//!   again.
//! - **Claims** ([`RunStore::save_run`](toolwright_core::RunStore::save_run) before running):
//!   of two workers resuming one run (a retry racing a worker presumed dead), one saves
//!   and runs; the other gets [`StoreError::Conflict`](toolwright_core::run::StoreError::Conflict).
//!   A worker that lost the run stops at its next checkpoint.
//! - **Idempotency keys**
//!   ([`ToolContext::idempotency_key`](toolwright_core::ToolContext::idempotency_key)): a
//!   tool that was running when the process died runs again on resume, with the same
//!   key (`run_id:call_id`); a tool with side effects passes it to the service it
//!   calls, so the work is done once.
//!
//! The workflow, keyed by the run id, loops over two steps, each an activity (Temporal)
//! or a journaled `run` block (Restate) the engine may retry:
//!
//! 1. `advance`: load the run, claim it, run it with checkpoints until it pauses or ends.
//! 2. When it paused: wait for the person's decision (a signal, an awakeable or a
//!    durable promise), then `decide`: load the run, apply the decision
//!    ([`RunState::approve_by`](toolwright_core::RunState::approve_by),
//!    [`Agent::approve_with`](toolwright_core::Agent::approve_with), ...), save it.
//!
//! ```
//! use toolwright_core::{
//!     Agent, run::Decider, llm::AssistantMessage, RunOutcome, RunStore, testing::ScriptedLlm, run::StoreError,
//!     llm::ToolCall, ToolContext, tool, tools,
//! };
//! use toolwright_store::SqliteStore;
//! use serde_json::json;
//! use std::sync::Arc;
//!
//! /// One retryable step: resume the run from its last checkpoint until it pauses or ends.
//! async fn advance(
//!     store: &dyn RunStore,
//!     agent: &Agent,
//!     run_id: &str,
//! ) -> Result<RunOutcome, Box<dyn std::error::Error>> {
//!     let mut run = store.load_run(agent, run_id).await?.ok_or("no such run")?;
//!     if let Some(answer) = run.answer() {
//!         // Done before a retry: the step's result is the same.
//!         return Ok(RunOutcome::Finished { answer: answer.to_owned() });
//!     }
//!     store.save_run(agent, &mut run).await?; // the claim
//!     Ok(agent.run(&mut run).await?)
//! }
//!
//! /// The person's decision, once the engine delivers it.
//! async fn decide(
//!     store: &dyn RunStore,
//!     agent: &Agent,
//!     run_id: &str,
//!     decider: Decider,
//! ) -> Result<(), StoreError> {
//!     let mut run = store.load_run(agent, run_id).await?.expect("stored");
//!     for pending in run.pending() {
//!         run.approve_by(&pending.call.id, decider.clone()).map_err(StoreError::State)?;
//!     }
//!     store.save_run(agent, &mut run).await
//! }
//!
//! /// Refund an order.
//! #[tool(require_approval)]
//! async fn refund(order: u32, ctx: &ToolContext) -> String {
//!     // The payment service does the refund once per key, however often it is asked.
//!     format!("refunded order {order} (key {})", ctx.idempotency_key())
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open_in_memory().await?);
//! let llm = ScriptedLlm::new([
//!     AssistantMessage::tool_calls([ToolCall::new("c1", "refund", json!({"order": 7}))]),
//!     AssistantMessage::text("Refunded."),
//! ]);
//! let agent = Agent::builder(llm)
//!     .tools(tools![refund])
//!     .state_key(b"a key of at least sixteen bytes")
//!     .checkpoints(store.clone())
//!     .build()?;
//!
//! // The workflow starts: the run is stored, then advanced until it waits for a person.
//! let mut run = agent.start("Refund order 7");
//! store.save_run(&agent, &mut run).await?;
//! let outcome = advance(&*store, &agent, &run.run_id).await?;
//! assert!(matches!(outcome, RunOutcome::Paused { .. }));
//!
//! // A person decides; the engine delivers it; the run goes on.
//! decide(&*store, &agent, &run.run_id, Decider::new("alice")).await?;
//! let outcome = advance(&*store, &agent, &run.run_id).await?;
//! assert_eq!(outcome, RunOutcome::Finished { answer: "Refunded.".into() });
//! # Ok(()) }
//! ```
//!
//! With Temporal's Rust SDK (`temporalio-sdk`), `advance` and `decide` are activities and
//! the decision arrives as a signal; with Restate's (`restate-sdk`), the workflow handler
//! runs each inside a journaled `run` block and waits on a durable promise or an
//! awakeable. Both SDKs are on crates.io, but neither is a dependency here: each needs
//! its own server running beside the application, and the hooks need nothing from an
//! engine beyond a step it may retry. The test `tests/durable.rs` kills a process with
//! SIGKILL after each checkpoint and resumes the run in another: no tool that finished
//! before the last checkpoint runs again. A tool that was still running when the process
//! died has no checkpoint of its result, so it does run again, with the same idempotency
//! key: that key, not the checkpoints, is what makes its side effect happen once.
