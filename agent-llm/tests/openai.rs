//! `OpenAiClient` against a local server replaying Chat Completions wire format.

mod common;

use common::{
    MockServer, Reply, assert_mentions, assert_replies_fail, assert_run_answers, complete_error,
    definitions, fast_retry, usage,
};
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use toolwright_core::{
    AgentError, Content, LlmClient, Message, ModelSettings,
    dialect::Dialect,
    llm::{AssistantMessage, LlmRequest, ToolCall, ToolChoice, ToolResultMessage},
};
use toolwright_llm::{OpenAiClient, RetryPolicy};

fn client(server: &MockServer) -> OpenAiClient {
    OpenAiClient::builder("gpt-test")
        .base_url(format!("{}/v1/", server.url))
        .api_key("sk-test")
        .retry(fast_retry(3))
        .build()
        .unwrap()
}

/// A chat completion exactly as the API sends it, with `message` as the choice's message.
fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason
        }],
        "usage": {
            "prompt_tokens": 82,
            "completion_tokens": 17,
            "total_tokens": 99,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0
            }
        },
        "service_tier": "default",
        "system_fingerprint": "fp_06737a9306"
    })
}

fn tool_calls(calls: &[(&str, &str, &str)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": calls, "refusal": null, "annotations": []}),
        "tool_calls",
    )
}

fn text(answer: &str) -> Value {
    completion(
        json!({"role": "assistant", "content": answer, "refusal": null, "annotations": []}),
        "stop",
    )
}

#[tokio::test]
async fn a_single_tool_call_with_strict_tools_and_arguments_mapped_back() {
    let server = MockServer::start([Reply::json(
        200,
        tool_calls(&[("call_Aa1", "get_weather", r#"{"city":"Paris","days":null}"#)]),
    )])
    .await;
    let tools = definitions();
    let messages = [
        Message::system("Be brief."),
        Message::user("Weather in Paris?"),
    ];
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();

    // The strict dialect's `null` for the optional `days` is absent again.
    assert_eq!(
        answer.tool_calls,
        [ToolCall::new(
            "call_Aa1",
            "get_weather",
            json!({"city": "Paris"})
        )]
    );
    assert_eq!(answer.text, None);
    assert_eq!(answer.usage, Some(usage(82, 17, 0, 0)));

    let sent = server.only_request();
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    let rendered: Vec<Value> = tools
        .iter()
        .map(|t| Dialect::OpenAiStrict.render(t).unwrap())
        .collect();
    assert_eq!(
        sent.body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"}
            ],
            "tools": rendered,
        })
    );
    // What strict mode looks like on the wire.
    let weather = &sent.body["tools"][0];
    assert_eq!(weather["type"], "function");
    assert_eq!(weather["function"]["name"], "get_weather");
    assert_eq!(weather["function"]["strict"], true);
    assert_eq!(
        weather["function"]["parameters"]["required"],
        json!(["city", "days"])
    );
    assert_eq!(
        weather["function"]["parameters"]["additionalProperties"],
        false
    );
}

#[tokio::test]
async fn parallel_tool_calls_keep_their_order_and_ids() {
    let server = MockServer::start([Reply::json(
        200,
        tool_calls(&[
            ("call_1", "get_weather", r#"{"city":"Paris","days":2}"#),
            ("call_2", "get_time", r#"{"city":"Tokyo"}"#),
            ("call_3", "get_weather", r#"{"city":"Oslo","days":null}"#),
        ]),
    )])
    .await;
    let tools = definitions();
    let messages = [Message::user("Paris, Tokyo, Oslo?")];
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    assert_eq!(
        answer.tool_calls,
        [
            ToolCall::new("call_1", "get_weather", json!({"city": "Paris", "days": 2})),
            ToolCall::new("call_2", "get_time", json!({"city": "Tokyo"})),
            ToolCall::new("call_3", "get_weather", json!({"city": "Oslo"})),
        ]
    );
}

#[tokio::test]
async fn a_text_answer() {
    let server = MockServer::start([Reply::json(200, text("Sunny, 21°C."))]).await;
    let messages = [Message::user("Weather?")];
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("Sunny, 21°C."));
    assert!(answer.is_final());
    // No tools offered: no `tools` field (OpenAI refuses an empty array).
    assert!(server.only_request().body.get("tools").is_none());
}

#[tokio::test]
async fn tool_results_and_tool_errors_are_tool_messages() {
    let server = MockServer::start([Reply::json(200, text("Paris: sunny; Tokyo: 14:05."))]).await;
    let tools = definitions();
    let messages = [
        Message::user("Paris weather and Tokyo time?"),
        Message::Assistant(AssistantMessage::tool_calls([
            ToolCall::new("call_1", "get_weather", json!({"city": "Paris"})),
            ToolCall::new("call_2", "get_time", json!({"city": "Tokyo"})),
            ToolCall::new("call_3", "get_time", json!("{\"city\": \"Osl")),
        ])),
        Message::Tool(ToolResultMessage {
            call_id: "call_1".into(),
            name: "get_weather".into(),
            content: vec![Content::text("Paris: 21°C, sunny")],
            is_error: false,
        }),
        Message::Tool(ToolResultMessage {
            call_id: "call_2".into(),
            name: "get_time".into(),
            content: vec![Content::text("service down")],
            is_error: true,
        }),
        Message::Tool(ToolResultMessage {
            call_id: "call_3".into(),
            name: "get_time".into(),
            content: vec![Content::text(
                r#"{"error":"invalid JSON","kind":"invalid_arguments"}"#,
            )],
            is_error: true,
        }),
    ];
    client(&server)
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    let sent = server.only_request();
    assert_eq!(
        sent.body["messages"],
        json!([
            {"role": "user", "content": "Paris weather and Tokyo time?"},
            // An empty `content` beside tool calls: llama-cpp-python's server refuses
            // `"content": null` and fails without `content` (HTTP 500 on every turn
            // after a tool call, seen against SmolLM2 with chatml-function-calling).
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{\"city\":\"Tokyo\"}"}},
                // Arguments that never parsed go back as the model sent them.
                {"id": "call_3", "type": "function", "function": {"name": "get_time", "arguments": "{\"city\": \"Osl"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "Paris: 21°C, sunny"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: service down"},
            {"role": "tool", "tool_call_id": "call_3", "content": "{\"error\":\"invalid JSON\",\"kind\":\"invalid_arguments\"}"}
        ])
    );
}

#[tokio::test]
async fn truncated_arguments_reach_the_runtime_as_a_string() {
    let server = MockServer::start([Reply::json(
        200,
        tool_calls(&[
            ("call_1", "get_weather", r#"{"city": "Par"#),
            ("call_2", "get_time", ""),
        ]),
    )])
    .await;
    let tools = definitions();
    let messages = [Message::user("Weather?")];
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    assert_eq!(
        answer.tool_calls[0].arguments,
        Value::String(r#"{"city": "Par"#.into())
    );
    // An empty string means no arguments.
    assert_eq!(answer.tool_calls[1].arguments, json!({}));
}

#[tokio::test]
async fn an_agent_answers_bad_arguments_with_an_error_and_goes_on() {
    let server = MockServer::start([
        Reply::json(
            200,
            tool_calls(&[
                ("call_1", "get_weather", r#"{"city": "Par"#),
                ("call_2", "get_time", r#"{"city":"Paris"}"#),
            ]),
        ),
        Reply::json(200, text("It is 14:05 in Paris.")),
    ])
    .await;
    assert_run_answers(
        client(&server),
        "Weather and time in Paris?",
        "It is 14:05 in Paris.",
    )
    .await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results.len(), 2, "{messages:#?}");
    assert_eq!(results[0]["tool_call_id"], "call_1");
    let error: Value = serde_json::from_str(results[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(error["kind"], "invalid_arguments", "{error}");
    assert_eq!(results[1]["tool_call_id"], "call_2");
    assert_eq!(results[1]["content"], "Paris: 14:05");
}

#[tokio::test]
async fn a_400_quotes_the_providers_message_and_is_not_retried() {
    let server = MockServer::start([Reply::json(
        400,
        json!({"error": {
            "message": "Invalid schema for function 'get_weather': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'days'.",
            "type": "invalid_request_error",
            "param": "tools[0].function.parameters",
            "code": "invalid_function_parameters"
        }}),
    )
    .header("x-request-id", "req_5e1b")])
    .await;
    let error = complete_error(&client(&server), "Weather?").await;
    assert!(error.starts_with("openai: HTTP 400"), "{error}");
    assert_mentions(
        &error,
        &["(invalid_request_error)", "Missing 'days'.", "req_5e1b"],
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_429_is_retried_after_the_servers_wait() {
    let server = MockServer::start([
        Reply::json(
            429,
            json!({"error": {
                "message": "Rate limit reached for gpt-4o-mini in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.",
                "type": "requests",
                "param": null,
                "code": "rate_limit_exceeded"
            }}),
        )
        .header("retry-after-ms", "60"),
        Reply::json(200, text("Done.")),
    ])
    .await;
    let messages = [Message::user("Hi")];
    let start = Instant::now();
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert!(start.elapsed() >= Duration::from_millis(60));
    assert_eq!(answer.text.as_deref(), Some("Done."));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn server_errors_exhaust_the_attempts() {
    let failure = Reply::json(
        500,
        json!({"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error", "param": null, "code": null}}),
    );
    let server =
        MockServer::start([failure.clone(), failure.clone(), failure.clone(), failure]).await;
    let error = complete_error(&client(&server), "Hi").await;
    assert_mentions(
        &error,
        &["HTTP 500", "Sorry about that!", "after 3 attempts"],
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn x_should_retry_false_stops_retries() {
    let server = MockServer::start([Reply::json(
        503,
        json!({"error": {"message": "nope", "type": "server_error"}}),
    )
    .header("x-should-retry", "false")])
    .await;
    let error = complete_error(&client(&server), "Hi").await;
    assert!(error.contains("HTTP 503"), "{error}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn malformed_bodies_are_clear_errors() {
    let cases = [
        (
            Reply::raw(200, r#"{"id": "chatcmpl-1", "choices": [{"mess"#),
            "not valid JSON",
        ),
        (
            Reply::json(200, json!({"id": "chatcmpl-1", "choices": []})),
            "no `choices[0]`",
        ),
        (Reply::json(200, json!([1, 2])), "not a JSON object"),
        (
            Reply::json(
                200,
                completion(
                    json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function"}]}),
                    "tool_calls",
                ),
            ),
            "without a `function` object",
        ),
        (
            Reply::json(
                200,
                completion(json!({"role": "assistant", "content": 42}), "stop"),
            ),
            "neither text nor null",
        ),
        (Reply::raw(502, "<html>Bad Gateway</html>"), "HTTP 502"),
    ];
    assert_replies_fail(cases, "openai: ", |url| {
        OpenAiClient::builder("m")
            .base_url(url)
            .retry(RetryPolicy::NEVER)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn a_body_cut_short_is_an_error() {
    let server =
        MockServer::start([Reply::json(200, text("Sunny.")).declared_length(10_000)]).await;
    let model = OpenAiClient::builder("m")
        .base_url(&server.url)
        .retry(RetryPolicy::NEVER)
        .build()
        .unwrap();
    let error = complete_error(&model, "Hi").await;
    assert!(error.starts_with("openai: request to"), "{error}");
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let server =
        MockServer::start([Reply::json(200, text("late")).delay(Duration::from_secs(5))]).await;
    let model = OpenAiClient::builder("m")
        .base_url(&server.url)
        .timeout(Duration::from_millis(200))
        .retry(RetryPolicy::NEVER)
        .build()
        .unwrap();
    let start = Instant::now();
    let error = complete_error(&model, "Hi").await;
    assert!(error.contains("timed out after 200ms"), "{error}");
    assert!(start.elapsed() < Duration::from_secs(3));
}

#[test]
fn a_base_url_that_is_no_http_url_is_refused_when_built_naming_it() {
    // `localhost:8080` parses as a URL of scheme `localhost`, and `v1` as none at all:
    // both would only fail at the first request, looking like a network failure.
    for base_url in ["localhost:8080/v1", "v1", "ftp://models.example/v1"] {
        let error = OpenAiClient::builder("m")
            .base_url(base_url)
            .build()
            .expect_err(base_url)
            .to_string();
        assert_mentions(
            &error,
            &[
                &format!("openai: the base URL `{base_url}`"),
                "not an absolute http:// or https:// URL",
            ],
        );
    }
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    // Bind then drop a listener: nothing listens on the port any more.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let model = OpenAiClient::builder("m")
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .retry(fast_retry(2))
        .build()
        .unwrap();
    let error = complete_error(&model, "Hi").await;
    assert_mentions(&error, &["cannot connect to", "after 2 attempts"]);
}

#[tokio::test]
async fn compatible_servers_without_key_strict_or_ids() {
    // llama.cpp-style: no call id, arguments as an object; plain (non-strict) tools.
    let server = MockServer::start([Reply::json(
        200,
        json!({
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Lyon"}}}]
            }}]
        }),
    )])
    .await;
    let model = OpenAiClient::builder("llama3.2")
        .base_url(format!("{}/v1", server.url))
        .strict_tools(false)
        .param("temperature", 0.2)
        .param("parallel_tool_calls", false)
        .build()
        .unwrap();
    assert_eq!(model.dialect(), Dialect::OpenAi);
    let tools = definitions();
    let messages = [Message::user("Lyon?")];
    let answer = model
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    assert_eq!(
        answer.tool_calls,
        [ToolCall::new(
            "call_0",
            "get_weather",
            json!({"city": "Lyon"})
        )]
    );
    assert_eq!(answer.usage, None);
    let sent = server.only_request();
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.body["temperature"], 0.2);
    assert_eq!(sent.body["parallel_tool_calls"], false);
    assert_eq!(
        sent.body["tools"][0],
        Dialect::OpenAi.render(&tools[0]).unwrap()
    );
    assert!(sent.body["tools"][0]["function"].get("strict").is_none());
}

#[tokio::test]
async fn an_error_object_in_a_200_is_an_error() {
    let server = MockServer::start([Reply::json(
        200,
        json!({"error": {"message": "model 'gpt-test' not found", "type": "not_found"}}),
    )])
    .await;
    let error = complete_error(&client(&server), "Hi").await;
    assert_eq!(error, "openai: model 'gpt-test' not found");
}

#[tokio::test]
async fn a_refusal_is_the_text() {
    let server = MockServer::start([Reply::json(
        200,
        completion(
            json!({"role": "assistant", "content": null, "refusal": "I can't help with that."}),
            "stop",
        ),
    )])
    .await;
    let messages = [Message::user("Hi")];
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("I can't help with that."));
}

#[test]
fn debug_output_never_shows_the_key() {
    let builder = OpenAiClient::builder("m").api_key("sk-secret");
    assert!(!format!("{builder:?}").contains("sk-secret"));
    let model = builder.build().unwrap();
    assert!(!format!("{model:?}").contains("sk-secret"));
    assert_eq!(model.url(), "https://api.openai.com/v1/chat/completions");
}

#[test]
fn a_turns_params_override_the_clients() {
    let model = OpenAiClient::builder("gpt-test")
        .param("temperature", 0.7)
        .param("max_completion_tokens", 512)
        .build()
        .unwrap();
    let mut turn = serde_json::Map::new();
    turn.insert("model".into(), json!("gpt-big"));
    turn.insert("temperature".into(), json!(0));
    let messages = [Message::user("Hi")];
    let body = model
        .request_body(&LlmRequest::new(&messages, &[]).with_params(&turn))
        .unwrap();
    assert_eq!(body["model"], "gpt-big");
    assert_eq!(body["temperature"], 0);
    assert_eq!(body["max_completion_tokens"], 512);
}

#[tokio::test]
async fn a_tool_that_cannot_be_strict_is_an_error_and_nothing_is_sent() {
    // Twelve levels of nested objects: deeper than strict mode's limit of ten.
    let mut schema = json!({"type": "string"});
    for _ in 0..12 {
        schema = json!({"type": "object", "properties": {"inner": schema}, "required": ["inner"]});
    }
    let deep = std::sync::Arc::new(toolwright_core::toolset::ToolDefinition {
        name: "deep".into(),
        title: None,
        description: "A tool with a deeply nested argument.".into(),
        parameters: schema,
        output_schema: None,
        annotations: Default::default(),
        ..Default::default()
    });
    let server = MockServer::start([Reply::json(200, text("unused"))]).await;
    let messages = [Message::user("Hi")];
    let result = client(&server)
        .complete(LlmRequest::new(&messages, &[deep]))
        .await;
    match result {
        Err(AgentError::InvalidTool { tool, reason }) => {
            assert_eq!(tool, "deep");
            assert!(reason.contains("openai-strict"), "{reason}");
        }
        other => panic!("expected InvalidTool, got {other:?}"),
    }
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_retry_after_beyond_the_limit_falls_back_to_the_backoff() {
    let server = MockServer::start([
        Reply::json(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}),
        )
        .header("retry-after", "3600"),
        Reply::json(200, text("Done.")),
    ])
    .await;
    let messages = [Message::user("Hi")];
    let start = Instant::now();
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("Done."));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(server.requests().len(), 2);
}

/// The body is written straight to bytes when nothing is added after the client's own
/// fields; those bytes are the map `request_body` and `stream_body` describe, key for
/// key and in order, whatever the messages, tools and settings.
#[tokio::test]
async fn the_bytes_sent_are_the_documented_body() {
    let tools = definitions();
    let messages = [
        Message::system("Be brief."),
        Message::user("Weather?"),
        Message::user_content([
            Content::text("And this?"),
            Content::image("aGk=", "image/png"),
        ]),
        Message::Assistant(AssistantMessage::tool_calls([
            ToolCall::new("call_1", "get_weather", json!({"city": "Paris"})),
            ToolCall::new("call_2", "get_time", json!("{\"city\": \"Osl")),
        ])),
        Message::Tool(ToolResultMessage {
            call_id: "call_1".into(),
            name: "get_weather".into(),
            content: vec![Content::text("sunny")],
            is_error: true,
        }),
        Message::Assistant(AssistantMessage::text("Sunny.")),
    ];
    let choices = [
        ToolChoice::Auto,
        ToolChoice::Required,
        ToolChoice::None,
        ToolChoice::Tool("get_time".into()),
    ];
    let mut settings: Vec<ModelSettings> = choices
        .into_iter()
        .map(|choice| {
            ModelSettings::new()
                .temperature(0.25)
                .max_output_tokens(64)
                .tool_choice(choice)
                .parallel_tool_calls(false)
                .stop_sequences(["END"])
                .seed(7)
        })
        .collect();
    settings.push(ModelSettings::new());
    for field in [None, Some("max_completion_tokens")] {
        for settings in &settings {
            for offered in [&tools[..], &[]] {
                let replies = [
                    Reply::json(200, text("ok")),
                    Reply::sse(
                        &format!(
                            "data: {}\n\ndata: [DONE]\n\n",
                            common::chat_chunk(json!({"content": "ok"}), json!("stop"))
                        ),
                        7,
                    ),
                ];
                let server = MockServer::start(replies).await;
                let mut builder = OpenAiClient::builder("gpt-test")
                    .base_url(format!("{}/v1", server.url))
                    .retry(fast_retry(1));
                if let Some(field) = field {
                    builder = builder.max_tokens_field(field);
                }
                let client = builder.build().unwrap();
                let request = LlmRequest::new(&messages, offered).with_settings(settings);
                client.complete(request).await.unwrap();
                let events: Vec<_> = client.stream(request).collect().await;
                assert!(events.iter().all(Result::is_ok), "{events:?}");
                let sent = server.requests();
                let expected = [
                    client.request_body(&request).unwrap(),
                    client.stream_body(&request).unwrap(),
                ];
                assert_eq!(sent.len(), 2);
                for (sent, expected) in sent.iter().zip(expected) {
                    assert_eq!(
                        String::from_utf8_lossy(&sent.raw),
                        serde_json::to_string(&expected).unwrap()
                    );
                }
            }
        }
    }
}
