//! A tool's own options in each provider's wire format: its input examples (sent as
//! Anthropic's `input_examples`, left out by the providers without such a field) and
//! its own strict-mode choice (`#[tool(strict)]`, `strict = false`), which OpenAI and
//! Anthropic honour per tool over the client's default, and Gemini ignores.

mod common;

use common::{MockServer, Reply, fast_retry};
use serde_json::{Value, json};
use std::sync::Arc;
use toolwright_core::{
    LlmClient, Message, ToolSet,
    dialect::Dialect,
    llm::{AssistantMessage, LlmRequest},
    tool, tools,
    toolset::ToolDefinition,
};
use toolwright_llm::{
    AnthropicClient, Builder, Client, GeminiClient, OpenAiClient, OpenAiResponsesClient, Provider,
};

/// Forecast for a city.
#[tool(example(city = "Paris", days = 3), example(city = "Oslo"))]
async fn forecast(city: String, days: Option<u8>) -> String {
    format!("{city}: sunny for {} days", days.unwrap_or(1))
}

/// Move money between two accounts.
#[tool(strict)]
async fn transfer(from: String, to: String, cents: u64, memo: Option<String>) -> String {
    format!(
        "moved {cents} from {from} to {to} ({})",
        memo.unwrap_or_default()
    )
}

/// Search the notes.
#[tool(strict = false)]
async fn search(query: String, limit: Option<u32>) -> String {
    format!("{query}: {} hits", limit.unwrap_or(0))
}

fn set() -> ToolSet {
    tools![forecast, transfer, search]
}

fn definitions() -> Vec<Arc<ToolDefinition>> {
    let set = set();
    ["forecast", "transfer", "search"]
        .into_iter()
        .map(|name| set.definition(name).unwrap().clone())
        .collect()
}

/// The tool named `name` in a request body's `tools`, found by `name_of`.
fn sent_tool<'a>(body: &'a Value, name: &str, name_of: fn(&Value) -> Option<&str>) -> &'a Value {
    body["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .find(|tool| name_of(tool) == Some(name))
        .unwrap_or_else(|| panic!("no tool `{name}` in {body}"))
}

/// The name of a tool written flat (Anthropic's, and OpenAI Responses').
fn flat_name(tool: &Value) -> Option<&str> {
    tool["name"].as_str()
}

fn chat_name(tool: &Value) -> Option<&str> {
    tool["function"]["name"].as_str()
}

/// Sends one request offering the three tools and returns the body sent and the answer.
async fn exchange(server: &MockServer, client: &dyn LlmClient) -> (Value, AssistantMessage) {
    let tools = definitions();
    let messages = [Message::user("Move 5 euros to Bob")];
    let answer = client
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    (server.only_request().body, answer)
}

/// An Anthropic message calling `transfer` with `null` for its optional `memo`, as a
/// strict tool's model does.
fn anthropic_transfer_call() -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "transfer",
            "input": {"from": "alice", "to": "bob", "cents": 500, "memo": null}}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    })
}

fn anthropic(server: &MockServer, strict: Option<bool>) -> AnthropicClient {
    let builder = AnthropicClient::builder("claude-test")
        .api_key("k")
        .base_url(&server.url)
        .retry(fast_retry(1));
    match strict {
        Some(strict) => builder.strict_tools(strict),
        None => builder,
    }
    .build()
    .unwrap()
}

#[tokio::test]
async fn anthropic_sends_examples_and_makes_only_the_strict_tool_strict() {
    let server = MockServer::start([Reply::json(200, anthropic_transfer_call())]).await;
    let (body, answer) = exchange(&server, &anthropic(&server, None)).await;
    let definitions = definitions();

    let forecast = sent_tool(&body, "forecast", flat_name);
    assert_eq!(
        forecast["input_examples"],
        json!([{"city": "Paris", "days": 3}, {"city": "Oslo"}])
    );
    assert!(forecast.get("strict").is_none(), "{forecast}");

    // The client is not strict; the tool is, in the strict dialect.
    let transfer = sent_tool(&body, "transfer", flat_name);
    assert_eq!(transfer["strict"], json!(true));
    assert_eq!(
        transfer["input_schema"],
        Dialect::AnthropicStrict
            .render_parameters(&definitions[1])
            .unwrap()
    );
    assert!(transfer.get("input_examples").is_none(), "{transfer}");

    let search = sent_tool(&body, "search", flat_name);
    assert!(search.get("strict").is_none(), "{search}");

    // The strict tool's `null` for its optional comes back as absent.
    assert_eq!(
        answer.tool_calls[0].arguments,
        json!({"from": "alice", "to": "bob", "cents": 500})
    );
}

#[tokio::test]
async fn a_strict_anthropic_client_keeps_the_tool_that_says_strict_false_plain() {
    let server = MockServer::start([Reply::json(200, anthropic_transfer_call())]).await;
    let (body, _) = exchange(&server, &anthropic(&server, Some(true))).await;
    let definitions = definitions();

    let search = sent_tool(&body, "search", flat_name);
    assert!(search.get("strict").is_none(), "{search}");
    assert_eq!(
        search["input_schema"],
        Dialect::Anthropic
            .render_parameters(&definitions[2])
            .unwrap()
    );
    // The tools that do not say follow the client.
    assert_eq!(
        sent_tool(&body, "forecast", flat_name)["strict"],
        json!(true)
    );
    assert_eq!(
        sent_tool(&body, "transfer", flat_name)["strict"],
        json!(true)
    );
    // Examples are sent in either mode.
    assert_eq!(
        sent_tool(&body, "forecast", flat_name)["input_examples"],
        json!([{"city": "Paris", "days": 3}, {"city": "Oslo"}])
    );
}

/// A chat completion calling `transfer` with `null` for `memo`.
fn chat_transfer_call() -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "transfer",
                "arguments": "{\"from\":\"alice\",\"to\":\"bob\",\"cents\":500,\"memo\":null}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

/// What an OpenAI request offering the three tools carries, whatever the client's own
/// strictness: `transfer` strict (and its `null` optional mapped back to absent),
/// `search` plain, `forecast` as the client says, and no examples. `function` finds a
/// tool's function object by name.
fn assert_strict_per_tool(
    body: &Value,
    answer: &AssistantMessage,
    client_strict: bool,
    function: for<'a> fn(&'a Value, &str) -> &'a Value,
) {
    let definitions = definitions();
    let transfer = function(body, "transfer");
    assert_eq!(
        transfer["strict"],
        json!(true),
        "client strict: {client_strict}"
    );
    assert_eq!(
        transfer["parameters"],
        Dialect::OpenAiStrict
            .render_parameters(&definitions[1])
            .unwrap()
    );
    // Strict mode's nullable optional, mapped back to absent.
    assert_eq!(
        answer.tool_calls[0].arguments,
        json!({"from": "alice", "to": "bob", "cents": 500})
    );

    let search = function(body, "search");
    assert!(search.get("strict").is_none(), "{search}");
    assert_eq!(
        search["parameters"],
        Dialect::OpenAi.render_parameters(&definitions[2]).unwrap()
    );

    let forecast = function(body, "forecast");
    assert_eq!(forecast.get("strict") == Some(&json!(true)), client_strict);
    // OpenAI has no field for examples.
    assert!(!body.to_string().contains("input_examples"), "{body}");
    assert!(!body.to_string().contains("Oslo"), "{body}");
}

/// A client of `builder`'s provider sending to `server`.
fn local<P: Provider>(builder: Builder<P>, server: &MockServer) -> Client<P> {
    builder
        .api_key("k")
        .base_url(format!("{}/v1", server.url))
        .retry(fast_retry(1))
        .build()
        .unwrap()
}

#[tokio::test]
async fn openai_chat_honours_each_tools_strict_over_the_clients() {
    for client_strict in [false, true] {
        let server = MockServer::start([Reply::json(200, chat_transfer_call())]).await;
        let (body, answer) = exchange(
            &server,
            &local(
                OpenAiClient::builder("gpt-test").strict_tools(client_strict),
                &server,
            ),
        )
        .await;

        assert_strict_per_tool(&body, &answer, client_strict, |body, name| {
            &sent_tool(body, name, chat_name)["function"]
        });
    }
}

#[tokio::test]
async fn openai_responses_honours_each_tools_strict_over_the_clients() {
    let reply = json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-test",
        "output": [{"id": "fc_1", "type": "function_call", "status": "completed",
            "call_id": "call_1", "name": "transfer",
            "arguments": "{\"from\":\"alice\",\"to\":\"bob\",\"cents\":500,\"memo\":null}"}],
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    });
    for client_strict in [false, true] {
        let server = MockServer::start([Reply::json(200, reply.clone())]).await;
        let (body, answer) = exchange(
            &server,
            &local(
                OpenAiResponsesClient::builder("gpt-test").strict_tools(client_strict),
                &server,
            ),
        )
        .await;

        assert_eq!(
            sent_tool(&body, "transfer", flat_name)["type"],
            json!("function")
        );
        assert_strict_per_tool(&body, &answer, client_strict, |body, name| {
            sent_tool(body, name, flat_name)
        });
    }
}

#[tokio::test]
async fn gemini_ignores_strict_and_leaves_examples_out() {
    let server = MockServer::start([Reply::json(
        200,
        json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11}
        }),
    )])
    .await;
    let client = GeminiClient::builder("gemini-test")
        .api_key("k")
        .base_url(&server.url)
        .retry(fast_retry(1))
        .build()
        .unwrap();
    let (body, _) = exchange(&server, &client).await;
    let declarations = &body["tools"][0]["functionDeclarations"];
    // Each tool exactly as a tool without options renders: no strict schema, no field
    // for examples.
    for (index, definition) in definitions().iter().enumerate() {
        let plain = ToolDefinition {
            strict: None,
            input_examples: Vec::new(),
            ..ToolDefinition::clone(definition)
        };
        assert_eq!(
            declarations[index],
            Dialect::Gemini.render(&plain).unwrap(),
            "{}",
            definition.name
        );
    }
    assert!(!body.to_string().contains("Oslo"), "{body}");
}

/// The `anthropic-beta` header of the one request `client` sends with `tools`.
async fn anthropic_beta(tools: &[Arc<ToolDefinition>], extra: Option<&str>) -> Option<String> {
    let server = MockServer::start([Reply::json(200, anthropic_transfer_call())]).await;
    let mut builder = AnthropicClient::builder("claude-test")
        .api_key("k")
        .base_url(&server.url)
        .retry(fast_retry(1));
    if let Some(beta) = extra {
        builder = builder.header("anthropic-beta", beta);
    }
    let client = builder.build().unwrap();
    let messages = [Message::user("Move 5 euros to Bob")];
    client
        .complete(LlmRequest::new(&messages, tools))
        .await
        .unwrap();
    server
        .only_request()
        .header("anthropic-beta")
        .map(str::to_owned)
}

#[tokio::test]
async fn anthropic_requests_with_examples_carry_their_beta_and_others_do_not() {
    let beta = AnthropicClient::ADVANCED_TOOL_USE_BETA;
    let all = definitions();
    assert_eq!(anthropic_beta(&all, None).await.as_deref(), Some(beta));
    // Added to the caller's own betas, once.
    assert_eq!(
        anthropic_beta(&all, Some("structured-outputs-2025-11-13")).await,
        Some(format!("structured-outputs-2025-11-13,{beta}"))
    );
    assert_eq!(
        anthropic_beta(&all, Some(beta)).await.as_deref(),
        Some(beta)
    );
    // `transfer` and `search` have no examples: no beta is asked for.
    let plain = &all[1..];
    assert!(plain.iter().all(|tool| tool.input_examples.is_empty()));
    assert_eq!(anthropic_beta(plain, None).await, None);
    assert_eq!(
        anthropic_beta(plain, Some("structured-outputs-2025-11-13"))
            .await
            .as_deref(),
        Some("structured-outputs-2025-11-13")
    );
}
