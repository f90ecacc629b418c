//! The Google Gemini API: `POST {base_url}/v1beta/models/{model}:generateContent`, and
//! `:streamGenerateContent?alt=sse` for streams.

use crate::client::{Builder, Client, malformed};
use crate::convert::{
    Turns, allowed, content_text, describe, object_arguments, render_output, render_tools,
    str_field, system_text,
};
use crate::env::{self, EnvError, EnvVars};
use crate::lenient::{Fields, First, List, Object, Scalar};
use crate::openai::finish_reason;
use crate::provider::{Assembler, Provider, StreamParser, event_json, typed_event};
use crate::wire::{body_map, expect_object, key_header, provider_error, put, unless_withheld};
use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess};
use serde_json::{Map, Value, json};
use toolwright_core::{
    AgentResult, Content, Message, ModelSettings,
    dialect::Dialect,
    llm::{
        AssistantMessage, FinishReason, LlmError, LlmRequest, OutputSchema, ToolCall, ToolChoice,
        Usage,
    },
};

const PROVIDER: &str = "gemini";

/// The Google Gemini API, for [`Client`]: see [`GeminiClient`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemini;

/// An [`LlmClient`](toolwright_core::LlmClient) for the Google Gemini API (Google AI Studio
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
/// # async fn run() -> toolwright_core::AgentResult<()> {
/// use toolwright_llm::GeminiClient;
///
/// let model = GeminiClient::builder("gemini-2.5-flash")
///     .api_key(std::env::var("GEMINI_API_KEY").unwrap())
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

    /// A builder for a client of `model`; the key goes in with
    /// [`api_key`](Builder::api_key) (sent as `x-goog-api-key`).
    pub fn builder(model: impl Into<String>) -> GeminiBuilder {
        Builder::new(Gemini, model.into(), Self::DEFAULT_BASE_URL, None)
    }

    /// A client configured from the environment: the key from `GEMINI_API_KEY` or else
    /// `GOOGLE_API_KEY`, the base URL from `GEMINI_BASE_URL` (default Google's), the
    /// model from `GEMINI_MODEL` (default [`DEFAULT_MODEL`](Self::DEFAULT_MODEL)).
    /// [`EnvError::NotConfigured`] when none of those three is set.
    pub fn from_env() -> Result<Self, EnvError> {
        env::from_env(&GEMINI_ENV, None, Self::DEFAULT_MODEL, Self::builder)
    }
}

/// What the Gemini client reads from the environment.
pub(crate) const GEMINI_ENV: EnvVars = EnvVars {
    keys: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    base_url: "GEMINI_BASE_URL",
    model: "GEMINI_MODEL",
    selecting: &["GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL"],
};

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
            let declarations = render_tools(Dialect::Gemini, &allowed(request.tools, settings))?;
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
                    // `allowedFunctionNames` needs `ANY`, which forces a call: only the
                    // allowed tools are sent instead.
                    ToolChoice::Allowed(_) => json!({"mode": "AUTO"}),
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
        read_chunk(&Chunk::of(body), || Ok(body.clone()), &mut out)?;
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

/// The fields of a `GenerateContentResponse` (the whole answer, or one chunk of a
/// stream) that the client reads, found as a `Value` lookup would find them (see
/// [`lenient`](crate::lenient)); the rest (safety ratings, the model version...) is
/// skipped unread.
#[derive(Default)]
struct Chunk<'a> {
    /// Whether the chunk has an `error` field: the whole chunk then says what failed.
    error: bool,
    candidate: Option<Candidate<'a>>,
    usage: Option<UsageCounts>,
}

/// The first candidate: its parts (kept whole, as they may be sent back) and why it
/// stopped.
#[derive(Default)]
struct Candidate<'a> {
    parts: Option<Vec<Value>>,
    finish_reason: Scalar<'a>,
}

/// A candidate's `content`.
#[derive(Default)]
struct CandidateContent {
    parts: Option<Vec<Value>>,
}

/// `usageMetadata`.
#[derive(Default)]
struct UsageCounts {
    prompt: Option<u64>,
    candidates: Option<u64>,
    cached: Option<u64>,
    thoughts: Option<u64>,
}

impl<'de> Fields<'de> for Chunk<'de> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "error" => {
                self.error = true;
                map.next_value::<IgnoredAny>()?;
            }
            "candidates" => self.candidate = map.next_value::<First<Candidate>>()?.0,
            "usageMetadata" => self.usage = map.next_value::<Object<UsageCounts>>()?.0,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Candidate<'de> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "content" => {
                let content = map.next_value::<Object<CandidateContent>>()?.0;
                self.parts = content.and_then(|c| c.parts);
            }
            "finishReason" => self.finish_reason = map.next_value()?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for CandidateContent {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "parts" => self.parts = map.next_value::<List<Value>>()?.0,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for UsageCounts {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        let count = match key {
            "promptTokenCount" => &mut self.prompt,
            "candidatesTokenCount" => &mut self.candidates,
            "cachedContentTokenCount" => &mut self.cached,
            "thoughtsTokenCount" => &mut self.thoughts,
            _ => {
                map.next_value::<IgnoredAny>()?;
                return Ok(());
            }
        };
        *count = map.next_value::<Scalar<'de>>()?.as_u64();
        Ok(())
    }
}

impl Chunk<'_> {
    /// The chunk of a whole answer already read.
    fn of(body: &Value) -> Chunk<'_> {
        // Any JSON value reads as a chunk (with no fields when it is no object).
        Object::deserialize(body).map_or_else(|_| Chunk::default(), |o| o.0.unwrap_or_default())
    }
}

/// One `GenerateContentResponse` into the assembler: its error, or its text and
/// thought parts, function calls, the finish reason and the usage. `whole` is the
/// chunk as JSON, read only when it carries an error.
fn read_chunk(
    chunk: &Chunk<'_>,
    whole: impl FnOnce() -> Result<Value, LlmError>,
    out: &mut Assembler,
) -> Result<(), LlmError> {
    if chunk.error
        && let Some(error) = provider_error(PROVIDER, &whole()?)
    {
        return Err(error);
    }
    let candidate = chunk.candidate.as_ref();
    let parts = candidate.and_then(|c| c.parts.as_deref());
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
    if let Some(reason) = candidate.and_then(|c| c.finish_reason.as_str()) {
        out.finish(finish_reason(reason));
    }
    if let Some(u) = &chunk.usage {
        let thoughts = u.thoughts.unwrap_or(0);
        out.set_usage(Usage {
            input_tokens: u.prompt.unwrap_or(0),
            output_tokens: u.candidates.unwrap_or(0) + thoughts,
            cached_input_tokens: u.cached.unwrap_or(0),
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
        let chunk: Object<Chunk<'_>> = typed_event(PROVIDER, data)?;
        let chunk = chunk.0.unwrap_or_default();
        read_chunk(&chunk, || event_json(PROVIDER, data), out)
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

#[cfg(test)]
mod tests {
    use super::*;
    use toolwright_core::llm::LlmEvent;

    /// The events a stream event with `data` makes, and the message so far; or the
    /// error it is.
    fn read(data: &str) -> Result<(Vec<LlmEvent>, AssistantMessage), LlmError> {
        let mut out = Assembler::new(Dialect::Gemini, &[]);
        GeminiStream.event(None, data, &mut out)?;
        let events = std::iter::from_fn(|| out.next_event()).collect();
        Ok((events, out.partial()))
    }

    fn events(data: &Value) -> Vec<LlmEvent> {
        read(&data.to_string()).unwrap().0
    }

    fn text(delta: &str) -> LlmEvent {
        LlmEvent::TextDelta {
            text: delta.to_owned(),
        }
    }

    #[test]
    fn chunks_are_read_as_their_json_says() {
        let chunk = json!({
            "candidates": [
                {"content": {"parts": [{"text": "Hi "}, {"text": "hm", "thought": true}], "role": "model"},
                 "index": 0, "safetyRatings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"}]},
                {"content": {"parts": [{"text": "ignored"}]}}
            ],
            "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 2, "thoughtsTokenCount": 3, "cachedContentTokenCount": "x"},
            "modelVersion": "gemini-2.0-flash", "responseId": "r1"
        });
        let usage = Usage {
            input_tokens: 7,
            output_tokens: 5,
            cached_input_tokens: 0,
            reasoning_tokens: 3,
        };
        assert_eq!(
            events(&chunk),
            [
                text("Hi "),
                LlmEvent::ThinkingDelta { text: "hm".into() },
                LlmEvent::Usage { usage }
            ]
        );
        // Fields of other types are absent; a repeated field's last value wins.
        for odd in [
            json!({"candidates": ["x", {"content": {"parts": [{"text": "x"}]}}]}),
            json!({"candidates": [{"content": [{"parts": [{"text": "x"}]}]}]}),
            json!({"candidates": [{"content": {"parts": {"text": "x"}}}]}),
            json!({"usageMetadata": [1], "candidates": [{"finishReason": 3}]}),
        ] {
            assert_eq!(events(&odd), [], "{odd}");
        }
        let twice = r#"{"candidates": [{"content": {"parts": [{"text": "a"}]}}], "candidates": [{"content": {"parts": [{"text": "b"}]}}]}"#;
        assert_eq!(read(twice).unwrap().0, [text("b")]);
        for data in ["[{\"candidates\": []}]", "\"x\"", "null", "3"] {
            assert_eq!(read(data).unwrap().0, []);
        }
        // An `error` that says nothing is no error.
        let quiet = json!({"error": null, "candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]});
        let (events, message) = read(&quiet.to_string()).unwrap();
        assert_eq!(events, [text("ok")]);
        assert_eq!(message.text.as_deref(), Some("ok"));
    }

    #[test]
    fn signed_parts_are_kept_whole_and_errors_typed() {
        let signed = json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "c2ln"},
            {"text": "t"}
        ]}}]});
        let (_, message) = read(&signed.to_string()).unwrap();
        assert_eq!(
            message.provider_blocks,
            [
                json!({"gemini_part": {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "c2ln"}}),
                json!({"gemini_part": {"text": "t"}})
            ]
        );
        assert_eq!(message.tool_calls[0].arguments, json!({"a": 1}));
        let error =
            json!({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}});
        let error = read(&error.to_string()).unwrap_err();
        assert_eq!(error.kind(), "rate_limited");
        assert_eq!(error.to_string(), "gemini: quota");
        let broken = read(r#"{"candidates": [{"content": "#).unwrap_err();
        assert!(broken.to_string().contains("not valid JSON"), "{broken}");
    }
}
