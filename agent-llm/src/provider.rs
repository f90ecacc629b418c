//! [`Provider`]: what differs from one model API to the next (the URL, the headers, the
//! request body, the answer's format, the stream's events), so that one generic
//! [`Client`](crate::Client) does everything else once.

use crate::convert::{map_arguments, parse_arguments};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use toolwright_core::{
    AgentResult, ModelSettings,
    dialect::Dialect,
    llm::{
        AssistantMessage, FinishReason, LlmError, LlmEvent, LlmRequest, OutputSchema, ToolCall,
        Usage,
    },
    toolset::ToolDefinition,
};

/// One model API. A [`Client<P>`](crate::Client) does the rest: builder, key, headers,
/// timeout, retries, TLS, escape-hatch fields, the [`LlmClient`](toolwright_core::LlmClient)
/// impl, streaming over server-sent events.
pub trait Provider: Clone + Send + Sync + fmt::Debug + 'static {
    /// The provider's name in error messages (`openai`, `anthropic`...).
    const NAME: &'static str;
    /// The client type's name in `Debug` output (`OpenAiClient`...).
    const CLIENT_NAME: &'static str;

    /// The dialect tools are rendered in.
    fn dialect(&self) -> Dialect;

    /// Adapts the provider to the base URL the client was built with (called once, by
    /// [`Builder::build`](crate::Builder::build)).
    fn prepare(&mut self, base_url: &str) {
        let _ = base_url;
    }

    /// Where a request for `model` goes, streamed or not. `base_url` has no trailing
    /// slash.
    fn url(&self, base_url: &str, model: &str, stream: bool) -> String;

    /// The headers that carry `api_key` (and any the API always wants).
    fn headers(&self, api_key: Option<&str>) -> Vec<(String, String)>;

    /// A header `request` needs beyond those (the beta of a feature it uses), as name and
    /// value; the client adds the value to a header of that name the caller set,
    /// comma-separated. `None`, the default, for none.
    fn request_header(&self, request: &LlmRequest<'_>) -> Option<(&'static str, &'static str)> {
        let _ = request;
        None
    }

    /// The request body for `request` with the merged `settings` mapped to the API's
    /// own fields (their `extra` fields are added by the client). Fails when a tool
    /// cannot be rendered in the dialect.
    fn body(
        &self,
        model: &str,
        request: &LlmRequest<'_>,
        settings: &ModelSettings,
        stream: bool,
    ) -> AgentResult<Map<String, Value>>;

    /// The same JSON as [`body`](Self::body), as the bytes sent, when the provider can
    /// write them without building the map first (a request's cost before its first
    /// byte goes out); `None`, the default, when it cannot, and the map is serialized.
    fn body_bytes(
        &self,
        model: &str,
        request: &LlmRequest<'_>,
        settings: &ModelSettings,
        stream: bool,
    ) -> Option<AgentResult<Vec<u8>>> {
        let _ = (model, request, settings, stream);
        None
    }

    /// Whether the API searches deferred tools itself (see
    /// [`LlmClient::native_tool_search`](toolwright_core::LlmClient::native_tool_search)):
    /// then [`body`](Self::body) sends [`LlmRequest::deferred`] for its search.
    fn native_tool_search(&self) -> bool {
        false
    }

    /// Whether the API has a structured-output mode for [`LlmRequest::output`]. When it
    /// has none, the client offers the schema as a final-answer tool
    /// ([`OutputSchema::ANSWER_TOOL`]) and hands its arguments back as the message's
    /// text.
    fn has_structured_output(&self) -> bool {
        false
    }

    /// Asks for an answer matching `output` in `body`, through the API's
    /// structured-output field (called only when
    /// [`has_structured_output`](Self::has_structured_output)). Fails when the schema
    /// cannot be rendered in the dialect.
    fn insert_output(
        &self,
        body: &mut Map<String, Value>,
        output: &OutputSchema,
    ) -> AgentResult<()> {
        let _ = (body, output);
        Ok(())
    }

    /// The model's message in a whole (not streamed) answer.
    fn parse_response(
        &self,
        request: &LlmRequest<'_>,
        body: &Value,
    ) -> Result<AssistantMessage, LlmError>;

    /// A fresh parser for one streamed answer.
    fn stream_parser(&self) -> Box<dyn StreamParser>;
}

/// Reads one streamed answer's server-sent events into an [`Assembler`].
pub trait StreamParser: Send {
    /// Handles one event: its `event:` name, if any, and its `data:`. An event the API
    /// documents as an error, or data that is not what the API sends, is an error.
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut Assembler,
    ) -> Result<(), LlmError>;
}

#[derive(Debug)]
struct PartialCall {
    key: u64,
    id: String,
    name: String,
    arguments: String,
    /// The call, once it ended.
    done: Option<ToolCall>,
}

/// Builds a streamed answer: a [`StreamParser`] tells it what arrived, and it queues
/// the [`LlmEvent`]s and keeps the message they make up.
#[derive(Debug)]
pub struct Assembler {
    dialect: Dialect,
    tools: Vec<Arc<ToolDefinition>>,
    text: Option<String>,
    calls: Vec<PartialCall>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    provider_blocks: Vec<Value>,
    events: VecDeque<LlmEvent>,
    terminated: bool,
}

impl Assembler {
    /// An assembler for an answer to a request offering `tools`, rendered in `dialect`.
    pub fn new(dialect: Dialect, tools: &[Arc<ToolDefinition>]) -> Self {
        Self {
            dialect,
            tools: tools.to_vec(),
            text: None,
            calls: Vec::new(),
            usage: None,
            finish: None,
            provider_blocks: Vec::new(),
            events: VecDeque::new(),
            terminated: false,
        }
    }

    /// More text of the answer.
    pub fn text(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        self.text.get_or_insert_with(String::new).push_str(delta);
        self.events.push_back(LlmEvent::TextDelta {
            text: delta.to_owned(),
        });
    }

    /// More of the model's reasoning.
    pub fn thinking(&mut self, delta: &str) {
        if !delta.is_empty() {
            self.events.push_back(LlmEvent::ThinkingDelta {
                text: delta.to_owned(),
            });
        }
    }

    /// A tool call began; `key` is the provider's own index for it. A second start
    /// with a key already open is ignored (some servers repeat the id).
    pub fn tool_start(&mut self, key: u64, id: &str, name: &str) {
        if self.calls.iter().any(|c| c.key == key && c.done.is_none()) {
            return;
        }
        let index = self.calls.len();
        // Some local servers leave the id out; the runtime needs one to pair results.
        let id = if id.is_empty() {
            format!("call_{index}")
        } else {
            id.to_owned()
        };
        self.events.push_back(LlmEvent::ToolCallStart {
            index,
            id: id.clone(),
            name: name.to_owned(),
        });
        self.calls.push(PartialCall {
            key,
            id,
            name: name.to_owned(),
            arguments: String::new(),
            done: None,
        });
    }

    /// Whether a call with this key is open.
    pub fn has_open_call(&self, key: u64) -> bool {
        self.calls.iter().any(|c| c.key == key && c.done.is_none())
    }

    /// More of the arguments of the open call `key`; ignored when none is open.
    pub fn tool_arguments(&mut self, key: u64, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let Some(index) = self
            .calls
            .iter()
            .position(|c| c.key == key && c.done.is_none())
        else {
            return;
        };
        self.calls[index].arguments.push_str(delta);
        self.events.push_back(LlmEvent::ToolCallDelta {
            index,
            arguments: delta.to_owned(),
        });
    }

    /// The open call `key` is complete.
    pub fn tool_end(&mut self, key: u64) {
        if let Some(index) = self
            .calls
            .iter()
            .position(|c| c.key == key && c.done.is_none())
        {
            self.end_call(index);
        }
    }

    /// A whole tool call at once (for providers that send calls in one piece).
    pub fn tool_call(&mut self, id: &str, name: &str, arguments: &Value) {
        let key = u64::MAX - self.calls.len() as u64;
        self.tool_start(key, id, name);
        let raw = match arguments {
            Value::Null => String::new(),
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        };
        self.tool_arguments(key, &raw);
        self.tool_end(key);
    }

    fn end_call(&mut self, index: usize) {
        let open = &mut self.calls[index];
        let arguments = parse_arguments(&open.arguments);
        let arguments = map_arguments(self.dialect, &self.tools, &open.name, arguments);
        let call = ToolCall::new(open.id.clone(), open.name.clone(), arguments);
        open.done = Some(call.clone());
        self.events.push_back(LlmEvent::ToolCallEnd { index, call });
    }

    /// The usage so far (replaced by each report: providers send running totals).
    pub fn set_usage(&mut self, usage: Usage) {
        self.usage = Some(usage);
        self.events.push_back(LlmEvent::Usage { usage });
    }

    /// The usage reported so far.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// Why the model stopped.
    pub fn finish(&mut self, reason: FinishReason) {
        self.finish = Some(reason);
    }

    /// Whether a finish reason arrived.
    pub fn has_finished(&self) -> bool {
        self.finish.is_some()
    }

    /// A block of the provider's own to keep in
    /// [`provider_blocks`](AssistantMessage::provider_blocks).
    pub fn provider_block(&mut self, block: Value) {
        self.provider_blocks.push(block);
    }

    /// The API said the answer is over: the client emits
    /// [`Done`](LlmEvent::Done) and stops reading.
    pub fn terminate(&mut self) {
        self.terminated = true;
    }

    pub(crate) fn is_terminated(&self) -> bool {
        self.terminated
    }

    pub(crate) fn next_event(&mut self) -> Option<LlmEvent> {
        self.events.pop_front()
    }

    /// The message the events so far make up (calls not yet ended left out).
    pub fn partial(&self) -> AssistantMessage {
        AssistantMessage {
            text: self.text.clone(),
            tool_calls: self.calls.iter().filter_map(|c| c.done.clone()).collect(),
            usage: self.usage,
            provider_blocks: self.provider_blocks.clone(),
        }
    }

    /// Ends the open calls and queues [`Done`](LlmEvent::Done) with the whole message.
    pub(crate) fn complete(&mut self) {
        for index in 0..self.calls.len() {
            if self.calls[index].done.is_none() {
                self.end_call(index);
            }
        }
        let message = self.partial();
        let finish_reason = match self.finish.clone() {
            Some(FinishReason::Stop) | None if !message.tool_calls.is_empty() => {
                FinishReason::ToolCalls
            }
            Some(reason) => reason,
            None => FinishReason::Stop,
        };
        self.events.push_back(LlmEvent::Done {
            finish_reason,
            message,
        });
    }
}

/// Reads an event's data into the typed fields a parser needs; an event that is not
/// JSON, or not of the API's shape, is an error quoting it.
pub(crate) fn typed_event<'a, T: serde::Deserialize<'a>>(
    provider: &str,
    data: &'a str,
) -> Result<T, LlmError> {
    serde_json::from_str(data).map_err(|e| {
        // The message says whether the text is no JSON at all, or JSON of another shape.
        event_json(provider, data)
            .err()
            .unwrap_or_else(|| LlmError::InvalidResponse {
                message: format!(
                    "{provider}: a stream event is not of the API's shape ({e}): {}",
                    crate::http::excerpt(data.as_bytes())
                ),
            })
    })
}

/// Parses an event's data as JSON, or says which event was not.
pub(crate) fn event_json(provider: &str, data: &str) -> Result<Value, LlmError> {
    serde_json::from_str(data).map_err(|e| LlmError::InvalidResponse {
        message: format!(
            "{provider}: a stream event is not valid JSON ({e}): {}",
            crate::http::excerpt(data.as_bytes())
        ),
    })
}
