//! The model side of an agent: [`LlmClient`], and the request it is asked. The
//! messages it exchanges are in the model layer (`message.rs`); nothing here knows any
//! provider.

use crate::model::error::{AgentError, AgentResult};
use crate::model::llm_error::LlmError;
use crate::model::message::{AssistantMessage, LlmEvent, Message, ModelSettings, OutputSchema};
use crate::model::set::ToolDefinition;
use async_trait::async_trait;
use futures::stream::{BoxStream, StreamExt};
use serde_json::{Map, Value};
use std::sync::{Arc, LazyLock};
/// A streamed answer: [`LlmEvent`]s until [`LlmEvent::Done`] or an error.
pub type LlmStream<'a> = BoxStream<'a, Result<LlmEvent, LlmError>>;

/// Reads `stream` to its end and returns the message of its
/// [`Done`](LlmEvent::Done) event: how [`LlmClient::complete`] is built on
/// [`LlmClient::stream`]. A stream that ends without one is a
/// [`BrokenStream`](LlmError::BrokenStream) error carrying the text and calls received.
pub async fn collect_stream(mut stream: LlmStream<'_>) -> Result<AssistantMessage, LlmError> {
    let mut partial = AssistantMessage::default();
    while let Some(event) = stream.next().await {
        match event? {
            LlmEvent::Done { message, .. } => return Ok(message),
            LlmEvent::TextDelta { text } => {
                partial.text.get_or_insert_with(String::new).push_str(&text)
            }
            LlmEvent::ToolCallEnd { call, .. } => partial.tool_calls.push(call),
            LlmEvent::Usage { usage } => partial.usage = Some(usage),
            _ => {}
        }
    }
    Err(LlmError::BrokenStream {
        message: "the stream ended before the answer was complete".to_owned(),
        partial: Box::new(partial),
    })
}

static NO_PARAMS: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
static NO_SETTINGS: LazyLock<ModelSettings> = LazyLock::new(ModelSettings::default);

/// What the model is asked on one turn.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct LlmRequest<'a> {
    /// The conversation so far, oldest first.
    pub messages: &'a [Message],
    /// The tools the model may call this turn (only the active ones).
    pub tools: &'a [Arc<ToolDefinition>],
    /// Further tools the model may call this turn once the provider's own tool search
    /// has found them (see [`ToolSearch`](crate::search::ToolSearch)): sent for deferred
    /// loading, and empty unless [`LlmClient::native_tool_search`] said yes.
    pub deferred: &'a [Arc<ToolDefinition>],
    /// The application context, as the tools last set it (`null` when unset). An
    /// adapter may show it to the model, or not.
    pub context: &'a Value,
    /// Parameters tools set for this request only (see [`NextTurn`](crate::model::context::NextTurn)),
    /// for the adapter to apply: a model name, a temperature, a tool choice... Empty on
    /// most turns.
    pub params: &'a Map<String, Value>,
    /// Model settings for this request, laid over the client's own (see
    /// [`ModelSettings::merge`]).
    pub settings: &'a ModelSettings,
    /// The shape the answer must have, when the run asks for typed output.
    pub output: Option<&'a OutputSchema>,
}

impl<'a> LlmRequest<'a> {
    /// A request for these messages and tools, with no application context.
    pub fn new(messages: &'a [Message], tools: &'a [Arc<ToolDefinition>]) -> Self {
        Self {
            messages,
            tools,
            deferred: &[],
            context: &Value::Null,
            params: &NO_PARAMS,
            settings: &NO_SETTINGS,
            output: None,
        }
    }

    /// The same request with an output schema.
    pub fn with_output(mut self, output: &'a OutputSchema) -> Self {
        self.output = Some(output);
        self
    }

    /// The same request offering these tools instead.
    pub fn with_tools(mut self, tools: &'a [Arc<ToolDefinition>]) -> Self {
        self.tools = tools;
        self
    }

    /// The same request offering these tools for the provider's tool search.
    pub fn with_deferred(mut self, deferred: &'a [Arc<ToolDefinition>]) -> Self {
        self.deferred = deferred;
        self
    }

    /// The same request with model settings for it.
    pub fn with_settings(mut self, settings: &'a ModelSettings) -> Self {
        self.settings = settings;
        self
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
/// model's next message, whole ([`complete`](Self::complete)) or as it is written
/// ([`stream`](Self::stream)).
#[async_trait]
pub trait LlmClient: Send + Sync {
    /// Asks the model for its next message. A transport or provider failure is
    /// [`AgentError::Model`](crate::AgentError::Model).
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage>;

    /// Asks the model for its next message as a stream of [`LlmEvent`]s ending with
    /// [`LlmEvent::Done`]. The default calls [`complete`](Self::complete) and replays
    /// its message ([`AssistantMessage::into_events`]), so every client streams; the
    /// HTTP clients stream from the provider as it writes.
    fn stream<'a>(&'a self, request: LlmRequest<'a>) -> LlmStream<'a> {
        futures::stream::once(async move { self.complete(request).await })
            .flat_map(|result| {
                let events: Vec<Result<LlmEvent, LlmError>> = match result {
                    Ok(message) => message.into_events().into_iter().map(Ok).collect(),
                    Err(error) => vec![Err(llm_error(error))],
                };
                futures::stream::iter(events)
            })
            .boxed()
    }

    /// The model asked, for traces (`gen_ai.request.model`); `None` when the client
    /// does not say.
    fn model_name(&self) -> Option<&str> {
        None
    }

    /// The provider's name, for traces (`gen_ai.provider.name`: `openai`,
    /// `anthropic`...); `None` when the client does not say.
    fn provider_name(&self) -> Option<&str> {
        None
    }

    /// Whether the provider searches tools itself: the client sends
    /// [`LlmRequest::deferred`] so that the model loads them by its own search. `false`
    /// (the default) has the agent offer its built-in search tool instead.
    fn native_tool_search(&self) -> bool {
        false
    }
}

/// The typed error inside `error`, or `error` told as an [`LlmError::Other`].
fn llm_error(error: AgentError) -> LlmError {
    match error {
        AgentError::Model(error) => error,
        other => LlmError::other(other.to_string()),
    }
}

#[async_trait]
impl<T: LlmClient + ?Sized> LlmClient for Arc<T> {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        (**self).complete(request).await
    }

    fn stream<'a>(&'a self, request: LlmRequest<'a>) -> LlmStream<'a> {
        (**self).stream(request)
    }

    fn model_name(&self) -> Option<&str> {
        (**self).model_name()
    }

    fn provider_name(&self) -> Option<&str> {
        (**self).provider_name()
    }

    fn native_tool_search(&self) -> bool {
        (**self).native_tool_search()
    }
}
