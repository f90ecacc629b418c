//! `AnthropicClient` against a local server replaying Messages API wire format.

mod common;

use common::{
    MockServer, Reply, assert_mentions, assert_replies_fail, assert_run_answers, complete_error,
    definitions, fast_retry, usage,
};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use toolwright_core::{
    Content, LlmClient, Message, RunState,
    dialect::Dialect,
    llm::{AssistantMessage, LlmRequest, ToolCall, ToolResultMessage},
};
use toolwright_llm::{AnthropicClient, RetryPolicy};

fn client(server: &MockServer) -> AnthropicClient {
    AnthropicClient::builder("claude-test")
        .api_key("sk-ant-test")
        .base_url(&server.url)
        .max_tokens(1024)
        .retry(fast_retry(3))
        .build()
        .unwrap()
}

/// A message exactly as the API sends it.
fn message(content: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_01Aq9w938a90dw8q",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": 472,
            "cache_creation_input_tokens": 20,
            "cache_read_input_tokens": 8,
            "output_tokens": 91,
            "service_tier": "standard"
        }
    })
}

fn error_body(kind: &str, text: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": kind, "message": text},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"
    })
}

#[tokio::test]
async fn a_single_tool_use_with_headers_system_and_tools() {
    let server = MockServer::start([Reply::json(
        200,
        message(
            json!([
                {"type": "text", "text": "I'll check the weather in Paris."},
                {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {"city": "Paris", "days": null}}
            ]),
            "tool_use",
        ),
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
    assert_eq!(
        answer.text.as_deref(),
        Some("I'll check the weather in Paris.")
    );
    // `null` for the optional `days` means absent.
    assert_eq!(
        answer.tool_calls,
        [ToolCall::new(
            "toolu_01A09q90qw90lq917835lq9",
            "get_weather",
            json!({"city": "Paris"})
        )]
    );
    // Cache reads and writes are prompt tokens too.
    assert_eq!(answer.usage, Some(usage(500, 91, 8, 0)));

    let sent = server.only_request();
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    let rendered: Vec<Value> = tools
        .iter()
        .map(|t| Dialect::Anthropic.render(t).unwrap())
        .collect();
    assert_eq!(
        sent.body,
        json!({
            "model": "claude-test",
            "max_tokens": 1024,
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}
            ],
            "tools": rendered,
        })
    );
    let weather = &sent.body["tools"][0];
    assert_eq!(weather["name"], "get_weather");
    assert_eq!(
        weather["description"],
        "Get the weather forecast for a city."
    );
    assert_eq!(weather["input_schema"]["type"], "object");
    assert_eq!(weather["input_schema"]["required"], json!(["city"]));
}

#[tokio::test]
async fn parallel_tool_uses_keep_their_order() {
    let server = MockServer::start([Reply::json(
        200,
        message(
            json!([
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris", "days": 2}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {"city": "Tokyo"}}
            ]),
            "tool_use",
        ),
    )])
    .await;
    let tools = definitions();
    let messages = [Message::user("Paris weather, Tokyo time?")];
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    assert_eq!(answer.text, None);
    assert_eq!(
        answer.tool_calls,
        [
            ToolCall::new(
                "toolu_1",
                "get_weather",
                json!({"city": "Paris", "days": 2})
            ),
            ToolCall::new("toolu_2", "get_time", json!({"city": "Tokyo"})),
        ]
    );
}

#[tokio::test]
async fn a_text_answer_keeps_thinking_out_of_its_text() {
    let server = MockServer::start([Reply::json(
        200,
        message(
            json!([
                {"type": "thinking", "thinking": "The user wants...", "signature": "EqQBCgIYAhIM"},
                {"type": "text", "text": "Sunny, "},
                {"type": "text", "text": "21°C."}
            ]),
            "end_turn",
        ),
    )])
    .await;
    let messages = [Message::user("Weather?")];
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("Sunny, 21°C."));
    assert!(answer.is_final());
    assert_eq!(
        answer.provider_blocks,
        [json!({"type": "thinking", "thinking": "The user wants...", "signature": "EqQBCgIYAhIM"})]
    );
    assert!(server.only_request().body.get("tools").is_none());
}

#[tokio::test]
async fn tool_results_share_one_user_message_with_is_error() {
    let server = MockServer::start([Reply::json(
        200,
        message(json!([{"type": "text", "text": "Done."}]), "end_turn"),
    )])
    .await;
    let tools = definitions();
    let messages = [
        Message::system("Be brief."),
        Message::user("Paris weather and Tokyo time?"),
        Message::Assistant(AssistantMessage {
            text: Some("Checking.".into()),
            tool_calls: vec![
                ToolCall::new("toolu_1", "get_weather", json!({"city": "Paris"})),
                ToolCall::new("toolu_2", "get_time", json!({"city": "Tokyo"})),
            ],
            ..AssistantMessage::default()
        }),
        Message::Tool(ToolResultMessage {
            call_id: "toolu_1".into(),
            name: "get_weather".into(),
            content: vec![
                Content::text("Paris: 21°C, sunny"),
                Content::image("iVBORw0KGgo=", "image/png"),
            ],
            is_error: false,
        }),
        Message::Tool(ToolResultMessage {
            call_id: "toolu_2".into(),
            name: "get_time".into(),
            content: vec![Content::text(
                r#"{"error":"tool `get_time` timed out after 5000ms","kind":"timeout"}"#,
            )],
            is_error: true,
        }),
        Message::system("Answer in French."),
        Message::user("And in French?"),
    ];
    client(&server)
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    let sent = server.only_request();
    assert_eq!(sent.body["system"], "Be brief.\n\nAnswer in French.");
    assert_eq!(
        sent.body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Paris weather and Tokyo time?"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {"city": "Tokyo"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                    {"type": "text", "text": "Paris: 21°C, sunny"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
                ]},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [
                    {"type": "text", "text": "{\"error\":\"tool `get_time` timed out after 5000ms\",\"kind\":\"timeout\"}"}
                ]},
                {"type": "text", "text": "And in French?"}
            ]}
        ])
    );
}

#[tokio::test]
async fn an_agent_runs_tools_and_answers() {
    let server = MockServer::start([
        Reply::json(
            200,
            message(
                json!([
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris", "days": null}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {"town": "Paris"}}
                ]),
                "tool_use",
            ),
        ),
        Reply::json(
            200,
            message(
                json!([{"type": "text", "text": "21°C and sunny."}]),
                "end_turn",
            ),
        ),
    ])
    .await;
    assert_run_answers(client(&server), "Weather in Paris?", "21°C and sunny.").await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    let results = last["content"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{last:#}");
    assert_eq!(results[0]["tool_use_id"], "toolu_1");
    assert_eq!(results[0]["content"][0]["text"], "Paris: 21°C, sunny");
    assert!(results[0].get("is_error").is_none());
    assert_eq!(results[1]["tool_use_id"], "toolu_2");
    assert_eq!(results[1]["is_error"], true);
    let error: Value =
        serde_json::from_str(results[1]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(error["kind"], "invalid_arguments", "{error}");
}

#[tokio::test]
async fn a_400_quotes_the_providers_message_and_request_id() {
    let server = MockServer::start([Reply::json(
        400,
        error_body(
            "invalid_request_error",
            "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12",
        ),
    )
    .header("request-id", "req_011CSHoEeqs5C35K2UUqR7Fy")])
    .await;
    let error = complete_error(&client(&server), "Hi").await;
    assert!(error.starts_with("anthropic: HTTP 400"), "{error}");
    assert_mentions(
        &error,
        &[
            "(invalid_request_error)",
            "JSON schema is invalid",
            "req_011CSHoEeqs5C35K2UUqR7Fy",
        ],
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_401_is_not_retried() {
    let server = MockServer::start([Reply::json(
        401,
        error_body("authentication_error", "invalid x-api-key"),
    )])
    .await;
    let error = complete_error(&client(&server), "Hi").await;
    assert_mentions(&error, &["HTTP 401", "invalid x-api-key"]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn rate_limits_and_overload_are_retried() {
    let server = MockServer::start([
        Reply::json(
            429,
            error_body(
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
            ),
        )
        .header("retry-after", "0"),
        Reply::json(529, error_body("overloaded_error", "Overloaded")),
        Reply::json(
            200,
            message(json!([{"type": "text", "text": "Done."}]), "end_turn"),
        ),
    ])
    .await;
    let messages = [Message::user("Hi")];
    let start = Instant::now();
    let answer = client(&server)
        .complete(LlmRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("Done."));
    assert_eq!(server.requests().len(), 3);
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn server_errors_exhaust_the_attempts() {
    let failure = Reply::json(500, error_body("api_error", "Internal server error"));
    let server = MockServer::start([failure.clone(), failure.clone(), failure.clone()]).await;
    let model = AnthropicClient::builder("m")
        .api_key("k")
        .base_url(&server.url)
        .retry(fast_retry(2))
        .build()
        .unwrap();
    let error = complete_error(&model, "Hi").await;
    assert!(error.contains("HTTP 500"), "{error}");
    assert!(
        error.contains("(api_error): Internal server error"),
        "{error}"
    );
    assert!(error.contains("after 2 attempts"), "{error}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn malformed_bodies_are_clear_errors() {
    let cases = [
        (
            Reply::raw(200, r#"{"id": "msg_1", "content": [{"type": "te"#),
            "not valid JSON",
        ),
        (Reply::raw(200, ""), "not valid JSON"),
        (
            Reply::json(200, json!({"id": "msg_1", "type": "message"})),
            "no `content` array",
        ),
        (
            Reply::json(
                200,
                message(json!([{"type": "tool_use", "input": {}}]), "tool_use"),
            ),
            "without `id` or `name`",
        ),
        (
            Reply::json(200, message(json!([{"text": "hi"}]), "end_turn")),
            "without `type`",
        ),
        (
            Reply::json(200, error_body("overloaded_error", "Overloaded")),
            "(overloaded_error) Overloaded",
        ),
    ];
    assert_replies_fail(cases, "anthropic: ", |url| {
        AnthropicClient::builder("m")
            .api_key("k")
            .base_url(url)
            .retry(RetryPolicy::NEVER)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn strict_tools_use_the_strict_dialect_and_extra_headers() {
    let server = MockServer::start([Reply::json(
        200,
        message(json!([{"type": "text", "text": "ok"}]), "end_turn"),
    )])
    .await;
    let model = AnthropicClient::builder("m")
        .api_key("k")
        .base_url(format!("{}/", server.url))
        .strict_tools(true)
        .header("anthropic-beta", "structured-outputs-2025-11-13")
        .param("temperature", 0)
        .build()
        .unwrap();
    let tools = definitions();
    let messages = [Message::user("Hi")];
    model
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    let sent = server.only_request();
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(
        sent.header("anthropic-beta"),
        Some("structured-outputs-2025-11-13")
    );
    assert_eq!(sent.body["temperature"], 0);
    assert_eq!(
        sent.body["tools"][0],
        Dialect::AnthropicStrict.render(&tools[0]).unwrap()
    );
    assert_eq!(sent.body["tools"][0]["strict"], true);
}

#[test]
fn debug_output_never_shows_the_key() {
    let builder = AnthropicClient::builder("m").api_key("sk-ant-secret");
    assert!(!format!("{builder:?}").contains("sk-ant-secret"));
    let model = builder.build().unwrap();
    assert!(!format!("{model:?}").contains("sk-ant-secret"));
    assert_eq!(model.url(), "https://api.anthropic.com/v1/messages");
}

#[test]
fn a_turns_params_override_the_clients() {
    let model = AnthropicClient::builder("claude-test")
        .api_key("k")
        .param("temperature", 0.7)
        .build()
        .unwrap();
    let mut turn = serde_json::Map::new();
    turn.insert("tool_choice".into(), json!({"type": "any"}));
    turn.insert("temperature".into(), json!(0));
    let messages = [Message::user("Hi")];
    let body = model
        .request_body(&LlmRequest::new(&messages, &[]).with_params(&turn))
        .unwrap();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], AnthropicClient::DEFAULT_MAX_TOKENS);
    assert_eq!(body["temperature"], 0);
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
}

/// A model client with extended thinking on, as a user enables it.
fn thinking_client() -> AnthropicClient {
    AnthropicClient::builder("claude-test")
        .api_key("k")
        .param(
            "thinking",
            json!({"type": "enabled", "budget_tokens": 2048}),
        )
        .build()
        .unwrap()
}

/// The conversation after `answer` called get_weather (as `toolu_1`) and got its result.
fn after_the_weather(answer: AssistantMessage) -> Vec<Message> {
    vec![
        Message::user("Paris weather?"),
        Message::Assistant(answer),
        Message::Tool(ToolResultMessage {
            call_id: "toolu_1".into(),
            name: "get_weather".into(),
            content: vec![Content::text("21°C")],
            is_error: false,
        }),
    ]
}

/// `model`'s answer to "Paris weather?" from `response`.
fn parse_paris_answer(model: &AnthropicClient, response: &Value) -> AssistantMessage {
    let first = [Message::user("Paris weather?")];
    model
        .parse_response(&LlmRequest::new(&first, &definitions()), response)
        .unwrap()
}

/// The body `model` sends next, once `answer`'s get_weather call has its result.
fn request_after_the_weather(model: &AnthropicClient, answer: AssistantMessage) -> Value {
    let messages = after_the_weather(answer);
    model
        .request_body(&LlmRequest::new(&messages, &definitions()))
        .unwrap()
}

#[test]
fn thinking_blocks_go_back_first_and_unchanged_with_the_tool_use_they_preceded() {
    let model = thinking_client();
    let thinking = json!({"type": "thinking", "thinking": "I should call get_weather.", "signature": "EqQBCgIYAhIM"});
    let response = message(
        json!([
            thinking,
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
        ]),
        "tool_use",
    );
    let answer = parse_paris_answer(&model, &response);
    assert_eq!(answer.provider_blocks, std::slice::from_ref(&thinking));
    let body = request_after_the_weather(&model, answer);
    // The API answers 400 unless the tool_use turn starts with its thinking, signature
    // included.
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            thinking,
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
        ]})
    );
}

#[test]
fn redacted_thinking_blocks_go_back_with_their_data_in_their_order() {
    let model = thinking_client();
    let thinking =
        json!({"type": "thinking", "thinking": "Weather first.", "signature": "EqQBCgIYAhIM"});
    let redacted = json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"});
    let response = message(
        json!([
            redacted,
            thinking,
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
        ]),
        "tool_use",
    );
    let answer = parse_paris_answer(&model, &response);
    assert_eq!(answer.text.as_deref(), Some("Checking."));
    assert_eq!(answer.provider_blocks, [redacted.clone(), thinking.clone()]);
    let body = request_after_the_weather(&model, answer);
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            redacted,
            thinking,
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
        ])
    );
}

#[test]
fn thinking_alone_is_not_sent_back() {
    // An answer cut off while thinking has nothing else; the API refuses an assistant
    // turn whose last block is thinking, so the turn is left out as an empty one is.
    let model = thinking_client();
    let response = message(
        json!([{"type": "thinking", "thinking": "Hmm", "signature": "EqQBCgIYAhIM"}]),
        "max_tokens",
    );
    let first = [Message::user("Hi")];
    let answer = model
        .parse_response(&LlmRequest::new(&first, &[]), &response)
        .unwrap();
    assert_eq!(answer.provider_blocks.len(), 1);
    let messages = [
        Message::user("Hi"),
        Message::Assistant(answer),
        Message::user("Go on."),
    ];
    let body = model
        .request_body(&LlmRequest::new(&messages, &[]))
        .unwrap();
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "Hi"},
            {"type": "text", "text": "Go on."}
        ]}])
    );
}

#[test]
fn a_saved_run_keeps_its_thinking_blocks_and_older_saves_still_load() {
    let model = thinking_client();
    let tools = definitions();
    let thinking = json!({"type": "thinking", "thinking": "I should call get_weather.", "signature": "EqQBCgIYAhIM"});
    let redacted = json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"});
    let answer = AssistantMessage {
        provider_blocks: vec![thinking.clone(), redacted.clone()],
        ..AssistantMessage::tool_calls([ToolCall::new(
            "toolu_1",
            "get_weather",
            json!({"city": "Paris"}),
        )])
    };
    let state = RunState::new(after_the_weather(answer.clone()));

    let saved = serde_json::to_value(&state).unwrap();
    assert_eq!(
        saved["messages"][1]["provider_blocks"],
        json!([thinking, redacted])
    );
    let restored: RunState = serde_json::from_value(saved.clone()).unwrap();
    assert_eq!(restored, state);
    let body = model
        .request_body(&LlmRequest::new(&restored.messages, &tools))
        .unwrap();
    assert_eq!(body["messages"][1]["content"][0], thinking);
    assert_eq!(body["messages"][1]["content"][1], redacted);

    // A run saved before the field existed has none, and a message without blocks
    // saves none.
    let mut older = saved;
    older["messages"][1]
        .as_object_mut()
        .unwrap()
        .remove("provider_blocks");
    let restored: RunState = serde_json::from_value(older).unwrap();
    let Message::Assistant(restored_answer) = &restored.messages[1] else {
        panic!(
            "expected the assistant's message, got {:?}",
            restored.messages[1]
        );
    };
    assert!(restored_answer.provider_blocks.is_empty());
    assert_eq!(restored_answer.tool_calls, answer.tool_calls);
    let plain = serde_json::to_value(AssistantMessage::text("done")).unwrap();
    assert_eq!(plain, json!({"text": "done"}));
}

#[test]
fn only_thinking_blocks_go_back_from_provider_blocks() {
    // A conversation may hold blocks another client kept; Anthropic would refuse them.
    let thinking = json!({"type": "thinking", "thinking": "Weather.", "signature": "EqQBCgIYAhIM"});
    let answer = AssistantMessage {
        provider_blocks: vec![json!({"type": "reasoning", "id": "rs_1"}), thinking.clone()],
        ..AssistantMessage::tool_calls([ToolCall::new(
            "toolu_1",
            "get_weather",
            json!({"city": "Paris"}),
        )])
    };
    let body = request_after_the_weather(&thinking_client(), answer);
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            thinking,
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
        ])
    );
}
