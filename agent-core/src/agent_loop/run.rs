//! [`RunState`]: everything about a run that must outlive the process running it. It
//! serializes with serde, so a run paused for a person can be stored, and resumed later
//! by any process holding an agent built the same way.

use crate::model::content::Content;
use crate::model::error::{AgentError, AgentResult, ToolError};
use crate::model::message::{Message, ModelSettings, ToolCall};
use crate::model::outcome::{Settled, ToolCallResult, ToolOutcome};
pub use crate::model::pending::{PendingCall, PendingKind, RunOutcome};
use crate::model::usage::{RunUsage, UsageLimits};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where a run stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// Ready to ask the model (new, or given a new user message).
    #[default]
    Ready,
    /// Paused: calls wait for approval or for external output.
    WaitingForHuman,
    /// Ended with a final answer; add a user message to go on.
    Finished,
    /// Ended by a tool error under `FailRun`.
    Failed,
    /// Ended after its turn limit without a final answer; add a user message to go on.
    TurnLimit,
    /// Cancelled through its [`RunControl`](crate::execution::control::RunControl).
    Cancelled,
}

/// Where one call of the current turn stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub(crate) enum CallState {
    /// Not run yet.
    Queued,
    /// Waiting for a person.
    AwaitingApproval,
    /// A person approved it; it runs on the next `run`.
    Approved,
    /// A person denied it; the reason reaches the model.
    #[serde(alias = "rejected")]
    Denied { reason: String },
    /// Waiting for the application's output.
    AwaitingExternal,
    /// Paused by an `on_tool_called` hook, waiting for the application's output.
    AwaitingInput,
    /// The application supplied its output.
    Supplied { output: Vec<Content> },
    /// Ended.
    Done { result: Box<ToolCallResult> },
}

/// One call of the current turn and where it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TurnCall {
    pub(crate) call: ToolCall,
    pub(crate) slot: CallState,
}

/// A run: the conversation, the application context, and the calls of the turn in
/// progress. Serialize it to pause a run across processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// The run's id.
    pub run_id: String,
    /// The session the run belongs to; tools see it in their context.
    pub session_id: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The application context, as tools last set it.
    #[serde(default)]
    pub context: Value,
    /// How many times the model has been asked.
    pub turn: u32,
    /// Where the run stands.
    pub status: RunStatus,
    /// The tools offered on the turn in progress (or the last turn).
    #[serde(default)]
    pub offered_tools: Vec<String>,
    /// Parameters tools set for the next model request (see
    /// [`NextTurn`](crate::model::context::NextTurn)); cleared once that request is answered.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub next_turn: Map<String, Value>,
    /// The error that ended a failed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub(crate) calls: Vec<TurnCall>,
    /// How many times the run has been saved to a [`RunStore`](crate::RunStore) (each
    /// checkpoint is a save). A store takes a save only over the revision before it, so
    /// two processes cannot both go on from the same point.
    #[serde(default)]
    pub revision: u64,
    /// The decisions people made on this run's calls, oldest first (see
    /// [`approve_by`](Self::approve_by)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<ApprovalRecord>,
    /// Model settings for every request of this run, laid over the agent's (see
    /// [`ModelSettings::merge`]).
    #[serde(default, skip_serializing_if = "ModelSettings::is_unset")]
    pub settings: ModelSettings,
    /// Model settings for the next request only, laid over the run's; cleared once that
    /// request is answered.
    #[serde(default, skip_serializing_if = "ModelSettings::is_unset")]
    pub next_settings: ModelSettings,
    /// What the run has spent so far: requests, tool calls, tokens.
    #[serde(default, skip_serializing_if = "RunUsage::is_zero")]
    pub usage: RunUsage,
    /// The most this run may spend, over the agent's own limits (the lower applies).
    #[serde(default, skip_serializing_if = "UsageLimits::is_unset")]
    pub usage_limits: UsageLimits,
}

impl RunState {
    /// A new run starting from `messages` (a system prompt, if any, then the user's).
    pub fn new(messages: Vec<Message>) -> Self {
        // UUID v7: unique across processes, and ordered by when the run started.
        let run_id = uuid::Uuid::now_v7().to_string();
        Self {
            session_id: run_id.clone(),
            run_id,
            messages,
            context: Value::Null,
            turn: 0,
            status: RunStatus::Ready,
            offered_tools: Vec::new(),
            next_turn: Map::new(),
            error: None,
            calls: Vec::new(),
            revision: 0,
            approvals: Vec::new(),
            settings: ModelSettings::default(),
            next_settings: ModelSettings::default(),
            usage: RunUsage::default(),
            usage_limits: UsageLimits::default(),
        }
    }

    /// The same run with model settings for all its requests, over the agent's.
    pub fn with_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The same run in session `session_id`.
    pub fn with_session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = session_id.into();
        self
    }

    /// The same run with an initial application context.
    pub fn with_context(mut self, context: Value) -> Self {
        self.context = context;
        self
    }

    /// The same run with limits on what it may spend.
    pub fn with_usage_limits(mut self, limits: UsageLimits) -> Self {
        self.usage_limits = limits;
        self
    }

    /// How many times the model has been asked since the last user message: what the
    /// turn limit counts, so that a user message lets a run at its limit go on.
    pub(crate) fn turns_since_user(&self) -> u32 {
        let since = self
            .messages
            .iter()
            .rev()
            .take_while(|message| !message.is_user())
            .filter(|message| matches!(message, Message::Assistant(_)))
            .count();
        u32::try_from(since).unwrap_or(u32::MAX)
    }

    /// Adds a user message, so a finished run (or one at its turn limit) can go on.
    pub fn push_user(&mut self, text: impl Into<String>) -> AgentResult<()> {
        match self.status {
            RunStatus::Ready | RunStatus::Finished | RunStatus::TurnLimit => {
                self.messages.push(Message::user(text));
                self.status = RunStatus::Ready;
                Ok(())
            }
            status => Err(AgentError::InvalidState(format!(
                "a user message cannot be added to a run that is {status:?}"
            ))),
        }
    }

    /// The calls the run is waiting on, in call order.
    pub fn pending(&self) -> Vec<PendingCall> {
        self.calls
            .iter()
            .filter_map(|c| {
                let kind = match c.slot {
                    CallState::AwaitingApproval => PendingKind::Approval,
                    CallState::AwaitingExternal => PendingKind::ExternalOutput,
                    CallState::AwaitingInput => PendingKind::HumanInput,
                    _ => return None,
                };
                Some(PendingCall {
                    call: c.call.clone(),
                    kind,
                })
            })
            .collect()
    }

    /// The results of the turn in progress that have ended, in call order.
    pub fn turn_results(&self) -> Vec<&ToolCallResult> {
        self.calls
            .iter()
            .filter_map(|c| match &c.slot {
                CallState::Done { result } => Some(result.as_ref()),
                _ => None,
            })
            .collect()
    }

    /// The final answer, if the run finished.
    pub fn answer(&self) -> Option<&str> {
        if self.status != RunStatus::Finished {
            return None;
        }
        self.messages.iter().rev().find_map(|m| match m {
            Message::Assistant(a) => a.text.as_deref(),
            _ => None,
        })
    }

    /// Approves the pending call `call_id`; it runs when the run is resumed. A call id
    /// that is not waiting for approval is an error, and changes nothing.
    pub fn approve(&mut self, call_id: &str) -> AgentResult<()> {
        let slot = self.awaiting(call_id, PendingKind::Approval)?;
        *slot = CallState::Approved;
        Ok(())
    }

    /// Denies the pending call `call_id`: it never runs, and the model reads `reason`.
    pub fn deny(&mut self, call_id: &str, reason: impl Into<String>) -> AgentResult<()> {
        let slot = self.awaiting(call_id, PendingKind::Approval)?;
        *slot = CallState::Denied {
            reason: reason.into(),
        };
        Ok(())
    }

    /// Supplies the output of the call `call_id`, an external tool's or one paused by an
    /// `on_tool_called` hook. It passes the `on_response_received` hook and the tool's
    /// output validator when the run resumes.
    pub fn supply_output(&mut self, call_id: &str, output: Vec<Content>) -> AgentResult<()> {
        let slot = self.awaiting(call_id, PendingKind::ExternalOutput)?;
        *slot = CallState::Supplied { output };
        Ok(())
    }

    fn awaiting(&mut self, call_id: &str, kind: PendingKind) -> AgentResult<&mut CallState> {
        if self.status != RunStatus::WaitingForHuman {
            return Err(AgentError::InvalidState(format!(
                "the run is not waiting for anyone (it is {:?}), so call `{call_id}` cannot be decided",
                self.status
            )));
        }
        let wanted = match kind {
            PendingKind::Approval => "approval",
            PendingKind::ExternalOutput | PendingKind::HumanInput => "its output",
        };
        self.calls
            .iter_mut()
            .filter(|c| c.call.id == call_id)
            .map(|c| &mut c.slot)
            .find(|slot| {
                matches!(
                    (&**slot, kind),
                    (CallState::AwaitingApproval, PendingKind::Approval)
                        | (
                            CallState::AwaitingExternal | CallState::AwaitingInput,
                            PendingKind::ExternalOutput | PendingKind::HumanInput
                        )
                )
            })
            .ok_or_else(|| {
                AgentError::InvalidState(format!("no call `{call_id}` is waiting for {wanted}"))
            })
    }

    /// Records the results of the calls at `indexes` (one result per index, in order).
    pub(crate) fn record(&mut self, indexes: &[usize], results: Vec<ToolCallResult>) {
        for (&index, result) in indexes.iter().zip(results) {
            let Some(entry) = self.calls.get_mut(index) else {
                continue;
            };
            entry.slot = match result.outcome {
                ToolOutcome::PendingApproval => CallState::AwaitingApproval,
                ToolOutcome::PendingExternal => CallState::AwaitingExternal,
                ToolOutcome::PendingInput => CallState::AwaitingInput,
                _ => CallState::Done {
                    result: Box::new(result),
                },
            };
        }
    }

    /// A denied call's result.
    pub(crate) fn denial(call: &ToolCall, reason: &str) -> ToolCallResult {
        let error = ToolError::denied(format!("The call was denied: {reason}"));
        Settled::new(
            ToolOutcome::Err(error),
            crate::model::tool::ErrorPolicy::ReturnToModel,
        )
        .answer(call.clone())
    }
}

/// Who makes a decision on a pending call, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decider {
    /// The person (or policy) deciding: a user id, an email.
    pub who: String,
    /// Why, in their words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Decider {
    /// `who` decides, giving no reason.
    pub fn new(who: impl Into<String>) -> Self {
        Self {
            who: who.into(),
            reason: None,
        }
    }

    /// The same decider, giving `reason`.
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// What was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalVerdict {
    /// The call may run.
    Approved,
    /// The call never runs; the model reads the reason.
    #[serde(alias = "rejected")]
    Denied,
}

/// A decision on a call, as the run keeps it ([`RunState::approvals`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The call decided on.
    pub call_id: String,
    /// Its tool.
    pub tool: String,
    /// What was decided.
    pub decision: ApprovalVerdict,
    /// Who decided.
    pub who: String,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The arguments the model sent, when the decider corrected them (the call then runs
    /// with the corrected ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrected_from: Option<Value>,
}
