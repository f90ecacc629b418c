//! The model side of an agent: [`LlmClient`] and the provider-neutral messages it
//! exchanges. An adapter for a provider maps these types to its wire format; nothing
//! here knows any provider.

use crate::content::Content;
use crate::error::AgentResult;
use crate::set::ToolDefinition;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::{Arc, LazyLock};

/// One tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for the call; results and approvals refer to it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model sent them. An adapter that receives arguments it
    /// cannot parse as JSON passes them on as a JSON string, and the runtime answers
    /// with an invalid-arguments error.
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments`, identified by `id`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// What the model answered: text, tool calls, or both. No tool calls means the text is
/// the final answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The model's text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tools the model wants called, in its order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The tokens this answer cost, when the provider reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Blocks of the provider's own that must go back to it unchanged when the
    /// conversation is sent again, in the order received: Anthropic's `thinking` and
    /// `redacted_thinking` blocks, which its API requires before the `tool_use` they
    /// preceded (their signatures and `data` are checked). Other clients leave it empty
    /// and ignore it. Kept in run state, so a paused run resumes with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_blocks: Vec<Value>,
}

/// Token counts a provider reported for one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read: the whole prompt, cached or not (OpenAI's `prompt_tokens`).
    pub input_tokens: u64,
    /// Tokens generated (OpenAI's `completion_tokens`).
    pub output_tokens: u64,
}

impl AssistantMessage {
    /// A final answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A message calling tools.
    pub fn tool_calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Self {
            tool_calls: calls.into_iter().collect(),
            ..Self::default()
        }
    }

    /// Whether this message ends the run (it calls no tool).
    pub fn is_final(&self) -> bool {
        self.tool_calls.is_empty()
    }
}

/// The result of one tool call, as the model reads it on the next turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The id of the call this answers.
    pub call_id: String,
    /// The tool's name (some providers want it beside the id).
    pub name: String,
    /// The result. An error is a text block `{"error": "...", "kind": "..."}`.
    pub content: Vec<Content>,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions for the model.
    System {
        /// The instructions.
        content: String,
    },
    /// What the user said.
    User {
        /// The user's text.
        content: String,
    },
    /// What the model answered.
    Assistant(AssistantMessage),
    /// A tool's result.
    Tool(ToolResultMessage),
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }
}

static NO_PARAMS: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

/// What the model is asked on one turn.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct LlmRequest<'a> {
    /// The conversation so far, oldest first.
    pub messages: &'a [Message],
    /// The tools the model may call this turn (only the active ones).
    pub tools: &'a [Arc<ToolDefinition>],
    /// The application context, as the tools last set it (`null` when unset). An
    /// adapter may show it to the model, or not.
    pub context: &'a Value,
    /// Parameters tools set for this request only (see [`NextTurn`](crate::NextTurn)),
    /// for the adapter to apply: a model name, a temperature, a tool choice... Empty on
    /// most turns.
    pub params: &'a Map<String, Value>,
}

impl<'a> LlmRequest<'a> {
    /// A request for these messages and tools, with no application context.
    pub fn new(messages: &'a [Message], tools: &'a [Arc<ToolDefinition>]) -> Self {
        Self {
            messages,
            tools,
            context: &Value::Null,
            params: &NO_PARAMS,
        }
    }

    /// The same request with parameters for this turn.
    pub fn with_params(mut self, params: &'a Map<String, Value>) -> Self {
        self.params = params;
        self
    }

    /// The same request with an application context.
    pub fn with_context(mut self, context: &'a Value) -> Self {
        self.context = context;
        self
    }
}

/// A language model: one call, from the conversation and the tools on offer to the
/// model's next message.
#[async_trait]
pub trait LlmClient: Send + Sync {
    /// Asks the model for its next message. A transport or provider failure is
    /// [`AgentError::Llm`](crate::AgentError::Llm).
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage>;
}

#[async_trait]
impl<T: LlmClient + ?Sized> LlmClient for Arc<T> {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        (**self).complete(request).await
    }
}
