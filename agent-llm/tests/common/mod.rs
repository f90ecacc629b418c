//! A scripted HTTP/1.1 server on 127.0.0.1 for the adapter tests: it answers each
//! request with the next reply of its script, in the provider's exact wire format, and
//! records what the client sent.

#![allow(dead_code)]

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use toolwright_core::{
    AgentResult, ToolContext, ToolSet, async_trait, tool::TypedTool, toolset::ToolDefinition,
};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
    /// A `Content-Length` larger than the body, to cut the body short.
    declared_length: Option<usize>,
    /// A streamed body: these pieces, each written and flushed apart, then the
    /// connection closed.
    pieces: Option<Vec<Vec<u8>>>,
    /// A pause in a streamed body: after this many pieces, this long.
    stall: Option<(usize, Duration)>,
}

impl Reply {
    /// A JSON answer.
    pub fn json(status: u16, body: Value) -> Self {
        Self::raw(status, &body.to_string())
    }

    /// An answer with `body` as it is, labelled JSON.
    pub fn raw(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_owned(),
            delay: Duration::ZERO,
            declared_length: None,
            pieces: None,
            stall: None,
        }
    }

    /// A server-sent event stream whose bytes arrive `every` bytes at a time, so that
    /// pieces end in the middle of lines, JSON objects and UTF-8 characters.
    pub fn sse(body: &str, every: usize) -> Self {
        let pieces = body
            .as_bytes()
            .chunks(every.max(1))
            .map(<[u8]>::to_vec)
            .collect();
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: String::new(),
            delay: Duration::ZERO,
            declared_length: None,
            pieces: Some(pieces),
            stall: None,
        }
    }

    /// The same answer with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same answer, sent after `delay`.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// The same streamed answer pausing for `pause` after its first `pieces` pieces, as
    /// a model that stalls.
    pub fn stall(mut self, pieces: usize, pause: Duration) -> Self {
        self.stall = Some((pieces, pause));
        self
    }

    /// The same answer announcing `length` bytes and closing after fewer.
    pub fn declared_length(mut self, length: usize) -> Self {
        self.declared_length = Some(length);
        self
    }
}

/// What the client sent.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lowercased.
    pub headers: HashMap<String, String>,
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub body: Value,
    /// The body's bytes as sent.
    pub raw: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// The server; it stops when dropped.
pub struct MockServer {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl MockServer {
    /// Starts a server answering with `replies`, in order; past the script it answers
    /// 599 so that a test sending too many requests fails visibly.
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let replies = Arc::new(Mutex::new(replies.into_iter().collect::<VecDeque<_>>()));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let replies = replies.clone();
                let recorded = recorded.clone();
                tokio::spawn(async move {
                    let _ = serve(stream, replies, recorded).await;
                });
            }
        });
        Self {
            url,
            requests,
            task,
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// The only request received; panics when there were more or none.
    pub fn only_request(&self) -> Recorded {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "expected one request: {requests:#?}");
        requests.into_iter().next().unwrap()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: TcpStream,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(end) = find(&buffer, b"\r\n\r\n") {
            break end;
        }
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_owned();
    let path = request_line.next().unwrap_or_default().to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    recorded.lock().unwrap().push(Recorded {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: body,
    });
    let reply =
        replies.lock().unwrap().pop_front().unwrap_or_else(|| {
            Reply::raw(599, "{\"error\": \"the mock server's script is over\"}")
        });
    tokio::time::sleep(reply.delay).await;
    if let Some(pieces) = reply.pieces {
        let mut head = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
        for (name, value) in &reply.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("connection: close\r\n\r\n");
        stream.write_all(head.as_bytes()).await?;
        for (at, piece) in pieces.into_iter().enumerate() {
            if let Some((after, pause)) = reply.stall
                && at == after
            {
                tokio::time::sleep(pause).await;
            }
            stream.write_all(&piece).await?;
            stream.flush().await?;
            // Apart in time, so the client reads them apart.
            tokio::time::sleep(Duration::from_micros(300)).await;
        }
        return stream.shutdown().await;
    }
    let mut response = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
    for (name, value) in &reply.headers {
        response.push_str(&format!("{name}: {value}\r\n"));
    }
    let length = reply.declared_length.unwrap_or(reply.body.len());
    response.push_str(&format!(
        "content-length: {length}\r\nconnection: close\r\n\r\n{}",
        reply.body
    ));
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `get_weather`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WeatherArgs {
    /// City name, e.g. "Paris"
    city: String,
    /// Days ahead; today when absent
    days: Option<u8>,
}

/// Gets the weather forecast for a city.
pub struct GetWeather;

#[async_trait]
impl TypedTool for GetWeather {
    type Args = WeatherArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "get_weather"
    }

    fn description(&self) -> &'static str {
        "Get the weather forecast for a city."
    }

    async fn call_typed(&self, args: WeatherArgs, _ctx: &ToolContext) -> AgentResult<String> {
        Ok(match args.days {
            Some(days) => format!("{} in {days} days: 18°C, cloudy", args.city),
            None => format!("{}: 21°C, sunny", args.city),
        })
    }
}

/// `get_time`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeArgs {
    /// City name
    city: String,
}

/// Gets the local time in a city.
pub struct GetTime;

#[async_trait]
impl TypedTool for GetTime {
    type Args = TimeArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "get_time"
    }

    fn description(&self) -> &'static str {
        "Get the local time in a city."
    }

    async fn call_typed(&self, args: TimeArgs, _ctx: &ToolContext) -> AgentResult<String> {
        Ok(format!("{}: 14:05", args.city))
    }
}

/// The tools the tests offer.
pub fn toolset() -> ToolSet {
    let mut set = ToolSet::new();
    set.register_tool(GetWeather).unwrap();
    set.register_tool(GetTime).unwrap();
    set
}

/// The definitions of [`toolset`], as the runtime offers them.
pub fn definitions() -> Vec<Arc<ToolDefinition>> {
    let set = toolset();
    ["get_weather", "get_time"]
        .into_iter()
        .map(|name| set.definition(name).unwrap().clone())
        .collect()
}

/// Server-sent events: each `(event name, data)` as `event:` and `data:` lines and a
/// blank line (no `event:` line for `None`).
pub fn sse_events<'a>(events: impl IntoIterator<Item = (Option<&'a str>, String)>) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out
}

/// Reads a whole stream: the events before the end or the first error, and the error.
pub async fn drain(
    mut stream: toolwright_core::llm::LlmStream<'_>,
) -> (
    Vec<toolwright_core::llm::LlmEvent>,
    Option<toolwright_core::llm::LlmError>,
) {
    use futures::StreamExt;
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

/// The text of every text delta, joined.
pub fn streamed_text(events: &[toolwright_core::llm::LlmEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            toolwright_core::llm::LlmEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The message of the stream's `Done` event.
pub fn done_message(
    events: &[toolwright_core::llm::LlmEvent],
) -> (
    toolwright_core::llm::FinishReason,
    toolwright_core::llm::AssistantMessage,
) {
    match events.last() {
        Some(toolwright_core::llm::LlmEvent::Done {
            finish_reason,
            message,
        }) => (finish_reason.clone(), message.clone()),
        other => panic!("the last event is not Done: {other:?}"),
    }
}

/// Retries with waits of a few milliseconds, so retry tests run fast.
pub fn fast_retry(max_attempts: u32) -> toolwright_llm::RetryPolicy {
    toolwright_llm::RetryPolicy {
        max_attempts,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
        max_retry_after: Duration::from_secs(1),
    }
}

/// The usage `(input, output, cached input, reasoning)` tokens.
pub fn usage(input: u64, output: u64, cached: u64, reasoning: u64) -> toolwright_core::llm::Usage {
    toolwright_core::llm::Usage {
        input_tokens: input,
        output_tokens: output,
        cached_input_tokens: cached,
        reasoning_tokens: reasoning,
    }
}

/// The model error's text, or a panic saying what came instead.
pub fn llm_error(
    result: Result<toolwright_core::llm::AssistantMessage, toolwright_core::AgentError>,
) -> String {
    match result {
        Err(toolwright_core::AgentError::Model(error)) => error.to_string(),
        other => panic!("expected AgentError::Model, got {other:?}"),
    }
}

/// The error text of asking `client` to complete `question` with no tools.
pub async fn complete_error(client: &dyn toolwright_core::LlmClient, question: &str) -> String {
    let messages = [toolwright_core::Message::user(question)];
    llm_error(
        client
            .complete(toolwright_core::llm::LlmRequest::new(&messages, &[]))
            .await,
    )
}

/// A stream read to its end without an error: its text deltas joined, and its `Done`
/// event's finish reason and message.
pub async fn streamed(
    stream: toolwright_core::llm::LlmStream<'_>,
) -> (
    String,
    toolwright_core::llm::FinishReason,
    toolwright_core::llm::AssistantMessage,
) {
    let (events, error) = drain(stream).await;
    assert_eq!(error, None);
    let (reason, message) = done_message(&events);
    (streamed_text(&events), reason, message)
}

/// One Chat Completions chunk with `delta` and `finish_reason`, as the API streams it.
pub fn chat_chunk(delta: Value, finish_reason: Value) -> String {
    serde_json::json!({
        "id": "chatcmpl-AbC", "object": "chat.completion.chunk", "created": 1741570283,
        "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_06737a9306",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        "usage": null
    })
    .to_string()
}

/// Asserts that `body` has each field of `expected` with its value.
#[track_caller]
pub fn assert_fields(body: &Value, expected: Value) {
    for (key, value) in expected
        .as_object()
        .expect("the expected fields are an object")
    {
        assert_eq!(&body[key], value, "field `{key}`");
    }
}

/// Runs an agent over `model` with the test tools on `question`, and asserts that the
/// run finished with `answer`.
pub async fn assert_run_answers(
    model: impl toolwright_core::LlmClient + 'static,
    question: &str,
    answer: &str,
) {
    let agent = toolwright_core::Agent::builder(model)
        .tools(toolset())
        .build()
        .unwrap();
    let mut state = agent.start(question);
    let outcome = agent.run(&mut state).await.unwrap();
    assert_eq!(
        outcome,
        toolwright_core::RunOutcome::Finished {
            answer: answer.into()
        }
    );
}

/// Asserts that an error's text mentions each of `parts`.
#[track_caller]
pub fn assert_mentions(error: &str, parts: &[&str]) {
    for part in parts {
        assert!(error.contains(part), "{part:?} not in {error}");
    }
}

/// For each `(reply, text)`: a client built by `client` for a server answering `reply`
/// fails to complete, with an error that starts with `prefix` and mentions `text`.
pub async fn assert_replies_fail<C: toolwright_core::LlmClient>(
    cases: impl IntoIterator<Item = (Reply, &str)>,
    prefix: &str,
    client: impl Fn(&str) -> C,
) {
    for (reply, text) in cases {
        let server = MockServer::start([reply]).await;
        let error = complete_error(&client(&server.url), "Hi").await;
        assert!(error.starts_with(prefix), "{error}");
        assert_mentions(&error, &[text]);
    }
}
