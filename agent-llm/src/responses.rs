//! The OpenAI Responses API (`POST {base_url}/responses`).

use crate::client::{Builder, Client, malformed};
use crate::convert::{
    callable, count, data_url, mark_deferred, render_tools, str_field, system_text,
};
use crate::env::{self, EnvError};
use crate::http::classify;
use crate::lenient::{Fields, Object, Scalar};
use crate::openai::{
    OPENAI_ENV, OpenAiApi, arguments_text, bearer, insert_tool_settings, tool_result_text,
};
use crate::provider::{Assembler, Provider, StreamParser, event_json, typed_event};
use crate::wire::{
    body_map, expect_object, json_schema, nested_count, provider_error, put, strictness,
};
use serde::de::{IgnoredAny, MapAccess};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use toolwright_core::{
    AgentResult, Content, Message, ModelSettings,
    dialect::Dialect,
    llm::{AssistantMessage, FinishReason, LlmError, LlmRequest, OutputSchema, Usage},
    toolset::ToolDefinition,
};

const PROVIDER: &str = "openai-responses";

/// The OpenAI Responses API, for [`Client`]: see [`OpenAiResponsesClient`].
#[derive(Debug, Clone, Copy)]
pub struct OpenAiResponses {
    dialect: Dialect,
    tool_search: bool,
    cache_key: CacheKey,
}

/// Where a request's `prompt_cache_key` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CacheKey {
    /// Derived from the instructions and tools, on OpenAI's own endpoint.
    Derived,
    /// Not sent.
    Off,
}

/// An [`LlmClient`](toolwright_core::LlmClient) for the OpenAI Responses API, stateless: the
/// whole conversation goes in `input` on every request (nothing is stored server-side
/// unless a [`param`](Builder::param) says `store`).
///
/// Tools are flat `{"type": "function", name, description, parameters, strict}` entries
/// in [`Dialect::OpenAiStrict`] (or [`Dialect::OpenAi`] with
/// [`strict_tools(false)`](OpenAiResponsesBuilder::strict_tools)). `function_call`
/// output items come back as tool calls; results go as `function_call_output` items.
/// System messages become `instructions`. Images in user messages are `input_image`
/// parts with a data URL. `reasoning` output items are kept in
/// [`provider_blocks`](AssistantMessage::provider_blocks) and sent back before the calls
/// they preceded.
///
/// [`ModelSettings`] map to `temperature`, `max_output_tokens`, `tool_choice` and
/// `parallel_tool_calls`; the API has no stop sequences or seed, so those are not sent.
pub type OpenAiResponsesClient = Client<OpenAiResponses>;

/// Configures an [`OpenAiResponsesClient`]; [`build`](Builder::build) makes it.
pub type OpenAiResponsesBuilder = Builder<OpenAiResponses>;

impl Client<OpenAiResponses> {
    /// OpenAI's own endpoint (requests go to `{base}/responses`).
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// The model [`from_env`](Self::from_env) uses when `OPENAI_MODEL` is unset.
    pub const DEFAULT_MODEL: &'static str = "gpt-4o-mini";

    /// A builder for a client of `model`.
    pub fn builder(model: impl Into<String>) -> OpenAiResponsesBuilder {
        let provider = OpenAiResponses {
            dialect: Dialect::OpenAiStrict,
            tool_search: true,
            cache_key: CacheKey::Derived,
        };
        Builder::new(provider, model.into(), Self::DEFAULT_BASE_URL, None)
    }

    /// A client configured from the environment as
    /// [`OpenAiClient::from_env`](crate::OpenAiClient::from_env) is (`OPENAI_BASE_URL`,
    /// `OPENAI_API_KEY`, `OPENAI_MODEL`); [`EnvError::NotConfigured`] when neither of
    /// the first two is set.
    pub fn from_env() -> Result<Self, EnvError> {
        env::from_env(&OPENAI_ENV, None, Self::DEFAULT_MODEL, Self::builder)
    }
}

impl Builder<OpenAiResponses> {
    /// Whether each request carries a `prompt_cache_key` derived from its instructions
    /// and tool names (the default, on OpenAI's own endpoint only; other servers may
    /// refuse the field): requests that share that prefix are routed together, so
    /// OpenAI's prompt cache, which costs nothing, hits more often. A key of your own
    /// goes in with [`param`](Builder::param)`("prompt_cache_key", ...)`, which wins.
    pub fn prompt_cache_key(mut self, derived: bool) -> Self {
        self.provider.cache_key = if derived {
            CacheKey::Derived
        } else {
            CacheKey::Off
        };
        self
    }

    /// Whether the API's own tool search finds the agent's searchable tools (the
    /// default): they are sent with `"defer_loading": true` beside a
    /// `{"type": "tool_search"}` tool, which OpenAI serves from `gpt-5.4` on. `false`,
    /// for older models and compatible servers without it, has the agent offer its own
    /// search tool instead.
    pub fn native_tool_search(mut self, native: bool) -> Self {
        self.provider.tool_search = native;
        self
    }

    /// Whether tools are sent with `strict: true` in [`Dialect::OpenAiStrict`] (the
    /// default) or as plain schemas in [`Dialect::OpenAi`].
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.provider.dialect = strictness(strict, Dialect::OpenAiStrict, Dialect::OpenAi);
        self
    }
}

impl Provider for OpenAiResponses {
    const NAME: &'static str = PROVIDER;
    const CLIENT_NAME: &'static str = "OpenAiResponsesClient";

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn native_tool_search(&self) -> bool {
        self.tool_search
    }

    fn prepare(&mut self, base_url: &str) {
        // Compatible servers may refuse a field they do not know.
        if !base_url.starts_with(OpenAiResponsesClient::DEFAULT_BASE_URL) {
            self.cache_key = CacheKey::Off;
        }
    }

    fn url(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        format!("{base_url}/responses")
    }

    fn headers(&self, api_key: Option<&str>) -> Vec<(String, String)> {
        bearer(api_key)
    }

    fn has_structured_output(&self) -> bool {
        true
    }

    /// `text.format` `json_schema`, strict in the strict dialect.
    fn insert_output(
        &self,
        body: &mut Map<String, Value>,
        output: &OutputSchema,
    ) -> AgentResult<()> {
        let format = json_schema(self.dialect(), output)?;
        body.insert("text".into(), json!({ "format": format }));
        Ok(())
    }

    fn body(
        &self,
        model: &str,
        request: &LlmRequest<'_>,
        settings: &ModelSettings,
        stream: bool,
    ) -> AgentResult<Map<String, Value>> {
        let mut body = body_map();
        body.insert("model".into(), json!(model));
        let system = system_text(request.messages);
        if !system.is_empty() {
            body.insert("instructions".into(), json!(system));
        }
        body.insert("input".into(), Value::Array(input(request.messages)));
        if !request.tools.is_empty() || !request.deferred.is_empty() {
            let mut tools = flat_tools(self.dialect(), request.tools)?;
            if !request.deferred.is_empty() {
                tools.push(json!({"type": "tool_search"}));
                let mut deferred = flat_tools(self.dialect(), request.deferred)?;
                mark_deferred(&mut deferred);
                tools.extend(deferred);
            }
            body.insert("tools".into(), Value::Array(tools));
            insert_tool_settings(&mut body, settings, OpenAiApi::Responses);
        }
        if self.cache_key == CacheKey::Derived {
            body.insert(
                "prompt_cache_key".into(),
                json!(cache_key(&system, request)),
            );
        }
        put(&mut body, "temperature", settings.temperature);
        put(&mut body, "max_output_tokens", settings.max_output_tokens);
        body.insert("store".into(), json!(false));
        if stream {
            body.insert("stream".into(), json!(true));
        }
        Ok(body)
    }

    fn parse_response(
        &self,
        request: &LlmRequest<'_>,
        body: &Value,
    ) -> Result<AssistantMessage, LlmError> {
        expect_object(PROVIDER, body)?;
        if let Some(error) = failure(body) {
            return Err(error);
        }
        let Some(output) = body.get("output").and_then(Value::as_array) else {
            return Err(malformed(PROVIDER, "no `output` array", body));
        };
        let mut out = Assembler::new(self.dialect(), &callable(request));
        for item in output {
            output_item(item, &mut out, true);
        }
        if let Some(u) = body.get("usage") {
            out.set_usage(usage(u));
        }
        Ok(out.partial())
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        Box::new(ResponsesStream)
    }
}

/// `tools` rendered in `dialect`: the chat dialect's `{"type", "function": {...}}`,
/// flattened.
fn flat_tools(dialect: Dialect, tools: &[Arc<ToolDefinition>]) -> AgentResult<Vec<Value>> {
    Ok(render_tools(dialect, tools)?
        .into_iter()
        .map(|tool| {
            let mut flat = Map::new();
            flat.insert("type".into(), json!("function"));
            if let Some(Value::Object(function)) = tool.get("function") {
                flat.extend(function.clone());
            }
            Value::Object(flat)
        })
        .collect())
}

/// A key naming the prefix every request of a conversation shares: its instructions
/// and the names of its tools, hashed (FNV-1a, stable across processes and builds).
fn cache_key(instructions: &str, request: &LlmRequest<'_>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for byte in bytes.iter().chain([&0u8]) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(instructions.as_bytes());
    for tool in request.tools.iter().chain(request.deferred) {
        eat(tool.name.as_bytes());
    }
    format!("toolwright-{hash:016x}")
}

/// Whether an output item of this type goes back in the next request's input.
fn is_replayed(kind: &str) -> bool {
    matches!(
        kind,
        "reasoning" | "tool_search_call" | "tool_search_output"
    )
}

/// A failed response's error, typed.
fn failure(response: &Value) -> Option<LlmError> {
    let error = response.get("error").filter(|e| e.is_object())?;
    provider_error(PROVIDER, &json!({ "error": error }))
}

/// One output item into the assembler. Text and calls are taken only from `whole`
/// items (a complete response); a stream has already sent them as deltas.
fn output_item(item: &Value, out: &mut Assembler, whole: bool) {
    match str_field(item, "type") {
        Some("message") if whole => {
            for part in item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match str_field(part, "type") {
                    Some("output_text") => out.text(str_field(part, "text").unwrap_or_default()),
                    Some("refusal") => out.text(str_field(part, "refusal").unwrap_or_default()),
                    _ => {}
                }
            }
        }
        Some("function_call") if whole => out.tool_call(
            str_field(item, "call_id").unwrap_or_default(),
            str_field(item, "name").unwrap_or_default(),
            item.get("arguments").unwrap_or(&Value::Null),
        ),
        // Sent back before the calls it preceded, so reasoning models keep their
        // thread; the tool search's call and output, so the tools it loaded stay
        // loaded.
        Some(kind) if is_replayed(kind) => out.provider_block(item.clone()),
        _ => {}
    }
}

fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: count(u, "input_tokens"),
        output_tokens: count(u, "output_tokens"),
        cached_input_tokens: nested_count(u, "input_tokens_details", "cached_tokens"),
        reasoning_tokens: nested_count(u, "output_tokens_details", "reasoning_tokens"),
    }
}

/// The Responses API's typed events: text and argument deltas keyed by `output_index`,
/// items added and done, then `response.completed` (or `.incomplete`, `.failed`).
struct ResponsesStream;

impl StreamParser for ResponsesStream {
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut Assembler,
    ) -> Result<(), LlmError> {
        // Data that is no object has no fields: only its name says what it is.
        let event: Object<EventHead<'_>> = typed_event(PROVIDER, data)?;
        let event = event.0.unwrap_or_default();
        let kind = event.kind.as_str().or(name).unwrap_or_default();
        let index = event.output_index.as_u64().unwrap_or(0);
        let delta = || event.delta.as_str().unwrap_or_default();
        let item = || event.item.as_ref().unwrap_or(&Value::Null);
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => out.text(delta()),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.thinking(delta())
            }
            "response.output_item.added" => {
                let item = item();
                if str_field(item, "type") == Some("function_call") {
                    out.tool_start(
                        index,
                        str_field(item, "call_id").unwrap_or_default(),
                        str_field(item, "name").unwrap_or_default(),
                    );
                    out.tool_arguments(index, str_field(item, "arguments").unwrap_or_default());
                }
            }
            "response.function_call_arguments.delta" => out.tool_arguments(index, delta()),
            "response.output_item.done" => {
                output_item(item(), out, false);
                out.tool_end(index);
            }
            "response.completed" | "response.incomplete" => {
                // The one event per answer whose `response` object is read: read whole.
                let event = event_json(PROVIDER, data)?;
                let response = event.get("response").unwrap_or(&Value::Null);
                if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
                    out.set_usage(usage(u));
                }
                let reason = match response
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                {
                    Some("max_output_tokens") => FinishReason::Length,
                    Some("content_filter") => FinishReason::ContentFilter,
                    Some(other) => FinishReason::Other(other.to_owned()),
                    None => FinishReason::Stop,
                };
                out.finish(reason);
                out.terminate();
            }
            "response.failed" => {
                let event = event_json(PROVIDER, data)?;
                let response = event.get("response").unwrap_or(&Value::Null);
                return Err(failure(response).unwrap_or_else(|| {
                    LlmError::other(format!("{PROVIDER}: the response failed"))
                }));
            }
            "error" => {
                let message = event
                    .message
                    .as_str()
                    .unwrap_or("an error without a message");
                let code = event.code.as_str();
                return Err(classify(0, code, format!("{PROVIDER}: {message}"), None));
            }
            _ => {}
        }
        Ok(())
    }
}

/// The fields of a stream event that every event may need, read as a `Value` would
/// read them (see [`lenient`](crate::lenient)) but without building one:
/// `response.created` and `response.in_progress` repeat the whole response object
/// (instructions, tools...), which is skipped unread.
#[derive(Default)]
struct EventHead<'a> {
    kind: Scalar<'a>,
    output_index: Scalar<'a>,
    delta: Scalar<'a>,
    item: Option<Value>,
    message: Scalar<'a>,
    code: Scalar<'a>,
}

impl<'de> Fields<'de> for EventHead<'de> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "type" => self.kind = map.next_value()?,
            "output_index" => self.output_index = map.next_value()?,
            "delta" => self.delta = map.next_value()?,
            "item" => self.item = Some(map.next_value()?),
            "message" => self.message = map.next_value()?,
            "code" => self.code = map.next_value()?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The conversation as Responses `input` items (system text goes in `instructions`).
fn input(messages: &[Message]) -> Vec<Value> {
    let mut items = Vec::new();
    for message in messages {
        match message {
            Message::System { .. } => {}
            Message::User { content } => items.push(json!({"role": "user", "content": content})),
            Message::UserContent { content } => {
                let parts: Vec<Value> = content
                    .iter()
                    .map(|block| match block {
                        Content::Image { data, mime_type } => json!({
                            "type": "input_image",
                            "image_url": data_url(mime_type, data),
                        }),
                        other => json!({
                            "type": "input_text",
                            "text": crate::convert::content_text(std::slice::from_ref(other)),
                        }),
                    })
                    .collect();
                items.push(json!({"role": "user", "content": parts}));
            }
            Message::Assistant(assistant) => {
                if !assistant.tool_calls.is_empty() {
                    items.extend(
                        assistant
                            .provider_blocks
                            .iter()
                            .filter(|b| str_field(b, "type").is_some_and(is_replayed))
                            .cloned(),
                    );
                }
                if let Some(text) = assistant.text.as_deref().filter(|t| !t.is_empty()) {
                    items.push(json!({"role": "assistant", "content": text}));
                }
                for call in &assistant.tool_calls {
                    items.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": arguments_text(&call.arguments),
                    }));
                }
            }
            Message::Tool(result) => items.push(json!({
                "type": "function_call_output",
                "call_id": result.call_id,
                "output": tool_result_text(result),
            })),
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwright_core::llm::LlmEvent;

    /// The events `data` (named `name`) makes, or the error it is.
    fn read(name: Option<&str>, data: &str) -> Result<Vec<LlmEvent>, LlmError> {
        let mut out = Assembler::new(Dialect::OpenAiStrict, &[]);
        ResponsesStream.event(name, data, &mut out)?;
        Ok(std::iter::from_fn(|| out.next_event()).collect())
    }

    fn text(delta: &str) -> LlmEvent {
        LlmEvent::TextDelta {
            text: delta.to_owned(),
        }
    }

    #[test]
    fn events_are_read_as_their_json_says() {
        // The echoed response object is skipped, whatever it holds.
        let created = json!({"type": "response.created", "response": {
            "id": "resp_1", "instructions": "Be \"brief\".", "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
            "output": [], "metadata": {"a": [1, 2.5, null, true]}
        }});
        assert_eq!(read(None, &created.to_string()).unwrap(), []);
        // Escapes are read; the event's name stands in for a missing `type`.
        let delta = r#"{"delta": "say \"hi\"\n", "output_index": 0}"#;
        assert_eq!(
            read(Some("response.output_text.delta"), delta).unwrap(),
            [text("say \"hi\"\n")]
        );
        // A repeated field's last value wins, as in a JSON object read whole.
        let twice = r#"{"type": "response.output_text.delta", "delta": "a", "delta": "b"}"#;
        assert_eq!(read(None, twice).unwrap(), [text("b")]);
        // A field of another type is absent: no text, index 0.
        let odd = json!({"type": "response.output_text.delta", "delta": 5, "output_index": "one"});
        assert_eq!(read(None, &odd.to_string()).unwrap(), []);
        let call = json!({"type": "response.output_item.added", "output_index": -1, "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}});
        assert!(matches!(
            read(None, &call.to_string()).unwrap()[..],
            [
                LlmEvent::ToolCallStart { index: 0, .. },
                LlmEvent::ToolCallDelta { .. }
            ]
        ));
        // Data that is no object has no fields; only its name says what it is.
        for data in ["[1, {\"delta\": \"x\"}]", "\"x\"", "null", "3"] {
            assert_eq!(read(Some("response.output_text.delta"), data).unwrap(), []);
        }
    }

    #[test]
    fn errors_are_typed() {
        let error = read(
            None,
            r#"{"type": "error", "code": "rate_limit_exceeded", "message": "slow down"}"#,
        )
        .unwrap_err();
        assert_eq!(error.kind(), "rate_limited");
        assert_eq!(error.to_string(), "openai-responses: slow down");
        let failed = json!({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}});
        assert_eq!(
            read(None, &failed.to_string()).unwrap_err().kind(),
            "server"
        );
        let broken = read(None, r#"{"type": "response.output_text.delta", "delta": "#).unwrap_err();
        assert!(broken.to_string().contains("not valid JSON"), "{broken}");
    }
}
