//! The provider-neutral conversation: messages, tool calls, usage, the events of a
//! streamed answer and the settings a request carries. An adapter for a provider maps
//! these types to its wire format; nothing here knows any provider.

use crate::model::content::Content;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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

/// Token counts a provider reported for one model call (or, added up with `+=`, for
/// several).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read: the whole prompt, cached or not (OpenAI's `prompt_tokens`).
    pub input_tokens: u64,
    /// Tokens generated, reasoning included (OpenAI's `completion_tokens`).
    pub output_tokens: u64,
    /// Of the input tokens, those read from the provider's prompt cache (OpenAI's
    /// `cached_tokens`, Anthropic's `cache_read_input_tokens`, Gemini's
    /// `cachedContentTokenCount`).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Of the output tokens, those spent reasoning before the answer (OpenAI's
    /// `reasoning_tokens`, Gemini's `thoughtsTokenCount`).
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
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

    /// The events a stream of this message carries, as a client that cannot stream
    /// replays it: its text as one delta, each tool call as a start, one argument
    /// delta and an end, its usage, then [`Done`](LlmEvent::Done).
    pub fn into_events(self) -> Vec<LlmEvent> {
        let mut events = Vec::new();
        if let Some(text) = self.text.as_ref().filter(|t| !t.is_empty()) {
            events.push(LlmEvent::TextDelta { text: text.clone() });
        }
        for (index, call) in self.tool_calls.iter().enumerate() {
            events.push(LlmEvent::ToolCallStart {
                index,
                id: call.id.clone(),
                name: call.name.clone(),
            });
            events.push(LlmEvent::ToolCallDelta {
                index,
                arguments: match &call.arguments {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                },
            });
            events.push(LlmEvent::ToolCallEnd {
                index,
                call: call.clone(),
            });
        }
        if let Some(usage) = self.usage {
            events.push(LlmEvent::Usage { usage });
        }
        let finish_reason = if self.tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        events.push(LlmEvent::Done {
            finish_reason,
            message: self,
        });
        events
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// It finished its answer, or met a stop sequence.
    Stop,
    /// It reached the output token limit: the answer is cut short.
    Length,
    /// It called tools and waits for their results.
    ToolCalls,
    /// A content filter withheld (part of) the answer.
    ContentFilter,
    /// The provider's own reason, as it named it.
    Other(String),
}

/// One step of a streamed answer. Deltas arrive as the model writes; the last event of
/// a stream that did not fail is [`Done`](Self::Done), with the whole message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LlmEvent {
    /// More of the answer's text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// More of the model's reasoning, where the provider shows it.
    ThinkingDelta {
        /// The new text.
        text: String,
    },
    /// The model began a tool call.
    ToolCallStart {
        /// The call's position in the message (0-based).
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's JSON arguments, as raw text.
    ToolCallDelta {
        /// Which call (its `index` in [`ToolCallStart`](Self::ToolCallStart)).
        index: usize,
        /// The new text of the arguments.
        arguments: String,
    },
    /// A tool call is complete.
    ToolCallEnd {
        /// Which call.
        index: usize,
        /// The call, arguments parsed and mapped back through the provider's dialect.
        call: ToolCall,
    },
    /// The tokens the call cost, as the provider reported them.
    Usage {
        /// The counts.
        usage: Usage,
    },
    /// The answer is complete.
    Done {
        /// Why the model stopped.
        finish_reason: FinishReason,
        /// The whole message, as [`LlmClient::complete`](crate::LlmClient::complete) would have returned it.
        message: AssistantMessage,
    },
}

/// Which tools the model may or must call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides (every provider's default).
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call tools.
    None,
    /// The model must call the tool of this name.
    Tool(String),
    /// The model may call only the tools of these names, or none. Every tool is still
    /// sent, so the provider's prompt cache of the tool list holds where it keeps one
    /// (OpenAI's `allowed_tools`); a provider without such a choice is sent only
    /// these tools.
    Allowed(Vec<String>),
}

/// Typed model settings, each mapped by every client to its provider's own field.
/// Settings come in layers (the client's, the agent's, the run's, the request's), a
/// later layer's set fields winning: see [`merge`](Self::merge). A field a provider has
/// no counterpart for is left out of its requests (each client's docs say which).
///
/// ```
/// use toolwright_core::{ModelSettings, llm::ToolChoice};
///
/// let agent = ModelSettings::new().temperature(0.2).max_output_tokens(512);
/// let request = ModelSettings::new().tool_choice(ToolChoice::Tool("get_weather".into()));
/// let merged = agent.merge(&request);
/// assert_eq!(merged.temperature, Some(0.2));
/// assert_eq!(merged.tool_choice, Some(ToolChoice::Tool("get_weather".into())));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelSettings {
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens one answer may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Which tools the model may or must call (sent only when tools are offered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may call several tools in one answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Texts that end the answer when the model writes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// A seed for sampling, for repeatable answers where the provider supports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Provider fields these settings do not name, added to the request body as they
    /// are (after the typed fields, so they override them).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl ModelSettings {
    /// No setting: every provider's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// With a sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// With an output token limit.
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.max_output_tokens = Some(tokens);
        self
    }

    /// With a tool choice.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Allowing or forbidding several tool calls in one answer.
    pub fn parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.parallel_tool_calls = Some(parallel);
        self
    }

    /// With stop sequences.
    pub fn stop_sequences(mut self, stop: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.stop_sequences = Some(stop.into_iter().map(Into::into).collect());
        self
    }

    /// With a sampling seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// With one provider field these settings do not name.
    pub fn extra(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }

    /// Whether no field is set (every provider's defaults).
    pub fn is_unset(&self) -> bool {
        *self == Self::default()
    }

    /// These settings with `over` laid on top: each field `over` sets wins, each it
    /// leaves unset keeps this one's; `extra` fields merge key by key, `over`'s winning.
    /// Layers merge in order: client, agent, run, request.
    pub fn merge(&self, over: &ModelSettings) -> ModelSettings {
        let mut extra = self.extra.clone();
        extra.extend(over.extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        ModelSettings {
            temperature: over.temperature.or(self.temperature),
            max_output_tokens: over.max_output_tokens.or(self.max_output_tokens),
            tool_choice: over
                .tool_choice
                .clone()
                .or_else(|| self.tool_choice.clone()),
            parallel_tool_calls: over.parallel_tool_calls.or(self.parallel_tool_calls),
            stop_sequences: over
                .stop_sequences
                .clone()
                .or_else(|| self.stop_sequences.clone()),
            seed: over.seed.or(self.seed),
            extra,
        }
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
    /// What the user said, in blocks: text and images (see [`Message::user_content`]).
    /// Clients send the blocks their provider takes and describe the others in text.
    UserContent {
        /// The blocks, in order.
        content: Vec<Content>,
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

    /// Whether the user said this, as text or in blocks.
    pub fn is_user(&self) -> bool {
        matches!(self, Self::User { .. } | Self::UserContent { .. })
    }

    /// A user message in blocks, e.g. a question and an image:
    /// `Message::user_content([Content::text("What is this?"), Content::image(b64, "image/png")])`.
    pub fn user_content(content: impl IntoIterator<Item = Content>) -> Self {
        Self::UserContent {
            content: content.into_iter().collect(),
        }
    }
}

/// The shape a run's final answer must have: a JSON Schema the model's answer must
/// match. Clients send it through their provider's structured-output mode, or, where
/// the provider has none, offer it as a tool named [`ANSWER_TOOL`](Self::ANSWER_TOOL)
/// whose arguments are the answer (and hand the answer back as the message's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutputSchema {
    /// A name for the schema (`^[A-Za-z0-9_-]{1,64}$`), as some providers require.
    pub name: String,
    /// The JSON Schema of the answer.
    pub schema: Value,
}

impl OutputSchema {
    /// The name of the final-answer tool clients offer where the provider has no
    /// structured-output mode.
    pub const ANSWER_TOOL: &'static str = "final_result";

    /// The schema of `T`, named after it.
    pub fn of<T: schemars::JsonSchema>() -> Self {
        let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
        let name: String = T::schema_name()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        Self::new(
            if name.is_empty() {
                "output".into()
            } else {
                name
            },
            schema,
        )
    }

    /// A schema named `name`.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        Self {
            name: name.into(),
            schema,
        }
    }
}

impl FinishReason {
    /// The reason as OpenTelemetry's `gen_ai.response.finish_reasons` and the wire
    /// (snake case) name it: `stop`, `length`, `tool_calls`, `content_filter`, or the
    /// provider's own.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolCalls => "tool_calls",
            Self::ContentFilter => "content_filter",
            Self::Other(reason) => reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_saved_before_cached_and_reasoning_tokens_still_loads() {
        let old: Usage =
            serde_json::from_value(json!({"input_tokens": 5, "output_tokens": 7})).unwrap();
        assert_eq!(
            old,
            Usage {
                input_tokens: 5,
                output_tokens: 7,
                cached_input_tokens: 0,
                reasoning_tokens: 0,
            }
        );
        let mut total = old;
        total += Usage {
            input_tokens: 1,
            output_tokens: 1,
            cached_input_tokens: 3,
            reasoning_tokens: 2,
        };
        assert_eq!((total.input_tokens, total.cached_input_tokens), (6, 3));
    }

    #[test]
    fn settings_merge_layer_by_layer() {
        let agent = ModelSettings::new()
            .temperature(0.7)
            .seed(1)
            .extra("top_p", 0.9)
            .extra("user", "a");
        let run = ModelSettings::new().temperature(0.2).stop_sequences(["x"]);
        let request = ModelSettings::new()
            .tool_choice(ToolChoice::None)
            .extra("user", "b");
        let merged = agent.merge(&run).merge(&request);
        assert_eq!(merged.temperature, Some(0.2));
        assert_eq!(merged.seed, Some(1));
        assert_eq!(merged.stop_sequences, Some(vec!["x".to_owned()]));
        assert_eq!(merged.tool_choice, Some(ToolChoice::None));
        assert_eq!(merged.max_output_tokens, None);
        assert_eq!(merged.extra["top_p"], 0.9);
        assert_eq!(merged.extra["user"], "b");
        // Settings serialize compactly and come back equal.
        let text = serde_json::to_value(&merged).unwrap();
        assert!(text.get("max_output_tokens").is_none());
        assert_eq!(
            serde_json::from_value::<ModelSettings>(text).unwrap(),
            merged
        );
    }

    #[test]
    fn events_serialize_with_their_type() {
        let event = LlmEvent::ToolCallDelta {
            index: 1,
            arguments: "{\"a\"".into(),
        };
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(
            json,
            json!({"type": "tool_call_delta", "index": 1, "arguments": "{\"a\""})
        );
        assert_eq!(serde_json::from_value::<LlmEvent>(json).unwrap(), event);
    }

    #[test]
    fn a_user_message_in_blocks_round_trips() {
        let message = Message::user_content([
            Content::text("What is this?"),
            Content::image("AAAA", "image/png"),
        ]);
        assert!(message.is_user() && Message::user("hi").is_user());
        let json = serde_json::to_value(&message).unwrap();
        assert_eq!(json["role"], "user_content");
        assert_eq!(serde_json::from_value::<Message>(json).unwrap(), message);
    }
}
