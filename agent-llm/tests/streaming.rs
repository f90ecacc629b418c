//! Every client's `stream` against a local server speaking the provider's real
//! streaming wire format, its bytes cut at awkward places; and streams that break.

mod common;

use common::{
    MockServer, Reply, chat_chunk, definitions, done_message, drain, fast_retry, sse_events,
    streamed, streamed_text, usage,
};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime};
use toolwright_core::{
    LlmClient, Message,
    llm::{FinishReason, LlmError, LlmEvent, LlmRequest, ToolCall},
};
use toolwright_llm::{
    AnthropicClient, GeminiClient, OpenAiClient, OpenAiResponsesClient, RetryPolicy,
};

fn openai(server: &MockServer, retry: RetryPolicy) -> OpenAiClient {
    OpenAiClient::builder("gpt-test")
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .retry(retry)
        .build()
        .unwrap()
}

fn anthropic(server: &MockServer) -> AnthropicClient {
    AnthropicClient::builder("claude-test")
        .api_key("sk-ant-test")
        .base_url(&server.url)
        .retry(fast_retry(1))
        .build()
        .unwrap()
}

fn gemini(server: &MockServer) -> GeminiClient {
    GeminiClient::builder("gemini-test")
        .api_key("g-key")
        .base_url(&server.url)
        .retry(fast_retry(1))
        .build()
        .unwrap()
}

fn responses(server: &MockServer) -> OpenAiResponsesClient {
    OpenAiResponsesClient::builder("gpt-test")
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .retry(fast_retry(1))
        .build()
        .unwrap()
}

fn question() -> Vec<Message> {
    vec![
        Message::system("Be brief."),
        Message::user("Weather in Paris, time in Tokyo?"),
    ]
}

fn call_piece(index: u64, head: Option<(&str, &str)>, arguments: &str) -> String {
    let mut call = json!({"index": index, "function": {"arguments": arguments}});
    if let Some((id, name)) = head {
        call["id"] = json!(id);
        call["type"] = json!("function");
        call["function"]["name"] = json!(name);
    }
    chat_chunk(json!({"tool_calls": [call]}), Value::Null)
}

/// A Chat Completions stream: text, two tool calls whose arguments come over many
/// chunks, the finish reason, a usage-only chunk, then `[DONE]`.
fn openai_stream() -> String {
    let mut data = vec![
        chat_chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            Value::Null,
        ),
        chat_chunk(json!({"content": "Let me "}), Value::Null),
        chat_chunk(json!({"content": "check ☀."}), Value::Null),
        call_piece(0, Some(("call_A", "get_weather")), ""),
    ];
    for piece in ["{\"ci", "ty\": \"Par", "is\", \"da", "ys\": null}"] {
        data.push(call_piece(0, None, piece));
    }
    data.push(call_piece(1, Some(("call_B", "get_time")), ""));
    for piece in ["{\"city\":", "\"Tokyo\"}"] {
        data.push(call_piece(1, None, piece));
    }
    data.push(chat_chunk(json!({}), json!("tool_calls")));
    data.push(
        json!({
            "id": "chatcmpl-AbC", "object": "chat.completion.chunk", "created": 1741570283,
            "model": "gpt-4o-mini-2024-07-18", "choices": [],
            "usage": {
                "prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99,
                "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 5, "audio_tokens": 0}
            }
        })
        .to_string(),
    );
    data.push("[DONE]".to_owned());
    sse_events(data.into_iter().map(|d| (None, d)))
}

fn expected_calls() -> Vec<ToolCall> {
    vec![
        // The strict dialect's `null` for the optional `days` is absent again.
        ToolCall::new("call_A", "get_weather", json!({"city": "Paris"})),
        ToolCall::new("call_B", "get_time", json!({"city": "Tokyo"})),
    ]
}

#[tokio::test]
async fn openai_chunks_split_mid_json_make_text_calls_and_usage() {
    for every in [4, 7, 64] {
        let server = MockServer::start([Reply::sse(&openai_stream(), every)]).await;
        let tools = definitions();
        let messages = question();
        let client = openai(&server, fast_retry(1));
        let (events, error) = drain(client.stream(LlmRequest::new(&messages, &tools))).await;
        assert_eq!(error, None, "split every {every} bytes");
        assert_eq!(streamed_text(&events), "Let me check ☀.");
        let starts: Vec<(usize, &str)> = events
            .iter()
            .filter_map(|e| match e {
                LlmEvent::ToolCallStart { index, name, .. } => Some((*index, name.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(starts, [(0, "get_weather"), (1, "get_time")]);
        let arguments: String = events
            .iter()
            .filter_map(|e| match e {
                LlmEvent::ToolCallDelta {
                    index: 0,
                    arguments,
                } => Some(arguments.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(arguments, "{\"city\": \"Paris\", \"days\": null}");
        let usage = usage(82, 17, 64, 5);
        assert!(events.contains(&LlmEvent::Usage { usage }));
        let (reason, message) = done_message(&events);
        assert_eq!(reason, FinishReason::ToolCalls);
        assert_eq!(message.text.as_deref(), Some("Let me check ☀."));
        assert_eq!(message.tool_calls, expected_calls());
        assert_eq!(message.usage, Some(usage));

        let sent = server.only_request();
        assert_eq!(sent.path, "/v1/chat/completions");
        assert_eq!(sent.body["stream"], true);
        assert_eq!(sent.body["stream_options"], json!({"include_usage": true}));
    }
}

#[tokio::test]
async fn complete_and_stream_agree() {
    let server = MockServer::start([Reply::sse(&openai_stream(), 13)]).await;
    let tools = definitions();
    let messages = question();
    let client = openai(&server, fast_retry(1));
    let message =
        toolwright_core::llm::collect_stream(client.stream(LlmRequest::new(&messages, &tools)))
            .await
            .unwrap();
    assert_eq!(message.tool_calls, expected_calls());
}

#[tokio::test]
async fn a_stream_cut_mid_event_keeps_what_arrived() {
    let full = openai_stream();
    // Cut inside the third tool-argument chunk: no finish reason, no [DONE].
    let cut = full.find("is\\\", \\\"da").unwrap() + 3;
    let server = MockServer::start([Reply::sse(&full[..cut], 11)]).await;
    let tools = definitions();
    let messages = question();
    let client = openai(&server, fast_retry(3));
    let (events, error) = drain(client.stream(LlmRequest::new(&messages, &tools))).await;
    assert_eq!(streamed_text(&events), "Let me check ☀.");
    match error {
        Some(LlmError::BrokenStream { message, partial }) => {
            assert!(
                message.contains("ended before the answer was complete"),
                "{message}"
            );
            assert_eq!(partial.text.as_deref(), Some("Let me check ☀."));
            // The call was still open: its start and first arguments were delivered.
            assert!(partial.tool_calls.is_empty());
        }
        other => panic!("expected a broken stream, got {other:?}"),
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, LlmEvent::ToolCallStart { .. }))
    );
    // A stream that broke after it began is not sent again.
    assert_eq!(server.requests().len(), 1);
}

/// The client's timeout bounds the whole request, the streamed answer included, on its
/// own HTTP client and on a caller's: a model that stalls after its first words ends
/// the stream with an error once the timeout is up, keeping those words.
#[tokio::test]
async fn a_stream_that_stalls_past_the_timeout_breaks_keeping_what_arrived() {
    let hello = sse_events([(None, chat_chunk(json!({"content": "Hello"}), Value::Null))]);
    let rest = sse_events([(None, chat_chunk(json!({"content": " world"}), Value::Null))]);
    let body = format!("{hello}{rest}");
    for own_http_client in [true, false] {
        let reply = Reply::sse(&body, hello.len()).stall(1, Duration::from_secs(5));
        let server = MockServer::start([reply]).await;
        let mut builder = OpenAiClient::builder("gpt-test")
            .base_url(format!("{}/v1", server.url))
            .timeout(Duration::from_millis(400))
            .retry(fast_retry(3));
        if !own_http_client {
            let http = reqwest::Client::builder()
                .tls_backend_preconfigured(toolwright_llm::tls_config().unwrap())
                .build()
                .unwrap();
            builder = builder.http_client(http);
        }
        let client = builder.build().unwrap();
        let messages = question();
        let start = std::time::Instant::now();
        let (events, error) = drain(client.stream(LlmRequest::new(&messages, &[]))).await;
        let elapsed = start.elapsed();
        assert_eq!(streamed_text(&events), "Hello");
        match error {
            Some(LlmError::BrokenStream { message, partial }) => {
                assert!(message.contains("the stream broke off"), "{message}");
                assert_eq!(partial.text.as_deref(), Some("Hello"));
            }
            other => panic!("expected a broken stream, got {other:?}"),
        }
        assert!(
            elapsed >= Duration::from_millis(400) && elapsed < Duration::from_secs(3),
            "{elapsed:?}"
        );
        // A stream that broke after it began is not sent again.
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn invalid_json_in_an_event_is_a_broken_stream_after_the_good_events() {
    let body = sse_events([
        (None, chat_chunk(json!({"content": "Hello"}), Value::Null)),
        (
            None,
            "{\"choices\": [{\"delta\": {\"content\": \"x\"".to_owned(),
        ),
        (None, chat_chunk(json!({"content": " world"}), Value::Null)),
    ]);
    assert_breaks_after_hello(&body, "not valid JSON").await;
}

/// Streams `body` (Chat Completions events) and asserts that it streamed "Hello",
/// then broke with a message containing `needle`, keeping the "Hello".
async fn assert_breaks_after_hello(body: &str, needle: &str) {
    let server = MockServer::start([Reply::sse(body, 5)]).await;
    let messages = question();
    let client = openai(&server, fast_retry(1));
    let (events, error) = drain(client.stream(LlmRequest::new(&messages, &[]))).await;
    assert_eq!(streamed_text(&events), "Hello");
    match error {
        Some(LlmError::BrokenStream { message, partial }) => {
            assert!(message.contains(needle), "{message}");
            assert_eq!(partial.text.as_deref(), Some("Hello"));
        }
        other => panic!("expected a broken stream, got {other:?}"),
    }
}

/// Only the first choice is read: later ones are skipped, a `null` list is no choice,
/// and a list that is not one is a broken stream naming the expected shape.
#[tokio::test]
async fn only_the_first_choice_of_a_chunk_is_read() {
    let body = sse_events([
        (
            None,
            json!({"choices": [
                {"index": 0, "delta": {"content": "Hello"}},
                {"index": 1, "delta": {"content": "other"}},
                {"index": 2, "delta": {"content": {"not": "text"}}}
            ]})
            .to_string(),
        ),
        (None, json!({"choices": null}).to_string()),
        (None, json!({"choices": {"delta": {}}}).to_string()),
    ]);
    assert_breaks_after_hello(&body, "an array of choices or null").await;
}

#[tokio::test]
async fn a_429_before_the_stream_is_retried_after_the_servers_wait() {
    let server = MockServer::start([
        Reply::json(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
        )
        .header("retry-after", "0"),
        Reply::sse(&openai_stream(), 32),
    ])
    .await;
    let tools = definitions();
    let messages = question();
    let client = openai(&server, fast_retry(3));
    let (events, error) = drain(client.stream(LlmRequest::new(&messages, &tools))).await;
    assert_eq!(error, None);
    assert_eq!(done_message(&events).1.tool_calls, expected_calls());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_429_with_an_http_date_is_rate_limited_with_the_wait() {
    let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
    let server = MockServer::start([Reply::json(
        429,
        json!({"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}),
    )
    .header("retry-after", &later)])
    .await;
    let messages = question();
    let client = openai(&server, RetryPolicy::NEVER);
    let (events, error) = drain(client.stream(LlmRequest::new(&messages, &[]))).await;
    assert!(events.is_empty());
    match error {
        Some(LlmError::RateLimited {
            message,
            retry_after: Some(wait),
        }) => {
            assert!(
                message.contains("Rate limit reached for requests"),
                "{message}"
            );
            assert!(
                wait > Duration::from_secs(115) && wait <= Duration::from_secs(120),
                "{wait:?}"
            );
        }
        other => panic!("expected a rate limit with a wait, got {other:?}"),
    }
}

#[tokio::test]
async fn a_500_is_a_server_error_after_the_attempts() {
    let failure = || {
        Reply::json(
            500,
            json!({"error": {"message": "The server had an error", "type": "server_error"}}),
        )
        .header("retry-after", "0")
    };
    let server = MockServer::start([failure(), failure()]).await;
    let messages = question();
    let client = openai(&server, fast_retry(2));
    let (_, error) = drain(client.stream(LlmRequest::new(&messages, &[]))).await;
    match error {
        Some(LlmError::Server { status, message }) => {
            assert_eq!(status, 500);
            assert!(message.contains("The server had an error"), "{message}");
            assert!(message.contains("after 2 attempts"), "{message}");
        }
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[tokio::test]
async fn errors_are_typed_for_complete_too() {
    let server = MockServer::start([
        Reply::json(401, json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})),
        Reply::json(400, json!({"error": {"message": "This model's maximum context length is 128000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}})),
    ])
    .await;
    let messages = question();
    let client = openai(&server, fast_retry(1));
    let kind = |result: toolwright_core::AgentResult<_>| match result {
        Err(toolwright_core::AgentError::Model(error)) => error.kind(),
        other => panic!("expected a model error, got {other:?}"),
    };
    let request = LlmRequest::new(&messages, &[]);
    assert_eq!(kind(client.complete(request).await), "authentication");
    assert_eq!(kind(client.complete(request).await), "context_too_long");
}

/// An Anthropic Messages stream: `message_start`, `ping`, thinking with its
/// signature, text, a tool_use whose input comes in pieces, `message_delta`,
/// `message_stop`.
fn anthropic_stream(end: bool) -> String {
    let mut events: Vec<(Option<&str>, Value)> = vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 472, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 8, "output_tokens": 1}
            }}),
        ),
        (Some("ping"), json!({"type": "ping"})),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants "}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "the weather."}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Checking "}}),
        ),
        (Some("ping"), json!({"type": "ping"})),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Paris."}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}}),
        ),
    ];
    for piece in ["", "{\"city\"", ": \"Par", "is\"}"] {
        events.push((Some("content_block_delta"), json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": piece}})));
    }
    if end {
        events.extend([
            (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 2})),
            (Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 91}})),
            (Some("message_stop"), json!({"type": "message_stop"})),
        ]);
    }
    sse_events(events.into_iter().map(|(n, d)| (n, d.to_string())))
}

#[tokio::test]
async fn anthropic_events_with_ping_thinking_and_message_delta() {
    let server = MockServer::start([Reply::sse(&anthropic_stream(true), 9)]).await;
    let tools = definitions();
    let messages = question();
    let client = anthropic(&server);
    let (events, error) = drain(client.stream(LlmRequest::new(&messages, &tools))).await;
    assert_eq!(error, None);
    assert_eq!(streamed_text(&events), "Checking Paris.");
    let thinking: String = events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::ThinkingDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "The user wants the weather.");
    let (reason, message) = done_message(&events);
    assert_eq!(reason, FinishReason::ToolCalls);
    assert_eq!(
        message.tool_calls,
        [ToolCall::new(
            "toolu_01",
            "get_weather",
            json!({"city": "Paris"})
        )]
    );
    // The thinking goes back whole, signature included, as the API requires.
    assert_eq!(
        message.provider_blocks,
        [
            json!({"type": "thinking", "thinking": "The user wants the weather.", "signature": "EqQBCgIYAhIM"})
        ]
    );
    assert_eq!(message.usage, Some(usage(500, 91, 8, 0)));
    let sent = server.only_request();
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.body["stream"], true);
}

#[tokio::test]
async fn an_anthropic_error_event_is_typed_and_keeps_the_text() {
    let mut body = anthropic_stream(false);
    body.push_str(&sse_events([(
        Some("error"),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            .to_string(),
    )]));
    let server = MockServer::start([Reply::sse(&body, 17)]).await;
    let tools = definitions();
    let messages = question();
    let client = anthropic(&server);
    let (events, error) = drain(client.stream(LlmRequest::new(&messages, &tools))).await;
    assert_eq!(streamed_text(&events), "Checking Paris.");
    match error {
        Some(LlmError::Server { message, .. }) => assert!(message.contains("Overloaded")),
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// Gemini's `alt=sse` form: each event a whole `GenerateContentResponse`.
fn gemini_stream() -> String {
    let candidate = |parts: Value, finish: Option<&str>| {
        let mut c = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(finish) = finish {
            c["finishReason"] = json!(finish);
        }
        c
    };
    let events = [
        json!({"candidates": [candidate(json!([{"text": "It is "}]), None)], "modelVersion": "gemini-test"}),
        json!({"candidates": [candidate(json!([{"text": "sunny."}]), None)]}),
        json!({
            "candidates": [candidate(json!([
                {"functionCall": {"name": "get_time", "args": {"city": "Tokyo"}}, "thoughtSignature": "c2lnbmF0dXJl"}
            ]), Some("STOP"))],
            "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 12, "thoughtsTokenCount": 30, "cachedContentTokenCount": 16, "totalTokenCount": 82}
        }),
    ];
    // Gemini separates events with CRLF pairs.
    sse_events(events.iter().map(|e| (None, e.to_string()))).replace('\n', "\r\n")
}

#[tokio::test]
async fn gemini_sse_with_a_function_call() {
    let server = MockServer::start([Reply::sse(&gemini_stream(), 6)]).await;
    let tools = definitions();
    let messages = question();
    let client = gemini(&server);
    let (text, reason, message) = streamed(client.stream(LlmRequest::new(&messages, &tools))).await;
    assert_eq!(text, "It is sunny.");
    assert_eq!(reason, FinishReason::ToolCalls);
    assert_eq!(
        message.tool_calls,
        [ToolCall::new(
            "call_0",
            "get_time",
            json!({"city": "Tokyo"})
        )]
    );
    assert_eq!(message.usage, Some(usage(40, 42, 16, 30)));
    let sent = server.only_request();
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    );
    assert_eq!(sent.header("x-goog-api-key"), Some("g-key"));
    assert_eq!(
        sent.body["systemInstruction"],
        json!({"parts": [{"text": "Be brief."}]})
    );
    assert_eq!(
        sent.body["contents"],
        json!([{"role": "user", "parts": [{"text": "Weather in Paris, time in Tokyo?"}]}])
    );

    // The signed part goes back as it came, signature and all.
    let mut history = messages.clone();
    history.push(Message::Assistant(message));
    let contents = client
        .request_body(&LlmRequest::new(&history, &tools))
        .unwrap()["contents"]
        .clone();
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [
            {"functionCall": {"name": "get_time", "args": {"city": "Tokyo"}}, "thoughtSignature": "c2lnbmF0dXJl"}
        ]})
    );
}

/// A Responses API stream: typed events, text deltas, a function call whose arguments
/// come in pieces, `response.completed` with the usage.
fn responses_stream() -> String {
    let events = [
        json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "One "}),
        json!({"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "moment."}),
        json!({"type": "response.output_item.done", "sequence_number": 4, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "One moment.", "annotations": []}]}}),
        json!({"type": "response.output_item.added", "sequence_number": 5, "output_index": 1, "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "call_id": "call_R", "name": "get_weather", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 6, "item_id": "fc_1", "output_index": 1, "delta": "{\"city\":\"Pa"}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 7, "item_id": "fc_1", "output_index": 1, "delta": "ris\",\"days\":2}"}),
        json!({"type": "response.function_call_arguments.done", "sequence_number": 8, "item_id": "fc_1", "output_index": 1, "arguments": "{\"city\":\"Paris\",\"days\":2}"}),
        json!({"type": "response.output_item.done", "sequence_number": 9, "output_index": 1, "item": {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_R", "name": "get_weather", "arguments": "{\"city\":\"Paris\",\"days\":2}"}}),
        json!({"type": "response.completed", "sequence_number": 10, "response": {"id": "resp_1", "status": "completed", "output": [], "usage": {
            "input_tokens": 90, "input_tokens_details": {"cached_tokens": 10},
            "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 120
        }}}),
    ];
    sse_events(events.iter().map(|e| (e["type"].as_str(), e.to_string())))
}

#[tokio::test]
async fn openai_responses_events_with_a_function_call() {
    let server = MockServer::start([Reply::sse(&responses_stream(), 10)]).await;
    let tools = definitions();
    let messages = question();
    let client = responses(&server);
    let (text, reason, message) = streamed(client.stream(LlmRequest::new(&messages, &tools))).await;
    assert_eq!(text, "One moment.");
    assert_eq!(reason, FinishReason::ToolCalls);
    assert_eq!(
        message.tool_calls,
        [ToolCall::new(
            "call_R",
            "get_weather",
            json!({"city": "Paris", "days": 2})
        )]
    );
    assert_eq!(message.usage, Some(usage(90, 30, 10, 12)));
    let sent = server.only_request();
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.body["instructions"], "Be brief.");
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["tools"][0]["type"], "function");
    assert_eq!(sent.body["tools"][0]["name"], "get_weather");
    assert_eq!(sent.body["tools"][0]["strict"], true);
}

#[tokio::test]
async fn clients_that_cannot_stream_replay_their_answer() {
    let llm = toolwright_core::testing::ScriptedLlm::new([
        toolwright_core::llm::AssistantMessage::tool_calls([ToolCall::new(
            "c1",
            "get_time",
            json!({"city": "Oslo"}),
        )]),
    ]);
    let messages = question();
    let (events, error) = drain(llm.stream(LlmRequest::new(&messages, &[]))).await;
    assert_eq!(error, None);
    assert!(matches!(
        events[0],
        LlmEvent::ToolCallStart { index: 0, .. }
    ));
    let (reason, message) = done_message(&events);
    assert_eq!(reason, FinishReason::ToolCalls);
    assert_eq!(message.tool_calls[0].name, "get_time");
    // And a failure is an error event.
    let (events, error) = drain(llm.stream(LlmRequest::new(&messages, &[]))).await;
    assert!(events.is_empty());
    assert!(error.unwrap().message().contains("no more answers"));
}
