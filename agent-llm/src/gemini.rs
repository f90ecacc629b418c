//! The Google Gemini API: `POST {base_url}/v1beta/models/{model}:generateContent`, and
//! `:streamGenerateContent?alt=sse` for streams.

use crate::client::{Builder, Client, malformed};
use crate::convert::{
    Turns, content_text, count, describe, object_arguments, render_output, render_tools, str_field,
    system_text,
};
use crate::openai::finish_reason;
use crate::provider::{Assembler, Provider, StreamParser, event_json};
use crate::wire::{
    body_map, expect_object, key_header, keyed_env, provider_error, put, unless_withheld,
};
use agent_core::{
    AgentResult, AssistantMessage, Content, Dialect, FinishReason, LlmError, LlmRequest, Message,
    ModelSettings, OutputSchema, ToolCall, ToolChoice, Usage,
};
use serde_json::{Map, Value, json};

const PROVIDER: &str = "gemini";

/// The Google Gemini API, for [`Client`]: see [`GeminiClient`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemini;

/// An [`LlmClient`](agent_core::LlmClient) for the Google Gemini API (Google AI Studio
/// keys).
///
/// Tools are `functionDeclarations` in [`Dialect::Gemini`] (no `$ref`, no
/// `additionalProperties`, nullability as `nullable`); `functionCall` parts come back
/// as tool calls, their arguments mapped back through the dialect. Tool results are
/// `functionResponse` parts (`{"result": ...}`, or `{"error": ...}` for failed calls)
/// in a `user` turn; the model's turns are `model` turns. System messages become
/// `systemInstruction`. Images in user messages are `inlineData` parts. When the model
/// signs its parts (`thoughtSignature`, Gemini's thinking models), the parts are kept
/// in [`provider_blocks`](AssistantMessage::provider_blocks) and sent back as they
/// came, as the API requires.
///
/// [`ModelSettings`] map to `generationConfig` (`temperature`, `maxOutputTokens`,
/// `stopSequences`, `seed`) and `toolConfig.functionCallingConfig` (`AUTO`, `ANY`,
/// `NONE`, or `ANY` with `allowedFunctionNames` for one tool); the API has no switch
/// for parallel calls, so `parallel_tool_calls` is not sent.
///
/// ```no_run
/// # async fn run() -> agent_core::AgentResult<()> {
/// use agent_llm::GeminiClient;
///
/// let model = GeminiClient::builder(std::env::var("GEMINI_API_KEY").unwrap(), "gemini-2.5-flash")
///     .build()?;
/// # Ok(()) }
/// ```
pub type GeminiClient = Client<Gemini>;

/// Configures a [`GeminiClient`]; [`build`](Builder::build) makes it.
pub type GeminiBuilder = Builder<Gemini>;

impl Client<Gemini> {
    /// Google's endpoint (requests go to `{base}/v1beta/models/{model}:generateContent`).
    pub const DEFAULT_BASE_URL: &'static str = "https://generativelanguage.googleapis.com";

    /// The model [`from_env`](Self::from_env) uses when `GEMINI_MODEL` is unset.
    pub const DEFAULT_MODEL: &'static str = "gemini-2.5-flash";

    /// A builder for a client of `model` authenticated with `api_key` (sent as
    /// `x-goog-api-key`).
    pub fn builder(api_key: impl Into<String>, model: impl Into<String>) -> GeminiBuilder {
        Builder::new(
            Gemini,
            model.into(),
            Self::DEFAULT_BASE_URL,
            Some(api_key.into()),
        )
    }

    /// A client configured from the environment, or `None` when neither
    /// `GEMINI_API_KEY` nor `GOOGLE_API_KEY` is set: the model from `GEMINI_MODEL`
    /// (default [`DEFAULT_MODEL`](Self::DEFAULT_MODEL)), the base URL from
    /// `GEMINI_BASE_URL` (default Google's).
    pub fn from_env() -> Option<AgentResult<Self>> {
        keyed_env(
            &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
            "GEMINI_MODEL",
            Self::DEFAULT_MODEL,
            "GEMINI_BASE_URL",
            Self::builder,
        )
    }
}

impl Provider for Gemini {
    const NAME: &'static str = PROVIDER;
    const CLIENT_NAME: &'static str = "GeminiClient";

    fn dialect(&self) -> Dialect {
        Dialect::Gemini
    }

    fn url(&self, base_url: &str, model: &str, stream: bool) -> String {
        let model = model.strip_prefix("models/").unwrap_or(model);
        if stream {
            format!("{base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("{base_url}/v1beta/models/{model}:generateContent")
        }
    }

    fn headers(&self, api_key: Option<&str>) -> Vec<(String, String)> {
        key_header("x-goog-api-key", api_key.map(str::to_owned))
    }

    fn has_structured_output(&self) -> bool {
        true
    }

    /// `generationConfig.responseSchema`, with `responseMimeType` JSON.
    fn insert_output(
        &self,
        body: &mut Map<String, Value>,
        output: &OutputSchema,
    ) -> AgentResult<()> {
        let schema = render_output(self.dialect(), output)?;
        let generation = body
            .entry("generationConfig")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(generation) = generation {
            generation.insert("responseMimeType".into(), json!("application/json"));
            generation.insert("responseSchema".into(), schema);
        }
        Ok(())
    }

    fn body(
        &self,
        _model: &str,
        request: &LlmRequest<'_>,
        settings: &ModelSettings,
        _stream: bool,
    ) -> AgentResult<Map<String, Value>> {
        let mut body = body_map();
        body.insert("contents".into(), Value::Array(contents(request.messages)));
        let system = system_text(request.messages);
        if !system.is_empty() {
            body.insert(
                "systemInstruction".into(),
                json!({"parts": [{"text": system}]}),
            );
        }
        if !request.tools.is_empty() {
            let declarations = render_tools(Dialect::Gemini, request.tools)?;
            body.insert(
                "tools".into(),
                json!([{"functionDeclarations": declarations}]),
            );
            if let Some(choice) = &settings.tool_choice {
                let config = match choice {
                    ToolChoice::Auto => json!({"mode": "AUTO"}),
                    ToolChoice::Required => json!({"mode": "ANY"}),
                    ToolChoice::None => json!({"mode": "NONE"}),
                    ToolChoice::Tool(name) => {
                        json!({"mode": "ANY", "allowedFunctionNames": [name]})
                    }
                };
                body.insert(
                    "toolConfig".into(),
                    json!({"functionCallingConfig": config}),
                );
            }
        }
        let mut generation = Map::new();
        put(&mut generation, "temperature", settings.temperature);
        put(
            &mut generation,
            "maxOutputTokens",
            settings.max_output_tokens,
        );
        put(
            &mut generation,
            "stopSequences",
            settings.stop_sequences.as_ref(),
        );
        put(&mut generation, "seed", settings.seed);
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
        Ok(body)
    }

    fn parse_response(
        &self,
        request: &LlmRequest<'_>,
        body: &Value,
    ) -> Result<AssistantMessage, LlmError> {
        expect_object(PROVIDER, body)?;
        let mut out = Assembler::new(Dialect::Gemini, request.tools);
        read_chunk(body, &mut out)?;
        let why = blocked(body).map(|reason| format!("the answer was withheld ({reason})"));
        let message = unless_withheld(PROVIDER, out.partial(), why)?;
        if message.text.is_none()
            && message.tool_calls.is_empty()
            && body.get("candidates").and_then(Value::as_array).is_none()
        {
            return Err(malformed(PROVIDER, "no `candidates`", body));
        }
        Ok(message)
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        Box::new(GeminiStream)
    }
}

/// Why the prompt or the answer was blocked, if it was.
fn blocked(body: &Value) -> Option<String> {
    if let Some(reason) = body
        .pointer("/promptFeedback/blockReason")
        .and_then(Value::as_str)
    {
        return Some(format!("prompt blocked: {reason}"));
    }
    let reason = body
        .pointer("/candidates/0/finishReason")
        .and_then(Value::as_str)?;
    (finish_reason(reason) == FinishReason::ContentFilter).then(|| format!("finishReason {reason}"))
}

/// One `GenerateContentResponse` (the whole answer, or one chunk of a stream) into the
/// assembler: text and thought parts, function calls, the finish reason, the usage.
fn read_chunk(chunk: &Value, out: &mut Assembler) -> Result<(), LlmError> {
    if chunk.get("error").is_some()
        && let Some(error) = provider_error(PROVIDER, chunk)
    {
        return Err(error);
    }
    let candidate = chunk.pointer("/candidates/0");
    let parts = candidate
        .and_then(|c| c.pointer("/content/parts"))
        .and_then(Value::as_array);
    let mut signed = false;
    for part in parts.into_iter().flatten() {
        signed |= part.get("thoughtSignature").is_some();
        if let Some(call) = part.get("functionCall") {
            let name = str_field(call, "name").unwrap_or_default();
            let arguments = call.get("args").cloned().unwrap_or(Value::Null);
            out.tool_call(str_field(call, "id").unwrap_or_default(), name, &arguments);
        } else if let Some(text) = str_field(part, "text") {
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                out.thinking(text);
            } else {
                out.text(text);
            }
        }
    }
    if signed {
        for part in parts.into_iter().flatten() {
            out.provider_block(json!({"gemini_part": part}));
        }
    }
    if let Some(reason) = candidate
        .and_then(|c| c.get("finishReason"))
        .and_then(Value::as_str)
    {
        out.finish(finish_reason(reason));
    }
    if let Some(u) = chunk.get("usageMetadata").filter(|u| u.is_object()) {
        let thoughts = count(u, "thoughtsTokenCount");
        out.set_usage(Usage {
            input_tokens: count(u, "promptTokenCount"),
            output_tokens: count(u, "candidatesTokenCount") + thoughts,
            cached_input_tokens: count(u, "cachedContentTokenCount"),
            reasoning_tokens: thoughts,
        });
    }
    Ok(())
}

/// `streamGenerateContent?alt=sse`: each event's data is a whole
/// `GenerateContentResponse` carrying the next parts; the last carries the finish
/// reason, and the stream ends there.
struct GeminiStream;

impl StreamParser for GeminiStream {
    fn event(
        &mut self,
        _name: Option<&str>,
        data: &str,
        out: &mut Assembler,
    ) -> Result<(), LlmError> {
        read_chunk(&event_json(PROVIDER, data)?, out)
    }
}

/// The conversation as Gemini `contents`: `user` and `model` turns, consecutive parts
/// of one role in one turn (a turn's function responses sit together).
fn contents(messages: &[Message]) -> Vec<Value> {
    let mut turns = Turns::default();
    let mut push = |role, parts| turns.push(role, parts);
    for message in messages {
        match message {
            Message::System { .. } => {}
            Message::User { content } => push("user", text_part(content).into_iter().collect()),
            Message::UserContent { content } => push("user", parts(content)),
            Message::Assistant(assistant) => {
                let kept: Vec<Value> = assistant
                    .provider_blocks
                    .iter()
                    .filter_map(|block| block.get("gemini_part").cloned())
                    .collect();
                if !kept.is_empty() {
                    push("model", kept);
                    continue;
                }
                let mut parts: Vec<Value> = assistant
                    .text
                    .as_deref()
                    .and_then(text_part)
                    .into_iter()
                    .collect();
                for call in &assistant.tool_calls {
                    parts.push(json!({"functionCall": function_call(call)}));
                }
                push("model", parts);
            }
            Message::Tool(result) => {
                let text = content_text(&result.content);
                let response = if result.is_error {
                    json!({"error": text})
                } else {
                    json!({"result": text})
                };
                push(
                    "user",
                    vec![json!({"functionResponse": {"name": result.name, "response": response}})],
                );
            }
        }
    }
    turns.into_json("parts")
}

fn function_call(call: &ToolCall) -> Value {
    json!({"name": call.name, "args": object_arguments(&call.arguments)})
}

fn text_part(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"text": text}))
}

fn parts(content: &[Content]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|block| match block {
            Content::Text { text } => text_part(text),
            Content::Image { data, mime_type } => {
                Some(json!({"inlineData": {"mimeType": mime_type, "data": data}}))
            }
            other => text_part(&describe(other)),
        })
        .collect()
}
