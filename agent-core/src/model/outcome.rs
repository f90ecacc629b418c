//! What became of a call: [`ToolOutcome`] and [`ToolCallResult`], and what a paused
//! call waits for ([`PendingCall`](crate::model::pending::PendingCall)). Plain data, shared by the call pipeline, the
//! event stream and the run state.

use crate::model::content::Content;
use crate::model::error::ToolError;
use crate::model::message::{ToolCall, ToolResultMessage};
use crate::model::tool::ErrorPolicy;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// What became of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", content = "value", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool's result, validated and cut to the output budget.
    Ok(Vec<Content>),
    /// The call failed.
    Err(ToolError),
    /// The call waits for a person's approval; it has not run.
    PendingApproval,
    /// The tool is external: the call waits for the application to supply its output.
    PendingExternal,
    /// An `on_tool_called` hook paused the call: it waits for the application to supply
    /// its output.
    PendingInput,
}

impl ToolOutcome {
    /// Whether the call is waiting (for approval or for external output).
    pub fn is_pending(&self) -> bool {
        matches!(
            self,
            Self::PendingApproval | Self::PendingExternal | Self::PendingInput
        )
    }

    /// The error, if the call failed.
    pub fn error(&self) -> Option<&ToolError> {
        match self {
            Self::Err(error) => Some(error),
            _ => None,
        }
    }

    /// The content, if the call succeeded.
    pub fn content(&self) -> Option<&[Content]> {
        match self {
            Self::Ok(content) => Some(content),
            _ => None,
        }
    }
}

/// One call's result, in the order of the calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallResult {
    /// The call.
    pub call: ToolCall,
    /// What became of it.
    pub outcome: ToolOutcome,
    /// The error policy that applies to it (meaningful when it failed).
    pub policy: ErrorPolicy,
    /// The last application context the call set, if it set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_update: Option<Value>,
    /// Parameters the call set for the next model request, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_turn: Option<Map<String, Value>>,
}

impl ToolCallResult {
    /// Whether this result ends the run: an error under [`ErrorPolicy::FailRun`].
    pub fn fails_run(&self) -> bool {
        matches!(self.outcome, ToolOutcome::Err(_)) && self.policy == ErrorPolicy::FailRun
    }

    /// The message the model reads, or `None` while the call is pending. An error is
    /// a text block `{"error": "...", "kind": "..."}` the model can act on.
    pub fn to_message(&self) -> Option<ToolResultMessage> {
        let (content, is_error) = match &self.outcome {
            ToolOutcome::Ok(content) => (content.clone(), false),
            ToolOutcome::Err(error) => (vec![error_content(error)], true),
            ToolOutcome::PendingApproval
            | ToolOutcome::PendingExternal
            | ToolOutcome::PendingInput => return None,
        };
        Some(ToolResultMessage {
            call_id: self.call.id.clone(),
            name: self.call.name.clone(),
            content,
            is_error,
        })
    }
}

/// A call's answer but for the call itself, which joins it when the turn's results are
/// put together: a call given to the executor by value is then moved into its result,
/// never copied.
///
/// Small (six words), so that it moves through the batch's futures without a box of
/// its own: what few calls report for the next turn is boxed instead.
pub(crate) struct Settled {
    pub(crate) outcome: ToolOutcome,
    pub(crate) policy: ErrorPolicy,
    pub(crate) reports: Option<Box<Reports>>,
}

/// What a call left for the next turn, when it left anything.
pub(crate) struct Reports {
    pub(crate) context_update: Option<Value>,
    pub(crate) next_turn: Option<Map<String, Value>>,
}

impl Settled {
    /// An answer that reports nothing beyond its outcome.
    pub(crate) fn new(outcome: ToolOutcome, policy: ErrorPolicy) -> Self {
        Self {
            outcome,
            policy,
            reports: None,
        }
    }

    /// The result of `call`.
    pub(crate) fn answer(self, call: ToolCall) -> ToolCallResult {
        let (context_update, next_turn) = match self.reports {
            Some(reports) => (reports.context_update, reports.next_turn),
            None => (None, None),
        };
        ToolCallResult {
            call,
            outcome: self.outcome,
            policy: self.policy,
            context_update,
            next_turn,
        }
    }
}

/// The content the model reads for a failed call.
pub fn error_content(error: &ToolError) -> Content {
    Content::text(json!({"error": error.message(), "kind": error.kind().as_str()}).to_string())
}
