//! Durable agent runs on [Restate](https://restate.dev): a toolwright [`Agent`] run as a
//! Restate workflow keyed by the run id, where each model call and each tool call is a
//! journaled step (`ctx.run`). After a crash, Restate replays the run on a worker: the
//! steps that ended are answered from the journal, never done again, and the run goes on
//! from the first step that did not end.
//!
//! The agent is the one an in-process run uses (same model client, same tools, same
//! policies); moving runs to Restate is serving it with [`AgentRuns`]:
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolwright_core::{Agent, testing::RuleLlm};
//! use toolwright_restate::{AgentRuns, restate_sdk::prelude::*};
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder(RuleLlm::new()).build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9080").await?;
//! HttpServer::new(Endpoint::builder().bind(AgentRuns::new(Arc::new(agent))).build())
//!     .serve(listener)
//!     .await;
//! # Ok(()) }
//! ```
//!
//! Register the worker with the Restate server (`restate deployments register
//! http://127.0.0.1:9080`, or `scripts/restate.sh register URL`), then drive runs through
//! Restate's ingress, with the run id as the workflow key:
//!
//! | Request | What it does |
//! |---|---|
//! | `POST /AgentRun/{run_id}/run` `{"input": "..."}` | starts the run; answers its [`RunReport`] when it ends (`/run/send` answers at once) |
//! | `POST /AgentRun/{run_id}/approve` [`Decision`] | decides a call waiting for approval |
//! | `POST /AgentRun/{run_id}/supply` [`SuppliedOutput`] | supplies the output of a call waiting for it (an [`ExternalTool`](toolwright_core::tool::ExternalTool)'s, or one an `on_tool_called` hook paused) |
//! | `POST /AgentRun/{run_id}/cancel` | cancels a run waiting for a decision |
//! | `POST /AgentRun/{run_id}/status` | the run's [`RunReport`] as last recorded |
//!
//! # Approvals
//!
//! A call that needs approval pauses the run on a durable promise named after the call.
//! `approve` checks the decision before it resolves the promise: a call id that is not
//! waiting is refused (404), a call decided already is refused (409), corrected
//! arguments that do not fit the tool's schema are refused (422, naming the field).
//! Of reviewers deciding at the same moment, exactly one is answered 200 and the run
//! takes that decision; the others are answered 409, as is anyone deciding after the
//! approval timeout denied the call.
//! The decision is recorded in [`RunState::approvals`] as
//! [`RunState::approve_by`] and [`Agent::approve_with`] record it, with the decider,
//! the reason, the time and the model's arguments when they were corrected. A decision
//! sent while no worker is up waits in Restate and is applied when one comes back. With
//! [`AgentRuns::approval_timeout`], a durable timer denies the call when nobody decides
//! in time.
//!
//! A call waiting for its output (an external tool's, or one a hook paused for a person)
//! pauses the run the same way, on a durable promise that `supply` resolves: a call id
//! not waiting for output is refused (404), an output supplied twice is refused (409),
//! and an output sent while no worker is up is taken when one comes back.
//!
//! # What a tool must do
//!
//! A tool that was running when its worker died has no journaled result: it runs again
//! on the worker that replays the run, with the same
//! [`ToolContext::idempotency_key`](toolwright_core::ToolContext::idempotency_key)
//! (`run_id:call_id`). A tool with side effects passes that key to the service it calls
//! (or records it beside the effect), so the effect happens once. A tool whose result was
//! journaled never runs again for that call.
//!
//! # Cancelling
//!
//! `cancel` ends a run that waits for a decision. A run in the middle of a step is
//! cancelled through Restate (`restate invocations cancel`, or the admin API's
//! `PATCH /invocations/{id}/cancel`): the step in flight is abandoned and the run is
//! recorded as cancelled.
//!
//! # MCP tasks that outlive their server
//!
//! With the feature `mcp`, `RestateTaskStore` keeps the records of
//! [`toolwright-mcp`](https://docs.rs/toolwright-mcp)'s tasks in Restate, in the state of
//! the virtual object `McpTask` (`TaskRecords`, keyed by the task id): a task started
//! on one server is read, answered and finished by another, on another machine.
//!
//! Given to the MCP servers as their task runner too (`TaskOptions::runner`), it moves
//! the tasks' *work* to Restate: each task's call runs in the service `McpTaskWork`
//! (`TaskWork`), on a worker holding the same tools (the servers' own process or
//! another; see `TaskWork` for the setup). What such a task guarantees:
//!
//! - **It outlives its server.** The call is handed to Restate before the client is
//!   answered with the task's id (once per task). No MCP server runs it or holds a lease
//!   on it: the server that started it may stop or die, and any server on the same
//!   Restate (one started afterwards too) answers `tasks/get` from the record, which the
//!   worker settles when the call ends. While no worker is up the task stays `working`:
//!   Restate runs the call once one comes back. A hand-off Restate does not take (it is
//!   unreachable) fails the call, and the task is recorded `failed`.
//! - **A worker's crash repeats only the call in flight.** The call is one journaled
//!   step (`ctx.run`): when its worker dies during the call, Restate runs it again on a
//!   worker, with the same [`ToolContext::idempotency_key`](toolwright_core::ToolContext::idempotency_key)
//!   (`owner:task-id`), so a tool with a side effect does it once by passing the key on
//!   (as under [What a tool must do](#what-a-tool-must-do)). Once its outcome is journaled
//!   the call never runs again.
//! - **`tasks/cancel` on any server stops the work.** It cancels the Restate invocation:
//!   the call in flight is dropped at once (the tool's future stops at its next `.await`)
//!   and the task ends `cancelled`; an outcome that arrives later is ignored.
//! - **Nobody can be asked.** A call of a tool that needs approval (under
//!   `ApprovalMode::Elicit`) or asks on the call (`task = "on_demand"`) is refused when
//!   it is made, with an error saying why; a tool that asks with `McpPeer::ask` finds no
//!   `McpPeer` in its context, an error result that completes its task. The tool's
//!   progress notifications reach no client.

#![forbid(unsafe_code)]

mod journal;
#[cfg(feature = "mcp")]
mod tasks;
mod workflow;

pub use restate_sdk;
#[cfg(feature = "mcp")]
pub use tasks::{RestateTaskStore, SaveOutcome, TaskRecords, TaskWork};
pub use workflow::{AgentRuns, Decision, RunReport, StartRun, SuppliedOutput};

#[cfg(doc)]
use toolwright_core::{Agent, RunState};

/// Now, in milliseconds since the Unix epoch (0 before it): read inside `ctx.run`, so
/// that a replay reads the time the first run journaled.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
