//! Decisions a person makes on a paused run, with a record of each: who decided, when,
//! why, and the arguments they corrected. The records live in the [`RunState`], so they
//! are sealed with it ([`Agent::export_state`]) and cannot be forged in a store.
//!
//! ```
//! use toolwright_core::{Agent, RunOutcome, run::Decider, llm::{AssistantMessage, ToolCall}, tool::ExternalTool, testing::ScriptedLlm};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> toolwright_core::AgentResult<()> {
//! let llm = ScriptedLlm::new([AssistantMessage::tool_calls([ToolCall::new(
//!     "c1",
//!     "pay",
//!     json!({"account": "ACME-1", "amount": 100}),
//! )])]);
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"account": {"type": "string"}, "amount": {"type": "integer"}},
//!     "required": ["account", "amount"],
//! });
//! let agent = Agent::builder(llm)
//!     .register_tool(ExternalTool::new("pay", "Pay an account.", schema))
//!     .approval_rule(|_, _| toolwright_core::tool::ApprovalPolicy::Required)
//!     .build()?;
//! let mut run = agent.start("Pay ACME");
//! let RunOutcome::Paused { .. } = agent.run(&mut run).await? else { unreachable!() };
//!
//! // The model's account is wrong: the person approves a corrected call.
//! let alice = Decider::new("alice").reason("ACME's account changed in May");
//! let wrong = agent.approve_with(&mut run, "c1", json!({"account": "ACME-2", "amount": "100"}), alice.clone());
//! assert!(wrong.is_err(), "`amount` must be an integer");
//! agent.approve_with(&mut run, "c1", json!({"account": "ACME-2", "amount": 100}), alice)?;
//! assert_eq!(run.approvals[0].who, "alice");
//! assert_eq!(run.approvals[0].corrected_from, Some(json!({"account": "ACME-1", "amount": 100})));
//! # Ok(()) }
//! ```

use crate::agent_loop::agent::Agent;
use crate::agent_loop::run::{
    ApprovalRecord, ApprovalVerdict, CallState, Decider, PendingKind, RunState,
};
use crate::model::error::{AgentError, AgentResult, ToolError};
use crate::model::locate::schema_problem;
use serde_json::Value;

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl RunState {
    /// Approves the pending call `call_id`, as [`approve`](Self::approve) does, and
    /// records who approved it, when and why in [`approvals`](Self::approvals).
    pub fn approve_by(&mut self, call_id: &str, decider: Decider) -> AgentResult<()> {
        let tool = self.awaiting_tool(call_id)?;
        self.approve(call_id)?;
        self.note(call_id, tool, ApprovalVerdict::Approved, decider, None);
        Ok(())
    }

    /// Denies the pending call `call_id` with the decider's reason (which the model
    /// reads), and records the decision.
    pub fn deny_by(&mut self, call_id: &str, decider: Decider) -> AgentResult<()> {
        let tool = self.awaiting_tool(call_id)?;
        let reason = decider.reason.clone().unwrap_or_default();
        self.deny(call_id, reason)?;
        self.note(call_id, tool, ApprovalVerdict::Denied, decider, None);
        Ok(())
    }

    /// Approves the pending call `call_id` to run with `arguments` instead of the
    /// model's, and records the decision with the model's arguments. The state does not
    /// know the tool's schema: [`Agent::approve_with`] checks the arguments against it
    /// first, and is the public way in.
    pub(crate) fn approve_with(
        &mut self,
        call_id: &str,
        arguments: Value,
        decider: Decider,
    ) -> AgentResult<()> {
        let tool = self.awaiting_tool(call_id)?;
        self.approve(call_id)?;
        let entry = self
            .calls
            .iter_mut()
            .find(|c| c.call.id == call_id && c.slot == CallState::Approved)
            .ok_or_else(|| AgentError::InvalidState(format!("no call `{call_id}` was approved")))?;
        let original = std::mem::replace(&mut entry.call.arguments, arguments);
        self.note(
            call_id,
            tool,
            ApprovalVerdict::Approved,
            decider,
            Some(original),
        );
        Ok(())
    }

    /// The tool of the call `call_id` waiting for approval, or the error `approve` gives.
    fn awaiting_tool(&self, call_id: &str) -> AgentResult<String> {
        self.pending()
            .into_iter()
            .find(|p| p.call.id == call_id && p.kind == PendingKind::Approval)
            .map(|p| p.call.name)
            .ok_or_else(|| {
                AgentError::InvalidState(format!(
                    "no call `{call_id}` is waiting for approval (the run is {:?})",
                    self.status
                ))
            })
    }

    fn note(
        &mut self,
        call_id: &str,
        tool: String,
        decision: ApprovalVerdict,
        decider: Decider,
        corrected_from: Option<Value>,
    ) {
        self.approvals.push(ApprovalRecord {
            call_id: call_id.to_owned(),
            tool,
            decision,
            who: decider.who,
            reason: decider.reason,
            at_ms: now_ms(),
            corrected_from,
        });
    }
}

impl Agent {
    /// Approves the pending call `call_id` of `state` to run with `arguments`, after
    /// checking them against the tool's schema: a person's correction that does not fit
    /// is refused here with an [`InvalidArguments`](crate::ToolErrorKind::InvalidArguments)
    /// tool error naming the field, and the state is left as it was. A call that is not
    /// waiting for approval is [`AgentError::InvalidState`].
    pub fn approve_with(
        &self,
        state: &mut RunState,
        call_id: &str,
        arguments: Value,
        decider: Decider,
    ) -> AgentResult<()> {
        let name = state.awaiting_tool(call_id)?;
        let tool = self.tools().get(&name).ok_or_else(|| {
            AgentError::InvalidState(format!(
                "call `{call_id}` is of tool `{name}`, which this agent does not have"
            ))
        })?;
        let schema = tool.schema();
        // Typed apart from "not waiting" (`InvalidState`), so a service can answer 422
        // to the one and 409 to the other without checking first.
        let unfit = |what: String| {
            AgentError::Tool(ToolError::invalid_arguments(format!(
                "the corrected arguments of call `{call_id}` do not fit the schema of `{name}`: {what}"
            )))
        };
        if let Some(problem) = schema_problem(&schema, &arguments) {
            return Err(unfit(problem));
        }
        state.approve_with(call_id, arguments, decider)
    }
}
