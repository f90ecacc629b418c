//! The OpenAI Chat Completions API (`POST {base_url}/chat/completions`), which
//! OpenAI-compatible servers (Ollama, vLLM, llama.cpp's server, LM Studio) also speak.

use crate::client::{Builder, Client, malformed};
use crate::convert::{
    content_text, count, data_url, map_arguments, parse_arguments, render_tools, str_field,
};
use crate::env::{self, EnvError, EnvVars};
use crate::provider::{Assembler, Provider, StreamParser, typed_event};
use crate::wire::{
    expect_object, json_schema, key_header, nested_count, provider_error, put, strictness,
    unless_withheld,
};
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use toolwright_core::{
    AgentResult, Content, Message, ModelSettings,
    dialect::Dialect,
    llm::{
        AssistantMessage, FinishReason, LlmError, LlmRequest, OutputSchema, ToolCall, ToolChoice,
        ToolResultMessage, Usage,
    },
};

const PROVIDER: &str = "openai";

/// The OpenAI Chat Completions API, for [`Client`]: see [`OpenAiClient`].
#[derive(Debug, Clone, Copy)]
pub struct OpenAi {
    dialect: Dialect,
    /// Where the output token limit goes; `None` until the base URL is known:
    /// `max_completion_tokens` for OpenAI itself, `max_tokens` for compatible servers,
    /// most of which know only the older name.
    max_tokens_field: Option<&'static str>,
}

/// An [`LlmClient`](toolwright_core::LlmClient) for the OpenAI Chat Completions API and every
/// server that speaks it.
///
/// Tools are sent in OpenAI's strict dialect ([`Dialect::OpenAiStrict`]: every object
/// closed, optionals required and nullable) unless [`strict_tools(false)`] asks for the
/// plain one ([`Dialect::OpenAi`]); the model's arguments are mapped back through the
/// same dialect, so a `null` for an optional parameter reaches the tool as absent.
/// Arguments that are not valid JSON are passed on as a JSON string, and the runtime
/// answers the model with an invalid-arguments error. Tool results are `role: "tool"`
/// messages; failed calls carry the runtime's `{"error", "kind"}` text, since the API
/// has no error flag. An assistant message that only calls tools is sent with
/// `"content": ""`: llama-cpp-python's server refuses `"content": null`, and its
/// function-calling template fails on a message without `content`. Images in user
/// messages are sent as `image_url` parts with a data URL.
///
/// [`ModelSettings`] map to `temperature`, `max_completion_tokens` (`max_tokens` when
/// the base URL is not OpenAI's), `tool_choice`, `parallel_tool_calls`, `stop` and
/// `seed`. Streams ask for `stream_options.include_usage`, so the usage arrives in the
/// last chunk.
///
/// ```no_run
/// # async fn run() -> toolwright_core::AgentResult<()> {
/// use toolwright_llm::OpenAiClient;
///
/// // A local Ollama server; no key needed.
/// let model = OpenAiClient::builder("llama3.2")
///     .base_url("http://localhost:11434/v1")
///     .build()?;
/// # Ok(()) }
/// ```
///
/// [`strict_tools(false)`]: OpenAiBuilder::strict_tools
pub type OpenAiClient = Client<OpenAi>;

/// Configures an [`OpenAiClient`]; [`build`](Builder::build) makes it.
pub type OpenAiBuilder = Builder<OpenAi>;

impl Client<OpenAi> {
    /// OpenAI's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// The model [`from_env`](Self::from_env) uses when `OPENAI_MODEL` is unset.
    pub const DEFAULT_MODEL: &'static str = "gpt-4o-mini";

    /// A builder for a client of `model` (e.g. `gpt-4o-mini`, or the name a local server
    /// knows the model by).
    pub fn builder(model: impl Into<String>) -> OpenAiBuilder {
        let provider = OpenAi {
            dialect: Dialect::OpenAiStrict,
            max_tokens_field: None,
        };
        Builder::new(provider, model.into(), Self::DEFAULT_BASE_URL, None)
    }

    /// A client configured from the environment: the base URL from `OPENAI_BASE_URL`
    /// (default OpenAI's), the key from `OPENAI_API_KEY` (optional for a local server),
    /// the model from `OPENAI_MODEL` (default [`DEFAULT_MODEL`](Self::DEFAULT_MODEL)).
    /// [`EnvError::NotConfigured`] when neither of the first two is set.
    pub fn from_env() -> Result<Self, EnvError> {
        env::from_env(&OPENAI_ENV, None, Self::DEFAULT_MODEL, Self::builder)
    }
}

/// What the OpenAI clients read from the environment.
pub(crate) const OPENAI_ENV: EnvVars = EnvVars {
    keys: &["OPENAI_API_KEY"],
    base_url: "OPENAI_BASE_URL",
    model: "OPENAI_MODEL",
    selecting: &["OPENAI_API_KEY", "OPENAI_BASE_URL"],
};

impl Builder<OpenAi> {
    /// Whether tools are sent with `strict: true` in [`Dialect::OpenAiStrict`] (the
    /// default), so the model's arguments always match the schema, or as plain schemas
    /// in [`Dialect::OpenAi`]. With strict on, a tool whose schema cannot be made strict
    /// is an error naming the tool, and nothing is sent.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.provider.dialect = strictness(strict, Dialect::OpenAiStrict, Dialect::OpenAi);
        self
    }

    /// The body field the output token limit goes in: `max_completion_tokens` when the
    /// base URL is OpenAI's, else `max_tokens`, which compatible servers know.
    pub fn max_tokens_field(mut self, field: &'static str) -> Self {
        self.provider.max_tokens_field = Some(field);
        self
    }
}

impl Provider for OpenAi {
    const NAME: &'static str = PROVIDER;
    const CLIENT_NAME: &'static str = "OpenAiClient";

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn prepare(&mut self, base_url: &str) {
        self.max_tokens_field
            .get_or_insert(max_tokens_field(base_url));
    }

    fn url(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        format!("{base_url}/chat/completions")
    }

    fn headers(&self, api_key: Option<&str>) -> Vec<(String, String)> {
        bearer(api_key)
    }

    fn has_structured_output(&self) -> bool {
        true
    }

    /// `response_format` `json_schema`, strict in the strict dialect.
    fn insert_output(
        &self,
        body: &mut Map<String, Value>,
        output: &OutputSchema,
    ) -> AgentResult<()> {
        // Chat Completions names the type beside the schema's object.
        let mut format = json_schema(self.dialect(), output)?;
        let kind = format.shift_remove("type").unwrap_or_default();
        body.insert(
            "response_format".into(),
            json!({"type": kind, "json_schema": format}),
        );
        Ok(())
    }

    fn body(
        &self,
        model: &str,
        request: &LlmRequest<'_>,
        settings: &ModelSettings,
        stream: bool,
    ) -> AgentResult<Map<String, Value>> {
        let tools = render_tools(self.dialect(), request.tools)?;
        let body = self.chat_body(model, request, &tools, settings, stream);
        match serde_json::to_value(body).map_err(|e| cannot_write(&e))? {
            Value::Object(body) => Ok(body),
            _ => Err(cannot_write(&"the body is not an object").into()),
        }
    }

    /// The same JSON as [`body`](Self::body), written without a map built first,
    /// whenever the output token limit's field is one of the two the API knows (a
    /// custom name could repeat another field, which only a map merges).
    fn body_bytes(
        &self,
        model: &str,
        request: &LlmRequest<'_>,
        settings: &ModelSettings,
        stream: bool,
    ) -> Option<AgentResult<Vec<u8>>> {
        let field = self.max_tokens_field.unwrap_or("max_completion_tokens");
        if !matches!(field, "max_completion_tokens" | "max_tokens") {
            return None;
        }
        let tools = match render_tools(self.dialect(), request.tools) {
            Ok(tools) => tools,
            Err(e) => return Some(Err(e)),
        };
        let body = self.chat_body(model, request, &tools, settings, stream);
        Some(serde_json::to_vec(&body).map_err(|e| cannot_write(&e).into()))
    }

    fn parse_response(
        &self,
        request: &LlmRequest<'_>,
        body: &Value,
    ) -> Result<AssistantMessage, LlmError> {
        let malformed = |what: &str| malformed(PROVIDER, what, body);
        expect_object(PROVIDER, body)?;
        let Some(choice) = body.get("choices").and_then(|c| c.get(0)) else {
            return Err(
                provider_error(PROVIDER, body).unwrap_or_else(|| malformed("no `choices[0]`"))
            );
        };
        let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
            return Err(malformed("no `choices[0].message` object"));
        };
        let mut text = match message.get("content") {
            Some(Value::String(text)) => Some(text.clone()),
            // Some servers answer with content parts.
            Some(Value::Array(parts)) => {
                let joined: String = parts.iter().filter_map(|p| str_field(p, "text")).collect();
                Some(joined)
            }
            Some(Value::Null) | None => None,
            Some(_) => return Err(malformed("`message.content` is neither text nor null")),
        };
        if text.as_deref().is_none_or(str::is_empty)
            && let Some(refusal) = str_field(message, "refusal")
        {
            text = Some(refusal.to_owned());
        }
        let mut tool_calls = Vec::new();
        match message.get("tool_calls") {
            Some(Value::Array(calls)) => {
                for (index, call) in calls.iter().enumerate() {
                    let call = self.tool_call(request, index, call).map_err(malformed)?;
                    tool_calls.push(call);
                }
            }
            Some(Value::Null) | None => {}
            Some(_) => return Err(malformed("`message.tool_calls` is not an array")),
        }
        let message = AssistantMessage {
            text,
            tool_calls,
            usage: body.get("usage").and_then(chat_usage),
            ..AssistantMessage::default()
        };
        let filtered = str_field(choice, "finish_reason") == Some("content_filter");
        let why = filtered.then(|| "the answer was withheld by the content filter".to_owned());
        unless_withheld(PROVIDER, message, why)
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        Box::new(ChatStream)
    }
}

impl OpenAi {
    fn chat_body<'a>(
        &self,
        model: &'a str,
        request: &LlmRequest<'a>,
        tools: &'a [Value],
        settings: &'a ModelSettings,
        stream: bool,
    ) -> ChatBody<'a> {
        ChatBody {
            model,
            messages: request.messages,
            tools,
            settings,
            max_tokens_field: self.max_tokens_field.unwrap_or("max_completion_tokens"),
            stream,
        }
    }

    fn tool_call(
        &self,
        request: &LlmRequest<'_>,
        index: usize,
        call: &Value,
    ) -> Result<ToolCall, &'static str> {
        let function = call
            .get("function")
            .filter(|f| f.is_object())
            .ok_or("a tool call without a `function` object")?;
        let name = str_field(function, "name").ok_or("a tool call without a function name")?;
        // Some local servers leave the id out; the runtime needs one to pair results.
        let id = str_field(call, "id")
            .filter(|id| !id.is_empty())
            .map_or_else(|| format!("call_{index}"), str::to_owned);
        let arguments = match function.get("arguments") {
            Some(Value::String(raw)) => parse_arguments(raw),
            // Some servers send the object itself.
            Some(Value::Object(object)) => Value::Object(object.clone()),
            Some(Value::Null) | None => Value::Object(Map::new()),
            Some(other) => other.clone(),
        };
        let arguments = map_arguments(self.dialect(), request.tools, name, arguments);
        Ok(ToolCall::new(id, name, arguments))
    }
}

/// `Authorization: Bearer <key>`, when there is a key.
pub(crate) fn bearer(api_key: Option<&str>) -> Vec<(String, String)> {
    key_header("authorization", api_key.map(|key| format!("Bearer {key}")))
}

/// OpenAI's own API wants `max_completion_tokens` (its reasoning models refuse
/// `max_tokens`); compatible servers mostly know only `max_tokens`.
pub(crate) fn max_tokens_field(base_url: &str) -> &'static str {
    if base_url.starts_with("https://api.openai.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

/// Which of OpenAI's two APIs a tool choice is written for: they shape a named tool,
/// and a list of allowed ones, differently.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OpenAiApi {
    /// Chat Completions: `{"type": "function", "function": {"name"}}`, the allowed list
    /// under `allowed_tools`.
    Chat,
    /// Responses: `{"type": "function", "name"}`, the allowed list flat.
    Responses,
}

impl OpenAiApi {
    fn named(self, name: &str) -> Value {
        match self {
            Self::Chat => json!({"type": "function", "function": {"name": name}}),
            Self::Responses => json!({"type": "function", "name": name}),
        }
    }
}

/// `tool_choice` and `parallel_tool_calls` as `api` names them.
pub(crate) fn insert_tool_settings(
    body: &mut Map<String, Value>,
    settings: &ModelSettings,
    api: OpenAiApi,
) {
    if let Some(choice) = &settings.tool_choice {
        body.insert("tool_choice".into(), tool_choice(choice, api));
    }
    put(body, "parallel_tool_calls", settings.parallel_tool_calls);
}

/// A tool choice as `api` names it.
fn tool_choice(choice: &ToolChoice, api: OpenAiApi) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Required => json!("required"),
        ToolChoice::None => json!("none"),
        ToolChoice::Tool(name) => api.named(name),
        ToolChoice::Allowed(names) => {
            let tools: Vec<Value> = names.iter().map(|name| api.named(name)).collect();
            match api {
                OpenAiApi::Chat => {
                    json!({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": tools}})
                }
                OpenAiApi::Responses => {
                    json!({"type": "allowed_tools", "mode": "auto", "tools": tools})
                }
            }
        }
    }
}

/// Chat Completions usage: `prompt_tokens`, `completion_tokens` and their details.
fn chat_usage(usage: &Value) -> Option<Usage> {
    usage.is_object().then(|| Usage {
        input_tokens: count(usage, "prompt_tokens"),
        output_tokens: count(usage, "completion_tokens"),
        cached_input_tokens: nested_count(usage, "prompt_tokens_details", "cached_tokens"),
        reasoning_tokens: nested_count(usage, "completion_tokens_details", "reasoning_tokens"),
    })
}

pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" | "end_turn" | "stop_sequence" | "STOP" => FinishReason::Stop,
        "length" | "max_tokens" | "MAX_TOKENS" => FinishReason::Length,
        "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
        "content_filter" | "refusal" | "SAFETY" | "RECITATION" | "BLOCKLIST"
        | "PROHIBITED_CONTENT" | "SPII" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Chat Completions chunks: `choices[0].delta` with `content` and `tool_calls` pieces
/// keyed by `index`, a `finish_reason`, a usage-only chunk, then `data: [DONE]`.
struct ChatStream;

/// The fields of a chunk the stream reads, borrowed from the event's text where they
/// need no unescaping: a typed read costs a fraction of a `Value` tree's.
#[derive(Deserialize)]
struct Chunk<'a> {
    /// The first of the `choices` (the client asks for one): the others are checked
    /// for JSON syntax and skipped rather than read into a list.
    #[serde(default, borrow, rename = "choices", deserialize_with = "first_choice")]
    choice: Option<ChunkChoice<'a>>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

/// A chunk's first choice, from `choices` (an array, or `null`).
fn first_choice<'de, D: Deserializer<'de>>(
    choices: D,
) -> Result<Option<ChunkChoice<'de>>, D::Error> {
    struct First;
    impl<'de> Visitor<'de> for First {
        type Value = Option<ChunkChoice<'de>>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an array of choices or null")
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, choices: D) -> Result<Self::Value, D::Error> {
            choices.deserialize_seq(self)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut choices: A) -> Result<Self::Value, A::Error> {
            let first = choices.next_element()?;
            while choices.next_element::<IgnoredAny>()?.is_some() {}
            Ok(first)
        }
    }
    choices.deserialize_option(First)
}

#[derive(Deserialize)]
struct ChunkChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    /// Reasoning servers (DeepSeek, vLLM, llama.cpp) stream their thinking in one of
    /// these two.
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    refusal: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<CallPiece<'a>>>,
}

#[derive(Deserialize)]
struct CallPiece<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    function: Option<FunctionPiece<'a>>,
}

#[derive(Deserialize)]
struct FunctionPiece<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    /// Text, or (some servers) the object itself.
    #[serde(default)]
    arguments: Option<Value>,
}

impl StreamParser for ChatStream {
    fn event(
        &mut self,
        _name: Option<&str>,
        data: &str,
        out: &mut Assembler,
    ) -> Result<(), LlmError> {
        if data.trim() == "[DONE]" {
            out.terminate();
            return Ok(());
        }
        let chunk: Chunk<'_> = typed_event(PROVIDER, data)?;
        if let Some(error) = chunk.error {
            return Err(
                provider_error(PROVIDER, &json!({ "error": error })).unwrap_or_else(|| {
                    LlmError::other(format!("{PROVIDER}: an error without a message"))
                }),
            );
        }
        if let Some(usage) = chunk.usage.as_ref().and_then(chat_usage) {
            out.set_usage(usage);
        }
        let Some(choice) = chunk.choice else {
            return Ok(());
        };
        if let Some(delta) = choice.delta {
            if let Some(text) = &delta.content {
                out.text(text);
            }
            if let Some(thinking) = delta.reasoning_content.or(delta.reasoning) {
                out.thinking(&thinking);
            }
            if let Some(refusal) = &delta.refusal {
                out.text(refusal);
            }
            for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
                let key = call.index.unwrap_or(position as u64);
                let function = call.function;
                if !out.has_open_call(key) {
                    let name = function.as_ref().and_then(|f| f.name.as_deref());
                    out.tool_start(
                        key,
                        call.id.as_deref().unwrap_or_default(),
                        name.unwrap_or_default(),
                    );
                }
                match function.and_then(|f| f.arguments) {
                    Some(Value::String(raw)) => out.tool_arguments(key, &raw),
                    Some(object @ Value::Object(_)) => out.tool_arguments(key, &object.to_string()),
                    _ => {}
                }
            }
        }
        if let Some(reason) = &choice.finish_reason {
            out.finish(finish_reason(reason));
        }
        Ok(())
    }
}

/// A request that cannot be written as JSON (a map key that is not text).
fn cannot_write(e: &dyn std::fmt::Display) -> LlmError {
    LlmError::BadRequest {
        message: format!("{PROVIDER}: cannot serialize the request: {e}"),
    }
}

/// A Chat Completions request body, serialized field by field in the order the API's
/// documentation lists them. It is written straight to the bytes sent (no map of
/// values built and hashed first), or read into a map for
/// [`Provider::body`].
struct ChatBody<'a> {
    model: &'a str,
    messages: &'a [Message],
    /// The tools rendered in the client's dialect.
    tools: &'a [Value],
    settings: &'a ModelSettings,
    max_tokens_field: &'static str,
    stream: bool,
}

impl Serialize for ChatBody<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let settings = self.settings;
        let mut body = serializer.serialize_map(None)?;
        body.serialize_entry("model", self.model)?;
        body.serialize_entry("messages", &Messages(self.messages))?;
        // OpenAI refuses an empty `tools` array, and a tool choice without tools.
        if !self.tools.is_empty() {
            body.serialize_entry("tools", self.tools)?;
            if let Some(choice) = &settings.tool_choice {
                body.serialize_entry("tool_choice", &tool_choice(choice, OpenAiApi::Chat))?;
            }
            entry(
                &mut body,
                "parallel_tool_calls",
                settings.parallel_tool_calls,
            )?;
        }
        entry(&mut body, "temperature", settings.temperature)?;
        entry(&mut body, self.max_tokens_field, settings.max_output_tokens)?;
        entry(&mut body, "stop", settings.stop_sequences.as_ref())?;
        entry(&mut body, "seed", settings.seed)?;
        if self.stream {
            body.serialize_entry("stream", &true)?;
            body.serialize_entry(
                "stream_options",
                &StreamOptions {
                    include_usage: true,
                },
            )?;
        }
        body.end()
    }
}

/// `key: value` when there is a value (an unset setting is not sent, so the provider's
/// default holds).
fn entry<M: SerializeMap, T: Serialize>(
    body: &mut M,
    key: &str,
    value: Option<T>,
) -> Result<(), M::Error> {
    match value {
        Some(value) => body.serialize_entry(key, &value),
        None => Ok(()),
    }
}

/// A named tool's choice in Chat Completions.
#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// The conversation as Chat Completions messages.
struct Messages<'a>(&'a [Message]);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(ChatMessage))
    }
}

/// One message as Chat Completions takes it.
struct ChatMessage<'a>(&'a Message);

#[derive(Serialize)]
struct TextMessage<C> {
    role: &'static str,
    content: C,
}

#[derive(Serialize)]
struct AssistantJson<'a> {
    role: &'static str,
    /// Never `null`, never absent: llama-cpp-python's server refuses `null`, and its
    /// chatml-function-calling template reads `message.content` strictly (a message
    /// without it fails the request with HTTP 500 on every turn after a tool call).
    content: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<CallJson<'a>>,
}

#[derive(Serialize)]
struct CallJson<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionJson<'a>,
}

#[derive(Serialize)]
struct FunctionJson<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Serialize)]
struct ToolJson<'a> {
    role: &'static str,
    tool_call_id: &'a str,
    content: String,
}

impl Serialize for ChatMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = |role, content| TextMessage { role, content };
        match self.0 {
            Message::System { content } => text("system", content).serialize(serializer),
            Message::User { content } => text("user", content).serialize(serializer),
            Message::UserContent { content } => {
                let parts: Vec<Value> = content
                    .iter()
                    .map(|block| match block {
                        Content::Image { data, mime_type } => json!({
                            "type": "image_url",
                            "image_url": {"url": data_url(mime_type, data)},
                        }),
                        other => json!({
                            "type": "text",
                            "text": content_text(std::slice::from_ref(other)),
                        }),
                    })
                    .collect();
                TextMessage {
                    role: "user",
                    content: parts,
                }
                .serialize(serializer)
            }
            Message::Assistant(assistant) => AssistantJson {
                role: "assistant",
                content: assistant.text.as_deref().unwrap_or_default(),
                tool_calls: assistant
                    .tool_calls
                    .iter()
                    .map(|call| CallJson {
                        id: &call.id,
                        kind: "function",
                        function: FunctionJson {
                            name: &call.name,
                            arguments: arguments_text(&call.arguments),
                        },
                    })
                    .collect(),
            }
            .serialize(serializer),
            Message::Tool(result) => ToolJson {
                role: "tool",
                tool_call_id: &result.call_id,
                content: tool_result_text(result),
            }
            .serialize(serializer),
        }
    }
}

/// Arguments as the JSON string the API carries; arguments that never parsed go back
/// as the model sent them.
pub(crate) fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// The API has no error flag on tool messages: the runtime's error results say so in
/// their `{"error", "kind"}` text; any other failed result is prefixed with `Error:`.
pub(crate) fn tool_result_text(result: &ToolResultMessage) -> String {
    let text = content_text(&result.content);
    if result.is_error && !text.trim_start().starts_with('{') {
        format!("Error: {text}")
    } else {
        text
    }
}
