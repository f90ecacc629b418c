//! The Anthropic Messages API (`POST {base_url}/v1/messages`).

use crate::client::{Builder, Client, malformed};
use crate::convert::{
    Turns, allowed, callable, count, describe, map_arguments, mark_deferred, object_arguments,
    render_tools, str_field, system_text,
};
use crate::env::{self, EnvError, EnvVars};
use crate::http::{classify, provider_message};
use crate::openai::finish_reason;
use crate::provider::{Assembler, Provider, StreamParser, typed_event};
use crate::wire::{body_map, expect_object, key_header, put, strictness, unless_withheld};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use toolwright_core::{
    AgentResult, Content, Message, ModelSettings,
    dialect::Dialect,
    llm::{AssistantMessage, LlmError, LlmRequest, ToolCall, ToolChoice, ToolResultMessage, Usage},
};

const PROVIDER: &str = "anthropic";

/// The prompt cache's mark on a block: cache everything up to here, for five minutes.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The Anthropic Messages API, for [`Client`]: see [`AnthropicClient`].
#[derive(Debug, Clone)]
pub struct Anthropic {
    version: String,
    max_tokens: u32,
    dialect: Dialect,
    tool_search: bool,
    cache_prompt: bool,
}

/// An [`LlmClient`](toolwright_core::LlmClient) for the Anthropic Messages API.
///
/// Tools are sent as `{name, description, input_schema}` in [`Dialect::Anthropic`]
/// (or [`Dialect::AnthropicStrict`] with [`strict_tools(true)`]); `tool_use` blocks
/// come back as tool calls, their input mapped back through the same dialect. Tool
/// results are `tool_result` blocks, with `is_error: true` for failed calls and images
/// passed as image blocks; results of one turn share one `user` message, as the API
/// requires. System messages, wherever they are in the conversation, become the
/// top-level `system` prompt. Images in user messages are image blocks. `thinking` and
/// `redacted_thinking` blocks (extended thinking, enabled with
/// [`param`](Builder::param)) are kept in
/// [`provider_blocks`](AssistantMessage::provider_blocks) and sent back unchanged at the
/// start of their turn, as the API requires of a turn with `tool_use`.
///
/// [`ModelSettings`] map to `temperature`, `max_tokens` (over the builder's
/// [`max_tokens`](AnthropicBuilder::max_tokens)), `tool_choice` (`auto`, `any`, `none`,
/// `tool`), `tool_choice.disable_parallel_tool_use` and `stop_sequences`; the API has
/// no seed, so `seed` is not sent. Streams read `message_start`, the content block
/// events, `message_delta` (stop reason and usage), `ping` and `error`, up to
/// `message_stop`.
///
/// ```no_run
/// # async fn run() -> toolwright_core::AgentResult<()> {
/// use toolwright_llm::AnthropicClient;
///
/// let model = AnthropicClient::builder("claude-sonnet-4-5")
///     .api_key(std::env::var("ANTHROPIC_API_KEY").unwrap())
///     .max_tokens(2048)
///     .build()?;
/// # Ok(()) }
/// ```
///
/// [`strict_tools(true)`]: AnthropicBuilder::strict_tools
pub type AnthropicClient = Client<Anthropic>;

/// Configures an [`AnthropicClient`]; [`build`](Builder::build) makes it.
pub type AnthropicBuilder = Builder<Anthropic>;

impl Client<Anthropic> {
    /// Anthropic's endpoint (requests go to `{base}/v1/messages`).
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";

    /// The `anthropic-version` header sent unless [`AnthropicBuilder::version`] says
    /// otherwise.
    pub const API_VERSION: &'static str = "2023-06-01";

    /// The type of the server tool that searches deferred tools (BM25 over their names,
    /// descriptions and parameters); sent, named [`TOOL_SEARCH_NAME`](Self::TOOL_SEARCH_NAME),
    /// whenever a request has deferred tools.
    pub const TOOL_SEARCH_TYPE: &'static str = "tool_search_tool_bm25_20251119";

    /// The name of the tool search server tool.
    pub const TOOL_SEARCH_NAME: &'static str = "tool_search_tool_bm25";

    /// The beta of tool search and `input_examples`, which a request using either
    /// carries in its `anthropic-beta` header (added to the value set with
    /// [`header`](Builder::header), if any).
    pub const ADVANCED_TOOL_USE_BETA: &'static str = "advanced-tool-use-2025-11-20";

    /// The model [`from_env`](Self::from_env) uses when `ANTHROPIC_MODEL` is unset.
    pub const DEFAULT_MODEL: &'static str = "claude-sonnet-4-5";

    /// The `max_tokens` sent unless [`AnthropicBuilder::max_tokens`] or the settings'
    /// `max_output_tokens` say otherwise (the API requires one).
    pub const DEFAULT_MAX_TOKENS: u32 = 4096;

    /// A builder for a client of `model`; the key goes in with
    /// [`api_key`](Builder::api_key) (sent as `x-api-key`).
    pub fn builder(model: impl Into<String>) -> AnthropicBuilder {
        let provider = Anthropic {
            version: Self::API_VERSION.to_owned(),
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            dialect: Dialect::Anthropic,
            tool_search: true,
            cache_prompt: false,
        };
        Builder::new(provider, model.into(), Self::DEFAULT_BASE_URL, None)
    }

    /// A client configured from the environment: the key from `ANTHROPIC_API_KEY`, the
    /// base URL from `ANTHROPIC_BASE_URL` (default Anthropic's; set alone, for a
    /// compatible server that needs no key), the model from `ANTHROPIC_MODEL` (default
    /// [`DEFAULT_MODEL`](Self::DEFAULT_MODEL)). [`EnvError::NotConfigured`] when neither
    /// the key nor the base URL is set.
    pub fn from_env() -> Result<Self, EnvError> {
        env::from_env(&ANTHROPIC_ENV, None, Self::DEFAULT_MODEL, Self::builder)
    }
}

/// What the Anthropic client reads from the environment.
pub(crate) const ANTHROPIC_ENV: EnvVars = EnvVars {
    keys: &["ANTHROPIC_API_KEY"],
    base_url: "ANTHROPIC_BASE_URL",
    model: "ANTHROPIC_MODEL",
    selecting: &["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"],
};

impl Builder<Anthropic> {
    /// The `anthropic-version` header (default [`AnthropicClient::API_VERSION`]).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.provider.version = version.into();
        self
    }

    /// The most tokens one answer may have (default
    /// [`AnthropicClient::DEFAULT_MAX_TOKENS`]).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.provider.max_tokens = max_tokens;
        self
    }

    /// Whether the API's own tool search finds the agent's searchable tools (the
    /// default): they are sent with `"defer_loading": true` beside the
    /// [`TOOL_SEARCH_TYPE`](AnthropicClient::TOOL_SEARCH_TYPE) server tool. `false`, for
    /// a model or a compatible server without it, has the agent offer its own search
    /// tool instead. A request that sends deferred tools carries the search's beta,
    /// [`ADVANCED_TOOL_USE_BETA`](AnthropicClient::ADVANCED_TOOL_USE_BETA).
    pub fn native_tool_search(mut self, native: bool) -> Self {
        self.provider.tool_search = native;
        self
    }

    /// Whether the tool definitions and the system prompt are marked for the prompt
    /// cache (`"cache_control": {"type": "ephemeral"}` on the last tool and on the
    /// system prompt), so later requests read them at a tenth of the input price
    /// ([`Usage::cached_input_tokens`](toolwright_core::llm::Usage::cached_input_tokens)).
    /// Off by default: Anthropic bills writing the cache at 1.25 times the input price,
    /// which a conversation of one request never earns back.
    pub fn cache_prompt(mut self, cache: bool) -> Self {
        self.provider.cache_prompt = cache;
        self
    }

    /// Whether tools are sent with `strict: true` in [`Dialect::AnthropicStrict`], or as
    /// plain schemas in [`Dialect::Anthropic`] (the default). Strict tool use may need a
    /// beta header, which [`header`](Builder::header) adds.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.provider.dialect = strictness(strict, Dialect::AnthropicStrict, Dialect::Anthropic);
        self
    }
}

impl Provider for Anthropic {
    const NAME: &'static str = PROVIDER;
    const CLIENT_NAME: &'static str = "AnthropicClient";

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn native_tool_search(&self) -> bool {
        self.tool_search
    }

    fn url(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        format!("{base_url}/v1/messages")
    }

    fn headers(&self, api_key: Option<&str>) -> Vec<(String, String)> {
        let mut headers = key_header("x-api-key", api_key.map(str::to_owned));
        headers.push(("anthropic-version".to_owned(), self.version.clone()));
        headers
    }

    fn request_header(&self, request: &LlmRequest<'_>) -> Option<(&'static str, &'static str)> {
        let examples = || {
            request
                .tools
                .iter()
                .chain(request.deferred)
                .any(|tool| !tool.input_examples.is_empty())
        };
        (!request.deferred.is_empty() || examples())
            .then_some(("anthropic-beta", AnthropicClient::ADVANCED_TOOL_USE_BETA))
    }

    fn body(
        &self,
        model: &str,
        request: &LlmRequest<'_>,
        settings: &ModelSettings,
        stream: bool,
    ) -> AgentResult<Map<String, Value>> {
        let (system, messages) = conversation(request.messages);
        let mut body = body_map();
        body.insert("model".into(), json!(model));
        let max_tokens = settings.max_output_tokens.unwrap_or(self.max_tokens);
        body.insert("max_tokens".into(), json!(max_tokens));
        if !system.is_empty() {
            let system = if self.cache_prompt {
                json!([{"type": "text", "text": system, "cache_control": ephemeral()}])
            } else {
                json!(system)
            };
            body.insert("system".into(), system);
        }
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() || !request.deferred.is_empty() {
            let mut tools = render_tools(self.dialect(), &allowed(request.tools, settings))?;
            if !request.deferred.is_empty() {
                tools.push(json!({
                    "type": AnthropicClient::TOOL_SEARCH_TYPE,
                    "name": AnthropicClient::TOOL_SEARCH_NAME,
                }));
                let mut deferred = render_tools(self.dialect(), request.deferred)?;
                mark_deferred(&mut deferred);
                tools.extend(deferred);
            }
            // The last tool's mark caches every tool before it (deferred ones are not
            // in the prompt, so they cannot carry one).
            if self.cache_prompt
                && let Some(Value::Object(last)) = tools
                    .iter_mut()
                    .rev()
                    .find(|t| t.get("defer_loading").is_none())
            {
                last.insert("cache_control".into(), ephemeral());
            }
            body.insert("tools".into(), Value::Array(tools));
            if let Some(choice) = tool_choice(settings) {
                body.insert("tool_choice".into(), choice);
            }
        }
        put(&mut body, "temperature", settings.temperature);
        put(
            &mut body,
            "stop_sequences",
            settings.stop_sequences.as_ref(),
        );
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
        let malformed = |what: &str| malformed(PROVIDER, what, body);
        expect_object(PROVIDER, body)?;
        if str_field(body, "type") == Some("error") {
            return Err(error_event(body));
        }
        let Some(blocks) = body.get("content").and_then(Value::as_array) else {
            return Err(malformed("no `content` array"));
        };
        let mut text: Option<String> = None;
        let mut tool_calls = Vec::new();
        let mut provider_blocks = Vec::new();
        for block in blocks {
            match str_field(block, "type") {
                Some("text") => {
                    let part = str_field(block, "text")
                        .ok_or_else(|| malformed("a text block without `text`"))?;
                    text.get_or_insert_with(String::new).push_str(part);
                }
                Some("tool_use") => {
                    let (Some(id), Some(name)) = (str_field(block, "id"), str_field(block, "name"))
                    else {
                        return Err(malformed("a tool_use block without `id` or `name`"));
                    };
                    let input = match block.get("input") {
                        Some(Value::Null) | None => Value::Object(Map::new()),
                        Some(input) => input.clone(),
                    };
                    let arguments = map_arguments(self.dialect(), &callable(request), name, input);
                    tool_calls.push(ToolCall::new(id, name, arguments));
                }
                // Kept whole: the API checks their signature (or `data`) when they go
                // back before the tool_use they preceded.
                Some("thinking" | "redacted_thinking") => provider_blocks.push(block.clone()),
                // The tool search's call and the tools it found: sent back, so the found
                // tools stay loaded on the next turns.
                Some(kind) if is_tool_search_block(kind, block) => {
                    provider_blocks.push(block.clone())
                }
                // Other server-tool blocks carry nothing the runtime acts on.
                Some(_) => {}
                None => return Err(malformed("a content block without `type`")),
            }
        }
        let refused = str_field(body, "stop_reason") == Some("refusal");
        let why = refused.then(|| "the model refused to answer (stop_reason `refusal`)".to_owned());
        let message = AssistantMessage {
            text,
            tool_calls,
            usage: body.get("usage").filter(|u| u.is_object()).map(usage),
            provider_blocks,
        };
        unless_withheld(PROVIDER, message, why)
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        Box::new(MessagesStream::default())
    }
}

/// Whether a content block of type `kind` is the tool search's: its `server_tool_use`
/// call or its `tool_search_tool_result`.
fn is_tool_search_block(kind: &str, block: &Value) -> bool {
    match kind {
        "tool_search_tool_result" => true,
        "server_tool_use" => {
            str_field(block, "name").is_some_and(|name| name.starts_with("tool_search_tool"))
        }
        _ => false,
    }
}

/// The settings' tool choice and parallelism as Anthropic's `tool_choice` object.
fn tool_choice(settings: &ModelSettings) -> Option<Value> {
    let mut choice = match &settings.tool_choice {
        Some(ToolChoice::Auto) => json!({"type": "auto"}),
        Some(ToolChoice::Required) => json!({"type": "any"}),
        Some(ToolChoice::None) => json!({"type": "none"}),
        Some(ToolChoice::Tool(name)) => json!({"type": "tool", "name": name}),
        // The API has no such choice: only the allowed tools are sent.
        Some(ToolChoice::Allowed(_)) => json!({"type": "auto"}),
        None if settings.parallel_tool_calls == Some(false) => json!({"type": "auto"}),
        None => return None,
    };
    if settings.parallel_tool_calls == Some(false) && choice["type"] != "none" {
        choice["disable_parallel_tool_use"] = json!(true);
    }
    Some(choice)
}

/// Anthropic's usage: the input is the uncached, cache-written and cache-read tokens.
fn usage(u: &Value) -> Usage {
    let cached = count(u, "cache_read_input_tokens");
    Usage {
        input_tokens: count(u, "input_tokens") + count(u, "cache_creation_input_tokens") + cached,
        output_tokens: count(u, "output_tokens"),
        cached_input_tokens: cached,
        reasoning_tokens: 0,
    }
}

/// An `{"type": "error", "error": {...}}` body or stream event, typed.
fn error_event(body: &Value) -> LlmError {
    match provider_message(body) {
        Some((kind, message)) => {
            let text = match &kind {
                Some(kind) => format!("{PROVIDER}: ({kind}) {message}"),
                None => format!("{PROVIDER}: {message}"),
            };
            classify(0, kind.as_deref(), text, None)
        }
        None => LlmError::other(format!("{PROVIDER}: an error without a message")),
    }
}

/// The fields of a stream event the parser reads; the text of deltas is borrowed from
/// the event where it needs no unescaping.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(default, rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default)]
    content_block: Option<Value>,
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

/// A `content_block_delta`'s or `message_delta`'s `delta`.
#[derive(Deserialize, Default)]
struct Delta<'a> {
    #[serde(default, rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    signature: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    stop_reason: Option<Cow<'a, str>>,
}

/// A thinking block being streamed: its text and signature, sent back whole later.
#[derive(Default)]
struct Thinking {
    index: u64,
    thinking: String,
    signature: String,
}

/// The Messages API's stream: `message_start`, `content_block_start` /
/// `content_block_delta` / `content_block_stop` per block, `message_delta` with the
/// stop reason and output tokens, `message_stop`; `ping` and `error` anywhere.
#[derive(Default)]
struct MessagesStream {
    usage: Usage,
    thinking: Option<Thinking>,
    search: Option<SearchCall>,
}

/// The tool search's `server_tool_use` block being streamed: the block as it started,
/// and its input's JSON as written so far.
struct SearchCall {
    index: u64,
    block: Value,
    input: String,
}

impl StreamParser for MessagesStream {
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut Assembler,
    ) -> Result<(), LlmError> {
        let event: Event<'_> = typed_event(PROVIDER, data)?;
        let kind = event.kind.as_deref().or(name).unwrap_or_default();
        let index = event.index.unwrap_or(0);
        match kind {
            "message_start" => {
                let message = event.message.as_ref();
                if let Some(u) = message
                    .and_then(|m| m.get("usage"))
                    .filter(|u| u.is_object())
                {
                    self.usage = usage(u);
                    out.set_usage(self.usage);
                }
            }
            "content_block_start" => {
                let block = event.content_block.unwrap_or(Value::Null);
                match str_field(&block, "type") {
                    Some("text") => out.text(str_field(&block, "text").unwrap_or_default()),
                    Some("tool_use") => out.tool_start(
                        index,
                        str_field(&block, "id").unwrap_or_default(),
                        str_field(&block, "name").unwrap_or_default(),
                    ),
                    Some("thinking") => {
                        let text = str_field(&block, "thinking").unwrap_or_default();
                        out.thinking(text);
                        self.thinking = Some(Thinking {
                            index,
                            thinking: text.to_owned(),
                            signature: String::new(),
                        });
                    }
                    Some("redacted_thinking") => out.provider_block(block),
                    Some(kind) if is_tool_search_block(kind, &block) => {
                        if kind == "server_tool_use" {
                            self.search = Some(SearchCall {
                                index,
                                block,
                                input: String::new(),
                            });
                        } else {
                            out.provider_block(block);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = event.delta.unwrap_or_default();
                match delta.kind.as_deref() {
                    Some("text_delta") => out.text(delta.text.as_deref().unwrap_or_default()),
                    Some("input_json_delta") => {
                        let json = delta.partial_json.as_deref().unwrap_or_default();
                        match self.search.as_mut().filter(|call| call.index == index) {
                            Some(call) => call.input.push_str(json),
                            None => out.tool_arguments(index, json),
                        }
                    }
                    Some("thinking_delta") => {
                        let text = delta.thinking.as_deref().unwrap_or_default();
                        out.thinking(text);
                        if let Some(block) = self.thinking.as_mut().filter(|b| b.index == index) {
                            block.thinking.push_str(text);
                        }
                    }
                    Some("signature_delta") => {
                        if let Some(block) = self.thinking.as_mut().filter(|b| b.index == index) {
                            block
                                .signature
                                .push_str(delta.signature.as_deref().unwrap_or_default());
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(mut call) = self.search.take_if(|c| c.index == index) {
                    // An input that does not parse stays as its start gave it: the
                    // block goes back for the provider's record, not for us to read.
                    if let Ok(input) = serde_json::from_str::<Value>(&call.input) {
                        call.block["input"] = input;
                    }
                    out.provider_block(call.block);
                }
                if let Some(block) = self.thinking.take_if(|b| b.index == index) {
                    out.provider_block(json!({
                        "type": "thinking",
                        "thinking": block.thinking,
                        "signature": block.signature,
                    }));
                }
                out.tool_end(index);
            }
            "message_delta" => {
                if let Some(reason) = event.delta.and_then(|d| d.stop_reason) {
                    out.finish(finish_reason(&reason));
                }
                if let Some(u) = event.usage.filter(Value::is_object) {
                    self.usage.output_tokens = count(&u, "output_tokens");
                    out.set_usage(self.usage);
                }
            }
            "message_stop" => out.terminate(),
            "error" => return Err(error_event(&json!({"error": event.error}))),
            // `ping`, and event types added later.
            _ => {}
        }
        Ok(())
    }
}

/// The system prompt and the `messages` array. Consecutive messages of one role share
/// one API message, so one turn's tool results sit together in the `user` message
/// after the `tool_use`, before any text the user adds.
fn conversation(messages: &[Message]) -> (String, Vec<Value>) {
    let mut turns = Turns::default();
    let mut push = |role, blocks| turns.push(role, blocks);
    for message in messages {
        match message {
            Message::System { .. } => {}
            Message::User { content } => push("user", text_block(content).into_iter().collect()),
            Message::UserContent { content } => push("user", content_blocks(content)),
            Message::Assistant(assistant) => {
                let mut blocks: Vec<Value> = assistant
                    .text
                    .as_deref()
                    .and_then(text_block)
                    .into_iter()
                    .collect();
                for call in &assistant.tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": object_arguments(&call.arguments),
                    }));
                }
                // The thinking that preceded the tool_use goes back first and unchanged,
                // as the API requires; alone it is dropped, as the API refuses a turn
                // that ends with thinking. Blocks another provider kept are not ours.
                if !blocks.is_empty() {
                    let thinking =
                        assistant.provider_blocks.iter().filter(|block| {
                            match str_field(block, "type") {
                                Some("thinking" | "redacted_thinking") => true,
                                Some(kind) => is_tool_search_block(kind, block),
                                None => false,
                            }
                        });
                    blocks.splice(0..0, thinking.cloned());
                }
                push("assistant", blocks);
            }
            Message::Tool(result) => push("user", vec![tool_result(result)]),
        }
    }
    (system_text(messages), turns.into_json("content"))
}

/// A text block, or none for empty text (the API refuses empty text blocks).
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

/// Text and image blocks; a JSON block beside text is left out (tools that return
/// JSON return it as text too), other blocks are described in text.
fn content_blocks(content: &[Content]) -> Vec<Value> {
    let has_text = content.iter().any(|c| c.as_text().is_some());
    let mut blocks = Vec::new();
    for block in content {
        match block {
            Content::Text { text } => blocks.extend(text_block(text)),
            Content::Image { data, mime_type } => blocks.push(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": mime_type, "data": data},
            })),
            Content::Json { .. } if has_text => {}
            other => blocks.extend(text_block(&describe(other))),
        }
    }
    blocks
}

fn tool_result(result: &ToolResultMessage) -> Value {
    let blocks = content_blocks(&result.content);
    let mut out = Map::new();
    out.insert("type".into(), json!("tool_result"));
    out.insert("tool_use_id".into(), json!(result.call_id));
    if !blocks.is_empty() {
        out.insert("content".into(), Value::Array(blocks));
    }
    if result.is_error {
        out.insert("is_error".into(), Value::Bool(true));
    }
    Value::Object(out)
}
