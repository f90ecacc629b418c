//! The Anthropic Messages API (`POST {base_url}/v1/messages`).

use crate::convert::{count, describe, map_arguments, render_tools, str_field};
use crate::http::{DEFAULT_TIMEOUT, RetryPolicy, Transport, header_map, provider_message};
use agent_core::{
    AgentError, AgentResult, AssistantMessage, Content, Dialect, LlmClient, LlmRequest, Message,
    ToolCall, ToolResultMessage, Usage,
};
use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::fmt;
use std::time::Duration;

const PROVIDER: &str = "anthropic";

/// An [`LlmClient`] for the Anthropic Messages API.
///
/// Tools are sent as `{name, description, input_schema}` in [`Dialect::Anthropic`]
/// (or [`Dialect::AnthropicStrict`] with [`strict_tools(true)`]); `tool_use` blocks
/// come back as tool calls, their input mapped back through the same dialect. Tool
/// results are `tool_result` blocks, with `is_error: true` for failed calls and images
/// passed as image blocks; results of one turn share one `user` message, as the API
/// requires. System messages, wherever they are in the conversation, become the
/// top-level `system` prompt. `thinking` and `redacted_thinking` blocks (extended
/// thinking, enabled with [`param`](AnthropicBuilder::param)) are kept in
/// [`provider_blocks`](AssistantMessage::provider_blocks) and sent back unchanged at the
/// start of their turn, as the API requires of a turn with `tool_use`.
///
/// A request's [`params`](LlmRequest::params) (set by tools through
/// [`NextTurn`](agent_core::NextTurn)) become body fields for that request; its
/// application [`context`](LlmRequest::context) is not sent: what the model should see
/// belongs in a message.
///
/// ```no_run
/// # async fn run() -> agent_core::AgentResult<()> {
/// use agent_llm::AnthropicClient;
///
/// let model = AnthropicClient::builder(std::env::var("ANTHROPIC_API_KEY").unwrap(), "claude-sonnet-4-5")
///     .max_tokens(2048)
///     .build()?;
/// # Ok(()) }
/// ```
///
/// [`strict_tools(true)`]: AnthropicBuilder::strict_tools
#[derive(Clone)]
pub struct AnthropicClient {
    transport: Transport,
    model: String,
    max_tokens: u32,
    dialect: Dialect,
    params: Map<String, Value>,
}

impl AnthropicClient {
    /// Anthropic's endpoint (requests go to `{base}/v1/messages`).
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";

    /// The `anthropic-version` header sent unless [`AnthropicBuilder::version`] says
    /// otherwise.
    pub const API_VERSION: &'static str = "2023-06-01";

    /// The model [`from_env`](Self::from_env) uses when `ANTHROPIC_MODEL` is unset.
    pub const DEFAULT_MODEL: &'static str = "claude-sonnet-4-5";

    /// The `max_tokens` sent unless [`AnthropicBuilder::max_tokens`] says otherwise (the
    /// API requires one).
    pub const DEFAULT_MAX_TOKENS: u32 = 4096;

    /// A builder for a client of `model` authenticated with `api_key`.
    pub fn builder(api_key: impl Into<String>, model: impl Into<String>) -> AnthropicBuilder {
        AnthropicBuilder {
            api_key: api_key.into(),
            model: model.into(),
            base_url: Self::DEFAULT_BASE_URL.to_owned(),
            version: Self::API_VERSION.to_owned(),
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            strict_tools: false,
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::DEFAULT,
            headers: Vec::new(),
            params: Map::new(),
        }
    }

    /// A client configured from the environment, or `None` when `ANTHROPIC_API_KEY` is
    /// unset: the model from `ANTHROPIC_MODEL` (default
    /// [`DEFAULT_MODEL`](Self::DEFAULT_MODEL)), the base URL from `ANTHROPIC_BASE_URL`
    /// (default Anthropic's).
    pub fn from_env() -> Option<AgentResult<Self>> {
        let var = |name| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let api_key = var("ANTHROPIC_API_KEY")?;
        let model = var("ANTHROPIC_MODEL").unwrap_or_else(|| Self::DEFAULT_MODEL.to_owned());
        let mut builder = Self::builder(api_key, model);
        if let Some(url) = var("ANTHROPIC_BASE_URL") {
            builder = builder.base_url(url);
        }
        Some(builder.build())
    }

    /// The model asked.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The dialect tools are rendered in: [`Dialect::Anthropic`] or
    /// [`Dialect::AnthropicStrict`].
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The URL requests are posted to.
    pub fn url(&self) -> &str {
        &self.transport.url
    }

    /// The JSON body [`complete`](LlmClient::complete) posts for `request`: its
    /// messages and tools, the builder's [`param`](AnthropicBuilder::param)s, then the request's own
    /// [`params`](LlmRequest::params) (what tools set with
    /// [`NextTurn`](agent_core::NextTurn)) as body fields, overriding any earlier field
    /// of that name (`model` included). Fails when a tool cannot be rendered in the
    /// client's dialect.
    pub fn request_body(&self, request: &LlmRequest<'_>) -> AgentResult<Value> {
        let (system, messages) = conversation(request.messages);
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("max_tokens".into(), json!(self.max_tokens));
        if !system.is_empty() {
            body.insert("system".into(), json!(system));
        }
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let tools = render_tools(self.dialect, request.tools)?;
            body.insert("tools".into(), Value::Array(tools));
        }
        // The client's fields, then this turn's (`NextTurn`): later ones win.
        for (key, value) in self.params.iter().chain(request.params) {
            body.insert(key.clone(), value.clone());
        }
        Ok(Value::Object(body))
    }

    /// The model's message in a Messages API response `body`, its arguments mapped back
    /// through the client's dialect for the tools `request` offered.
    pub fn parse_response(
        &self,
        request: &LlmRequest<'_>,
        body: &Value,
    ) -> AgentResult<AssistantMessage> {
        let malformed = |what: &str| {
            AgentError::Llm(format!(
                "{PROVIDER}: malformed message: {what}: {}",
                crate::http::excerpt(body.to_string().as_bytes())
            ))
        };
        if !body.is_object() {
            return Err(malformed("the body is not a JSON object"));
        }
        if str_field(body, "type") == Some("error") {
            let message = provider_message(body).map_or_else(
                || "an error without a message".to_owned(),
                |(kind, message)| match kind {
                    Some(kind) => format!("({kind}) {message}"),
                    None => message,
                },
            );
            return Err(AgentError::Llm(format!("{PROVIDER}: {message}")));
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
                    let arguments = map_arguments(self.dialect, request.tools, name, input);
                    tool_calls.push(ToolCall::new(id, name, arguments));
                }
                // Kept whole: the API checks their signature (or `data`) when they go
                // back before the tool_use they preceded.
                Some("thinking" | "redacted_thinking") => provider_blocks.push(block.clone()),
                // Server-tool blocks carry nothing the runtime acts on.
                Some(_) => {}
                None => return Err(malformed("a content block without `type`")),
            }
        }
        if text.is_none()
            && tool_calls.is_empty()
            && str_field(body, "stop_reason") == Some("refusal")
        {
            return Err(AgentError::Llm(format!(
                "{PROVIDER}: the model refused to answer (stop_reason `refusal`)"
            )));
        }
        let usage = body.get("usage").filter(|u| u.is_object()).map(|u| Usage {
            input_tokens: count(u, "input_tokens")
                + count(u, "cache_creation_input_tokens")
                + count(u, "cache_read_input_tokens"),
            output_tokens: count(u, "output_tokens"),
        });
        Ok(AssistantMessage {
            text,
            tool_calls,
            usage,
            provider_blocks,
        })
    }
}

#[async_trait]
impl LlmClient for AnthropicClient {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        let body = self.request_body(&request)?;
        let response = self.transport.post_json(&body).await?;
        self.parse_response(&request, &response)
    }
}

impl fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct("AnthropicClient")
            .field("url", &self.transport.url)
            .field("model", &self.model)
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

/// The system prompt and the `messages` array. Consecutive messages of one role share
/// one API message, so one turn's tool results sit together in the `user` message
/// after the `tool_use`, before any text the user adds.
fn conversation(messages: &[Message]) -> (String, Vec<Value>) {
    let mut system: Vec<&str> = Vec::new();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    };
    for message in messages {
        match message {
            Message::System { content } => system.push(content),
            Message::User { content } => push("user", text_block(content).into_iter().collect()),
            Message::Assistant(assistant) => {
                let mut blocks: Vec<Value> = assistant
                    .text
                    .as_deref()
                    .and_then(text_block)
                    .into_iter()
                    .collect();
                for call in &assistant.tool_calls {
                    // The API's input is always an object; arguments that never parsed
                    // (they came from another provider) are sent as none.
                    let input = match &call.arguments {
                        Value::Object(_) => call.arguments.clone(),
                        _ => json!({}),
                    };
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": input,
                    }));
                }
                // The thinking that preceded the tool_use goes back first and unchanged,
                // as the API requires; alone it is dropped, as the API refuses a turn
                // that ends with thinking. Blocks another provider kept are not ours.
                if !blocks.is_empty() {
                    let thinking = assistant.provider_blocks.iter().filter(|block| {
                        matches!(
                            str_field(block, "type"),
                            Some("thinking" | "redacted_thinking")
                        )
                    });
                    blocks.splice(0..0, thinking.cloned());
                }
                push("assistant", blocks);
            }
            Message::Tool(result) => push("user", vec![tool_result(result)]),
        }
    }
    let messages = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    (system.join("\n\n"), messages)
}

/// A text block, or none for empty text (the API refuses empty text blocks).
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

fn tool_result(result: &ToolResultMessage) -> Value {
    let has_text = result.content.iter().any(|c| c.as_text().is_some());
    let mut blocks = Vec::new();
    for block in &result.content {
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

/// Configures an [`AnthropicClient`]; [`build`](Self::build) makes it.
#[must_use]
#[derive(Clone)]
pub struct AnthropicBuilder {
    api_key: String,
    model: String,
    base_url: String,
    version: String,
    max_tokens: u32,
    strict_tools: bool,
    timeout: Duration,
    retry: RetryPolicy,
    headers: Vec<(String, String)>,
    params: Map<String, Value>,
}

impl AnthropicBuilder {
    /// The API's base URL, without `/v1` (Anthropic's by default).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The `anthropic-version` header (default [`AnthropicClient::API_VERSION`]).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// The most tokens one answer may have (default
    /// [`AnthropicClient::DEFAULT_MAX_TOKENS`]).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Whether tools are sent with `strict: true` in [`Dialect::AnthropicStrict`], or as
    /// plain schemas in [`Dialect::Anthropic`] (the default). Strict tool use may need a
    /// beta header, which [`header`](Self::header) adds.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }

    /// How long one request may take, answer included (default ten minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// When failed requests are retried (default [`RetryPolicy::DEFAULT`]).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// A header sent with every request, e.g. `anthropic-beta`.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A field added to every request body, e.g. `("temperature", 0.2)` or
    /// `("tool_choice", {"type": "any"})`. It overrides a field the client sets.
    pub fn param(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.params.insert(key.into(), value.into());
        self
    }

    /// The client. Fails when a header is invalid or the HTTP client cannot be built.
    pub fn build(self) -> AgentResult<AnthropicClient> {
        let url = format!("{}/v1/messages", self.base_url.trim_end_matches('/'));
        let mut headers = vec![
            ("x-api-key".to_owned(), self.api_key),
            ("anthropic-version".to_owned(), self.version),
        ];
        headers.extend(self.headers);
        let headers = header_map(PROVIDER, headers)?;
        let transport = Transport::new(PROVIDER, url, headers, self.timeout, self.retry)?;
        Ok(AnthropicClient {
            transport,
            model: self.model,
            max_tokens: self.max_tokens,
            dialect: if self.strict_tools {
                Dialect::AnthropicStrict
            } else {
                Dialect::Anthropic
            },
            params: self.params,
        })
    }
}

impl fmt::Debug for AnthropicBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicBuilder")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("strict_tools", &self.strict_tools)
            .finish_non_exhaustive()
    }
}
