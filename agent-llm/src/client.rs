//! [`Client<P>`]: one HTTP model client for every [`Provider`], and its [`Builder`].

use crate::convert::callable;
use crate::http::{DEFAULT_TIMEOUT, Endpoint, Transport, excerpt, header_map};
use crate::provider::{Assembler, Provider, StreamParser};
use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use serde_json::{Map, Value};
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use toolwright_core::{
    AgentError, AgentResult, LlmClient, ModelSettings,
    dialect::Dialect,
    exec::RetryPolicy,
    llm::{
        AssistantMessage, FinishReason, LlmError, LlmEvent, LlmRequest, LlmStream, OutputSchema,
        ToolChoice,
    },
    toolset::ToolDefinition,
};

/// An [`LlmClient`] for one model behind one provider's HTTP API. Use it through its
/// provider's name: [`OpenAiClient`](crate::OpenAiClient),
/// [`AnthropicClient`](crate::AnthropicClient), [`GeminiClient`](crate::GeminiClient),
/// [`OpenAiResponsesClient`](crate::OpenAiResponsesClient).
///
/// Every client renders the tools on offer in its provider's schema [`Dialect`] and
/// maps the model's arguments back through it; sends tool results and tool errors in
/// the provider's format; reports token usage; retries 408, 429 and 5xx answers as its
/// [`RetryPolicy`] says (honouring `Retry-After`); bounds every request with a timeout;
/// and answers failures with a typed [`LlmError`] (inside
/// [`AgentError::Model`]) quoting the provider's message.
///
/// [`complete`](LlmClient::complete) asks for the whole answer;
/// [`stream`](LlmClient::stream) asks for server-sent events and yields each delta as it
/// arrives. A stream that breaks off ends with [`LlmError::BrokenStream`], after every
/// event received before the break.
///
/// Model settings ([`ModelSettings`]) come from the builder's
/// [`settings`](Builder::settings), overridden field by field by the request's
/// [`settings`](LlmRequest::settings). The builder's [`param`](Builder::param)s and the
/// request's [`params`](LlmRequest::params) (what tools set with
/// [`NextTurn`](toolwright_core::tool::NextTurn)) are then added to the body as they are,
/// overriding any field of that name. A request's application
/// [`context`](LlmRequest::context) is not sent: what the model should see belongs in a
/// message.
#[derive(Clone)]
pub struct Client<P: Provider> {
    provider: P,
    transport: Transport,
    model: String,
    url: Endpoint,
    stream_url: Endpoint,
    params: Map<String, Value>,
    settings: ModelSettings,
}

impl<P: Provider> Client<P> {
    /// The model asked.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The dialect tools are rendered in.
    pub fn dialect(&self) -> Dialect {
        self.provider.dialect()
    }

    /// The URL whole answers are asked from.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// The URL streamed answers are asked from.
    pub fn stream_url(&self) -> &str {
        self.stream_url.as_str()
    }

    /// The client's own model settings, under each request's.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// The same client with these model settings under each request's (e.g. an output
    /// cap on a client that came from the environment).
    pub fn with_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The JSON body [`complete`](LlmClient::complete) posts for `request`: its
    /// messages and tools and the merged [`ModelSettings`] in the provider's fields,
    /// then the settings' `extra` fields, the builder's [`param`](Builder::param)s and
    /// the request's own [`params`](LlmRequest::params), each overriding any earlier
    /// field of that name (`model` included). Fails when a tool cannot be rendered in
    /// the client's dialect.
    pub fn request_body(&self, request: &LlmRequest<'_>) -> AgentResult<Value> {
        self.body(request, false)
    }

    /// The body [`stream`](LlmClient::stream) posts: as
    /// [`request_body`](Self::request_body), asking for a stream.
    pub fn stream_body(&self, request: &LlmRequest<'_>) -> AgentResult<Value> {
        self.body(request, true)
    }

    /// The body [`body`](Self::body) makes, as the bytes sent: written by the provider
    /// itself when nothing is added after its fields (no output schema, no escape-hatch
    /// fields), else the map serialized.
    fn body_bytes(&self, request: &LlmRequest<'_>, stream: bool) -> AgentResult<Bytes> {
        if request.output.is_none() && self.params.is_empty() && request.params.is_empty() {
            let settings = self.settings.merge(request.settings);
            if settings.extra.is_empty()
                && let Some(bytes) =
                    self.provider
                        .body_bytes(&self.model, request, &settings, stream)
            {
                return bytes.map(Bytes::from);
            }
        }
        let body = self.body(request, stream)?;
        let bytes = serde_json::to_vec(&body).map_err(|e| LlmError::BadRequest {
            message: format!("{}: cannot serialize the request: {e}", P::NAME),
        })?;
        Ok(Bytes::from(bytes))
    }

    /// The headers of a request that needs one beyond the client's own, else `None`
    /// (every request's headers, shared).
    fn request_headers(&self, request: &LlmRequest<'_>) -> Option<reqwest::header::HeaderMap> {
        let (name, value) = self.provider.request_header(request)?;
        Some(self.transport.headers_with(name, value))
    }

    fn body(&self, request: &LlmRequest<'_>, stream: bool) -> AgentResult<Value> {
        let mut settings = self.settings.merge(request.settings);
        let with_answer: Vec<Arc<ToolDefinition>>;
        let request = match request.output {
            Some(output) if !self.provider.has_structured_output() => {
                with_answer = request
                    .tools
                    .iter()
                    .cloned()
                    .chain([Arc::new(output.as_tool())])
                    .collect();
                // With no other tool to call, the answer tool is the only way to answer.
                if request.tools.is_empty() && settings.tool_choice.is_none() {
                    settings.tool_choice =
                        Some(ToolChoice::Tool(OutputSchema::ANSWER_TOOL.to_owned()));
                }
                request.with_tools(&with_answer)
            }
            _ => *request,
        };
        let mut body = self
            .provider
            .body(&self.model, &request, &settings, stream)?;
        if let Some(output) = request.output
            && self.provider.has_structured_output()
        {
            self.provider.insert_output(&mut body, output)?;
        }
        // Escape hatches, later ones winning: settings, the client's, this turn's.
        let extra = settings
            .extra
            .iter()
            .chain(&self.params)
            .chain(request.params);
        for (key, value) in extra {
            body.insert(key.clone(), value.clone());
        }
        Ok(Value::Object(body))
    }

    /// The model's message in a whole answer `body`, its arguments mapped back through
    /// the client's dialect for the tools `request` offered.
    pub fn parse_response(
        &self,
        request: &LlmRequest<'_>,
        body: &Value,
    ) -> AgentResult<AssistantMessage> {
        let message = self.provider.parse_response(request, body)?;
        Ok(self.final_answer(request, message))
    }

    /// Whether answers to `request` come as a call of the final-answer tool.
    fn answers_by_tool(&self, request: &LlmRequest<'_>) -> bool {
        request.output.is_some() && !self.provider.has_structured_output()
    }

    /// The answer to a request with an output schema, as the schema's own shape: a
    /// call of the final-answer tool becomes the message's text (its arguments), and
    /// the message calls nothing (the answer ends the run); JSON in the dialect's shape
    /// (a strict dialect's `null` for an optional property) is mapped back.
    fn final_answer(
        &self,
        request: &LlmRequest<'_>,
        mut message: AssistantMessage,
    ) -> AssistantMessage {
        let Some(output) = request.output else {
            return message;
        };
        if self.answers_by_tool(request)
            && let Some(at) = message
                .tool_calls
                .iter()
                .position(|c| c.name == OutputSchema::ANSWER_TOOL)
        {
            let call = message.tool_calls.swap_remove(at);
            message.text = Some(match call.arguments {
                Value::String(raw) => raw,
                other => other.to_string(),
            });
            message.tool_calls.clear();
        }
        if message.is_final()
            && let Some(Ok(answer)) = message.text.as_deref().map(serde_json::from_str::<Value>)
        {
            let answer = self
                .provider
                .dialect()
                .normalize_arguments(&output.as_tool(), answer);
            message.text = Some(answer.to_string());
        }
        message
    }
}

#[async_trait]
impl<P: Provider> LlmClient for Client<P> {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        let body = self.body_bytes(&request, false)?;
        let headers = self.request_headers(&request);
        let response = self
            .transport
            .post_json(&self.url, body, headers.as_ref())
            .await?;
        self.parse_response(&request, &response)
    }

    fn stream<'a>(&'a self, request: LlmRequest<'a>) -> LlmStream<'a> {
        let out = Assembler::new(self.provider.dialect(), &callable(&request));
        let start = async move {
            let body = self.body_bytes(&request, true).map_err(|e| match e {
                AgentError::Model(e) => e,
                other => LlmError::BadRequest {
                    message: format!("{}: {other}", P::NAME),
                },
            })?;
            let headers = self.request_headers(&request);
            let response = self
                .transport
                .post_for_stream(&self.stream_url, body, headers.as_ref())
                .await?;
            let parser = self.provider.stream_parser();
            let events = events(P::NAME, response.bytes_stream(), parser, out);
            if request.output.is_none() {
                return Ok(events);
            }
            Ok(events
                .map(move |event| match event {
                    Ok(LlmEvent::Done { message, .. }) => {
                        let message = self.final_answer(&request, message);
                        let finish_reason = if message.is_final() {
                            FinishReason::Stop
                        } else {
                            FinishReason::ToolCalls
                        };
                        Ok(LlmEvent::Done {
                            finish_reason,
                            message,
                        })
                    }
                    other => other,
                })
                .boxed())
        };
        futures::stream::once(start)
            .flat_map(|started: Result<LlmStream<'a>, LlmError>| match started {
                Ok(events) => events,
                Err(error) => futures::stream::iter([Err(error)]).boxed(),
            })
            .boxed()
    }

    fn model_name(&self) -> Option<&str> {
        Some(&self.model)
    }

    fn provider_name(&self) -> Option<&str> {
        Some(P::NAME)
    }

    fn native_tool_search(&self) -> bool {
        self.provider.native_tool_search()
    }
}

impl<P: Provider> Client<P> {
    /// The events of a streamed answer whose bytes come from elsewhere (a recording, a
    /// proxy, a test): `bytes` parsed as [`stream`](LlmClient::stream) parses the
    /// provider's answer to `request`, with the same events and errors.
    pub fn parse_stream<'a, S, E>(&self, request: &LlmRequest<'a>, bytes: S) -> LlmStream<'static>
    where
        S: futures::Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let out = Assembler::new(self.provider.dialect(), &callable(request));
        events(P::NAME, bytes, self.provider.stream_parser(), out)
    }
}

struct Reading {
    provider: &'static str,
    sse: BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
    parser: Box<dyn StreamParser>,
    out: Assembler,
    over: bool,
}

/// The events of a streamed answer: each SSE event through the provider's parser, then
/// [`Done`](toolwright_core::llm::LlmEvent::Done), or a typed error after the events received.
fn events<S, E>(
    provider: &'static str,
    bytes: S,
    parser: Box<dyn StreamParser>,
    out: Assembler,
) -> LlmStream<'static>
where
    S: futures::Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let sse = sse_stream::SseStream::new(EventPieces::new(bytes)).boxed();
    let reading = Reading {
        provider,
        sse,
        parser,
        out,
        over: false,
    };
    futures::stream::unfold(reading, |mut r| async move {
        loop {
            if let Some(event) = r.out.next_event() {
                return Some((Ok(event), r));
            }
            if r.over {
                return None;
            }
            if r.out.is_terminated() {
                // Read what already arrived after the end marker (the body's end), so
                // the connection goes back to the pool instead of being closed: a
                // caller stops reading at `Done`.
                while let Some(Some(_)) = r.sse.next().now_or_never() {}
                r.over = true;
                r.out.complete();
                continue;
            }
            let failure = match r.sse.next().await {
                Some(Ok(event)) => {
                    let Some(data) = event.data.as_deref() else {
                        continue;
                    };
                    match r.parser.event(event.event.as_deref(), data, &mut r.out) {
                        Ok(()) => continue,
                        Err(error) => error,
                    }
                }
                Some(Err(error)) => broken(
                    &r.out,
                    format!("{}: the stream broke off: {error}", r.provider),
                ),
                // Some servers close without an end marker once the model finished.
                None if r.out.has_finished() => {
                    r.out.terminate();
                    continue;
                }
                None => broken(
                    &r.out,
                    format!(
                        "{}: the stream ended before the answer was complete",
                        r.provider
                    ),
                ),
            };
            r.over = true;
            // A bad event breaks the stream, keeping what came before it.
            let failure = match failure {
                LlmError::InvalidResponse { message } => broken(&r.out, message),
                other => other,
            };
            return Some((Err(failure), r));
        }
    })
    .boxed()
}

/// The body's bytes cut after each event's blank line, so that an event is parsed and
/// handed on as soon as its bytes are in: the SSE parser reads a whole piece before it
/// yields the piece's first event, and a piece carrying many events (a proxy's buffer, a
/// fast model) would hold the first delta back until all of them were parsed. Cutting
/// [`Bytes`] copies nothing. It is the SSE parser's body itself, so that no adapter
/// stands between the bytes and the parser.
struct EventPieces<S> {
    bytes: Pin<Box<S>>,
    /// What arrived and was not handed on yet.
    rest: Bytes,
    /// The bytes ended: the reader looks once more after the end, for what came after
    /// the end marker.
    ended: bool,
}

impl<S> EventPieces<S> {
    fn new(bytes: S) -> Self {
        Self {
            bytes: Box::pin(bytes),
            rest: Bytes::new(),
            ended: false,
        }
    }
}

impl<S, E> http_body::Body for EventPieces<S>
where
    S: futures::Stream<Item = Result<Bytes, E>>,
{
    type Data = Bytes;
    type Error = E;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, E>>> {
        let this = &mut *self;
        loop {
            if !this.rest.is_empty() {
                let end = event_end(&this.rest).unwrap_or(this.rest.len());
                return Poll::Ready(Some(Ok(http_body::Frame::data(this.rest.split_to(end)))));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            match ready!(this.bytes.as_mut().poll_next(cx)) {
                Some(Ok(chunk)) => this.rest = chunk,
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                None => {
                    this.ended = true;
                    return Poll::Ready(None);
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended && self.rest.is_empty()
    }
}

/// Where the first event in `bytes` ends: after its blank line (`\n\n` or `\n\r\n`).
fn event_end(bytes: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'\n', bytes).find_map(|at| match &bytes[at + 1..] {
        [b'\n', ..] => Some(at + 2),
        [b'\r', b'\n', ..] => Some(at + 3),
        _ => None,
    })
}

fn broken(out: &Assembler, message: String) -> LlmError {
    LlmError::BrokenStream {
        message,
        partial: Box::new(out.partial()),
    }
}

impl<P: Provider> fmt::Debug for Client<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct(P::CLIENT_NAME)
            .field("url", &self.url.as_str())
            .field("model", &self.model)
            .field("dialect", &self.provider.dialect())
            .finish_non_exhaustive()
    }
}

/// Configures a [`Client`]; [`build`](Self::build) makes it. Each provider's client
/// has its own constructor (`OpenAiClient::builder(..)`...) and may add settings of its
/// own.
#[must_use]
#[derive(Clone)]
pub struct Builder<P: Provider> {
    pub(crate) provider: P,
    pub(crate) model: String,
    pub(crate) base_url: String,
    pub(crate) api_key: Option<String>,
    timeout: Duration,
    retry: RetryPolicy,
    headers: Vec<(String, String)>,
    params: Map<String, Value>,
    settings: ModelSettings,
    http_client: Option<reqwest::Client>,
}

impl<P: Provider> Builder<P> {
    pub(crate) fn new(provider: P, model: String, base_url: &str, api_key: Option<String>) -> Self {
        Self {
            provider,
            model,
            base_url: base_url.to_owned(),
            api_key,
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::DEFAULT,
            headers: Vec::new(),
            params: Map::new(),
            settings: ModelSettings::default(),
            http_client: None,
        }
    }

    /// The API's base URL (each client's docs say what it includes).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The API key.
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
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

    /// A header sent with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A field added to every request body as it is, e.g. `("top_p", 0.9)`. It
    /// overrides a field the client sets.
    pub fn param(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.params.insert(key.into(), value.into());
        self
    }

    /// Model settings for every request (a request's own settings override them field
    /// by field).
    pub fn settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Sends requests through this HTTP client (its TLS, proxy and pool settings)
    /// instead of one the builder makes. The builder's own uses
    /// [`tls_config`](crate::tls_config): rustls with the `ring` crypto provider,
    /// configured for itself, nothing installed process-wide. reqwest is built here
    /// without a crypto provider of its own, so a client of yours needs a TLS config
    /// too (`tls_backend_preconfigured(toolwright_llm::tls_config()?)`, or your own).
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// The client. Fails when the base URL is not an http(s) URL, a header is invalid,
    /// or the HTTP client cannot be built.
    pub fn build(mut self) -> AgentResult<Client<P>> {
        let base_url = self.base_url.trim_end_matches('/');
        // Caught here rather than at the first request, where it would read as a
        // connection failure.
        if !reqwest::Url::parse(base_url).is_ok_and(|url| matches!(url.scheme(), "http" | "https"))
        {
            return Err(LlmError::Other {
                message: format!(
                    "{}: the base URL `{base_url}` is not an absolute http:// or https:// URL",
                    P::NAME
                ),
            }
            .into());
        }
        self.provider.prepare(base_url);
        let url = Endpoint::new(self.provider.url(base_url, &self.model, false));
        let stream_url = Endpoint::new(self.provider.url(base_url, &self.model, true));
        let mut headers = self.provider.headers(self.api_key.as_deref());
        headers.extend(self.headers);
        let headers = header_map(P::NAME, headers)?;
        Ok(Client {
            provider: self.provider,
            transport: Transport::new(
                P::NAME,
                self.http_client,
                headers,
                self.timeout,
                self.retry,
            )?,
            model: self.model,
            url,
            stream_url,
            params: self.params,
            settings: self.settings,
        })
    }
}

impl<P: Provider> fmt::Debug for Builder<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

/// A malformed-answer error with an excerpt of `body`.
pub(crate) fn malformed(provider: &str, what: &str, body: &Value) -> LlmError {
    LlmError::InvalidResponse {
        message: format!(
            "{provider}: malformed answer: {what}: {}",
            excerpt(body.to_string().as_bytes())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_end_after_their_blank_line() {
        assert_eq!(event_end(b"data: a\n\ndata: b\n\n"), Some(9));
        assert_eq!(event_end(b"data: a\r\n\r\ndata: b"), Some(11));
        assert_eq!(event_end(b"data: a\ndata: b\n"), None);
        assert_eq!(event_end(b"data: a\n"), None);
        assert_eq!(event_end(b""), None);
    }

    #[test]
    fn pieces_are_whole_events_and_lose_nothing() {
        let chunks = ["data: a\n\ndata: b\r\n\r\nda", "", "ta: c\n\n"]
            .map(|c| Ok::<_, std::io::Error>(Bytes::from_static(c.as_bytes())));
        let body = EventPieces::new(futures::stream::iter(chunks));
        let pieces: Vec<Bytes> = http_body_util::BodyDataStream::new(body)
            .map(Result::unwrap)
            .collect::<Vec<_>>()
            .now_or_never()
            .unwrap();
        let expected = ["data: a\n\n", "data: b\r\n\r\n", "da", "ta: c\n\n"];
        assert_eq!(pieces, expected.map(|p| Bytes::from_static(p.as_bytes())));
    }
}
