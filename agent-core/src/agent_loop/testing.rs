//! Test doubles: model clients that need no network, for examples and tests: [`ScriptedLlm`] (a queue
//! of canned answers), [`RuleLlm`] (calls tools when the user's words match a rule) and
//! [`FnLlm`] (any function of the request).

use crate::agent_loop::llm::{LlmClient, LlmRequest};
use crate::model::error::{AgentError, AgentResult};
use crate::model::llm_error::LlmError;
use crate::model::message::{AssistantMessage, Message, ModelSettings, OutputSchema, ToolCall};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// What a scripted client was asked, for tests to inspect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// The conversation sent.
    pub messages: Vec<Message>,
    /// The names of the tools offered.
    pub tools: Vec<String>,
    /// The application context sent.
    pub context: Value,
    /// The parameters tools set for this turn.
    pub params: Map<String, Value>,
    /// The model settings sent (the agent's, the run's and the request's, merged).
    #[serde(default)]
    pub settings: ModelSettings,
    /// The shape asked of the answer, for typed runs.
    #[serde(default)]
    pub output: Option<OutputSchema>,
}

impl RecordedRequest {
    fn of(request: &LlmRequest<'_>) -> Self {
        Self {
            messages: request.messages.to_vec(),
            tools: request.tools.iter().map(|d| d.name.clone()).collect(),
            context: request.context.clone(),
            params: request.params.clone(),
            settings: request.settings.clone(),
            output: request.output.cloned(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Neither queue holds an invariant a panic could break.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Answers with canned messages, in order, and records every request. When the queue
/// is empty it fails with [`AgentError::Model`].
#[derive(Debug, Default)]
pub struct ScriptedLlm {
    responses: Mutex<VecDeque<AgentResult<AssistantMessage>>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

impl ScriptedLlm {
    /// A client answering with `responses`, in order.
    pub fn new(responses: impl IntoIterator<Item = AssistantMessage>) -> Self {
        Self {
            responses: Mutex::new(responses.into_iter().map(Ok).collect()),
            requests: Mutex::default(),
        }
    }

    /// Queues one more answer.
    pub fn push(&self, response: AssistantMessage) {
        lock(&self.responses).push_back(Ok(response));
    }

    /// Queues a failure, as a provider outage would produce.
    pub fn push_error(&self, message: impl Into<String>) {
        lock(&self.responses).push_back(Err(AgentError::Model(LlmError::other(message))));
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }

    /// How many answers are left.
    pub fn remaining(&self) -> usize {
        lock(&self.responses).len()
    }
}

#[async_trait]
impl LlmClient for ScriptedLlm {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        lock(&self.requests).push(RecordedRequest::of(&request));
        lock(&self.responses).pop_front().unwrap_or_else(|| {
            Err(AgentError::Model(LlmError::other(
                "the script has no more answers",
            )))
        })
    }
}

/// A model client that is any function of the request.
pub struct FnLlm<F>(pub F);

impl<F> fmt::Debug for FnLlm<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnLlm")
    }
}

#[async_trait]
impl<F> LlmClient for FnLlm<F>
where
    F: Fn(&LlmRequest<'_>) -> AgentResult<AssistantMessage> + Send + Sync,
{
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        (self.0)(&request)
    }
}

#[derive(Debug, Clone)]
struct Rule {
    keyword: String,
    tool: String,
    arguments: Value,
}

/// A deterministic stand-in for a model that calls tools by rule.
///
/// On a new user message it calls, in rule order, every offered tool whose rule's
/// keyword appears in the message (case-insensitively); with no match it answers with
/// its fallback text. Once the results of its calls are back, it answers with a
/// summary of them. Its answers depend only on the conversation, so a run paused in one
/// process finishes the same way in another.
#[derive(Debug, Clone)]
pub struct RuleLlm {
    rules: Vec<Rule>,
    fallback: String,
}

impl Default for RuleLlm {
    fn default() -> Self {
        Self {
            rules: Vec::new(),
            fallback: "I have no tool for that.".to_owned(),
        }
    }
}

impl RuleLlm {
    /// A client with no rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// When the user's message contains `keyword`, call `tool` with `arguments`.
    pub fn when(
        mut self,
        keyword: impl Into<String>,
        tool: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.rules.push(Rule {
            keyword: keyword.into().to_lowercase(),
            tool: tool.into(),
            arguments,
        });
        self
    }

    /// The answer when no rule matches.
    pub fn fallback(mut self, text: impl Into<String>) -> Self {
        self.fallback = text.into();
        self
    }
}

#[async_trait]
impl LlmClient for RuleLlm {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        let messages = request.messages;
        let Some(user_at) = messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }))
        else {
            return Ok(AssistantMessage::text(self.fallback.clone()));
        };
        let since_user = &messages[user_at + 1..];
        if since_user.is_empty() {
            let Message::User { content } = &messages[user_at] else {
                return Ok(AssistantMessage::text(self.fallback.clone()));
            };
            let said = content.to_lowercase();
            // Ids depend on the conversation only, so replays produce the same ids.
            let turn = messages
                .iter()
                .filter(|m| matches!(m, Message::Assistant(_)))
                .count()
                + 1;
            let calls: Vec<ToolCall> = self
                .rules
                .iter()
                .filter(|r| said.contains(&r.keyword))
                .filter(|r| request.tools.iter().any(|d| d.name == r.tool))
                .enumerate()
                .map(|(i, r)| {
                    ToolCall::new(
                        format!("call_{turn}_{}", i + 1),
                        r.tool.clone(),
                        r.arguments.clone(),
                    )
                })
                .collect();
            if calls.is_empty() {
                return Ok(AssistantMessage::text(self.fallback.clone()));
            }
            return Ok(AssistantMessage::tool_calls(calls));
        }
        let lines: Vec<String> = since_user
            .iter()
            .filter_map(|m| match m {
                Message::Tool(result) => {
                    let text: Vec<&str> =
                        result.content.iter().filter_map(|c| c.as_text()).collect();
                    Some(format!("{}: {}", result.name, text.join(" ")))
                }
                _ => None,
            })
            .collect();
        Ok(AssistantMessage::text(format!(
            "Here is what the tools said:\n{}",
            lines.join("\n")
        )))
    }
}
