//! [`Journal`]: the seam through which a durable-execution engine (Restate, Temporal...)
//! records a run's steps, so that a run replayed after a crash gets each step's recorded
//! result instead of doing it again.
//!
//! The agent hands the journal each model call and each tool call as a future that owns
//! what it needs (`'static`); the journal runs it at most once per recorded step and
//! answers the result, run or replayed. Everything the agent does between steps is
//! deterministic given those results, which is what replay requires.

use crate::model::error::AgentResult;
use crate::model::message::{AssistantMessage, ToolCall};
use crate::model::outcome::ToolCallResult;
use async_trait::async_trait;
use futures::future::BoxFuture;

/// One step of a run for a [`Journal`] to run or replay: it owns what it uses, so the
/// journal may keep it as long as it needs.
pub type JournalStep<T> = BoxFuture<'static, T>;

/// Records a run's steps (see [`Agent::run_journaled`](crate::Agent::run_journaled)).
///
/// An implementation runs `step` when the step has no recorded result and records what
/// it answered; when the step was recorded (the run is being replayed), it answers the
/// recorded result without running `step`. Steps are asked for in the same order on every
/// replay. An `Err` stops the run there: the engine cancelled the run, or can no longer
/// record steps.
#[async_trait]
pub trait Journal: Send + Sync {
    /// Runs or replays the model call of turn `turn` (1 for the run's first).
    async fn model_call(
        &self,
        turn: u32,
        step: JournalStep<AgentResult<AssistantMessage>>,
    ) -> AgentResult<AssistantMessage>;

    /// Runs or replays the tool call `call`. The same call may be asked for twice: once
    /// when it paused for approval and once, with the same id, when it runs approved.
    async fn tool_call(
        &self,
        call: &ToolCall,
        step: JournalStep<ToolCallResult>,
    ) -> AgentResult<ToolCallResult>;
}
