//! The OpenAI Chat Completions API (`POST {base_url}/chat/completions`), which
//! OpenAI-compatible servers (Ollama, vLLM, llama.cpp's server, LM Studio) also speak.

use crate::convert::{
    content_text, count, map_arguments, parse_arguments, render_tools, str_field,
};
use crate::http::{DEFAULT_TIMEOUT, RetryPolicy, Transport, header_map, provider_message};
use agent_core::{
    AgentError, AgentResult, AssistantMessage, Dialect, LlmClient, LlmRequest, Message, ToolCall,
    ToolResultMessage, Usage,
};
use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::fmt;
use std::time::Duration;

const PROVIDER: &str = "openai";

/// An [`LlmClient`] for the OpenAI Chat Completions API and every server that speaks it.
///
/// Tools are sent in OpenAI's strict dialect ([`Dialect::OpenAiStrict`]: every object
/// closed, optionals required and nullable) unless [`strict_tools(false)`] asks for the
/// plain one ([`Dialect::OpenAi`]); the model's arguments are mapped back through the
/// same dialect, so a `null` for an optional parameter reaches the tool as absent.
/// Arguments that are not valid JSON are passed on as a JSON string, and the runtime
/// answers the model with an invalid-arguments error. Tool results are `role: "tool"`
/// messages; failed calls carry the runtime's `{"error", "kind"}` text, since the API
/// has no error flag.
///
/// A request's [`params`](LlmRequest::params) (set by tools through
/// [`NextTurn`](agent_core::NextTurn)) become body fields for that request; its
/// application [`context`](LlmRequest::context) is not sent: what the model should see
/// belongs in a message.
///
/// ```no_run
/// # async fn run() -> agent_core::AgentResult<()> {
/// use agent_llm::OpenAiClient;
///
/// // A local Ollama server; no key needed.
/// let model = OpenAiClient::builder("llama3.2")
///     .base_url("http://localhost:11434/v1")
///     .build()?;
/// # Ok(()) }
/// ```
///
/// [`strict_tools(false)`]: OpenAiBuilder::strict_tools
#[derive(Clone)]
pub struct OpenAiClient {
    transport: Transport,
    model: String,
    dialect: Dialect,
    params: Map<String, Value>,
}

impl OpenAiClient {
    /// OpenAI's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// The model [`from_env`](Self::from_env) uses when `OPENAI_MODEL` is unset.
    pub const DEFAULT_MODEL: &'static str = "gpt-4o-mini";

    /// A builder for a client of `model` (e.g. `gpt-4o-mini`, or the name a local server
    /// knows the model by).
    pub fn builder(model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder {
            model: model.into(),
            base_url: Self::DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            strict_tools: true,
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::DEFAULT,
            headers: Vec::new(),
            params: Map::new(),
        }
    }

    /// A client configured from the environment, or `None` when neither
    /// `OPENAI_BASE_URL` nor `OPENAI_API_KEY` is set: the base URL from
    /// `OPENAI_BASE_URL` (default OpenAI's), the key from `OPENAI_API_KEY` (optional),
    /// the model from `OPENAI_MODEL` (default [`DEFAULT_MODEL`](Self::DEFAULT_MODEL)).
    pub fn from_env() -> Option<AgentResult<Self>> {
        let var = |name| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let base_url = var("OPENAI_BASE_URL");
        let api_key = var("OPENAI_API_KEY");
        if base_url.is_none() && api_key.is_none() {
            return None;
        }
        let model = var("OPENAI_MODEL").unwrap_or_else(|| Self::DEFAULT_MODEL.to_owned());
        let mut builder = Self::builder(model);
        if let Some(url) = base_url {
            builder = builder.base_url(url);
        }
        if let Some(key) = api_key {
            builder = builder.api_key(key);
        }
        Some(builder.build())
    }

    /// The model asked.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The dialect tools are rendered in: [`Dialect::OpenAiStrict`] or [`Dialect::OpenAi`].
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The URL requests are posted to.
    pub fn url(&self) -> &str {
        &self.transport.url
    }

    /// The JSON body [`complete`](LlmClient::complete) posts for `request`: its
    /// messages and tools, the builder's [`param`](OpenAiBuilder::param)s, then the request's own
    /// [`params`](LlmRequest::params) (what tools set with
    /// [`NextTurn`](agent_core::NextTurn)) as body fields, overriding any earlier field
    /// of that name (`model` included). Fails when a tool cannot be rendered in the
    /// client's dialect.
    pub fn request_body(&self, request: &LlmRequest<'_>) -> AgentResult<Value> {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        let messages: Vec<Value> = request.messages.iter().map(message_json).collect();
        body.insert("messages".into(), Value::Array(messages));
        // OpenAI refuses an empty `tools` array.
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

    /// The model's message in a Chat Completions response `body`, its arguments mapped
    /// back through the client's dialect for the tools `request` offered.
    pub fn parse_response(
        &self,
        request: &LlmRequest<'_>,
        body: &Value,
    ) -> AgentResult<AssistantMessage> {
        let malformed = |what: &str| {
            AgentError::Llm(format!(
                "{PROVIDER}: malformed chat completion: {what}: {}",
                crate::http::excerpt(body.to_string().as_bytes())
            ))
        };
        if !body.is_object() {
            return Err(malformed("the body is not a JSON object"));
        }
        let Some(choice) = body.get("choices").and_then(|c| c.get(0)) else {
            if let Some((_, message)) = provider_message(body) {
                return Err(AgentError::Llm(format!("{PROVIDER}: {message}")));
            }
            return Err(malformed("no `choices[0]`"));
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
                    tool_calls.push(self.tool_call(request, index, call).map_err(malformed)?);
                }
            }
            Some(Value::Null) | None => {}
            Some(_) => return Err(malformed("`message.tool_calls` is not an array")),
        }
        if text.is_none()
            && tool_calls.is_empty()
            && str_field(choice, "finish_reason") == Some("content_filter")
        {
            return Err(AgentError::Llm(format!(
                "{PROVIDER}: the answer was withheld by the content filter"
            )));
        }
        let usage = body.get("usage").filter(|u| u.is_object()).map(|u| Usage {
            input_tokens: count(u, "prompt_tokens"),
            output_tokens: count(u, "completion_tokens"),
        });
        Ok(AssistantMessage {
            text,
            tool_calls,
            usage,
            ..AssistantMessage::default()
        })
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
        let arguments = map_arguments(self.dialect, request.tools, name, arguments);
        Ok(ToolCall::new(id, name, arguments))
    }
}

#[async_trait]
impl LlmClient for OpenAiClient {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        let body = self.request_body(&request)?;
        let response = self.transport.post_json(&body).await?;
        self.parse_response(&request, &response)
    }
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct("OpenAiClient")
            .field("url", &self.transport.url)
            .field("model", &self.model)
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

fn message_json(message: &Message) -> Value {
    match message {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant(assistant) => {
            let mut out = Map::new();
            out.insert("role".into(), json!("assistant"));
            let content = match &assistant.text {
                Some(text) => json!(text),
                None if assistant.tool_calls.is_empty() => json!(""),
                None => Value::Null,
            };
            out.insert("content".into(), content);
            if !assistant.tool_calls.is_empty() {
                let calls: Vec<Value> = assistant
                    .tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": arguments_text(&call.arguments)},
                        })
                    })
                    .collect();
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(out)
        }
        Message::Tool(result) => json!({
            "role": "tool",
            "tool_call_id": result.call_id,
            "content": tool_result_text(result),
        }),
    }
}

/// Arguments as the JSON string the API carries; arguments that never parsed go back
/// as the model sent them.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// The API has no error flag on tool messages: the runtime's error results say so in
/// their `{"error", "kind"}` text; any other failed result is prefixed with `Error:`.
fn tool_result_text(result: &ToolResultMessage) -> String {
    let text = content_text(&result.content);
    if result.is_error && !text.trim_start().starts_with('{') {
        format!("Error: {text}")
    } else {
        text
    }
}

/// Configures an [`OpenAiClient`]; [`build`](Self::build) makes it.
#[must_use]
#[derive(Clone)]
pub struct OpenAiBuilder {
    model: String,
    base_url: String,
    api_key: Option<String>,
    strict_tools: bool,
    timeout: Duration,
    retry: RetryPolicy,
    headers: Vec<(String, String)>,
    params: Map<String, Value>,
}

impl OpenAiBuilder {
    /// The API's base URL, up to and including `/v1`: OpenAI's by default;
    /// `http://localhost:11434/v1` for Ollama, `http://localhost:8000/v1` for vLLM,
    /// `http://localhost:8080/v1` for llama.cpp's server, `http://localhost:1234/v1`
    /// for LM Studio. Requests go to `{base_url}/chat/completions`.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The API key, sent as `Authorization: Bearer <key>`. Local servers need none.
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Whether tools are sent with `strict: true` in [`Dialect::OpenAiStrict`] (the
    /// default), so the model's arguments always match the schema, or as plain schemas
    /// in [`Dialect::OpenAi`]. With strict on, a tool whose schema cannot be made strict
    /// is an error naming the tool, and nothing is sent.
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

    /// A header sent with every request, e.g. `OpenAI-Organization`.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A field added to every request body, e.g. `("temperature", 0.2)`,
    /// `("max_completion_tokens", 1024)`, `("parallel_tool_calls", false)`,
    /// `("tool_choice", "required")`. It overrides a field the client sets.
    pub fn param(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.params.insert(key.into(), value.into());
        self
    }

    /// The client. Fails when a header is invalid or the HTTP client cannot be built.
    pub fn build(self) -> AgentResult<OpenAiClient> {
        let url = format!("{}/chat/completions", self.base_url.trim_end_matches('/'));
        let mut headers = self.headers;
        if let Some(key) = self.api_key {
            headers.insert(0, ("authorization".into(), format!("Bearer {key}")));
        }
        let headers = header_map(PROVIDER, headers)?;
        let transport = Transport::new(PROVIDER, url, headers, self.timeout, self.retry)?;
        Ok(OpenAiClient {
            transport,
            model: self.model,
            dialect: if self.strict_tools {
                Dialect::OpenAiStrict
            } else {
                Dialect::OpenAi
            },
            params: self.params,
        })
    }
}

impl fmt::Debug for OpenAiBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiBuilder")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("strict_tools", &self.strict_tools)
            .finish_non_exhaustive()
    }
}
