//! [`RestateJournal`]: the agent's [`Journal`] on a Restate workflow context, each step
//! a `ctx.run` block whose result Restate records and replays.

use restate_sdk::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use toolwright_core::AgentError;
use toolwright_core::llm::{AssistantMessage, ToolCall};
use toolwright_core::run::{Journal, JournalStep};
use toolwright_core::tool::ToolCallResult;

/// The status code Restate gives a cancelled invocation's pending operations.
const CANCELLED: u16 = 409;

/// Journals a run's steps in the workflow invocation `ctx`.
pub(crate) struct RestateJournal<'a, 'ctx> {
    ctx: &'a WorkflowContext<'ctx>,
    cancelled: AtomicBool,
}

impl<'a, 'ctx> RestateJournal<'a, 'ctx> {
    pub(crate) fn new(ctx: &'a WorkflowContext<'ctx>) -> Self {
        Self {
            ctx,
            cancelled: AtomicBool::new(false),
        }
    }

    /// Whether Restate cancelled the invocation during a step.
    pub(crate) fn was_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    fn stopped(&self, error: TerminalError) -> AgentError {
        if error.code() == CANCELLED {
            self.cancelled.store(true, Ordering::Relaxed);
        }
        AgentError::Journal(format!(
            "{} (Restate code {})",
            error.message(),
            error.code()
        ))
    }
}

#[async_trait::async_trait]
impl Journal for RestateJournal<'_, '_> {
    async fn model_call(
        &self,
        turn: u32,
        step: JournalStep<toolwright_core::AgentResult<AssistantMessage>>,
    ) -> toolwright_core::AgentResult<AssistantMessage> {
        // A failed model call is retried by Restate (its retry policy): the provider's
        // transient errors are what a step retry is for.
        let answer = self
            .ctx
            .run(|| async move {
                step.await
                    .map(Json)
                    .map_err(|error| HandlerError::from(error.to_string()))
            })
            .name(format!("model turn {turn}"))
            .await;
        answer.map(Json::into_inner).map_err(|e| self.stopped(e))
    }

    async fn tool_call(
        &self,
        call: &ToolCall,
        step: JournalStep<ToolCallResult>,
    ) -> toolwright_core::AgentResult<ToolCallResult> {
        // A tool's error is its result (the model reads it): journaled, never retried here.
        let result = self
            .ctx
            .run(|| async move { Ok(Json(step.await)) })
            .name(format!("tool {} {}", call.name, call.id))
            .await;
        result.map(Json::into_inner).map_err(|e| self.stopped(e))
    }
}
