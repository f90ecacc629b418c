//! What a run waits on, and how a run returned: plain data, so that an error can carry
//! it without the error module importing the machinery that makes it.

use crate::model::message::ToolCall;
use serde::{Deserialize, Serialize};

/// Why a call is pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PendingKind {
    /// A person must approve or deny it.
    #[serde(alias = "tool_approval")]
    Approval,
    /// The application must supply its output.
    ExternalOutput,
    /// An `on_tool_called` hook paused the call for a person; the application supplies
    /// the output.
    HumanInput,
}

/// A call the run is waiting on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call, as the model made it.
    pub call: ToolCall,
    /// What it waits for.
    pub kind: PendingKind,
}

/// How [`Agent::run`](crate::Agent::run) returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunOutcome {
    /// The model gave its final answer.
    Finished {
        /// The answer's text.
        answer: String,
    },
    /// The run waits on these calls: approve, deny or supply output on the state,
    /// then run it again.
    Paused {
        /// The calls waiting.
        pending: Vec<PendingCall>,
    },
    /// The turn limit was reached without a final answer.
    TurnLimit,
    /// The run was cancelled.
    Cancelled,
}
