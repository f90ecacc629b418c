//! Checkpoints: the state of a run after each of its steps, handed to a
//! [`Checkpointer`] so that a run can resume elsewhere from its last step.

use crate::agent_loop::run::RunState;
use crate::model::error::AgentResult;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// Which step of a run a [`Checkpoint`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CheckpointStep {
    /// The model answered with tool calls; none has run yet.
    ModelAnswered,
    /// The tool calls that could run have run, and their results are in the state.
    ToolResults,
    /// The run paused for a person or for external output.
    Paused,
    /// The model gave its final answer.
    Finished,
}

/// A run's state after a step, for a [`Checkpointer`].
#[derive(Debug, Clone, Copy)]
pub struct Checkpoint<'a> {
    /// The step just ended.
    pub step: CheckpointStep,
    /// The state, its [`revision`](RunState::revision) already advanced for this
    /// checkpoint.
    pub state: &'a RunState,
    /// The state as [`Agent::export_state`](crate::Agent::export_state) writes it.
    pub sealed: &'a str,
}

/// Called by the agent after every step of a run (see
/// [`AgentBuilder::on_checkpoint`](crate::agent_loop::agent::AgentBuilder::on_checkpoint)).
/// An error stops the run there and is the run's error: a process that can no longer
/// save its progress (or has lost the run to another) must not go on running tools.
#[async_trait]
pub trait Checkpointer: Send + Sync {
    /// Keeps `checkpoint`.
    async fn checkpoint(&self, checkpoint: Checkpoint<'_>) -> AgentResult<()>;
}
